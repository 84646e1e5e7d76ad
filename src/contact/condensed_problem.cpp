// The condensed contact problem (docs/physics.md section 3.3): its shared operators
// (W from S by LAPACK's Cholesky inverse) and the measure of how far a state
// is from the law. See condensed_problem.hpp.
#include "contact/condensed_problem.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "contact/law/predictor.hpp"
#include "core/errors.hpp"

// LAPACK (Fortran ABI; OpenBLAS on Debian when libopenblas is installed).
extern "C" {
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info,
             std::size_t uplo_len);
void dpotri_(const char* uplo, const int* n, double* a, const int* lda, int* info,
             std::size_t uplo_len);
void dsymv_(const char* uplo, const int* n, const double* alpha, const double* a, const int* lda,
            const double* x, const int* incx, const double* beta, double* y, const int* incy,
            std::size_t uplo_len);
}

namespace bipo {

namespace {

/// The inverse of an SPD matrix by LAPACK's Cholesky; false if not SPD.
bool invert_spd(const Eigen::MatrixXd& a, Eigen::MatrixXd& inverse) {
  const int n = static_cast<int>(a.rows());
  const char lower = 'L';
  int info = 0;
  inverse = a;
  if (n == 0) return true;
  dpotrf_(&lower, &n, inverse.data(), &n, &info, 1);
  if (info != 0) return false;
  dpotri_(&lower, &n, inverse.data(), &n, &info, 1);
  if (info != 0) return false;
  inverse.triangularView<Eigen::StrictlyUpper>() = inverse.transpose();
  return true;
}

/// Whether every diagonal 3 x 3 block is symmetric bit for bit: a check of
/// from_matrices' contract that costs O(m), where the whole would cost a
/// pass over the matrix.
bool diagonal_blocks_symmetric(const Eigen::MatrixXd& a) {
  for (Eigen::Index k = 0; k + 3 <= a.rows(); k += 3) {
    const Eigen::Matrix3d block = a.block<3, 3>(k, k);
    if (block != block.transpose()) return false;
  }
  return true;
}

}  // namespace

void add_symmetric_product(const Eigen::MatrixXd& a, const Eigen::Ref<const Eigen::VectorXd>& x,
                           Eigen::Ref<Eigen::VectorXd> y) {
  const int n = static_cast<int>(a.rows());
  if (n == 0) return;
  const char lower = 'L';
  const double one = 1.0;
  const int x_step = static_cast<int>(x.innerStride()), y_step = static_cast<int>(y.innerStride());
  dsymv_(&lower, &n, &one, a.data(), &n, x.data(), &x_step, &one, y.data(), &y_step, 1);
}

std::shared_ptr<const CondensedOperators> CondensedOperators::from_stiffness(Eigen::MatrixXd s) {
  std::shared_ptr<CondensedOperators> operators(new CondensedOperators());
  s.triangularView<Eigen::StrictlyUpper>() = s.transpose();
  operators->s_ = std::move(s);
  if (!invert_spd(operators->s_, operators->w_))
    throw NumericalError("the condensed stiffness of the contact nodes is not positive definite");
  return operators;
}

std::shared_ptr<const CondensedOperators> CondensedOperators::from_matrices(Eigen::MatrixXd s,
                                                                            Eigen::MatrixXd w) {
  if (s.rows() != s.cols() || w.rows() != s.rows() || w.cols() != s.cols())
    throw std::invalid_argument("CondensedOperators::from_matrices: S and W of different sizes");
  if (!diagonal_blocks_symmetric(s) || !diagonal_blocks_symmetric(w))
    throw std::invalid_argument("CondensedOperators::from_matrices: S or W is not symmetric");
  std::shared_ptr<CondensedOperators> operators(new CondensedOperators());
  operators->s_ = std::move(s);
  operators->w_ = std::move(w);
  return operators;
}

bool CondensedContactProblem::has_non_associated_law() const {
  return std::any_of(laws.begin(), laws.end(),
                     [](const FrictionLaw& law) { return !law.associated(); });
}

void measure_law(const std::vector<FrictionLaw>& laws, const Eigen::VectorXd& v,
                 const Eigen::VectorXd& r, double motion_scale, ContactSolveReport& report) {
  // physics.md 3.1: G is an energy; it is scaled by the largest reaction times the
  // increment's motion scale. G vanishes quadratically in a misaligned slip
  // direction, so the solvers also check the fixed-point residual, which is
  // linear in the error.
  double max_r = 0.0, max_g = 0.0, max_penetration = 0.0;
  for (std::size_t i = 0; i < laws.size(); ++i) {
    const auto k = static_cast<Eigen::Index>(3 * i);
    const Eigen::Vector3d vi = v.segment<3>(k);
    const Eigen::Vector3d ri = r.segment<3>(k);
    max_r = std::max(max_r, ri.norm());
    const double g = law_certificate(ri, vi(0), vi.tail<2>(), laws[i]);
    max_g = std::max(max_g, std::abs(g));
    max_penetration = std::max(max_penetration, -vi(0));
  }
  const double scale = max_r * motion_scale;
  report.scaled_certificate = scale > 0.0 ? max_g / scale : (max_g > 0.0 ? 1.0 : 0.0);
  report.scaled_penetration =
      motion_scale > 0.0 ? max_penetration / motion_scale : (max_penetration > 0.0 ? 1.0 : 0.0);
}

}  // namespace bipo
