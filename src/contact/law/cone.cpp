// The friction cone K_mu (docs/physics.md section 3.2): projection onto it (circular
// closed form, general Ferrari + Newton path), its derivative, the exactly
// admissible reaction and the friction function. See cone.hpp, and
// docs/contact-law.md for the algorithms.
#include "contact/law/cone.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "contact/law/numerics.hpp"

namespace bipo {

using law_detail::kEps;
using law_detail::norm2;

namespace {

/// The secular function of the general projection (physics.md 3.2) in the
/// multiplier gamma, written without the singularity at gamma = 1:
///   E(gamma) = (1 - gamma) |r_t(gamma)|_mu - tau_n,
///   r_tk(gamma) = tau_tk mu_k^2 / (mu_k^2 + gamma).
/// On the root r_n = tau_n / (1 - gamma) = |r_t|_mu, which is physics.md's equation
/// before squaring. E is continuous and strictly decreasing on gamma >= 0:
///   E'(gamma) = -(1/N) sum_k a_k (1 + A_k) / (A_k + gamma)^3,
/// with A_k = mu_k^2, a_k = A_k tau_tk^2 and N = |r_t(gamma)|_mu.
struct Secular {
  double A1, A2;    // mu_k^2
  double sa1, sa2;  // sqrt(a_k) = mu_k |tau_tk|
  double tn;

