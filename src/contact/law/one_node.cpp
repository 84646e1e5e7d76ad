// The one-node problem (docs/physics.md sections 3.2, 3.3): automatic rho, and the
// law at one node solved by its open, stick and slip candidates with the
// predictor-corrector as the fallback. See one_node.hpp, and
// docs/contact-law.md for the algorithms.
#include "contact/law/one_node.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>

#include "contact/law/numerics.hpp"
#include "contact/law/predictor.hpp"
#include "core/errors.hpp"

namespace bipo {

using law_detail::kEps;

// ---------------------------------------------------------------------------
// Automatic rho

namespace {

/// rho = 1 / lambda_max(D^1/2 W D^1/2) of the law as written.
double rho_of_compliance(const Eigen::Matrix3d& W, const FrictionLaw& law) {
  const Eigen::Matrix3d Ws = 0.5 * (W + W.transpose());
  Eigen::LLT<Eigen::Matrix3d> llt(Ws);
  if (!Ws.allFinite() || llt.info() != Eigen::Success)
    throw NumericalError(
        "automatic_rho: the node's condensed compliance W is not positive definite");
  if (law.frictionless()) return 1.0 / Ws(0, 0);
  // rho = 1 / lambda_max(D^1/2 W D^1/2), D = diag(1, omega1^2, omega2^2): the
  // predictor's linear part r -> r - rho D W r then has eigenvalues 1 - rho lambda_i
  // in [0, 1) (D W is similar to D^1/2 W D^1/2).
  const Eigen::Vector3d d(1.0, std::sqrt(law.omega_squared()(0)),
                          std::sqrt(law.omega_squared()(1)));
  const Eigen::Matrix3d M = d.asDiagonal() * Ws * d.asDiagonal();
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es;
  es.computeDirect(M, Eigen::EigenvaluesOnly);
  const double lmax = std::max(es.eigenvalues().maxCoeff(), M.diagonal().maxCoeff());
  if (!(lmax > 0.0) || !std::isfinite(lmax))
    throw NumericalError("automatic_rho: non-finite or non-positive weighted compliance");
  return 1.0 / lmax;
}

}  // namespace

double automatic_rho(const Eigen::Matrix3d& W, const FrictionLaw& law) {
  // The rho of the scaled update (scaled_update): the same rule for the
  // scaled law and the scaled compliance W' = S W S, S = diag(1, s1, s2)
  // (v' = S v = S q + S W S r').
  if (law.unscaled_update()) return rho_of_compliance(W, law);
  const Eigen::Vector3d s(1.0, law.update_scales()(0), law.update_scales()(1));
  return rho_of_compliance(s.asDiagonal() * W * s.asDiagonal(), law.scaled());
}

// ---------------------------------------------------------------------------
// The one-node problem

namespace {

/// The slip branch of physics.md 3 for the node's affine kinematics (g, du_t) = q + W r.
/// The sliding rule du_t = -lambda p^-2 r_t / |r_t|_p is du_t = -c P r with
/// c = lambda / |r_t|_p >= 0 and P = diag(0, 1/p1^2, 1/p2^2); with g = 0 the
/// kinematics become linear in r for a given c:
///   (W + c P) r = -q,   W + c P symmetric positive definite for c >= 0,
/// and what is left is one scalar equation, r(c) on the cone's surface:
///   psi(c) = |r_t(c)|_mu - r_n(c) = 0.
/// psi(0) > 0 when the stick candidate r(0) is not in K_mu, and psi -> -r_n < 0 as
/// c -> infinity (r_t -> 0, r_n -> -q_n / W_nn > 0), so a root exists; at any root
/// r_n = |r_t|_mu > 0 (r = 0 would leave g = q_n < 0), so every root is a solution.
struct SlipBranch {
  Eigen::Matrix3d W;  // symmetrized
  Eigen::Vector3d q;
  double mu1, mu2;
  Eigen::Vector3d P;  // diag(0, 1/p1^2, 1/p2^2)

