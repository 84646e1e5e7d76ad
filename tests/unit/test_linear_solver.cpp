// Unit tests of the linear algebra interface (src/solver/linear_solver.hpp):
// the CHOLMOD backend's condensation read off its factor must equal the
// definition S = (E^T A^-1 E)^-1 computed by solves, and the factor that
// orders the condensed unknowns last must still solve A x = b.
#include <gtest/gtest.h>

#include <cmath>

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

PunchSystem punch_system() {
  const Mesh mesh = generate_cylinder({10.0, 10.0, 6, 6, 3});
  const SparseMatrix k = assemble_stiffness(mesh, isotropic_elasticity(210000.0, 0.3));
  std::vector<bool> prescribed(k.rows(), false);
  for (int node : mesh.node_set("top"))
    for (int c = 0; c < 3; ++c) prescribed[3 * node + c] = true;
  const DofPartition partition(prescribed);
  PunchSystem system;
  SparseMatrix k_fp;
  partition.split(k, system.k_ff, k_fp);
  for (int node : mesh.node_set("bottom"))
    for (int c = 0; c < 3; ++c) system.bottom_dofs.push_back(partition.free_index(3 * node + c));
  return system;
}

TEST(LinearSolver, CholmodCondensationEqualsInverseOfCondensedCompliance) {
  const PunchSystem system = punch_system();
  auto by_factor = make_cholmod_solver();
  const CondensedMatrices condensed =
      by_factor->factorize_and_condense(system.k_ff, system.bottom_dofs);
  const Eigen::MatrixXd& s = condensed.stiffness;
  const Eigen::MatrixXd& w = condensed.compliance;
  auto by_solves = make_cholmod_solver();
  const CondensedMatrices reference =
      by_solves->LinearSolver::factorize_and_condense(system.k_ff, system.bottom_dofs);
  ASSERT_EQ(s.rows(), static_cast<Eigen::Index>(system.bottom_dofs.size()));
  EXPECT_LT((s - reference.stiffness).norm(), 1e-9 * reference.stiffness.norm());
  EXPECT_LT((s - s.transpose()).norm(), 1e-14 * s.norm());
  // W, read off the factor too, against E^T A^-1 E by solves, and S W = I.
  ASSERT_EQ(w.rows(), s.rows());
  EXPECT_LT((w - reference.compliance).norm(), 1e-9 * reference.compliance.norm());
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

TEST(LinearSolver, NonPositiveDefiniteMatrixIsANumericalError) {
  SparseMatrix a(2, 2);
  a.insert(0, 0) = 1.0;
  a.insert(1, 1) = -1.0;
  auto solver = make_cholmod_solver();
  EXPECT_THROW(solver->factorize(a), NumericalError);
}

}  // namespace
}  // namespace bipo
