// S and W in one buffer (see condensed_matrices.hpp).
#include "contact/condensed_matrices.hpp"

#include <cstddef>
#include <stdexcept>

// BLAS (Fortran ABI; OpenBLAS on Debian when libopenblas is installed).
extern "C" {
void dsymv_(const char* uplo, const int* n, const double* alpha, const double* a, const int* lda,
            const double* x, const int* incx, const double* beta, double* y, const int* incy,
            std::size_t uplo_len);
}

namespace bipo {

namespace {

/// y += A x for the symmetric A whose triangle `uplo` is at `a` with
/// leading dimension `lda`.
void add_symmetric_product(char uplo, int n, const double* a, int lda,
                           const Eigen::Ref<const Eigen::VectorXd>& x,
                           Eigen::Ref<Eigen::VectorXd> y) {
  if (n == 0) return;
  const double one = 1.0;
  const int x_step = static_cast<int>(x.innerStride()), y_step = static_cast<int>(y.innerStride());
  dsymv_(&uplo, &n, &one, a, &lda, x.data(), &x_step, &one, y.data(), &y_step, 1);
}

}  // namespace

CondensedMatrices CondensedMatrices::from_whole(const Eigen::MatrixXd& s,
                                                const Eigen::MatrixXd& w) {
  if (s.rows() != s.cols() || w.rows() != s.rows() || w.cols() != s.cols())
    throw std::invalid_argument("CondensedMatrices::from_whole: S and W of different sizes");
  const int n = static_cast<int>(s.rows());
  CondensedMatrices pair(n);
  for (int j = 0; j < n; ++j) {
    pair.buffer_.col(j).head(j + 1) = w.col(j).head(j + 1);
    pair.buffer_.col(j).tail(n - j) = s.col(j).tail(n - j);
  }
  return pair;
}

Eigen::Matrix3d CondensedMatrices::stiffness_block(int i, int j) const {
  if (i < j) return stiffness_block(j, i).transpose();
  Eigen::Matrix3d block = buffer_.block<3, 3>(3 * i + 1, 3 * j);
  if (i == j) block.triangularView<Eigen::StrictlyUpper>() = block.transpose();
  return block;
}

Eigen::Matrix3d CondensedMatrices::delassus_block(int i, int j) const {
  if (i > j) return delassus_block(j, i).transpose();
  Eigen::Matrix3d block = buffer_.block<3, 3>(3 * i, 3 * j);
  if (i == j) block.triangularView<Eigen::StrictlyLower>() = block.transpose();
  return block;
}

void CondensedMatrices::set_stiffness_block(int i, int j, const Eigen::Matrix3d& block) {
  if (i == j)
    buffer_.block<3, 3>(3 * i + 1, 3 * j).triangularView<Eigen::Lower>() = block;
  else
    buffer_.block<3, 3>(3 * i + 1, 3 * j) = block;
}

void CondensedMatrices::set_delassus_block(int i, int j, const Eigen::Matrix3d& block) {
  if (i == j)
    buffer_.block<3, 3>(3 * i, 3 * j).triangularView<Eigen::Upper>() = block;
  else
    buffer_.block<3, 3>(3 * i, 3 * j) = block;
}

void CondensedMatrices::add_stiffness_product(const Eigen::Ref<const Eigen::VectorXd>& x,
                                              Eigen::Ref<Eigen::VectorXd> y) const {
  add_symmetric_product('L', size(), buffer_.data() + 1, leading_dimension(), x, y);
}

void CondensedMatrices::add_delassus_product(const Eigen::Ref<const Eigen::VectorXd>& x,
                                             Eigen::Ref<Eigen::VectorXd> y) const {
  add_symmetric_product('U', size(), buffer_.data(), leading_dimension(), x, y);
}

void CondensedMatrices::add_stiffness_columns(int node, const Eigen::Vector3d& x,
                                              Eigen::Ref<Eigen::VectorXd> y) const {
  const int first = 3 * node, after = size() - first - 3;
  // Rows above the node's: S(r, c) = S(c, r), held in the node's rows.
  y.head(first).noalias() += buffer_.block(first + 1, 0, 3, first).transpose() * x;
  y.segment<3>(first).noalias() += stiffness_block(node, node) * x;
  y.tail(after).noalias() += buffer_.block(first + 4, first, after, 3) * x;
}

void CondensedMatrices::add_delassus_columns(int node, const Eigen::Vector3d& x,
                                             Eigen::Ref<Eigen::VectorXd> y) const {
  const int first = 3 * node, after = size() - first - 3;
  y.head(first).noalias() += buffer_.block(0, first, first, 3) * x;
  y.segment<3>(first).noalias() += delassus_block(node, node) * x;
  // Rows below the node's: W(r, c) = W(c, r), held in the node's rows.
  y.tail(after).noalias() += buffer_.block(first, first + 3, 3, after).transpose() * x;
}

double CondensedMatrices::delassus_row_dot(int row, const Eigen::VectorXd& x) const {
  return buffer_.col(row).head(row + 1).dot(x.head(row + 1)) +
         buffer_.row(row).segment(row + 1, size() - row - 1).dot(x.tail(size() - row - 1));
}

Eigen::MatrixXd CondensedMatrices::whole_stiffness() const {
  Eigen::MatrixXd s(size(), size());
  for (int j = 0; j < size(); ++j)
    for (int i = 0; i < size(); ++i) s(i, j) = stiffness(i, j);
  return s;
}

Eigen::MatrixXd CondensedMatrices::whole_delassus() const {
  Eigen::MatrixXd w(size(), size());
  for (int j = 0; j < size(); ++j)
    for (int i = 0; i < size(); ++i) w(i, j) = delassus(i, j);
  return w;
}

}  // namespace bipo
