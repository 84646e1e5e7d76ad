// Owns the local contact law of one node (SPEC.md section 3), as pure functions
// on fixed-size Eigen types: the orthotropic Coulomb cone with its non-associated
// sliding rule (FrictionLaw), the Euclidean projection onto the cone, the
// bipotential predictor-corrector (SPEC 3.2), the bipotential certificate G
// (SPEC 3.1), the automatic choice of rho and the one-node problem that a block
// Gauss-Seidel sweep solves. It knows nothing of meshes or of the global solver
// and holds no global state; nothing here allocates on the heap.
//
// Conventions: local frame components are ordered (n, t1, t2); r = (r_n, r_t1,
// r_t2) is the reaction of the plane on the body (r_n >= 0 compressive), g the
// gap (g >= 0: no penetration), du_t the slip increment (SPEC section 2).
#pragma once

#include <Eigen/Core>

namespace bipo {

/// Which branch of the law (SPEC 3) a node is on. For the projection: inside
/// the cone -> stick, in the polar cone -> open, on the cone's surface -> slip.
enum class ContactState : int { open = 0, stick = 1, slip = 2 };

/// Orthotropic Coulomb friction with a non-associated sliding rule (SPEC 3):
/// friction coefficients mu = diag(mu1, mu2) along (t1, t2), sliding
/// coefficients p = diag(p1, p2), non-associativity omega = diag(p1/mu1, p2/mu2).
/// mu1 = mu2 = p1 = p2 = 0 is the frictionless law. Immutable once built.
class FrictionLaw {
 public:
  /// mu1 = mu2 = p1 = p2 = mu (associated isotropic law); mu = 0 is frictionless.
  /// Throws InputError for a negative, NaN or infinite mu.
  static FrictionLaw isotropic(double mu);
  /// General orthotropic law. Throws InputError (core/errors.hpp) for negative,
  /// NaN or infinite values, a sliding coefficient p_k > 0 without friction
  /// (mu_k = 0), mu_k > 0 with p_k <= 0, or exactly one of mu1, mu2 zero.
  static FrictionLaw orthotropic(double mu1, double mu2, double p1, double p2);

  [[nodiscard]] double mu1() const { return mu1_; }
  [[nodiscard]] double mu2() const { return mu2_; }
  [[nodiscard]] double p1() const { return p1_; }
  [[nodiscard]] double p2() const { return p2_; }
  /// mu = 0: omega is undefined and the tangential part of the law vanishes.
  [[nodiscard]] bool frictionless() const { return frictionless_; }
  /// mu1 == mu2: the cone is circular and its projection has a closed form.
  [[nodiscard]] bool isotropic_cone() const { return mu1_ == mu2_; }
  /// (omega1^2, omega2^2) = ((p1/mu1)^2, (p2/mu2)^2); zeros if frictionless.
  [[nodiscard]] Eigen::Vector2d omega_squared() const { return omega_sq_; }
  /// |r_t|_mu = sqrt((r_t1/mu1)^2 + (r_t2/mu2)^2) (SPEC 3). Frictionless: 0 if
  /// r_t = 0, +infinity otherwise (the limit mu -> 0).
  [[nodiscard]] double norm_mu(const Eigen::Vector2d& r_t) const;
  /// |v|_mu* = sqrt((mu1 v1)^2 + (mu2 v2)^2), the dual norm (SPEC 3); 0 if frictionless.
  [[nodiscard]] double dual_norm_mu(const Eigen::Vector2d& v) const;

 private:
  FrictionLaw(double mu1, double mu2, double p1, double p2);

  double mu1_, mu2_, p1_, p2_;
  Eigen::Vector2d omega_sq_;
  bool frictionless_;
};

/// The result of projecting onto the cone, with the branch it fell on.
struct ConeProjection {
  Eigen::Vector3d r;
  ContactState state;
};

/// Euclidean projection of tau onto K_mu = { r : |r_t|_mu <= r_n } (SPEC 3.2).
/// state: inside -> stick, polar cone -> open, cone surface -> slip.
/// Frictionless: r = (max(tau_n, 0), 0, 0), state slip if tau_n > 0 (contact
/// with free sliding), open otherwise. Finite output for every finite input.
[[nodiscard]] ConeProjection project_onto_friction_cone(const Eigen::Vector3d& tau,
                                                        const FrictionLaw& law);

/// The reaction r made admissible exactly: its Euclidean projection onto
/// K_mu, with r_n then raised to |r_t|_mu if the projection's rounding left
/// it a few ulps below, so that `norm_mu(r_t) <= r_n` holds in floating
/// point as norm_mu computes it (frictionless: r_t = 0 and r_n >= 0). A
/// reaction strictly inside K_mu is returned unchanged; one on its surface
/// may move by a few ulps.
[[nodiscard]] Eigen::Vector3d admissible_reaction(const Eigen::Vector3d& r, const FrictionLaw& law);

/// SPEC 3.2 predictor-corrector for one node: returns proj_K(tau) with
/// tau_t = r_t - rho omega^2 du_t and tau_n = r_n - rho (g + |omega^2 du_t|_mu*).
/// Frictionless: r = (max(r_n - rho g, 0), 0, 0).
[[nodiscard]] ConeProjection bipotential_update(const Eigen::Vector3d& r, double g,
                                                const Eigen::Vector2d& du_t, double rho,
                                                const FrictionLaw& law);

/// SPEC 3.1 certificate G = r_n |omega^2 du_t|_mu* + (omega^2 du_t) . r_t + g r_n:
/// G >= 0 for g >= 0 and r in K_mu, G = 0 iff the law holds. Frictionless: g r_n.
[[nodiscard]] double law_certificate(const Eigen::Vector3d& r, double g,
                                     const Eigen::Vector2d& du_t, const FrictionLaw& law);

/// f = |r_t|_mu - r_n (SPEC 4: f < 0 stick, f = 0 slip). Frictionless: -r_n
/// (the law forces r_t = 0, so r_t is ignored rather than giving +infinity).
[[nodiscard]] double friction_function(const Eigen::Vector3d& r, const FrictionLaw& law);

/// Frictional dissipation of a node in an increment, D = -r_t . du_t (SPEC 3.1).
[[nodiscard]] double frictional_dissipation(const Eigen::Vector3d& r, const Eigen::Vector2d& du_t);

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

/// The closed form for a circular cone |r_t| <= mu r_n (SPEC 3.2), mu > 0.
[[nodiscard]] ConeProjection project_onto_cone_circular(const Eigen::Vector3d& tau, double mu);

/// Real parts of the four roots of c4 x^4 + c3 x^3 + c2 x^2 + c1 x + c0 (c4 != 0)
/// by Ferrari's method; complex pairs give their real part. Returns false if the
/// result is not finite.
bool solve_quartic_ferrari(double c4, double c3, double c2, double c1, double c0, double roots[4]);

}  // namespace detail

}  // namespace bipo
