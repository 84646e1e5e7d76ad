// Owns the friction cone K_mu = { r : |r_t|_mu <= r_n } of a law (docs/physics.md
// section 3.2) as pure functions: the Euclidean projection onto it, the
// projection's derivative (for Newton), the exactly admissible reaction and
// the friction function. Nothing here allocates on the heap.
#pragma once

#include <Eigen/Core>

#include "contact/law/friction_law.hpp"

namespace bipo {

/// The result of projecting onto the cone, with the branch it fell on.
struct ConeProjection {
  Eigen::Vector3d r;
  ContactState state;
};

/// Euclidean projection of tau onto K_mu = { r : |r_t|_mu <= r_n } (physics.md 3.2).
/// state: inside -> stick, polar cone -> open, cone surface -> slip.
/// Frictionless: r = (max(tau_n, 0), 0, 0), state slip if tau_n > 0 (contact
/// with free sliding), open otherwise. Finite output for every finite input.
/// Defined below: inline, as the predictor-corrector and Newton's residual
/// call it per node and iteration.
[[nodiscard]] inline ConeProjection project_onto_friction_cone(const Eigen::Vector3d& tau,
                                                               const FrictionLaw& law);

/// Derivative of proj_K at tau, for the branch `state` the projection fell
/// on: the identity inside (stick), zero in the polar cone (open), and on the
/// surface branch (slip), where the projection is smooth, central differences.
[[nodiscard]] Eigen::Matrix3d projection_derivative(const Eigen::Vector3d& tau, ContactState state,
                                                    const FrictionLaw& law);

/// The reaction r made admissible exactly: its Euclidean projection onto
/// K_mu, with r_n then raised to |r_t|_mu if the projection's rounding left
/// it a few ulps below, so that `norm_mu(r_t) <= r_n` holds in floating
/// point as norm_mu computes it (frictionless: r_t = 0 and r_n >= 0). A
/// reaction strictly inside K_mu is returned unchanged; one on its surface
/// may move by a few ulps.
[[nodiscard]] Eigen::Vector3d admissible_reaction(const Eigen::Vector3d& r, const FrictionLaw& law);

/// f = |r_t|_mu - r_n (physics.md 4: f < 0 stick, f = 0 slip). Frictionless: -r_n
/// (the law forces r_t = 0, so r_t is ignored rather than giving +infinity).
[[nodiscard]] double friction_function(const Eigen::Vector3d& r, const FrictionLaw& law);

namespace detail {

/// Diagnostics of the general (non-circular cone) projection, for tests.
struct GeneralProjection {
  Eigen::Vector3d r;
  ContactState state;
  int newton_steps;   ///< Newton (or bisection) steps on the secular equation
  bool ferrari_used;  ///< an admissible Ferrari root started the polish
};

/// The general projection path (Ferrari + Newton polish on the secular
/// equation), whatever mu1 and mu2 are (mu1, mu2 > 0). Used by
/// project_onto_friction_cone when mu1 != mu2; exposed to test it for mu1 == mu2.
[[nodiscard]] GeneralProjection project_onto_cone_general(const Eigen::Vector3d& tau, double mu1,
                                                          double mu2);

/// The closed form for a circular cone |r_t| <= mu r_n (physics.md 3.2), mu > 0.
[[nodiscard]] ConeProjection project_onto_cone_circular(const Eigen::Vector3d& tau, double mu);

/// Real parts of the four roots of c4 x^4 + c3 x^3 + c2 x^2 + c1 x + c0 (c4 != 0)
/// by Ferrari's method; complex pairs give their real part. Returns false if the
/// result is not finite.
bool solve_quartic_ferrari(double c4, double c3, double c2, double c1, double c0, double roots[4]);

}  // namespace detail

inline ConeProjection project_onto_friction_cone(const Eigen::Vector3d& tau,
                                                 const FrictionLaw& law) {
  if (law.frictionless()) {  // K_0 is the ray r_t = 0, r_n >= 0
    if (tau(0) > 0.0) return {Eigen::Vector3d(tau(0), 0.0, 0.0), ContactState::slip};
    return {Eigen::Vector3d::Zero(), ContactState::open};
  }
  if (law.isotropic_cone()) return detail::project_onto_cone_circular(tau, law.mu1());
  const detail::GeneralProjection g = detail::project_onto_cone_general(tau, law.mu1(), law.mu2());
  return {g.r, g.state};
}

}  // namespace bipo