  void eval(double gamma, double& e, double& de) const {
    const double d1 = A1 + gamma;
    const double d2 = A2 + gamma;
    const double w1 = sa1 / d1;
    const double w2 = sa2 / d2;
    const double n = std::sqrt(w1 * w1 + w2 * w2);
    e = (1.0 - gamma) * n - tn;
    de = -(w1 * w1 * (1.0 + A1) / d1 + w2 * w2 * (1.0 + A2) / d2) / n;
  }
};

}  // namespace

// ---------------------------------------------------------------------------
// Ferrari's method for the quartic

namespace {

/// The monic quartic x^4 + b x^3 + c x^2 + d x + e depressed by x = y - b/4:
/// y^4 + p y^2 + q y + r = 0.
struct DepressedQuartic {
  double p, q, r;
  double shift;  // x = y + shift
};

DepressedQuartic depress_quartic(double c4, double c3, double c2, double c1, double c0) {
  const double b = c3 / c4, c = c2 / c4, d = c1 / c4, e = c0 / c4;
  const double b2 = b * b;
  const double p = c - 3.0 * b2 / 8.0;
  const double q = d - b * c / 2.0 + b2 * b / 8.0;
  const double r = e - b * d / 4.0 + b2 * c / 16.0 - 3.0 * b2 * b2 / 256.0;
  const double shift = -b / 4.0;
  return {p, q, r, shift};
}

/// Ferrari: (y^2 + p/2 + m)^2 = 2m y^2 - q y + (p/2 + m)^2 - r is a perfect
/// square when m solves the resolvent cubic m^3 + p m^2 + (p^2/4 - r) m - q^2/8 = 0.
/// Its largest real root, which is > 0 whenever q != 0.
double resolvent_root(const DepressedQuartic& dq) {
  const double p = dq.p, q = dq.q, r = dq.r;
  const double ca = p, cb = p * p / 4.0 - r, cc = -q * q / 8.0;
  const double P = cb - ca * ca / 3.0;
  const double Q = 2.0 * ca * ca * ca / 27.0 - ca * cb / 3.0 + cc;
  const double disc = Q * Q / 4.0 + P * P * P / 27.0;
  double t;
  if (disc > 0.0) {  // one real root (Cardano, cancellation-free form)
    const double u = -std::cbrt(Q / 2.0 + std::copysign(std::sqrt(disc), Q));
    t = (u != 0.0) ? u - P / (3.0 * u) : 0.0;
  } else {  // three real roots: the largest one (trigonometric form)
    const double rp = std::sqrt(std::max(-P / 3.0, 0.0));
    const double arg = (rp > 0.0) ? std::clamp(-Q / (2.0 * rp * rp * rp), -1.0, 1.0) : 0.0;
    t = 2.0 * rp * std::cos(std::acos(arg) / 3.0);
  }
  double m = t - ca / 3.0;
  // One Newton step on the resolvent polishes m (it only feeds square roots).
  const double f = ((m + ca) * m + cb) * m + cc;
  const double df = (3.0 * m + 2.0 * ca) * m + cb;
  if (df != 0.0) {
    const double m1 = m - f / df;
    if (std::isfinite(m1)) m = m1;
  }
  return m;
}

/// The roots of y^2 + B y + C = 0; a complex pair (or double root) gives its
/// real part twice.
void solve_monic_quadratic(double B, double C, double* out) {
  const double dq = B * B - 4.0 * C;
  if (dq <= 0.0) {
    out[0] = out[1] = -B / 2.0;
    return;
  }
  const double s = -0.5 * (B + std::copysign(std::sqrt(dq), B));  // no cancellation
  out[0] = s;
  out[1] = (s != 0.0) ? C / s : 0.0;
}

/// The four roots y of the depressed quartic, given the resolvent's root m:
/// the two quadratic factors y^2 -+ sqrt(2m) y + p/2 + m +- q / (2 sqrt(2m)).
void depressed_quartic_roots(const DepressedQuartic& dq, double m, double y[4]) {
  if (m > 0.0) {
    const double sq = std::sqrt(2.0 * m);
    const double h = dq.q / (2.0 * sq);
    solve_monic_quadratic(-sq, dq.p / 2.0 + m + h, y);
    solve_monic_quadratic(sq, dq.p / 2.0 + m - h, y + 2);
  } else {  // q == 0: biquadratic y^4 + p y^2 + r = 0
    double z[2];
    solve_monic_quadratic(dq.p, dq.r, z);
    for (int k = 0; k < 2; ++k) {
      const double root = std::sqrt(std::max(z[k], 0.0));
      y[2 * k] = root;
      y[2 * k + 1] = -root;
    }
  }
}

}  // namespace

namespace detail {

bool solve_quartic_ferrari(double c4, double c3, double c2, double c1, double c0, double roots[4]) {
  const DepressedQuartic dq = depress_quartic(c4, c3, c2, c1, c0);
  double y[4];
  depressed_quartic_roots(dq, resolvent_root(dq), y);
  bool finite = true;
  for (int k = 0; k < 4; ++k) {
    roots[k] = y[k] + dq.shift;
    finite = finite && std::isfinite(roots[k]);
  }
  return finite;
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Projection onto K_mu (physics.md 3.2)

namespace {

/// tau scaled exactly by 2^-ex so that max |tau_i| is in [1, 2).
struct ScaledTau {
  int ex;
  double tn, t1, t2;
};

/// An interval of the multiplier gamma that holds the secular root.
struct Bracket {
  double lo, hi;
};

/// The bracket of the slip root. With s = r_n, d_k = s (1 + A_k) - tau_n > 0
/// and sum_k a_k / d_k^2 = 1, so s lies in [D / (1 + A_max), D / (1 + A_min)]
/// with D = |tau_t|_mu* + tau_n > 0; gamma = 1 - tau_n / s maps it to a bracket.
Bracket secular_bracket(double D, double tn, double Amin, double Amax) {
  const double s_lo = D / (1.0 + Amax), s_hi = D / (1.0 + Amin);
  // 1 - tau_n / s carries an absolute rounding error of a few eps: widen the
  // bracket by more than that (E is monotone, the root stays inside).
  auto widen = [Amin](double g) { return 1e-8 * (Amin + g) + 8.0 * kEps; };
  double g_lo, g_hi;
  if (tn > 0.0) {
    g_lo = 1.0 - tn / s_lo;
    g_hi = 1.0 - tn / s_hi;
    g_lo = std::max(0.0, g_lo - widen(g_lo));
    g_hi = std::clamp(g_hi + widen(g_hi), g_lo, 1.0);
  } else if (tn < 0.0) {
    g_lo = 1.0 - tn / s_hi;
    g_hi = 1.0 - tn / s_lo;
    g_lo = std::max(1.0, g_lo - widen(g_lo));
    g_hi = std::max(g_hi + widen(g_hi), g_lo);
  } else {
    g_lo = g_hi = 1.0;  // tau_n = 0: gamma = 1 exactly
  }
  return {g_lo, g_hi};
}

/// c4..c0 of physics.md's secular equation cleared of denominators:
///   a1 (1-g)^2 (A2+g)^2 + a2 (1-g)^2 (A1+g)^2 - tau_n^2 (A1+g)^2 (A2+g)^2 = 0,
/// a quartic in gamma solved by Ferrari's method as in the source paper.
void secular_quartic(const Secular& sec, double c[5]) {
  const double A1 = sec.A1, A2 = sec.A2;
  const double a1 = sec.sa1 * sec.sa1, a2 = sec.sa2 * sec.sa2, cn = sec.tn * sec.tn;
  c[4] = a1 + a2 - cn;
  c[3] = -2.0 * (a1 * (1.0 - A2) + a2 * (1.0 - A1) + cn * (A1 + A2));
  c[2] = a1 * (1.0 + A2 * (A2 - 4.0)) + a2 * (1.0 + A1 * (A1 - 4.0)) -
         cn * ((A1 + A2) * (A1 + A2) + 2.0 * A1 * A2);
  c[1] = 2.0 * (a1 * (1.0 - A2) * A2 + a2 * (1.0 - A1) * A1 - cn * (A1 + A2) * A1 * A2);
  c[0] = a1 * A2 * A2 + a2 * A1 * A1 - cn * A1 * A1 * A2 * A2;
}

/// The start of the polish from Ferrari's roots: the right root is the one in
/// the bracket (gamma >= 0, r_n > 0) with the best residual. Leaves gamma
/// unchanged and returns false when no root is admissible.
bool ferrari_start(const Secular& sec, const Bracket& br, double& gamma) {
  double c[5];
  secular_quartic(sec, c);
  const double cmax = std::max({std::abs(c[3]), std::abs(c[2]), std::abs(c[1]), std::abs(c[0])});
  double roots[4];
  if (!(std::abs(c[4]) > 1e-8 * cmax &&
        detail::solve_quartic_ferrari(c[4], c[3], c[2], c[1], c[0], roots)))
    return false;
  const double slack = 1e-6 * (br.hi - br.lo);
  double best = std::numeric_limits<double>::infinity();
  bool found = false;
  for (const double root : roots) {
    if (!(root >= br.lo - slack && root <= br.hi + slack)) continue;
    const double gr = std::clamp(root, br.lo, br.hi);
    double e, de;
    sec.eval(gr, e, de);
    if (std::abs(e) < best) {
      best = std::abs(e);
      gamma = gr;
      found = true;
    }
  }
  return found;
}

/// Polish: safeguarded Newton on the monotone secular function E, keeping the
/// bracket; from Ferrari's root one or two steps reach round-off. Without an
/// admissible root it is the fallback (Newton with bisection) from the middle.
/// Returns the number of steps.
int polish_secular_root(const Secular& sec, double Amin, Bracket br, double& gamma) {
  const double tol = 4.0 * kEps;
  int steps = 0;
  for (; steps < 200; ++steps) {
    double e, de;
    sec.eval(gamma, e, de);
    if (e == 0.0) break;
    if (e > 0.0)
      br.lo = gamma;  // E decreasing: the root is to the right
    else
      br.hi = gamma;
    double next = gamma - e / de;
    const bool newton_ok = std::isfinite(next) && next > br.lo && next < br.hi;
    if (!newton_ok) next = 0.5 * (br.lo + br.hi);
    const double step = std::abs(next - gamma);
    gamma = next;
    // r_tk depends on gamma through A_k + gamma: converge relative to that.
    const double ref = Amin + gamma;
    if (newton_ok && step <= 1e-9 * ref) {  // quadratic convergence: error ~ step^2
      ++steps;
      break;
    }
    if (br.hi - br.lo <= tol * ref) {
      ++steps;
      break;
    }
  }
  return steps;
}

/// The point of the cone's surface for the multiplier gamma, scaled back.
detail::GeneralProjection slip_projection(const ScaledTau& s, double mu1, double mu2, double gamma,
                                          int steps, bool ferrari_used) {
  const double A1 = mu1 * mu1, A2 = mu2 * mu2;
  const double r1 = s.t1 * (A1 / (A1 + gamma));
  const double r2 = s.t2 * (A2 / (A2 + gamma));
  const double rn = norm2(r1 / mu1, r2 / mu2);  // on the cone: r_n = |r_t|_mu
  return {Eigen::Vector3d(std::ldexp(rn, s.ex), std::ldexp(r1, s.ex), std::ldexp(r2, s.ex)),
          ContactState::slip, steps, ferrari_used};
}

}  // namespace

namespace detail {

ConeProjection project_onto_cone_circular(const Eigen::Vector3d& tau, double mu) {
  // Circular cone |r_t| <= mu r_n: closed form of physics.md 3.2.
  int ex = 0;
  Eigen::Vector3d t = tau;
  const double big = tau.cwiseAbs().maxCoeff();
  if (!(big > 1e-100 && big < 1e100)) {  // rescale exactly by a power of 2
    if (big == 0.0) return {Eigen::Vector3d::Zero(), ContactState::open};
    ex = std::ilogb(big);
    for (int i = 0; i < 3; ++i) t(i) = std::ldexp(tau(i), -ex);
  }
  const double nt = std::sqrt(t(1) * t(1) + t(2) * t(2));
  if (nt <= mu * t(0)) return {tau, ContactState::stick};  // |tau_t|_mu <= tau_n
  if (mu * nt <= -t(0))                                    // |tau_t|_mu* <= -tau_n
    return {Eigen::Vector3d::Zero(), ContactState::open};
  const double rn = (mu * nt + t(0)) / (1.0 + mu * mu);
  const double k = mu * rn / nt;
  return {Eigen::Vector3d(std::ldexp(rn, ex), std::ldexp(k * t(1), ex), std::ldexp(k * t(2), ex)),
          ContactState::slip};
}

GeneralProjection project_onto_cone_general(const Eigen::Vector3d& tau, double mu1, double mu2) {
  // Scale exactly by a power of 2 so that max |tau_i| is in [1, 2): the
  // projection is positively homogeneous and nothing below over- or underflows.
  const double big = tau.cwiseAbs().maxCoeff();
  if (big == 0.0) return {Eigen::Vector3d::Zero(), ContactState::open, 0, false};
  const int ex = std::ilogb(big);
  const ScaledTau s{ex, std::ldexp(tau(0), -ex), std::ldexp(tau(1), -ex), std::ldexp(tau(2), -ex)};

  const double nmu = norm2(s.t1 / mu1, s.t2 / mu2);  // |tau_t|_mu
  if (nmu <= s.tn) return {tau, ContactState::stick, 0, false};
  const double ndual = norm2(mu1 * s.t1, mu2 * s.t2);  // |tau_t|_mu*
  if (ndual <= -s.tn) return {Eigen::Vector3d::Zero(), ContactState::open, 0, false};

  // Slip: r_tk = tau_tk A_k / (A_k + gamma), r_n = |r_t|_mu, gamma >= 0 the root of
  // the secular equation (physics.md 3.2), started from Ferrari's root of the quartic
  // and polished by Newton.
  const double A1 = mu1 * mu1, A2 = mu2 * mu2;
  const double Amin = std::min(A1, A2), Amax = std::max(A1, A2);
  const Secular sec{A1, A2, mu1 * std::abs(s.t1), mu2 * std::abs(s.t2), s.tn};
  const Bracket br = secular_bracket(ndual + s.tn, s.tn, Amin, Amax);
  int steps = 0;
  bool ferrari_used = false;
  double gamma = 0.5 * (br.lo + br.hi);
  if (br.hi > br.lo) {
    ferrari_used = ferrari_start(sec, br, gamma);
    steps = polish_secular_root(sec, Amin, br, gamma);
  }
  return slip_projection(s, mu1, mu2, gamma, steps, ferrari_used);
}

}  // namespace detail

Eigen::Vector3d admissible_reaction(const Eigen::Vector3d& r, const FrictionLaw& law) {
  Eigen::Vector3d a = project_onto_friction_cone(r, law).r;
  // The circular closed form computes r_n and r_t separately, each rounded:
  // |r_t|_mu can come out an ulp or two above r_n.
  if (!law.frictionless()) a(0) = std::max(a(0), law.norm_mu(a.tail<2>()));
  return a;
}

Eigen::Matrix3d projection_derivative(const Eigen::Vector3d& tau, ContactState state,
                                      const FrictionLaw& law) {
  // Slip: a relative step of 1e-6 puts truncation and round-off errors both
  // near 1e-11 of |tau|, ample for a Newton step.
  if (state == ContactState::stick) return Eigen::Matrix3d::Identity();
  if (state == ContactState::open) return Eigen::Matrix3d::Zero();
  const double h = 1e-6 * tau.norm();
  if (!(h > 0.0)) return Eigen::Matrix3d::Zero();
  Eigen::Matrix3d d;
  for (int k = 0; k < 3; ++k) {
    Eigen::Vector3d step = Eigen::Vector3d::Zero();
    step(k) = h;
    d.col(k) = (project_onto_friction_cone(tau + step, law).r -
                project_onto_friction_cone(tau - step, law).r) /
               (2.0 * h);
  }
  return d;
}

double friction_function(const Eigen::Vector3d& r, const FrictionLaw& law) {
  if (law.frictionless()) return -r(0);
  return law.norm_mu(r.tail<2>()) - r(0);
}

}  // namespace bipo
