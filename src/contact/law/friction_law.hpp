// Owns the friction law of a contact plane (docs/physics.md section 3) as a value: the
// orthotropic Coulomb cone with its non-associated sliding rule (FrictionLaw),
// its norms, and the one validation of friction coefficients that both the
// law and the case reader apply. The rest of the per-node law is in the
// sibling files: cone.hpp (projection), predictor.hpp (A(v), the
// predictor-corrector, the certificate), one_node.hpp (automatic rho, the
// one-node problem); law.hpp includes them all. The law depends on Eigen and
// core/errors.hpp only; nothing here allocates on the heap except an error's
// message.
//
// Conventions: local frame components are ordered (n, t1, t2); r = (r_n, r_t1,
// r_t2) is the reaction of the plane on the body (r_n >= 0 compressive), g the
// gap (g >= 0: no penetration), du_t the slip increment (physics.md section 2).
#pragma once

#include <Eigen/Core>
#include <limits>
#include <optional>
#include <string>

#include "contact/law/numerics.hpp"

namespace bipo {

/// Which branch of the law (physics.md 3) a node is on. For the projection: inside
/// the cone -> stick, in the polar cone -> open, on the cone's surface -> slip.
enum class ContactState : int { open = 0, stick = 1, slip = 2 };

/// One coefficient of a friction law, for saying which one is wrong.
enum class FrictionCoefficient : int { mu1 = 0, mu2 = 1, p1 = 2, p2 = 3 };

/// "mu1", "mu2", "p1" or "p2".
[[nodiscard]] const char* coefficient_name(FrictionCoefficient c);

/// What is wrong with a set of friction coefficients: the first coefficient
/// at fault and what it should be ("a number > 0 (the contact has friction)").
struct FrictionParameterProblem {
  FrictionCoefficient coefficient;
  std::string expected;
};

/// The rules of physics.md 3 for (mu1, mu2, p1, p2), checked in this order: every
/// value finite and >= 0; mu1 and mu2 both 0 (frictionless) or both > 0 (the
/// one at fault is the zero one); without friction p1 = p2 = 0; with friction
/// p1, p2 > 0. Returns the first rule broken, or nothing. FrictionLaw's
/// factories throw on it; the case reader reports it at the key's line.
[[nodiscard]] std::optional<FrictionParameterProblem> friction_parameters_problem(double mu1,
                                                                                  double mu2,
                                                                                  double p1,
                                                                                  double p2);

/// Orthotropic Coulomb friction with a non-associated sliding rule (physics.md 3):
/// friction coefficients mu = diag(mu1, mu2) along (t1, t2), sliding
/// coefficients p = diag(p1, p2), non-associativity omega = diag(p1/mu1, p2/mu2).
/// mu1 = mu2 = p1 = p2 = 0 is the frictionless law. Immutable once built.
class FrictionLaw {
 public:
  /// mu1 = mu2 = p1 = p2 = mu (associated isotropic law); mu = 0 is frictionless.
  /// Throws InputError for a negative, NaN or infinite mu.
  static FrictionLaw isotropic(double mu);
  /// General orthotropic law. Throws InputError (core/errors.hpp) when
  /// friction_parameters_problem finds one, with its message.
  static FrictionLaw orthotropic(double mu1, double mu2, double p1, double p2);

  [[nodiscard]] double mu1() const { return mu1_; }
  [[nodiscard]] double mu2() const { return mu2_; }
  [[nodiscard]] double p1() const { return p1_; }
  [[nodiscard]] double p2() const { return p2_; }
  /// mu = 0: omega is undefined and the tangential part of the law vanishes.
  [[nodiscard]] bool frictionless() const { return frictionless_; }
  /// mu1 == mu2: the cone is circular and its projection has a closed form.
  [[nodiscard]] bool isotropic_cone() const { return mu1_ == mu2_; }
  /// p = mu: the sliding rule is normal to the cone (omega = 1).
  [[nodiscard]] bool associated() const { return p1_ == mu1_ && p2_ == mu2_; }
  /// (omega1^2, omega2^2) = ((p1/mu1)^2, (p2/mu2)^2); zeros if frictionless.
  [[nodiscard]] Eigen::Vector2d omega_squared() const { return omega_sq_; }
  /// The tangential scales (s1, s2) of the augmented-Lagrangian update (physics.md
  /// 3.2 in scaled variables, scaled_update in predictor.hpp):
  /// s_k = beta / omega_k with beta = max(1, p1, p2); (1, 1) if frictionless
  /// and for an associated law with mu1, mu2 <= 1. With r' = (r_n, r_t / s)
  /// and v' = (g, s du_t) the law is the same law with coefficients mu_k / s_k
  /// = p_k / beta <= 1 and p_k / s_k (scaled()); docs/contact-law.md, "The
  /// scaled update", says why.
  [[nodiscard]] const Eigen::Vector2d& update_scales() const { return scales_; }
  /// update_scales() is (1, 1): the update is physics.md 3.2's as written.
  [[nodiscard]] bool unscaled_update() const { return unscaled_; }
  /// The law in the scaled variables: (mu_k, p_k) / s_k, the same omega; its
  /// own update_scales() are (1, 1).
  [[nodiscard]] FrictionLaw scaled() const {
    FrictionLaw law(mu1_ / scales_(0), mu2_ / scales_(1), p1_ / scales_(0), p2_ / scales_(1));
    law.scales_ = Eigen::Vector2d::Ones();
    law.unscaled_ = true;
    return law;
  }
  /// |r_t|_mu = sqrt((r_t1/mu1)^2 + (r_t2/mu2)^2) (physics.md 3). Frictionless: 0 if
  /// r_t = 0, +infinity otherwise (the limit mu -> 0). Inline, as the
  /// per-node kernels call both norms per node and iteration.
  [[nodiscard]] double norm_mu(const Eigen::Vector2d& r_t) const {
    if (frictionless_)
      return (r_t.x() == 0.0 && r_t.y() == 0.0) ? 0.0 : std::numeric_limits<double>::infinity();
    return law_detail::norm2(r_t.x() / mu1_, r_t.y() / mu2_);
  }
  /// |v|_mu* = sqrt((mu1 v1)^2 + (mu2 v2)^2), the dual norm (physics.md 3); 0 if frictionless.
  [[nodiscard]] double dual_norm_mu(const Eigen::Vector2d& v) const {
    return law_detail::norm2(mu1_ * v.x(), mu2_ * v.y());
  }

 private:
  FrictionLaw(double mu1, double mu2, double p1, double p2);

  double mu1_, mu2_, p1_, p2_;
  Eigen::Vector2d omega_sq_;
  Eigen::Vector2d scales_;
  bool frictionless_;
  bool unscaled_;
};

}  // namespace bipo