  /// r(c), phi(c) and dphi/dc (see below). False if W + c P is not SPD or r_t = 0.
  bool eval(double c, Eigen::Vector3d& r, double& psi, double& dpsi) const {
    const Eigen::Matrix3d M = W + c * Eigen::Matrix3d(P.asDiagonal());
    const Eigen::LLT<Eigen::Matrix3d> llt(M);
    if (llt.info() != Eigen::Success) return false;
    r = llt.solve(-q);
    const Eigen::Vector3d dr = -llt.solve(P.cwiseProduct(r));  // dr/dc
    const double a1 = r(1) / mu1, a2 = r(2) / mu2;
    const double n = std::sqrt(a1 * a1 + a2 * a2);
    if (n == 0.0) {  // r_t = 0: far on the side of r_n's sign; Newton bisects
      psi = std::copysign(std::numeric_limits<double>::infinity(), r(0));
      dpsi = std::numeric_limits<double>::quiet_NaN();
      return r.allFinite();
    }
    // Newton works on the equivalent phi(c) = r_n / |r_t|_mu - 1 (phi < 0 iff
    // psi > 0), which is affine in c when W is diagonal: one step then.
    const double dn = (a1 * dr(1) / mu1 + a2 * dr(2) / mu2) / n;
    psi = r(0) / n - 1.0;
    dpsi = (dr(0) * n - r(0) * dn) / (n * n);
    return r.allFinite() && std::isfinite(psi);
  }
};

/// A root of psi by safeguarded Newton from c = 0: the bracket [c_lo, c_hi]
/// starts as [0, infinity) and is bisected in t = c / (c + c_ref) when a Newton
/// step leaves it.
bool solve_slip_branch(const SlipBranch& b, Eigen::Vector3d& r, int& iterations) {
  const double c_ref = std::max({b.W(1, 1) / b.P(1), b.W(2, 2) / b.P(2), 1e-300});
  double c_lo = 0.0, c_hi = std::numeric_limits<double>::infinity();
  double c = 0.0;
  for (int it = 0; it < 200; ++it) {
    double psi, dpsi;
    if (!b.eval(c, r, psi, dpsi)) return false;
    ++iterations;
    if (psi == 0.0) return true;
    if (psi < 0.0)
      c_lo = c;
    else
      c_hi = c;
    double next = c - psi / dpsi;
    const bool newton_ok = std::isfinite(next) && next > c_lo && next < c_hi;
    if (!newton_ok) {  // bisect in t = c / (c + c_ref), t in [0, 1)
      const double t_lo = c_lo / (c_lo + c_ref);
      const double t_hi = std::isfinite(c_hi) ? c_hi / (c_hi + c_ref) : 1.0;
      const double t = 0.5 * (t_lo + t_hi);
      next = c_ref * t / (1.0 - t);
    }
    const double step = std::abs(next - c);
    c = next;
    if (newton_ok && step <= 1e-12 * c) {  // quadratic convergence: error ~ step^2
      double dummy1, dummy2;
      if (!b.eval(c, r, dummy1, dummy2)) return false;
      ++iterations;
      return true;
    }
    if (std::isfinite(c_hi) && c_hi - c_lo <= 4.0 * kEps * c_hi) return b.eval(c, r, psi, dpsi);
  }
  return false;
}

/// Below this |r| the convergence tests use an absolute floor.
constexpr double kTinyReaction = 1e-300;

/// One step of the predictor-corrector (physics.md 3.2) at r, for the node's
/// kinematics (g, du_t) = q + W r.
ConeProjection node_update(const Eigen::Matrix3d& W, const Eigen::Vector3d& q,
                           const Eigen::Vector3d& r, double rho, const FrictionLaw& law) {
  return scaled_update(r, q + W * r, rho, law);
}

/// Stick: g = 0 and du_t = 0, r = -W^-1 q; it is the solution if r is in K_mu.
bool stick_candidate(const Eigen::Matrix3d& W, const Eigen::Vector3d& q, const FrictionLaw& law,
                     Eigen::Vector3d& r) {
  const Eigen::LLT<Eigen::Matrix3d> llt(W);
  if (llt.info() != Eigen::Success) return false;
  r = llt.solve(-q);
  return r.allFinite() && r(0) > 0.0 && law.norm_mu(r.tail<2>()) <= r(0);
}

/// Slip: the branch solved exactly (a scalar equation in the slip multiplier),
/// accepted if it is a fixed point of the predictor-corrector.
bool slip_candidate(const Eigen::Matrix3d& W, const Eigen::Vector3d& q, const FrictionLaw& law,
                    double rho, double tol, Eigen::Vector3d& r, int& iterations) {
  const SlipBranch branch{
      0.5 * (W + W.transpose()), q, law.mu1(), law.mu2(),
      Eigen::Vector3d(0.0, 1.0 / (law.p1() * law.p1()), 1.0 / (law.p2() * law.p2()))};
  if (!solve_slip_branch(branch, r, iterations) || !(r(0) > 0.0)) return false;
  // Accept it as the fixed point it is, up to the corrector's round-off
  // (a few eps of |tau|, which exceeds |r| when rho |q + W r| does).
  const ConeProjection p = node_update(W, q, r, rho, law);
  // |tau| in the original variables: the tangential predictor is
  // rho s_k^2 omega_k^2 du_tk (scaled_update).
  const double scale = law.update_scales().maxCoeff();
  const double tau_size =
      r.norm() +
      rho * (q + W * r).norm() * std::max(1.0, scale * scale * law.omega_squared().maxCoeff());
  return (p.r - r).norm() <= tol * std::max(r.norm(), kTinyReaction) + 64.0 * kEps * tau_size;
}

/// Fallback: the predictor-corrector itself from r_start. Fixed rho can crawl
/// or oscillate: halve it when the change keeps growing (any rho > 0 has the
/// same fixed points, physics.md 3.2).
LocalSolution predictor_corrector(const Eigen::Matrix3d& W, const Eigen::Vector3d& q,
                                  const FrictionLaw& law, double rho,
                                  const Eigen::Vector3d& r_start, double tol, int max_iterations) {
  Eigen::Vector3d r = r_start.allFinite() ? r_start : Eigen::Vector3d::Zero();
  ContactState state = ContactState::slip;
  double last_change = std::numeric_limits<double>::infinity();
  int growth = 0;
  for (int it = 1; it <= max_iterations; ++it) {
    const ConeProjection p = node_update(W, q, r, rho, law);
    const double change = (p.r - r).norm();
    r = p.r;
    state = p.state;
    if (change <= tol * std::max(r.norm(), kTinyReaction)) return {r, state, it, true};
    growth = (change > last_change) ? growth + 1 : 0;
    if (growth >= 2) {
      rho *= 0.5;
      growth = 0;
    }
    last_change = change;
  }
  return {r, state, max_iterations, false};
}

}  // namespace

LocalSolution solve_node_law(const Eigen::Matrix3d& W, const Eigen::Vector3d& q,
                             const FrictionLaw& law, double rho, const Eigen::Vector3d& r_start,
                             double tol, int max_iterations) {
  if (!(rho > 0.0) || !std::isfinite(rho)) rho = automatic_rho(W, law);

  // Open: r = 0 is a solution iff the free gap q_n >= 0 (physics.md 3, g > 0 -> r = 0).
  if (q(0) >= 0.0) return {Eigen::Vector3d::Zero(), ContactState::open, 0, true};

  if (law.frictionless()) {
    // Frictionless contact: r_t = 0 and g = q_n + W_nn r_n = 0.
    if (W(0, 0) > 0.0)
      return {Eigen::Vector3d(-q(0) / W(0, 0), 0.0, 0.0), ContactState::slip, 0, true};
  } else {
    Eigen::Vector3d r;
    if (stick_candidate(W, q, law, r)) return {r, ContactState::stick, 0, true};
    int iterations = 0;
    if (slip_candidate(W, q, law, rho, tol, r, iterations))
      return {r, ContactState::slip, iterations, true};
  }
  return predictor_corrector(W, q, law, rho, r_start, tol, max_iterations);
}

}  // namespace bipo
