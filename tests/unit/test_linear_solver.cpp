// Unit tests of the linear algebra interface (src/solver/linear_solver.hpp):
// the CHOLMOD backend's condensation read off its factor must equal the
// definition S = (E^T A^-1 E)^-1 computed by solves, and the factor that
// orders the condensed unknowns last must still solve A x = b.
#include <gtest/gtest.h>

#include <Eigen/QR>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

#include "core/errors.hpp"
#include "fem/elasticity.hpp"
#include "mesh/generate.hpp"
#include "solver/linear_solver.hpp"

namespace bipo {
namespace {

struct PunchSystem {
  SparseMatrix k_ff;
  std::vector<int> bottom_dofs;  // free-dof indices of the bottom nodes
};

PunchSystem punch_system(const CylinderParams& params = {10.0, 10.0, 6, 6, 3}) {
  const Mesh mesh = generate_cylinder(params);
  const SparseMatrix k =
      assemble_stiffness(mesh, isotropic_elasticity(210000.0, 0.3), StoredTriangle::lower);
  std::vector<bool> prescribed(k.rows(), false);
  for (int node : mesh.node_set("top"))
    for (int c = 0; c < 3; ++c) prescribed[3 * node + c] = true;
  const DofPartition partition(prescribed);
  PunchSystem system;
  SparseMatrix k_ff_lower, k_fp;
  partition.split_lower_triangle(k, k_ff_lower, k_fp);
  system.k_ff = k_ff_lower.selfadjointView<Eigen::Lower>();
  for (int node : mesh.node_set("bottom"))
    for (int c = 0; c < 3; ++c) system.bottom_dofs.push_back(partition.free_index(3 * node + c));
  return system;
}

TEST(LinearSolver, CholmodCondensationEqualsInverseOfCondensedCompliance) {
  const PunchSystem system = punch_system();
  auto by_factor = make_cholmod_solver();
  const CondensedMatrices condensed =
      by_factor->factorize_lower_and_condense(lower_triangle(system.k_ff), system.bottom_dofs);
  const Eigen::MatrixXd s = condensed.whole_stiffness();
  const Eigen::MatrixXd w = condensed.whole_delassus();
  auto by_solves = make_cholmod_solver();
  const CondensedMatrices reference = by_solves->LinearSolver::factorize_lower_and_condense(
      lower_triangle(system.k_ff), system.bottom_dofs);
  ASSERT_EQ(s.rows(), static_cast<Eigen::Index>(system.bottom_dofs.size()));
  const Eigen::MatrixXd reference_s = reference.whole_stiffness();
  const Eigen::MatrixXd reference_w = reference.whole_delassus();
  EXPECT_LT((s - reference_s).norm(), 1e-9 * reference_s.norm());
  EXPECT_LT((s - s.transpose()).norm(), 1e-14 * s.norm());
  // W, read off the factor too, against E^T A^-1 E by solves, and S W = I.
  ASSERT_EQ(w.rows(), s.rows());
  EXPECT_LT((w - reference_w).norm(), 1e-9 * reference_w.norm());
  EXPECT_EQ((w - w.transpose()).norm(), 0.0);
  const Eigen::MatrixXd identity = Eigen::MatrixXd::Identity(s.rows(), s.cols());
  EXPECT_LT((s * w - identity).norm(), 1e-9 * std::sqrt(static_cast<double>(s.rows())));

  // The reordered factor solves the full system.
  Eigen::MatrixXd b = Eigen::MatrixXd::Random(system.k_ff.rows(), 2), x;
  by_factor->solve(b, x);
  EXPECT_LT((system.k_ff * x - b).norm(), 1e-10 * b.norm());
}

// The automatic choice of the contact path (solver/contact_path.hpp) sizes
// the factor by the analysis alone: it must be the factor that a
// factorization then holds (values: 8 bytes an entry; row indices: 4 bytes
// each, fewer than the entries), and must leave the held factor alone.
TEST(LinearSolver, CholmodAnalysisGivesTheSizeOfTheFactorWithoutTouchingTheHeldOne) {
  const PunchSystem system = punch_system();
  SparseMatrix lower = system.k_ff.triangularView<Eigen::Lower>();
  lower.makeCompressed();
  auto solver = make_cholmod_solver();
  solver->factorize(system.k_ff);
  const double held_nonzeros = solver->factor_nonzeros();
  const double analyzed = solver->analyzed_factor_bytes(lower);
  EXPECT_EQ(solver->factor_nonzeros(), held_nonzeros);
  Eigen::MatrixXd b = Eigen::MatrixXd::Random(system.k_ff.rows(), 1), x;
  solver->solve(b, x);
  EXPECT_LT((system.k_ff * x - b).norm(), 1e-10 * b.norm());

  auto fresh = make_cholmod_solver();
  fresh->factorize_lower(lower, false);
  EXPECT_GE(analyzed, 8.0 * fresh->factor_nonzeros());
  EXPECT_LE(analyzed, 12.0 * fresh->factor_nonzeros());
  EXPECT_GT(fresh->factor_nonzeros(), static_cast<double>(lower.nonZeros()));  // a real fill-in
}

// The sparse contact path's P (new_solver_for_preconditioning): CHOLMOD's
// factor kept in single precision, applied by apply_approximate_inverse.
// Against the exact double solve: float rounding (well below the 1e-5 a
// preconditioner inside a flexible GMRES may have, above the 1e-12 of a
// double solve, which would mean the copy was not made); a refactorization
// on the kept analysis (the values were dropped) solves the new matrix; the
// exact solves are refused, since no double factor is held. After
// keep_full_precision (the sparse path, once a step needs the long
// restart), the next factorization on the same analysis is kept in double:
// its approximate inverse is the exact solve to round-off, and solve()
// works again.
TEST(LinearSolver, CholmodPreconditionerSolvesInSinglePrecisionAndRefactorizes) {
  const PunchSystem system = punch_system();
  SparseMatrix lower = system.k_ff.triangularView<Eigen::Lower>();
  lower.makeCompressed();
  auto exact = make_cholmod_solver();
  auto preconditioner = exact->new_solver_for_preconditioning();
  const Eigen::VectorXd b = Eigen::VectorXd::Random(system.k_ff.rows());
  for (const double spring : {0.0, 1e6}) {
    // The second matrix: stiff springs on the bottom dofs (as P's penalties).
    SparseMatrix p = lower;
    for (const int dof : system.bottom_dofs) p.coeffRef(dof, dof) *= 1.0 + spring;
    exact->factorize_lower(p, false);
    preconditioner->factorize_lower(p, spring > 0.0);
    EXPECT_EQ(preconditioner->factor_nonzeros(), exact->factor_nonzeros());
    Eigen::VectorXd x_exact = b, x = b;
    exact->solve_in_place(x_exact);
    preconditioner->apply_approximate_inverse(x);
    const double error = (x - x_exact).norm() / x_exact.norm();
    EXPECT_LT(error, 1e-5) << spring;
    EXPECT_GT(error, 1e-12) << spring;
    EXPECT_TRUE(preconditioner->holds_lower_precision_factor());
  }
  Eigen::MatrixXd x;
  EXPECT_THROW(preconditioner->solve(Eigen::MatrixXd(b), x), NumericalError);
  Eigen::VectorXd y = b;
  EXPECT_THROW(preconditioner->solve_in_place(y), NumericalError);

  preconditioner->keep_full_precision();
  EXPECT_TRUE(preconditioner->holds_lower_precision_factor());  // until the next factorization
  SparseMatrix p = lower;
  for (const int dof : system.bottom_dofs) p.coeffRef(dof, dof) *= 1.0 + 1e3;
  exact->factorize_lower(p, false);
  preconditioner->factorize_lower(p, true);
  EXPECT_FALSE(preconditioner->holds_lower_precision_factor());
  Eigen::VectorXd x_exact = b, x_approximate = b;
  exact->solve_in_place(x_exact);
  preconditioner->apply_approximate_inverse(x_approximate);
  EXPECT_LT((x_approximate - x_exact).norm() / x_exact.norm(), 1e-12);
  y = b;
  preconditioner->solve_in_place(y);
  EXPECT_LT((y - x_exact).norm() / x_exact.norm(), 1e-12);
  EXPECT_FALSE(exact->holds_lower_precision_factor());
}

// K_ff's factor kept in single precision (the sparse contact path's, beside
// P's): its solves, conjugate gradients preconditioned by the rounded
// factor, must still be a direct solve's: the backward error within
// LAPACK's dsposv test, sqrt(n) eps |A|_inf |x|_inf, and the answer the
// double factor's to what the condition number allows. Checked on the
// punch and on a slender, graded cylinder whose stiffness is far worse
// conditioned (thin elements at the rim and the bottom, bending), one and
// several right-hand sides; an inexact solve stops at the tolerance asked,
// in fewer iterations; a new factorization is in double again.
TEST(LinearSolver, CholmodFactorInSinglePrecisionSolvesToTheDirectSolvesBackwardError) {
  CylinderParams slender{2.0, 60.0, 4, 4, 30};
  slender.rim_grading = 4.0;
  slender.bottom_grading = 3.0;
  for (const CylinderParams& params : {CylinderParams{10.0, 10.0, 6, 6, 3}, slender}) {
    const PunchSystem system = punch_system(params);
    auto lower = std::make_shared<SparseMatrix>(system.k_ff.triangularView<Eigen::Lower>());
    lower->makeCompressed();
    auto exact = make_cholmod_solver();
    auto rounded = make_cholmod_solver();
    exact->factorize_lower(*lower, false);
    rounded->factorize_lower(*lower, false);
    const Eigen::MatrixXd b = Eigen::MatrixXd::Random(lower->rows(), 3);
    Eigen::MatrixXd x_exact;
    exact->solve(b, x_exact);

    ASSERT_TRUE(rounded->keep_factor_in_single_precision(lower));
    EXPECT_TRUE(rounded->holds_lower_precision_factor());
    EXPECT_FALSE(rounded->keep_factor_in_single_precision(lower));  // already
    EXPECT_EQ(rounded->factor_nonzeros(), exact->factor_nonzeros());
    double a_norm = 0.0;  // |A|_inf = |A|_1: the largest column sum
    for (Eigen::Index col = 0; col < system.k_ff.outerSize(); ++col) {
      double sum = 0.0;
      for (SparseMatrix::InnerIterator it(system.k_ff, col); it; ++it) sum += std::abs(it.value());
      a_norm = std::max(a_norm, sum);
    }
    const double eps = std::numeric_limits<double>::epsilon();
    Eigen::MatrixXd x;
    rounded->solve(b, x);
    ASSERT_EQ(x.cols(), 3);
    for (Eigen::Index j = 0; j < 3; ++j) {
      const double x_norm = x.col(j).lpNorm<Eigen::Infinity>();
      const Eigen::VectorXd residual = b.col(j) - system.k_ff * x.col(j);
      const Eigen::VectorXd direct_residual = b.col(j) - system.k_ff * x_exact.col(j);
      // A backward error of a few eps, as the direct solve's own.
      EXPECT_LE(residual.lpNorm<Eigen::Infinity>(), 4.0 * eps * a_norm * x_norm) << params.height;
      EXPECT_LE(direct_residual.lpNorm<Eigen::Infinity>(), 4.0 * eps * a_norm * x_norm);
      // The punch is well conditioned: both answers agree to many digits.
      if (params.height == 10.0) {
        EXPECT_LT((x.col(j) - x_exact.col(j)).norm(), 1e-11 * x_exact.col(j).norm());
      }
    }
    EXPECT_EQ(rounded->solve_count(), 3);
    const long full_iterations = rounded->krylov_iterations();
    EXPECT_GE(full_iterations, 3);

    Eigen::VectorXd y = b.col(0);
    rounded->solve_in_place(y);
    EXPECT_EQ((y - x.col(0)).norm(), 0.0);  // the same iteration, in place
    const long one_full = rounded->krylov_iterations() - full_iterations;
    y = b.col(0);
    rounded->solve_in_place_to_tolerance(y, 1e-4);
    const long one_loose = rounded->krylov_iterations() - full_iterations - one_full;
    EXPECT_LE((b.col(0) - system.k_ff * y).norm(), 1e-4 * b.col(0).norm());
    EXPECT_LT(one_loose, one_full);
    y.setZero();
    rounded->solve_in_place(y);
    EXPECT_EQ(y.norm(), 0.0);

    rounded->factorize_lower(*lower, true);
    EXPECT_FALSE(rounded->holds_lower_precision_factor());
    const long solves = rounded->solve_count();
    rounded->solve(b, x);
    EXPECT_LT((x - x_exact).norm(), 1e-12 * x_exact.norm());
    EXPECT_EQ(rounded->solve_count(), solves);  // a direct solve again
  }
  // A preconditioner's solver is single already: nothing to do there.
  const PunchSystem system = punch_system();
  auto lower = std::make_shared<SparseMatrix>(system.k_ff.triangularView<Eigen::Lower>());
  lower->makeCompressed();
  auto preconditioner = make_cholmod_solver()->new_solver_for_preconditioning();
  preconditioner->factorize_lower(*lower, false);
  EXPECT_FALSE(preconditioner->keep_factor_in_single_precision(lower));
}

/// The lower triangle of a dense SPD n x n matrix of condition 1e15
/// (eigenvalues 1 to 1e15, evenly in the exponent, random eigenvectors).
std::shared_ptr<SparseMatrix> ill_conditioned_lower(int n) {
  const Eigen::MatrixXd q =
      Eigen::HouseholderQR<Eigen::MatrixXd>(Eigen::MatrixXd::Random(n, n)).householderQ();
  Eigen::VectorXd eigenvalues(n);
  for (int k = 0; k < n; ++k) eigenvalues(k) = std::pow(10.0, 15.0 * k / (n - 1));
  const Eigen::MatrixXd dense = q * eigenvalues.asDiagonal() * q.transpose();
  auto lower = std::make_shared<SparseMatrix>(
      Eigen::MatrixXd(dense.triangularView<Eigen::Lower>()).sparseView());
  lower->makeCompressed();
  return lower;
}

// A matrix too ill-conditioned for a single-precision factor (kappa 1e15:
// the rounded factor's M^-1 A is nowhere near I): the solve falls back to
// the factor in double, made again, and answers as the direct solve.
TEST(LinearSolver, CholmodFactorInSinglePrecisionFallsBackToDoubleWhereItCannotConverge) {
  constexpr int n = 60;
  const std::shared_ptr<SparseMatrix> lower = ill_conditioned_lower(n);
  auto exact = make_cholmod_solver();
  auto rounded = make_cholmod_solver();
  exact->factorize_lower(*lower, false);
  rounded->factorize_lower(*lower, false);
  ASSERT_TRUE(rounded->keep_factor_in_single_precision(lower));
  const Eigen::VectorXd b = Eigen::VectorXd::Random(n);
  Eigen::VectorXd x_exact = b, x = b;
  exact->solve_in_place(x_exact);
  rounded->solve_in_place(x);
  EXPECT_FALSE(rounded->holds_lower_precision_factor());
  EXPECT_EQ((x - x_exact).norm(), 0.0);  // the same factor, the same solve
  x = b;
  rounded->solve_in_place(x);
  EXPECT_EQ((x - x_exact).norm(), 0.0);
}

double infinity_norm(const SparseMatrix& lower) {
  Eigen::VectorXd sums = Eigen::VectorXd::Zero(lower.rows());
  for (Eigen::Index col = 0; col < lower.outerSize(); ++col)
    for (SparseMatrix::InnerIterator it(lower, col); it; ++it) {
      sums(it.row()) += std::abs(it.value());
      if (it.row() != col) sums(col) += std::abs(it.value());
    }
  return sums.maxCoeff();
}

// The sparse contact path's P once a step needs the long restart
// (refine_approximate_inverse): its factor stays in single precision, and
// apply_approximate_inverse becomes CG refined to a direct solve's backward
// error (tolerance 0), on the factor held and on every later one, each on
// the values that factorization was given (P's springs change between
// set-ups), or to the relative residual asked, in fewer iterations. A
// solver holding a double factor has no such mode; a matrix too
// ill-conditioned for the rounded factor falls back to double, for the
// factorizations after it too.
TEST(LinearSolver, CholmodPreconditionerRefinedSolvesKeepTheDoubleSolvesBackwardError) {
  const PunchSystem system = punch_system();
  auto lower = std::make_shared<SparseMatrix>(system.k_ff.triangularView<Eigen::Lower>());
  lower->makeCompressed();
  const SparseMatrix k_lower = *lower;
  auto exact = make_cholmod_solver();
  auto preconditioner = exact->new_solver_for_preconditioning();
  const Eigen::VectorXd b = Eigen::VectorXd::Random(lower->rows());
  const double eps = std::numeric_limits<double>::epsilon();
  long iterations = 0;
  bool first = true;
  for (const double spring : {1e6, 1e3}) {
    *lower = k_lower;  // the caller's matrix, changed in place between factorizations
    for (const int dof : system.bottom_dofs) lower->coeffRef(dof, dof) *= 1.0 + spring;
    exact->factorize_lower(*lower, false);
    preconditioner->factorize_lower(*lower, !first);
    if (first) {
      EXPECT_FALSE(exact->refine_approximate_inverse(lower, 0.0));  // a double factor
      ASSERT_TRUE(preconditioner->refine_approximate_inverse(lower, 0.0));
      first = false;
    }
    EXPECT_TRUE(preconditioner->holds_lower_precision_factor()) << spring;
    Eigen::VectorXd x_exact = b, x = b;
    exact->solve_in_place(x_exact);
    preconditioner->apply_approximate_inverse(x);
    const SparseMatrix full = lower->selfadjointView<Eigen::Lower>();
    const double bound = 4.0 * eps * infinity_norm(*lower) * x.lpNorm<Eigen::Infinity>();
    EXPECT_LE((b - full * x).lpNorm<Eigen::Infinity>(), bound) << spring;
    EXPECT_LE((b - full * x_exact).lpNorm<Eigen::Infinity>(), bound) << spring;
    EXPECT_LT((x - x_exact).norm(), 1e-9 * x_exact.norm()) << spring;
    EXPECT_GT(preconditioner->krylov_iterations(), iterations + 1) << spring;  // not one sweep
    iterations = preconditioner->krylov_iterations();
  }
  // A looser tolerance, on the slender graded cylinder of the test above
  // without springs (far worse conditioned: the strict solve takes more
  // iterations there).
  CylinderParams slender{2.0, 60.0, 4, 4, 30};
  slender.rim_grading = 4.0;
  slender.bottom_grading = 3.0;
  const PunchSystem thin = punch_system(slender);
  auto thin_lower = std::make_shared<SparseMatrix>(thin.k_ff.triangularView<Eigen::Lower>());
  thin_lower->makeCompressed();
  const Eigen::VectorXd d = Eigen::VectorXd::Random(thin_lower->rows());
  const SparseMatrix thin_full = thin_lower->selfadjointView<Eigen::Lower>();
  long previous = std::numeric_limits<long>::max(), strict_iterations = 0;
  for (const double tolerance : {0.0, 1e-8, 1e-3}) {
    auto solver = exact->new_solver_for_preconditioning();
    solver->factorize_lower(*thin_lower, false);
    ASSERT_TRUE(solver->refine_approximate_inverse(thin_lower, tolerance));
    Eigen::VectorXd x = d;
    solver->apply_approximate_inverse(x);
    if (tolerance > 0.0)
      EXPECT_LE((d - thin_full * x).norm(), tolerance * d.norm());
    else
      strict_iterations = solver->krylov_iterations();
    EXPECT_LE(solver->krylov_iterations(), previous) << tolerance;
    previous = solver->krylov_iterations();
  }
  EXPECT_LT(previous, strict_iterations);

  constexpr int n = 60;
  const std::shared_ptr<SparseMatrix> ill = ill_conditioned_lower(n);
  auto ill_exact = make_cholmod_solver();
  auto ill_preconditioner = ill_exact->new_solver_for_preconditioning();
  ill_exact->factorize_lower(*ill, false);
  ill_preconditioner->factorize_lower(*ill, false);
  ASSERT_TRUE(ill_preconditioner->refine_approximate_inverse(ill, 0.0));
  const Eigen::VectorXd c = Eigen::VectorXd::Random(n);
  Eigen::VectorXd y_exact = c, y = c;
  ill_exact->solve_in_place(y_exact);
  ill_preconditioner->apply_approximate_inverse(y);
  EXPECT_FALSE(ill_preconditioner->holds_lower_precision_factor());
  EXPECT_EQ((y - y_exact).norm(), 0.0);  // the same factor, the same solve
  ill_preconditioner->factorize_lower(*ill, true);
  EXPECT_FALSE(ill_preconditioner->holds_lower_precision_factor());  // double from then on
  y = c;
  ill_preconditioner->apply_approximate_inverse(y);
  EXPECT_EQ((y - y_exact).norm(), 0.0);
}

// The default factorize_lower_changed (CHOLMOD's): the solution of the
// changed matrix, and lower itself untouched; CHOLMOD keeps no copy of the
// matrix, so the sparse contact path keeps P itself.
TEST(LinearSolver, CholmodChangedLowerTriangleSolvesAsTheChangedMatrix) {
  const PunchSystem system = punch_system();
  const SparseMatrix lower = lower_triangle(system.k_ff);
  LinearSolver::LowerChanges changes;
  SparseMatrix changed = lower;
  for (const int dof : system.bottom_dofs) {
    const int diagonal = lower.outerIndexPtr()[dof];
    changes.positions.push_back(diagonal);
    changes.values.push_back(3.0e6);
    changed.valuePtr()[diagonal] += 3.0e6;
  }
  const Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(lower.rows(), -1.0, 2.0);
  auto whole = make_cholmod_solver();
  whole->factorize_lower(changed, false);
  auto by_changes = make_cholmod_solver();
  by_changes->factorize_lower_changed(lower, changes, false);
  Eigen::MatrixXd expected, x;
  whole->solve(b, expected);
  by_changes->solve(b, x);
  EXPECT_EQ((x - expected).norm(), 0.0);  // the same matrix, the same factor
  EXPECT_EQ(SparseMatrix(lower - lower_triangle(system.k_ff)).norm(), 0.0);
  EXPECT_FALSE(by_changes->keeps_own_copy_of_matrix());
  changes.values.pop_back();  // one value fewer than positions: a caller's mistake
  EXPECT_THROW(by_changes->factorize_lower_changed(lower, changes, true), std::logic_error);
  EXPECT_THROW(by_changes->factorize_lower_changed(lower, {{-1}, {1.0}}, true), std::logic_error);
}

TEST(LinearSolver, NonPositiveDefiniteMatrixIsANumericalError) {
  SparseMatrix a(2, 2);
  a.insert(0, 0) = 1.0;
  a.insert(1, 1) = -1.0;
  auto solver = make_cholmod_solver();
  EXPECT_THROW(solver->factorize(a), NumericalError);
}

}  // namespace
}  // namespace bipo
