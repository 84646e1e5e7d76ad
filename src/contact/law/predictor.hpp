// Owns the bipotential predictor of one node (docs/physics.md sections 3.1, 3.2) as
// pure functions: the kinematic part A(v) of the predictor tau = r - rho A(v)
// and its derivative dA/dv, the predictor-corrector proj_K(tau), the
// certificate G and the frictional dissipation. The block Gauss-Seidel's
// one-node problem (one_node.hpp) and the semi-smooth Newton's residual
// (contact/solvers.cpp) both build tau with predictor().
#pragma once

#include <Eigen/Core>

#include "contact/law/cone.hpp"
#include "contact/law/friction_law.hpp"

namespace bipo {

/// A(v) = (g + |omega^2 du_t|_mu*, omega^2 du_t) for v = (g, du_t), the
/// kinematic part of the predictor of physics.md 3.2. Frictionless: (g, 0, 0).
/// Inline, as predictor() is.
[[nodiscard]] inline Eigen::Vector3d augmented_kinematics(const Eigen::Vector3d& v,
                                                          const FrictionLaw& law) {
  // Frictionless, omega is undefined and the cone is the ray r_t = 0: only
  // tau_n matters, and it must not see a non-finite slip through 0 * du_t.
  if (law.frictionless()) return {v(0), 0.0, 0.0};
  const Eigen::Vector2d x = law.omega_squared().cwiseProduct(v.tail<2>());  // modified slip
  return {v(0) + law.dual_norm_mu(x), x(0), x(1)};
}

/// dA/dv. At du_t = 0 the dual norm is not differentiable; its zero
/// subgradient is used (the Newton step of a stick node then aims at v = 0).
[[nodiscard]] Eigen::Matrix3d augmented_kinematics_derivative(const Eigen::Vector3d& v,
                                                              const FrictionLaw& law);

/// The predictor tau = r - rho A(v) of physics.md 3.2, for v = (g, du_t). Inline:
/// the predictor-corrector and Newton's residual build it per node and
/// iteration.
[[nodiscard]] inline Eigen::Vector3d predictor(const Eigen::Vector3d& r, const Eigen::Vector3d& v,
                                               double rho, const FrictionLaw& law) {
  return r - rho * augmented_kinematics(v, law);
}

/// physics.md 3.2 predictor-corrector for one node: returns proj_K(tau) with
/// tau = predictor(r, (g, du_t), rho), i.e. tau_t = r_t - rho omega^2 du_t and
/// tau_n = r_n - rho (g + |omega^2 du_t|_mu*).
/// Frictionless: r = (max(r_n - rho g, 0), 0, 0).
[[nodiscard]] ConeProjection bipotential_update(const Eigen::Vector3d& r, double g,
                                                const Eigen::Vector2d& du_t, double rho,
                                                const FrictionLaw& law);

/// The update of physics.md 3.2 in the law's scaled variables r' = (r_n, r_t / s),
/// v' = (g, s du_t), s = law.update_scales(): proj_K'(r' - rho A'(v')) for the
/// scaled law K', A' (law.scaled()), returned in the original variables. Its
/// fixed points are the law's for any rho > 0 (the scaled law is the law);
/// for s = (1, 1) it is bipotential_update itself. In the original variables
/// the tangential predictor is r_tk - rho s_k^2 omega_k^2 du_tk =
/// r_tk - rho beta^2 du_tk: it weighs the slip itself, not the modified slip,
/// and beta = max(1, p1, p2) keeps the Coulomb term rho |omega^2 du_t|_mu* of
/// tau_n from outweighing it whatever mu (docs/contact-law.md, "The scaled
/// update").
[[nodiscard]] ConeProjection scaled_update(const Eigen::Vector3d& r, const Eigen::Vector3d& v,
                                           double rho, const FrictionLaw& law);

/// The fixed-point residual of one node, f = r - scaled_update(r, v, rho, law).r
/// (physics.md 3.2: f = 0 iff the law holds), and the branch of the projection.
/// With b and c, also the derivatives B = df/dr and C = df/dv (the
/// semi-smooth Newton's blocks, with projection_derivative and
/// augmented_kinematics_derivative).
ContactState node_residual(const Eigen::Vector3d& r, const Eigen::Vector3d& v, double rho,
                           const FrictionLaw& law, Eigen::Vector3d& f, Eigen::Matrix3d* b,
                           Eigen::Matrix3d* c);

/// physics.md 3.1 certificate G = r_n |omega^2 du_t|_mu* + (omega^2 du_t) . r_t + g r_n:
/// G >= 0 for g >= 0 and r in K_mu, G = 0 iff the law holds. Frictionless: g r_n.
[[nodiscard]] double law_certificate(const Eigen::Vector3d& r, double g,
                                     const Eigen::Vector2d& du_t, const FrictionLaw& law);

/// Frictional dissipation of a node in an increment, D = -r_t . du_t (physics.md 3.1).
[[nodiscard]] double frictional_dissipation(const Eigen::Vector3d& r, const Eigen::Vector2d& du_t);

}  // namespace bipo
