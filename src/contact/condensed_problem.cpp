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
}

namespace bipo {

std::shared_ptr<const CondensedOperators> CondensedOperators::from_stiffness(
    const Eigen::MatrixXd& s) {
  const int n = static_cast<int>(s.rows());
  if (s.cols() != n) throw std::invalid_argument("CondensedOperators::from_stiffness: not square");
  std::shared_ptr<CondensedOperators> operators(new CondensedOperators());
  CondensedMatrices& pair = operators->matrices_;
  pair = CondensedMatrices(n);
  for (int j = 0; j < n; ++j)
    for (int i = j; i < n; ++i) pair.stiffness_lower(i, j) = s(i, j);
  if (n == 0) return operators;
  // W = S^-1 in place of W's triangle: S's lower triangle, transposed into
  // the upper one, is factorized there (dpotrf) and inverted (dpotri).
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= j; ++i) pair.delassus_upper(i, j) = s(j, i);
  const char upper = 'U';
  const int lda = pair.leading_dimension();
  int info = 0;
  dpotrf_(&upper, &n, pair.data(), &lda, &info, 1);
  if (info == 0) dpotri_(&upper, &n, pair.data(), &lda, &info, 1);
  if (info != 0)
    throw NumericalError("the condensed stiffness of the contact nodes is not positive definite");
  return operators;
}

std::shared_ptr<const CondensedOperators> CondensedOperators::from_matrices(
    CondensedMatrices matrices) {
  std::shared_ptr<CondensedOperators> operators(new CondensedOperators());
  operators->matrices_ = std::move(matrices);
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
