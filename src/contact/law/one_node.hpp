// Owns the one-node problem of the per-node law (docs/physics.md sections 3.2, 3.3):
// the automatic choice of rho from a node's compliance, and the solution of
// the law at one node whose kinematics are affine in its reaction, as a
// block Gauss-Seidel sweep sees it. Nothing here allocates on the heap.
#pragma once

#include <Eigen/Core>

#include "contact/law/friction_law.hpp"

namespace bipo {

/// Automatic rho from the node's condensed compliance W (3x3 SPD, frame (n, t1, t2),
/// displacement per unit reaction): rho = 1 / lambda_max(D^1/2 W D^1/2) with
/// D = diag(1, omega1^2, omega2^2) (D = diag(1, 0, 0) if frictionless). Then the
/// linear part r -> r - rho D W r of the predictor has its spectrum in [0, 1);
/// see docs/contact-law.md. Throws NumericalError if W is not positive definite.
[[nodiscard]] double automatic_rho(const Eigen::Matrix3d& W, const FrictionLaw& law);

/// Result of the one-node problem.
struct LocalSolution {
  Eigen::Vector3d r;
  ContactState state;
  int iterations;  ///< refinement steps of the slip solve, or predictor-corrector steps
  bool converged;  ///< r is a fixed point of bipotential_update to tol
};

/// The one-node problem of a block Gauss-Seidel sweep: with the other nodes
/// frozen, (g, du_t1, du_t2) = q + W r. Returns r with the law holding (a fixed
/// point of bipotential_update with this rho), starting from r_start and stopping
/// when |r_new - r| <= tol max(|r|, tiny) or after max_iterations. The open and
/// stick candidates are solved exactly, the slip branch as a scalar equation in
/// the slip multiplier c (du_t = -c p^-2 r_t, (W + c diag(0, p^-2)) r = -q, r on
/// the cone) by safeguarded Newton; the predictor-corrector from r_start is the
/// fallback (r_start only seeds it). rho <= 0 or non-finite means automatic_rho(W, law). Never NaN
/// for finite input.
[[nodiscard]] LocalSolution solve_node_law(const Eigen::Matrix3d& W, const Eigen::Vector3d& q,
                                           const FrictionLaw& law, double rho,
                                           const Eigen::Vector3d& r_start, double tol,
                                           int max_iterations);

}  // namespace bipo
