// See dense_lu.hpp.
#include "contact/dense_lu.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

// LAPACK and BLAS (Fortran ABI; OpenBLAS on Debian).
extern "C" {
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info, std::size_t trans_len);
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void sgetrs_(const char* trans, const int* n, const int* nrhs, const float* a, const int* lda,
             const int* ipiv, float* b, const int* ldb, int* info, std::size_t trans_len);
void dgemv_(const char* trans, const int* m, const int* n, const double* alpha, const double* a,
            const int* lda, const double* x, const int* incx, const double* beta, double* y,
            const int* incy, std::size_t trans_len);
}

namespace bipo {

namespace {

constexpr int max_refinement_steps = 30;  // dsgesv's ITERMAX

/// Whether every value rounds to a finite float (dsgesv's overflow test).
bool fits_single_precision(const double* values, std::size_t count) {
  const double largest = std::numeric_limits<float>::max();
  return std::all_of(values, values + count,
                     [largest](double v) { return std::abs(v) <= largest; });
}

/// max |v_i| of n values; infinity if one is not a number (std::max would
/// pass over it, and a diverging refinement would pass the test).
double largest_magnitude(const double* v, int n) {
  double largest = 0.0;
  for (int i = 0; i < n; ++i) {
    const double magnitude = std::abs(v[i]);
    if (std::isnan(magnitude)) return std::numeric_limits<double>::infinity();
    largest = std::max(largest, magnitude);
  }
  return largest;
}

}  // namespace

double* DenseLu::matrix(int n) {
  const auto size = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  if (matrix_.size() < size) matrix_.resize(size);
  n_ = n;
  factorized_ = false;
  return matrix_.data();
}

bool DenseLu::factorize_in_double() {
  int info = 0;
  dgetrf_(&n_, &n_, matrix_.data(), &n_, pivots_.data(), &info);
  single_ = false;
  factorized_ = info == 0;
  return factorized_;
}

bool DenseLu::factorize(bool single_precision) {
  const auto n = static_cast<std::size_t>(n_);
  pivots_.resize(n);
  if (!single_precision) return factorize_in_double();
  if (single_lu_.size() < n * n) single_lu_.resize(n * n);
  // A rounded and |A|_inf in one pass over A; a value beyond single
  // precision's range (or not a number) is not rounded: a double LU
  // (dsgesv's overflow test).
  const double largest_single = std::numeric_limits<float>::max();
  residual_.assign(n, 0.0);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < n; ++i) {
      const double a_ij = matrix_[j * n + i];
      const double magnitude = std::abs(a_ij);
      if (!(magnitude <= largest_single)) return factorize_in_double();
      residual_[i] += magnitude;
      single_lu_[j * n + i] = static_cast<float>(a_ij);
    }
  a_norm_ = largest_magnitude(residual_.data(), n_);
  int info = 0;
  sgetrf_(&n_, &n_, single_lu_.data(), &n_, pivots_.data(), &info);
  if (info != 0) {
    ++fallbacks;
    return factorize_in_double();
  }
  ++single_precision_lus;
  single_ = true;
  factorized_ = true;
  return true;
}

bool DenseLu::solve(double* rhs) {
  const int one = 1;
  const char no_transpose = 'N';
  int info = 0;
  if (!factorized_) return false;
  if (!single_) {
    dgetrs_(&no_transpose, &n_, &one, matrix_.data(), &n_, pivots_.data(), rhs, &n_, &info, 1);
    return info == 0;
  }
  const auto n = static_cast<std::size_t>(n_);
  rhs_.assign(rhs, rhs + n_);  // b
  residual_.assign(rhs, rhs + n_);
  std::fill(rhs, rhs + n_, 0.0);  // x
  if (single_columns_.size() < n) single_columns_.resize(n);
  const double threshold =
      std::sqrt(static_cast<double>(n_)) * std::numeric_limits<double>::epsilon() * a_norm_;
  for (int step = 0; step <= max_refinement_steps; ++step) {
    // x += M^-1 r in single precision, then r = b - A x in double.
    if (!fits_single_precision(residual_.data(), n)) break;
    for (std::size_t i = 0; i < n; ++i) single_columns_[i] = static_cast<float>(residual_[i]);
    sgetrs_(&no_transpose, &n_, &one, single_lu_.data(), &n_, pivots_.data(),
            single_columns_.data(), &n_, &info, 1);
    for (std::size_t i = 0; i < n; ++i) rhs[i] += static_cast<double>(single_columns_[i]);
    residual_ = rhs_;
    const double minus_one = -1.0, plus_one = 1.0;
    dgemv_(&no_transpose, &n_, &n_, &minus_one, matrix_.data(), &n_, rhs, &one, &plus_one,
           residual_.data(), &one, 1);
    const double largest_x = largest_magnitude(rhs, n_);
    if (!std::isfinite(largest_x)) break;
    if (largest_magnitude(residual_.data(), n_) <= threshold * largest_x) {
      refinement_steps += step;
      return true;
    }
  }
  // Not resolved in single precision: a double LU of A from now on.
  ++fallbacks;
  std::copy(rhs_.begin(), rhs_.begin() + n_, rhs);
  if (!factorize_in_double()) return false;
  dgetrs_(&no_transpose, &n_, &one, matrix_.data(), &n_, pivots_.data(), rhs, &n_, &info, 1);
  return info == 0;
}

void DenseLu::apply_lu(double* columns, int count) {
  const char no_transpose = 'N';
  int info = 0;
  if (!single_) {
    dgetrs_(&no_transpose, &n_, &count, matrix_.data(), &n_, pivots_.data(), columns, &n_, &info,
            1);
    return;
  }
  const std::size_t size = static_cast<std::size_t>(n_) * static_cast<std::size_t>(count);
  if (single_columns_.size() < size) single_columns_.resize(size);
  if (!fits_single_precision(columns, size)) {
    // Not to be rounded: a double LU of A from now on (A is still intact).
    ++fallbacks;
    if (!factorize_in_double()) return;
    apply_lu(columns, count);
    return;
  }
  for (std::size_t i = 0; i < size; ++i) single_columns_[i] = static_cast<float>(columns[i]);
  sgetrs_(&no_transpose, &n_, &count, single_lu_.data(), &n_, pivots_.data(),
          single_columns_.data(), &n_, &info, 1);
  for (std::size_t i = 0; i < size; ++i) columns[i] = static_cast<double>(single_columns_[i]);
}

}  // namespace bipo
