// Owns the solvers of the condensed contact problem (docs/physics.md section 3.3), as
// free functions over a CondensedContactProblem in the manner of the fc3d
// solvers of the frictional-contact literature: semi-smooth Newton on the
// per-node fixed-point equations (physics.md 3.2), block Gauss-Seidel sweeps of the
// one-node law, the continuation in the sliding coefficients, and the cascade
// that chains them (solve_contact). None holds state between calls except
// what the caller passes in a ContactWorkspace. docs/architecture.md, "The
// contact iteration", says why the cascade is what it is.
#pragma once

#include <Eigen/Core>
#include <memory>
#include <vector>

#include "contact/condensed_problem.hpp"

namespace bipo {

/// Scratch storage of the Newton step's dense matrix, kept between solves by
/// its owner: a fresh allocation per step of that size costs page faults
/// comparable to the LU. One workspace per solve running at a time.
struct ContactWorkspace {
  std::vector<double> newton_matrix;
  /// The Newton step solver of a sparse operator (made on first use).
  std::unique_ptr<SparseNewtonStep> sparse_step;
};

/// Solves the problem: finds r (3m) such that the law holds at every node
/// with v = q + W r. `r` is the starting point on entry (the last converged
/// reactions). A semi-smooth Newton method runs first; when it stalls, Newton
/// again from the bonded start if the start was r = 0; for a non-associated
/// law the continuation; then short batches of block Gauss-Seidel sweeps
/// alternating with Newton, and sweeps to the end of the budget (see the
/// definition for the limits). `max_iterations` bounds the Newton steps plus
/// the sweeps.
ContactSolveReport solve_contact(const CondensedContactProblem& problem, Eigen::VectorXd& r,
                                 double law_tolerance, int max_iterations,
                                 ContactWorkspace& workspace);

/// Semi-smooth Newton on F_i = r_i - proj_K(r_i - rho_i A(v_i)) = 0 (physics.md
/// 3.2, in the law's scaled variables: node_residual in contact/law), with a
/// backtracking line search on |F|; stops when the line search fails or
/// crawls, or after max_iterations steps.
ContactSolveReport solve_semismooth_newton(const CondensedContactProblem& problem,
                                           Eigen::VectorXd& r, double law_tolerance,
                                           int max_iterations, ContactWorkspace& workspace);

/// Block Gauss-Seidel sweeps (physics.md 3.3): node by node, the one-node law
/// (solve_node_law) with the other nodes frozen. Throws NumericalError on a
/// non-finite iterate.
ContactSolveReport solve_gauss_seidel(const CondensedContactProblem& problem, Eigen::VectorXd& r,
                                      double law_tolerance, int max_sweeps);

/// Continuation in the sliding coefficients from the associated law to the
/// problem's laws, a semi-smooth Newton solve per stage on a copy of the
/// problem with the stage's laws. `r` is the starting point of the first
/// stage; it is changed only when the last stage converges.
ContactSolveReport solve_by_continuation(const CondensedContactProblem& problem, Eigen::VectorXd& r,
                                         double law_tolerance, int max_iterations,
                                         ContactWorkspace& workspace);

}  // namespace bipo
