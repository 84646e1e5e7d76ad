// Unit tests of the per-node contact law (contact/law/, docs/physics.md section 3):
// parameters, cone projection against exact truths and an independent long double
// reference, the predictor-corrector's fixed points, the bipotential certificate
// (including the Coulomb graph of the first seed paper), the predictor A(v)
// and its derivative, the projection's derivative and the one-node solver.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "contact/law/law.hpp"
#include "core/errors.hpp"

namespace bipo {
namespace {

using Eigen::Matrix3d;
using Eigen::Vector2d;
using Eigen::Vector3d;

constexpr double kPi = 3.14159265358979323846;

// ---------------------------------------------------------------------------
// Helpers

class Sampler {
 public:
  explicit Sampler(unsigned seed) : gen_(seed) {}
  double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(gen_); }
  double log_uniform(double a, double b) { return std::exp(uniform(std::log(a), std::log(b))); }
  double normal() { return std::normal_distribution<double>(0.0, 1.0)(gen_); }
  int integer(int a, int b) { return std::uniform_int_distribution<int>(a, b)(gen_); }
  Vector3d direction() {
    Vector3d v(normal(), normal(), normal());
    while (v.norm() == 0.0) v = Vector3d(normal(), normal(), normal());
    return v.normalized();
  }

 private:
  std::mt19937_64 gen_;
};

/// A point of K_mu: r_n >= 0 and |r_t|_mu = f r_n with f in [0, 1].
Vector3d point_in_cone(Sampler& s, double mu1, double mu2, double rn, double f) {
  const double th = s.uniform(0.0, 2.0 * kPi);
  return Vector3d(rn, f * rn * mu1 * std::cos(th), f * rn * mu2 * std::sin(th));
}

/// Outward normal of K_mu at r on its surface (r_t != 0): the gradient of
/// f(r) = |r_t|_mu - r_n.
Vector3d cone_normal(const Vector3d& r, double mu1, double mu2) {
  const double n = std::sqrt((r(1) / mu1) * (r(1) / mu1) + (r(2) / mu2) * (r(2) / mu2));
  return Vector3d(-1.0, r(1) / (mu1 * mu1 * n), r(2) / (mu2 * mu2 * n));
}

/// Independent slow projection onto K_mu: bisection on the multiplier gamma of
/// physics.md 3.2 in long double, on physics.md's squared equation multiplied by (1 - gamma)^2:
///   h(gamma) = (1-gamma)^2 sum_k mu_k^2 tau_k^2 / (mu_k^2 + gamma)^2 - tau_n^2,
/// which is decreasing on [0, 1] (tau_n > 0) and increasing on [1, inf) (tau_n < 0).
Vector3d reference_projection(const Vector3d& tau, double mu1d, double mu2d) {
  using LD = long double;
  const LD tn = tau(0), t1 = tau(1), t2 = tau(2), mu1 = mu1d, mu2 = mu2d;
  const LD A1 = mu1 * mu1, A2 = mu2 * mu2;
  const LD nmu = std::sqrt((t1 / mu1) * (t1 / mu1) + (t2 / mu2) * (t2 / mu2));
  const LD ndual = std::sqrt((mu1 * t1) * (mu1 * t1) + (mu2 * t2) * (mu2 * t2));
  if (nmu <= tn) return tau;
  if (ndual <= -tn) return Vector3d::Zero();
  auto h = [&](LD g) {
    const LD u1 = (1 - g) / (A1 + g), u2 = (1 - g) / (A2 + g);
    return A1 * t1 * t1 * u1 * u1 + A2 * t2 * t2 * u2 * u2 - tn * tn;
  };
  LD g = 1;
  if (tn > 0) {
    LD lo = 0, hi = 1;  // h(lo) > 0 > h(hi)
    for (int i = 0; i < 400; ++i) {
      const LD mid = (lo + hi) / 2;
      if (mid <= lo || mid >= hi) break;
      (h(mid) > 0 ? lo : hi) = mid;
    }
    g = (lo + hi) / 2;
  } else if (tn < 0) {
    LD lo = 1, hi = 2;  // h(lo) < 0 <= h(hi)
    while (h(hi) < 0) hi *= 2;
    for (int i = 0; i < 400; ++i) {
      const LD mid = (lo + hi) / 2;
      if (mid <= lo || mid >= hi) break;
      (h(mid) < 0 ? lo : hi) = mid;
    }
    g = (lo + hi) / 2;
  }
  const LD r1 = t1 * A1 / (A1 + g), r2 = t2 * A2 / (A2 + g);
  // physics.md's r_n = tau_n / (1 - gamma), except where 1 - gamma vanishes.
  const LD rn = (std::fabs(1 - g) > 1e-6L)
                    ? tn / (1 - g)
                    : std::sqrt((r1 / mu1) * (r1 / mu1) + (r2 / mu2) * (r2 / mu2));
  return Vector3d(static_cast<double>(rn), static_cast<double>(r1), static_cast<double>(r2));
}

/// A random tau in one of several regimes relative to the cone (mu1, mu2).
Vector3d random_tau(Sampler& s, double mu1, double mu2) {
  const double mag = s.log_uniform(1e-12, 1e12);
  switch (s.integer(0, 7)) {
    case 0:  // anywhere
      return mag * s.direction();
    case 1: {  // near the cone's surface
      const Vector3d r = point_in_cone(s, mu1, mu2, 1.0, 1.0);
      return mag * (r / r.norm() + s.log_uniform(1e-10, 1e-1) * s.direction());
    }
    case 2: {  // near the polar cone's surface: |v_t|_mu* = -v_n
      const double th = s.uniform(0.0, 2.0 * kPi);
      const Vector3d v(-1.0, std::cos(th) / mu1, std::sin(th) / mu2);
      return mag * (v / v.norm() + s.log_uniform(1e-10, 1e-1) * s.direction());
    }
    case 3: {  // tau_t on an axis
      Vector3d t = mag * s.direction();
      t(s.integer(1, 2)) = 0.0;
      return t;
    }
    case 4: {  // tau_n = 0
      Vector3d t = mag * s.direction();
      t(0) = 0.0;
      return t;
    }
    case 5: {  // tau_t = 0
      return Vector3d(s.uniform(-1.0, 1.0) * mag, 0.0, 0.0);
    }
    case 6: {  // slip: r on the surface plus a multiple of the outward normal
      const Vector3d r = point_in_cone(s, mu1, mu2, 1.0, 1.0);
      return mag * (r + s.log_uniform(1e-6, 1e6) * cone_normal(r, mu1, mu2));
    }
    default:  // nearly tangential, both signs of tau_n
      return mag * Vector3d(s.uniform(-1e-3, 1e-3), s.normal(), s.normal());
  }
}

/// (mu1, mu2) with mu1 in [0.03, 3] and mu1/mu2 in [1e-3, 1e3], or equal.
void random_mu(Sampler& s, double& mu1, double& mu2) {
  mu1 = s.log_uniform(0.03, 3.0);
  const int kind = s.integer(0, 4);
  if (kind == 0)
    mu2 = mu1;
  else if (kind == 1)
    mu2 = mu1 * 1e3;
  else if (kind == 2)
    mu2 = mu1 * 1e-3;
  else
    mu2 = mu1 / s.log_uniform(1e-3, 1e3);
}

// ---------------------------------------------------------------------------
// Parameters

TEST(FrictionLawParams, AccessorsAndDerivedQuantities) {
  const FrictionLaw c = FrictionLaw::orthotropic(0.3, 0.15, 0.05, 0.2);  // physics.md 4, case C
  EXPECT_EQ(c.mu1(), 0.3);
  EXPECT_EQ(c.mu2(), 0.15);
  EXPECT_EQ(c.p1(), 0.05);
  EXPECT_EQ(c.p2(), 0.2);
  EXPECT_FALSE(c.frictionless());
  EXPECT_FALSE(c.isotropic_cone());
  EXPECT_NEAR(c.omega_squared()(0), 1.0 / 36.0, 1e-15);
  EXPECT_NEAR(c.omega_squared()(1), 16.0 / 9.0, 1e-15);
  EXPECT_NEAR(c.norm_mu(Vector2d(0.3, 0.6)), std::sqrt(1.0 + 16.0), 1e-14);
  EXPECT_NEAR(c.dual_norm_mu(Vector2d(10.0, 20.0)), std::sqrt(9.0 + 9.0), 1e-14);

  const FrictionLaw a = FrictionLaw::isotropic(0.2);
  EXPECT_TRUE(a.isotropic_cone());
  EXPECT_EQ(a.p2(), 0.2);
  EXPECT_NEAR(a.omega_squared()(0), 1.0, 1e-15);
  EXPECT_NEAR(a.norm_mu(Vector2d(0.3, 0.4)), 2.5, 1e-14);

  const FrictionLaw f = FrictionLaw::orthotropic(0.0, 0.0, 0.0, 0.0);
  EXPECT_TRUE(f.frictionless());
  EXPECT_TRUE(FrictionLaw::isotropic(0.0).frictionless());
  EXPECT_EQ(f.omega_squared(), Vector2d::Zero());
  EXPECT_EQ(f.dual_norm_mu(Vector2d(3.0, 4.0)), 0.0);
  EXPECT_EQ(f.norm_mu(Vector2d::Zero()), 0.0);
  EXPECT_TRUE(std::isinf(f.norm_mu(Vector2d(1.0, 0.0))));
}

TEST(FrictionLawParams, InvalidParametersThrowInputError) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THROW((void)FrictionLaw::isotropic(-0.1), InputError);
  EXPECT_THROW((void)FrictionLaw::isotropic(nan), InputError);
  EXPECT_THROW((void)FrictionLaw::isotropic(inf), InputError);
  EXPECT_THROW((void)FrictionLaw::orthotropic(-0.3, 0.15, 0.3, 0.15), InputError);
  EXPECT_THROW((void)FrictionLaw::orthotropic(0.3, 0.15, 0.3, -0.15), InputError);
  EXPECT_THROW((void)FrictionLaw::orthotropic(0.3, nan, 0.3, 0.15), InputError);
  EXPECT_THROW((void)FrictionLaw::orthotropic(0.3, 0.15, inf, 0.15), InputError);
  EXPECT_THROW((void)FrictionLaw::orthotropic(0.0, 0.0, 0.1, 0.0), InputError);  // p w/o mu
  EXPECT_THROW((void)FrictionLaw::orthotropic(0.0, 0.0, 0.1, 0.1), InputError);
  EXPECT_THROW((void)FrictionLaw::orthotropic(0.3, 0.15, 0.0, 0.15), InputError);  // mu, p=0
  EXPECT_THROW((void)FrictionLaw::orthotropic(0.3, 0.15, 0.3, 0.0), InputError);
  EXPECT_THROW((void)FrictionLaw::orthotropic(0.3, 0.0, 0.3, 0.0), InputError);  // one mu 0
  EXPECT_THROW((void)FrictionLaw::orthotropic(0.0, 0.15, 0.0, 0.15), InputError);
  EXPECT_NO_THROW((void)FrictionLaw::orthotropic(0.0, 0.0, 0.0, 0.0));
  EXPECT_NO_THROW((void)FrictionLaw::orthotropic(0.3, 0.15, 0.05, 0.2));
  try {
    (void)FrictionLaw::orthotropic(0.3, 0.0, 0.3, 0.0);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("mu1"), std::string::npos) << e.what();
  }
}

TEST(FrictionLawParams, ParametersProblemNamesTheCoefficientAtFault) {
  using C = FrictionCoefficient;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Row {
    double mu1, mu2, p1, p2;
    C at_fault;
    const char* expected;
  };
  const Row rows[] = {
      {-0.1, 0.1, 0.1, 0.1, C::mu1, ">= 0"},
      {0.1, nan, 0.1, 0.1, C::mu2, "finite"},
      {0.1, 0.1, 0.1, -1.0, C::p2, ">= 0"},
      {0.3, 0.0, 0.3, 0.0, C::mu2, "both > 0 (or both 0: frictionless)"},
      {0.0, 0.3, 0.0, 0.3, C::mu1, "both > 0 (or both 0: frictionless)"},
      {0.0, 0.0, 0.1, 0.0, C::p1, "the contact is frictionless"},
      {0.0, 0.0, 0.0, 0.2, C::p2, "the contact is frictionless"},
      {0.3, 0.15, 0.0, 0.15, C::p1, "a number > 0 (the contact has friction)"},
      {0.3, 0.15, 0.3, 0.0, C::p2, "a number > 0 (the contact has friction)"},
  };
  for (const Row& row : rows) {
    const auto problem = friction_parameters_problem(row.mu1, row.mu2, row.p1, row.p2);
    ASSERT_TRUE(problem.has_value()) << row.mu1 << ' ' << row.mu2 << ' ' << row.p1 << ' ' << row.p2;
    EXPECT_EQ(problem->coefficient, row.at_fault);
    EXPECT_NE(problem->expected.find(row.expected), std::string::npos) << problem->expected;
    // The law refuses the same values, naming the same coefficient.
    try {
      (void)FrictionLaw::orthotropic(row.mu1, row.mu2, row.p1, row.p2);
      ADD_FAILURE() << "expected InputError";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::string(coefficient_name(row.at_fault)) + ": expected"),
                std::string::npos)
          << what;
    }
  }
  EXPECT_FALSE(friction_parameters_problem(0.0, 0.0, 0.0, 0.0).has_value());
  EXPECT_FALSE(friction_parameters_problem(0.3, 0.15, 0.05, 0.2).has_value());
  EXPECT_FALSE(friction_parameters_problem(1e-6, 100.0, 100.0, 1e-6).has_value());
}

TEST(FrictionLawParams, NormsAreDualAndFrictionFunctionValues) {
  Sampler s(11);
  for (int i = 0; i < 10000; ++i) {
    double mu1, mu2;
    random_mu(s, mu1, mu2);
    const FrictionLaw law = FrictionLaw::orthotropic(mu1, mu2, mu1, mu2);
    const Vector2d r(s.normal(), s.normal()), v(s.normal(), s.normal());
    // Cauchy-Schwarz for a norm and its dual, with equality at v = mu^-2 r.
    EXPECT_LE(std::abs(r.dot(v)), law.norm_mu(r) * law.dual_norm_mu(v) * (1 + 1e-14));
    const Vector2d w(r(0) / (mu1 * mu1), r(1) / (mu2 * mu2));
    EXPECT_NEAR(r.dot(w), law.norm_mu(r) * law.dual_norm_mu(w), 1e-13 * std::abs(r.dot(w)));
  }
  const FrictionLaw b = FrictionLaw::orthotropic(0.3, 0.15, 0.3, 0.15);
  EXPECT_NEAR(friction_function(Vector3d(10.0, 1.5, 1.5), b), std::sqrt(25.0 + 100.0) - 10.0,
              1e-13);
  EXPECT_NEAR(friction_function(Vector3d(2.0, 0.0, 0.0), FrictionLaw::isotropic(0.0)), -2.0, 0);
  EXPECT_EQ(frictional_dissipation(Vector3d(5.0, 1.0, -2.0), Vector2d(-0.5, 0.25)), 1.0);
}

// ---------------------------------------------------------------------------
// Projection onto K_mu (physics.md 3.2)

TEST(FrictionProjection, KnownValues) {
  const FrictionLaw iso = FrictionLaw::isotropic(1.0);
  // tau = (0, 1, 0): r_n = (mu |tau_t| + tau_n) / (1 + mu^2) = 1/2, r_t = (1/2, 0).
  ConeProjection p = project_onto_friction_cone(Vector3d(0.0, 1.0, 0.0), iso);
  EXPECT_EQ(p.state, ContactState::slip);
  EXPECT_NEAR((p.r - Vector3d(0.5, 0.5, 0.0)).norm(), 0.0, 1e-15);
  p = project_onto_friction_cone(Vector3d(2.0, 1.0, -1.0), iso);
  EXPECT_EQ(p.state, ContactState::stick);
  EXPECT_EQ(p.r, Vector3d(2.0, 1.0, -1.0));
  p = project_onto_friction_cone(Vector3d(-2.0, 1.0, -1.0), iso);
  EXPECT_EQ(p.state, ContactState::open);
  EXPECT_EQ(p.r, Vector3d::Zero());
  // Orthotropic, tau_t on the t1 axis: the problem is the 2D cone |r_t1| <= mu1 r_n.
  const FrictionLaw b = FrictionLaw::orthotropic(0.5, 2.0, 0.5, 2.0);
  p = project_onto_friction_cone(Vector3d(1.0, 3.0, 0.0), b);
  const double rn = (0.5 * 3.0 + 1.0) / 1.25;
  EXPECT_EQ(p.state, ContactState::slip);
  EXPECT_NEAR((p.r - Vector3d(rn, 0.5 * rn, 0.0)).norm(), 0.0, 1e-14);
  // Frictionless: the ray r_t = 0.
  const FrictionLaw f = FrictionLaw::isotropic(0.0);
  p = project_onto_friction_cone(Vector3d(3.0, 1.0, 2.0), f);
  EXPECT_EQ(p.r, Vector3d(3.0, 0.0, 0.0));
  EXPECT_EQ(p.state, ContactState::slip);
  p = project_onto_friction_cone(Vector3d(-3.0, 1.0, 2.0), f);
  EXPECT_EQ(p.r, Vector3d::Zero());
  EXPECT_EQ(p.state, ContactState::open);
}

TEST(FrictionProjection, FeasibleOptimalAndStateConsistentOnRandomSamples) {
  // 2 million samples over all regimes: r in K_mu, <tau - r, k - r> <= 0 for k in
  // K_mu (the variational inequality characterising the projection), and the
  // state matches where tau lies.
  Sampler s(2024);
  int n_state[3] = {0, 0, 0};
  double worst_feas = 0.0, worst_vi = 0.0, worst_exact = 0.0;
  for (int i = 0; i < 2000000; ++i) {
    double mu1, mu2;
    random_mu(s, mu1, mu2);
    const FrictionLaw law = FrictionLaw::orthotropic(mu1, mu2, mu1, mu2);
    const Vector3d tau = random_tau(s, mu1, mu2);
    const ConeProjection p = project_onto_friction_cone(tau, law);
    ASSERT_TRUE(p.r.allFinite()) << tau.transpose();
    ++n_state[static_cast<int>(p.state)];
    const double nt = tau.norm();
    const double feas = std::max(friction_function(p.r, law), -p.r(0)) / nt;
    worst_feas = std::max(worst_feas, feas);
    // k = 0 and k = 2r give <tau - r, r> = 0; plus random points of the cone.
    const Vector3d d = tau - p.r;
    double vi = std::abs(d.dot(p.r)) / (nt * nt);
    for (int j = 0; j < 2; ++j) {
      const Vector3d k = point_in_cone(s, mu1, mu2, s.uniform(0.0, 2.0) * nt, s.uniform(0, 1));
      vi = std::max(vi, d.dot(k - p.r) / (nt * nt));
    }
    worst_vi = std::max(worst_vi, vi);
    const double nmu = law.norm_mu(tau.tail<2>()), ndual = law.dual_norm_mu(tau.tail<2>());
    if (nmu <= tau(0)) {
      ASSERT_EQ(p.state, ContactState::stick);
      ASSERT_EQ(p.r, tau);
    } else if (ndual <= -tau(0)) {
      ASSERT_EQ(p.state, ContactState::open);
      ASSERT_EQ(p.r, Vector3d::Zero());
    } else {
      ASSERT_EQ(p.state, ContactState::slip);
      // Slip: r on the surface, tau - r along the outward normal at r.
      ASSERT_NEAR(friction_function(p.r, law), 0.0, 1e-12 * nt);
      if (p.r.tail<2>().norm() > 1e-6 * nt) {
        const Vector3d nrm = cone_normal(p.r, mu1, mu2);
        const double cross = (d - d.dot(nrm) / nrm.squaredNorm() * nrm).norm() / nt;
        worst_exact = std::max(worst_exact, cross);
        ASSERT_LE(cross, 1e-9) << "mu " << mu1 << " " << mu2 << " tau " << tau.transpose();
        ASSERT_GE(d.dot(nrm), -1e-12 * nt);
      }
    }
  }
  EXPECT_LE(worst_feas, 1e-12);
  EXPECT_LE(worst_vi, 1e-12);
  EXPECT_GT(n_state[0], 100000);
  EXPECT_GT(n_state[1], 100000);
  EXPECT_GT(n_state[2], 500000);
  RecordProperty("worst_normal_residual", std::to_string(worst_exact));
}

TEST(FrictionProjection, ExactOnConstructedSlipPoints) {
  // tau = r + nu grad f(r) with r on the surface projects exactly onto r.
  Sampler s(7);
  for (int i = 0; i < 500000; ++i) {
    double mu1, mu2;
    random_mu(s, mu1, mu2);
    const FrictionLaw law = FrictionLaw::orthotropic(mu1, mu2, mu1, mu2);
    const double mag = s.log_uniform(1e-12, 1e12);
    const Vector3d r = point_in_cone(s, mu1, mu2, mag, 1.0);
    const Vector3d tau = r + s.log_uniform(1e-8, 1e8) * mag * cone_normal(r, mu1, mu2);
    const ConeProjection p = project_onto_friction_cone(tau, law);
    ASSERT_LE((p.r - r).norm(), 1e-12 * tau.norm())
        << "mu " << mu1 << " " << mu2 << " tau " << tau.transpose() << " r " << r.transpose()
        << " got " << p.r.transpose();
  }
}

TEST(FrictionProjection, AgreesWithLongDoubleBisection) {
  Sampler s(99);
  double worst = 0.0;
  for (int i = 0; i < 200000; ++i) {
    double mu1, mu2;
    random_mu(s, mu1, mu2);
    const FrictionLaw law = FrictionLaw::orthotropic(mu1, mu2, mu1, mu2);
    const Vector3d tau = random_tau(s, mu1, mu2);
    const Vector3d ref = reference_projection(tau, mu1, mu2);
    const Vector3d got = project_onto_friction_cone(tau, law).r;
    const double err = (got - ref).norm() / tau.norm();
    worst = std::max(worst, err);
    ASSERT_LE(err, 1e-10) << "mu " << mu1 << " " << mu2 << " tau " << tau.transpose() << " ref "
                          << ref.transpose() << " got " << got.transpose();
  }
  RecordProperty("worst_relative_difference", std::to_string(worst));
}

TEST(FrictionProjection, ExtremeInputsNeverNaN) {
  const double big = std::numeric_limits<double>::max() / 4;
  const double small = std::numeric_limits<double>::denorm_min();
  const std::vector<Vector3d> taus = {
      Vector3d::Zero(),         Vector3d(1, 0, 0),          Vector3d(-1, 0, 0),
      Vector3d(0, 1, 0),        Vector3d(0, 0, -1),         Vector3d(0, 1, 1),
      Vector3d(big, big, -big), Vector3d(-big, big, big),   Vector3d(small, small, 0),
      Vector3d(0, small, big),  Vector3d(1e-300, 1, 1e300), Vector3d(-1e300, 1e-300, 1e300)};
  const double mus[][2] = {{0.2, 0.2},  {0.3, 0.15}, {1e-3, 1.0},
                           {1.0, 1e-3}, {3.0, 3e3},  {1e3, 1.0}};
  for (const auto& m : mus) {
    const FrictionLaw law = FrictionLaw::orthotropic(m[0], m[1], m[0], m[1]);
    for (const Vector3d& tau : taus) {
      for (const double sign : {1.0, -1.0}) {
        const Vector3d t(tau(0), sign * tau(1), tau(2));
        const ConeProjection p = project_onto_friction_cone(t, law);
        ASSERT_TRUE(p.r.allFinite()) << t.transpose();
        ASSERT_LE(friction_function(p.r, law), 1e-12 * t.norm());
        const Vector3d g = detail::project_onto_cone_general(t, m[0], m[1]).r;
        ASSERT_TRUE(g.allFinite()) << t.transpose();
      }
    }
  }
}

TEST(FrictionProjection, PositivelyHomogeneousAcrossMagnitudes) {
  // proj(c tau) = c proj(tau) for c from 1e-12 to 1e12 (powers of 2 scale exactly).
  Sampler s(5);
  for (int i = 0; i < 20000; ++i) {
    double mu1, mu2;
    random_mu(s, mu1, mu2);
    const FrictionLaw law = FrictionLaw::orthotropic(mu1, mu2, mu1, mu2);
    const Vector3d tau = s.direction();
    const Vector3d r1 = project_onto_friction_cone(tau, law).r;
    for (const int e : {-40, -20, 20, 40}) {
      const double c = std::ldexp(1.0, e);
      const Vector3d rc = project_onto_friction_cone(c * tau, law).r;
      ASSERT_LE((rc / c - r1).norm(), 1e-13) << tau.transpose();
    }
  }
}

TEST(FrictionProjection, GeneralPathClosedFormAndFrictionlessAgree) {
  Sampler s(17);
  for (int i = 0; i < 200000; ++i) {
    const double mu = s.log_uniform(1e-2, 1e2);
    const Vector3d tau = random_tau(s, mu, mu);
    const double nt = tau.norm();
    // Ferrari + Newton on a circular cone == the closed form of physics.md 3.2.
    const Vector3d closed = detail::project_onto_cone_circular(tau, mu).r;
    const detail::GeneralProjection gen = detail::project_onto_cone_general(tau, mu, mu);
    ASSERT_LE((gen.r - closed).norm(), 1e-12 * nt)
        << "mu " << mu << " tau " << tau.transpose() << " general " << gen.r.transpose()
        << " closed " << closed.transpose();
    ASSERT_EQ(gen.state, detail::project_onto_cone_circular(tau, mu).state);
    // Continuity across mu1 == mu2: a slightly elliptic cone is close to the circle.
    const Vector3d near =
        project_onto_friction_cone(tau, FrictionLaw::orthotropic(mu, mu * (1 + 1e-9), mu, mu)).r;
    ASSERT_LE((near - closed).norm(), 1e-8 * nt);
  }
  // mu -> 0: both paths tend to the frictionless projection (max(tau_n, 0), 0, 0).
  const FrictionLaw none = FrictionLaw::isotropic(0.0);
  for (int i = 0; i < 20000; ++i) {
    const Vector3d tau = s.direction();
    const Vector3d r0 = project_onto_friction_cone(tau, none).r;
    EXPECT_EQ(r0, Vector3d(std::max(tau(0), 0.0), 0.0, 0.0));
    const Vector3d iso = project_onto_friction_cone(tau, FrictionLaw::isotropic(1e-9)).r;
    const Vector3d gen = detail::project_onto_cone_general(tau, 1e-9, 2e-9).r;
    ASSERT_LE((iso - r0).norm(), 1e-8);
    ASSERT_LE((gen - r0).norm(), 1e-8);
  }
}

TEST(FrictionProjection, FerrariStartsThePolishAndNewtonFinishesFast) {
  // A quartic with known roots.
  double roots[4];
  // (x - 1)(x - 2)(x + 3)(x - 0.5) = x^4 - 0.5 x^3 - 7 x^2 + 9.5 x - 3
  ASSERT_TRUE(detail::solve_quartic_ferrari(1.0, -0.5, -7.0, 9.5, -3.0, roots));
  std::vector<double> got(roots, roots + 4);
  std::sort(got.begin(), got.end());
  const double expected[4] = {-3.0, 0.5, 1.0, 2.0};
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(got[k], expected[k], 1e-12);
  // (x^2 + 1)(x - 4)(x + 2) = x^4 - 2 x^3 - 7 x^2 - 2 x - 8: real roots 4, -2, pair 0 +- i.
  ASSERT_TRUE(detail::solve_quartic_ferrari(2.0, -4.0, -14.0, -4.0, -16.0, roots));
  got.assign(roots, roots + 4);
  std::sort(got.begin(), got.end());
  EXPECT_NEAR(got[0], -2.0, 1e-12);
  EXPECT_NEAR(got[1], 0.0, 1e-12);
  EXPECT_NEAR(got[2], 0.0, 1e-12);
  EXPECT_NEAR(got[3], 4.0, 1e-12);

  // On the physics.md 4 cases, for generic slip samples Ferrari's root is used and
  // the Newton polish takes at most a few steps.
  Sampler s(3);
  int n_slip = 0, n_ferrari = 0, max_steps = 0;
  long total_steps = 0;
  for (int i = 0; i < 100000; ++i) {
    const bool b = (i % 2) == 0;
    const double mu1 = b ? 0.3 : s.log_uniform(0.05, 2.0),
                 mu2 = b ? 0.15 : s.log_uniform(0.05, 2.0);
    const detail::GeneralProjection g =
        detail::project_onto_cone_general(s.log_uniform(1e-3, 1e3) * s.direction(), mu1, mu2);
    if (g.state != ContactState::slip) continue;
    ++n_slip;
    n_ferrari += g.ferrari_used ? 1 : 0;
    total_steps += g.newton_steps;
    max_steps = std::max(max_steps, g.newton_steps);
  }
  EXPECT_GT(n_slip, 10000);
  EXPECT_GE(n_ferrari, 0.99 * n_slip);
  EXPECT_LE(static_cast<double>(total_steps) / n_slip, 2.5);
  EXPECT_LE(max_steps, 60);
}

// ---------------------------------------------------------------------------
// The predictor-corrector: fixed point iff the law holds (physics.md 3.2)

struct RandomLaw {
  double mu1, mu2, p1, p2;
  FrictionLaw law() const { return FrictionLaw::orthotropic(mu1, mu2, p1, p2); }
};

RandomLaw random_law(Sampler& s) {
  RandomLaw l{};
  l.mu1 = s.log_uniform(0.05, 1.0);
  l.mu2 = s.log_uniform(0.05, 1.0);
  l.p1 = s.log_uniform(0.02, 1.0);
  l.p2 = s.log_uniform(0.02, 1.0);
  return l;
}

/// |r_t|_p = sqrt((r_t1/p1)^2 + (r_t2/p2)^2), the sliding potential of physics.md 3.
double norm_p(const Vector2d& rt, double p1, double p2) {
  return std::sqrt((rt(0) / p1) * (rt(0) / p1) + (rt(1) / p2) * (rt(1) / p2));
}

/// |tau| of the predictor (physics.md 3.2): the corrector is exact to round-off of
/// this size, so fixed points are checked relative to max(|r|, |tau|).
double predictor_norm(const Vector3d& r, double g, const Vector2d& du, double rho,
                      const FrictionLaw& law) {
  const Vector2d x = law.omega_squared().cwiseProduct(du);
  return Vector3d(r(0) - rho * (g + law.dual_norm_mu(x)), r(1) - rho * x(0), r(2) - rho * x(1))
      .norm();
}

TEST(FrictionUpdate, EachBranchOfTheLawIsAFixedPoint) {
  Sampler s(31);
  for (int i = 0; i < 200000; ++i) {
    const RandomLaw l = random_law(s);
    const FrictionLaw law = l.law();
    const double rho = s.log_uniform(1e-3, 1e3);
    const double F = s.log_uniform(1e-6, 1e6);
    // open: g > 0, r = 0, any slip
    {
      const Vector2d du(s.normal(), s.normal());
      const ConeProjection p =
          bipotential_update(Vector3d::Zero(), s.log_uniform(1e-9, 1.0), du, rho, law);
      ASSERT_EQ(p.state, ContactState::open);
      ASSERT_EQ(p.r, Vector3d::Zero());
    }
    // stick: g = 0, du_t = 0, r strictly inside
    {
      const Vector3d r = point_in_cone(s, l.mu1, l.mu2, F, s.uniform(0.0, 0.999));
      const ConeProjection p = bipotential_update(r, 0.0, Vector2d::Zero(), rho, law);
      ASSERT_EQ(p.state, ContactState::stick);
      ASSERT_LE((p.r - r).norm(), 1e-12 * r.norm());
    }
    // slip: g = 0, r on the surface, du_t = -lambda p^-2 r_t / |r_t|_p
    {
      const Vector3d r = point_in_cone(s, l.mu1, l.mu2, F, 1.0);
      const double lambda = s.log_uniform(1e-9, 1e-1);
      const double np = norm_p(r.tail<2>(), l.p1, l.p2);
      const Vector2d du(-lambda * r(1) / (l.p1 * l.p1 * np), -lambda * r(2) / (l.p2 * l.p2 * np));
      const ConeProjection p = bipotential_update(r, 0.0, du, rho, law);
      ASSERT_LE((p.r - r).norm(), 1e-12 * std::max(r.norm(), predictor_norm(r, 0.0, du, rho, law)))
          << "rho " << rho << " lambda " << lambda << " r " << r.transpose();
      // ... and in the associated direction (-lambda mu^-2 r_t) it is not, unless
      // p is proportional to mu: the non-associated rule matters (physics.md 3).
      const double nm = law.norm_mu(r.tail<2>());
      const Vector2d du_assoc(-lambda * r(1) / (l.mu1 * l.mu1 * nm),
                              -lambda * r(2) / (l.mu2 * l.mu2 * nm));
      const Vector3d ra = bipotential_update(r, 0.0, du_assoc, rho, law).r;
      const double k1 = l.p1 / l.mu1, k2 = l.p2 / l.mu2;
      // Expected distance from the fixed point grows with the misalignment of the
      // slip from the non-associated direction; only assert clear cases.
      const Vector2d x = law.omega_squared().cwiseProduct(du_assoc);
      const Vector2d nrm(r(1) / (l.mu1 * l.mu1), r(2) / (l.mu2 * l.mu2));
      const double sin_mis = std::abs(x(0) * nrm(1) - x(1) * nrm(0)) / (x.norm() * nrm.norm());
      const double push = rho * x.norm() * sin_mis;
      // Assert where the predictor is moderate (|tau - r| <= 10 |r|) and the
      // misaligned part of the slip is well above round-off.
      if (std::abs(k1 / k2 - 1.0) > 0.1 && push > 1e-6 * r.norm() &&
          rho * (x.norm() + law.dual_norm_mu(x)) < 10.0 * r.norm()) {
        ASSERT_GT((ra - r).norm(), 1e-3 * push) << "wrong-direction slip accepted: mu " << l.mu1
                                                << " " << l.mu2 << " p " << l.p1 << " " << l.p2;
      }
    }
  }
}

TEST(FrictionUpdate, NotAFixedPointOffTheLaw) {
  // Penetration, slip while sticking inside, or slip along +r_t are all moved.
  const FrictionLaw law = FrictionLaw::orthotropic(0.3, 0.15, 0.05, 0.2);
  const Vector3d inside(1.0, 0.1, 0.05);
  EXPECT_GT((bipotential_update(inside, -1e-3, Vector2d::Zero(), 10.0, law).r - inside).norm(),
            1e-3);
  EXPECT_GT((bipotential_update(inside, 0.0, Vector2d(1e-3, 0), 10.0, law).r - inside).norm(),
            1e-4);
  const Vector3d surf(1.0, 0.3, 0.0);
  EXPECT_GT((bipotential_update(surf, 0.0, Vector2d(1e-3, 0), 10.0, law).r - surf).norm(), 1e-4);
  EXPECT_LE((bipotential_update(surf, 0.0, Vector2d(-1e-3, 0), 10.0, law).r - surf).norm(), 1e-15);
  // Frictionless: normal part only.
  const FrictionLaw none = FrictionLaw::isotropic(0.0);
  EXPECT_EQ(bipotential_update(Vector3d(2.0, 0, 0), 0.0, Vector2d(1, 1), 3.0, none).r,
            Vector3d(2.0, 0, 0));
  EXPECT_EQ(bipotential_update(Vector3d(2.0, 0, 0), 0.5, Vector2d(1, 1), 3.0, none).r,
            Vector3d(0.5, 0, 0));
  EXPECT_EQ(bipotential_update(Vector3d(2.0, 0, 0), 1.0, Vector2d(1, 1), 3.0, none).state,
            ContactState::open);
}

// ---------------------------------------------------------------------------
// The scaled update (docs/contact-law.md, "The scaled update")

TEST(FrictionScaledUpdate, ScalesAndTheScaledLaw) {
  // s_k = beta mu_k / p_k, beta = max(1, p1, p2); the scaled law is
  // (mu_k, p_k) / s_k, with friction p_k / beta <= 1 and the same omega.
  for (const FrictionLaw& law :
       {FrictionLaw::isotropic(0.2), FrictionLaw::isotropic(1.0),
        FrictionLaw::orthotropic(0.3, 0.15, 0.3, 0.15), FrictionLaw::isotropic(0.0)}) {
    EXPECT_TRUE(law.unscaled_update());
    EXPECT_EQ(law.update_scales(), Vector2d(1.0, 1.0));
  }
  const FrictionLaw c = FrictionLaw::orthotropic(0.3, 0.15, 0.05, 0.2);
  EXPECT_FALSE(c.unscaled_update());
  EXPECT_NEAR(c.update_scales()(0), 6.0, 1e-15);
  EXPECT_NEAR(c.update_scales()(1), 0.75, 1e-15);
  const FrictionLaw cs = c.scaled();
  EXPECT_TRUE(cs.unscaled_update());
  EXPECT_NEAR(cs.mu1(), 0.05, 1e-16);
  EXPECT_NEAR(cs.mu2(), 0.2, 1e-16);
  EXPECT_NEAR(cs.p1(), 0.05 / 6.0, 1e-16);
  EXPECT_NEAR(cs.p2(), 0.2 / 0.75, 1e-16);
  EXPECT_NEAR(cs.omega_squared()(0), c.omega_squared()(0), 1e-15);
  EXPECT_NEAR(cs.omega_squared()(1), c.omega_squared()(1), 1e-15);
  const FrictionLaw bonded = FrictionLaw::isotropic(1e6);
  EXPECT_EQ(bonded.update_scales(), Vector2d(1e6, 1e6));
  EXPECT_EQ(bonded.scaled().mu1(), 1.0);
  const FrictionLaw big = FrictionLaw::orthotropic(10.0, 5.0, 20.0, 1.0);  // beta = 20
  EXPECT_NEAR(big.update_scales()(0), 10.0, 1e-14);
  EXPECT_NEAR(big.update_scales()(1), 100.0, 1e-13);
  EXPECT_NEAR(big.scaled().mu1(), 1.0, 1e-15);
  EXPECT_NEAR(big.scaled().mu2(), 0.05, 1e-16);
}

RandomLaw random_law_any_friction(Sampler& s) {
  // Friction from 0.05 to 1e6, anisotropy and non-associativity up to 10.
  RandomLaw l{};
  l.mu1 = s.log_uniform(0.05, 1e6);
  l.mu2 = l.mu1 * s.log_uniform(0.1, 10.0);
  l.p1 = l.mu1 * s.log_uniform(0.1, 10.0);
  l.p2 = l.mu2 * s.log_uniform(0.1, 10.0);
  return l;
}

/// |tau| of the scaled update in the original variables (its round-off scale).
double scaled_predictor_norm(const Vector3d& r, const Vector3d& v, double rho,
                             const FrictionLaw& law) {
  const double s = law.update_scales().maxCoeff();
  return r.norm() + rho * v.norm() * std::max(1.0, s * s * law.omega_squared().maxCoeff()) *
                        std::max(1.0, std::max(law.mu1(), law.mu2()));
}

TEST(FrictionScaledUpdate, EachBranchOfTheLawIsAFixedPoint) {
  // Whatever the friction: the scaled law is the law, so its fixed points
  // are the law's (open, stick, slip along the non-associated rule).
  Sampler s(37);
  for (int i = 0; i < 100000; ++i) {
    const RandomLaw l = random_law_any_friction(s);
    const FrictionLaw law = l.law();
    const double rho = s.log_uniform(1e-6, 1e3);
    const double F = s.log_uniform(1e-6, 1e6);
    const Vector3d open_v(s.log_uniform(1e-9, 1.0), s.normal(), s.normal());
    // (To round-off: g may be below the ulp of the Coulomb term |omega^2 du_t|_mu*.)
    ASSERT_LE(scaled_update(Vector3d::Zero(), open_v, rho, law).r.norm(),
              1e-12 * scaled_predictor_norm(Vector3d::Zero(), open_v, rho, law));
    const Vector3d inside = point_in_cone(s, l.mu1, l.mu2, F, s.uniform(0.0, 0.999));
    const ConeProjection stick = scaled_update(inside, Vector3d::Zero(), rho, law);
    ASSERT_EQ(stick.state, ContactState::stick);
    ASSERT_LE((stick.r - inside).norm(), 1e-12 * inside.norm());
    const Vector3d r = point_in_cone(s, l.mu1, l.mu2, F, 1.0);
    const double lambda = s.log_uniform(1e-9, 1e-1);
    const double np = norm_p(r.tail<2>(), l.p1, l.p2);
    const Vector3d v(0.0, -lambda * r(1) / (l.p1 * l.p1 * np), -lambda * r(2) / (l.p2 * l.p2 * np));
    const ConeProjection slip = scaled_update(r, v, rho, law);
    ASSERT_LE((slip.r - r).norm(), 1e-12 * scaled_predictor_norm(r, v, rho, law))
        << "mu " << l.mu1 << " " << l.mu2 << " p " << l.p1 << " " << l.p2 << " rho " << rho;
    // The residual is r minus the update, on every branch.
    Vector3d f;
    for (const auto& [ri, vi] : {std::pair{Vector3d(Vector3d::Zero()), open_v},
                                 std::pair{inside, Vector3d(Vector3d::Zero())}, std::pair{r, v}}) {
      const ContactState state = node_residual(ri, vi, rho, law, f, nullptr, nullptr);
      const ConeProjection u = scaled_update(ri, vi, rho, law);
      ASSERT_EQ(state, u.state);
      ASSERT_LE((f - (ri - u.r)).norm(), 1e-12 * scaled_predictor_norm(ri, vi, rho, law));
    }
  }
}

TEST(FrictionScaledUpdate, IsSpecUpdateBitForBitWhenUnscaled) {
  // Associated laws with mu <= 1 (and frictionless): physics.md 3.2 as written.
  Sampler s(41);
  for (int i = 0; i < 20000; ++i) {
    const double mu1 = s.log_uniform(0.05, 1.0), mu2 = s.log_uniform(0.05, 1.0);
    const FrictionLaw law =
        i % 10 == 0 ? FrictionLaw::isotropic(0.0) : FrictionLaw::orthotropic(mu1, mu2, mu1, mu2);
    ASSERT_TRUE(law.unscaled_update());
    const double rho = s.log_uniform(1e-3, 1e3);
    const Vector3d r(s.normal(), s.normal(), s.normal());
    const Vector3d v = 1e-3 * Vector3d(s.normal(), s.normal(), s.normal());
    const Vector3d tau = predictor(r, v, rho, law);
    const ConeProjection expected = project_onto_friction_cone(tau, law);
    const ConeProjection u = scaled_update(r, v, rho, law);
    ASSERT_EQ(u.r, expected.r);
    ASSERT_EQ(u.state, expected.state);
    Vector3d f;
    Matrix3d b, c;
    ASSERT_EQ(node_residual(r, v, rho, law, f, &b, &c), expected.state);
    ASSERT_EQ(f, Vector3d(r - expected.r));
    const Matrix3d p = projection_derivative(tau, expected.state, law);
    ASSERT_EQ(b, Matrix3d(Matrix3d::Identity() - p));
    ASSERT_EQ(c, Matrix3d(rho * p * augmented_kinematics_derivative(v, law)));
  }
}

TEST(FrictionScaledUpdate, ResidualDerivativesAgreeWithCentralDifferences) {
  // B = df/dr and C = df/dv of node_residual against central differences, on
  // each branch, for scaled laws (high friction, non-associated), at points
  // whose branch does not change within the differences.
  Sampler s(43);
  const FrictionLaw laws[] = {FrictionLaw::isotropic(10.0), FrictionLaw::isotropic(1e6),
                              FrictionLaw::orthotropic(0.3, 0.15, 0.05, 0.2),
                              FrictionLaw::orthotropic(10.0, 5.0, 20.0, 1.0)};
  int checked[3] = {0, 0, 0};
  for (int i = 0; i < 4000; ++i) {
    const FrictionLaw& law = laws[i % 4];
    const double rho = automatic_rho(1e-5 * Matrix3d::Identity(), law);
    const Vector3d r =
        point_in_cone(s, law.mu1(), law.mu2(), s.uniform(0.5, 2.0), s.uniform(0.0, 1.0));
    const Vector3d v =
        1e-5 * Vector3d(s.normal(), s.normal(), s.normal())
                   .cwiseQuotient(Vector3d(1.0, law.update_scales()(0), law.update_scales()(1)));
    Vector3d f;
    Matrix3d b, c;
    const ContactState state = node_residual(r, v, rho, law, f, &b, &c);
    const auto at = [&](const Vector3d& rr, const Vector3d& vv, Vector3d& out) {
      return node_residual(rr, vv, rho, law, out, nullptr, nullptr);
    };
    bool same_branch = true;
    Matrix3d fd_b, fd_c;
    for (int k = 0; k < 3; ++k) {
      const double hr = 1e-6 * r.norm(), hv = 1e-6 * v.norm();
      Vector3d er = Vector3d::Zero(), ev = Vector3d::Zero(), fp, fm;
      er(k) = hr;
      ev(k) = hv;
      same_branch = same_branch && at(r + er, v, fp) == state && at(r - er, v, fm) == state;
      fd_b.col(k) = (fp - fm) / (2.0 * hr);
      same_branch = same_branch && at(r, v + ev, fp) == state && at(r, v - ev, fm) == state;
      fd_c.col(k) = (fp - fm) / (2.0 * hv);
    }
    if (!same_branch) continue;
    ++checked[static_cast<int>(state)];
    EXPECT_LE((b - fd_b).norm(), 1e-5 * (1.0 + fd_b.norm())) << "B, state " << int(state);
    EXPECT_LE((c - fd_c).norm() * v.norm(), 1e-5 * (f.norm() + fd_c.norm() * v.norm()))
        << "C, state " << int(state);
  }
  EXPECT_GT(checked[static_cast<int>(ContactState::stick)], 100);
  EXPECT_GT(checked[static_cast<int>(ContactState::slip)], 100);
}

TEST(FrictionScaledUpdate, StickResidualSeesAGapBelowTheUlpOfTheReaction) {
  // mu = 1e6: rho is ~1e-12 of a natural normal stiffness, so rho g is far
  // below the ulp of r_n; the residual is rho A'(v') itself, not r - tau.
  const FrictionLaw law = FrictionLaw::isotropic(1e6);
  const double rho = automatic_rho(1e-5 * Matrix3d::Identity(), law);
  const Vector3d r(1.0, 0.3, -0.2);
  const double g = 1e-12;
  Vector3d f;
  ASSERT_EQ(node_residual(r, Vector3d(g, 0.0, 0.0), rho, law, f, nullptr, nullptr),
            ContactState::stick);
  ASSERT_LT(rho * g, 0.5 * std::numeric_limits<double>::epsilon());  // r_n - tau_n = 0
  EXPECT_NEAR(f(0), rho * g, 1e-15 * rho * g);
  EXPECT_EQ(f(1), 0.0);
  EXPECT_EQ(f(2), 0.0);
}

// ---------------------------------------------------------------------------
// The bipotential certificate (physics.md 3.1)

TEST(FrictionPredictor, KinematicPartIsSpecFormula) {
  // A(v) = (g + |omega^2 du_t|_mu*, omega^2 du_t), written out by hand.
  const double mu1 = 0.3, mu2 = 0.15, p1 = 0.2, p2 = 0.25;
  const FrictionLaw law = FrictionLaw::orthotropic(mu1, mu2, p1, p2);
  const double g = -2e-3, du1 = 4e-3, du2 = -1e-3;
  const double x1 = (p1 / mu1) * (p1 / mu1) * du1, x2 = (p2 / mu2) * (p2 / mu2) * du2;
  const Vector3d a = augmented_kinematics(Vector3d(g, du1, du2), law);
  EXPECT_NEAR(a(0), g + std::sqrt(mu1 * mu1 * x1 * x1 + mu2 * mu2 * x2 * x2), 1e-15);
  EXPECT_NEAR(a(1), x1, 1e-15);
  EXPECT_NEAR(a(2), x2, 1e-15);
  const Vector3d r(2.0, 0.1, -0.3);
  const double rho = 40.0;
  EXPECT_EQ(predictor(r, Vector3d(g, du1, du2), rho, law), Vector3d(r - rho * a));
  // Frictionless: the tangential part vanishes even for a non-finite slip.
  const FrictionLaw none = FrictionLaw::isotropic(0.0);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(augmented_kinematics(Vector3d(g, inf, 1.0), none), Vector3d(g, 0.0, 0.0));
  const ConeProjection update = bipotential_update(r, g, Vector2d(inf, 1.0), rho, none);
  EXPECT_EQ(update.r, Vector3d(r(0) - rho * g, 0.0, 0.0));
  EXPECT_EQ(update.state, ContactState::slip);
}

TEST(FrictionPredictor, DerivativesAgreeWithCentralDifferences) {
  Sampler s(71);
  for (int i = 0; i < 200; ++i) {
    const double mu1 = s.uniform(0.05, 2.0), mu2 = mu1 * s.uniform(0.2, 5.0);
    const FrictionLaw law =
        FrictionLaw::orthotropic(mu1, mu2, mu1 * s.uniform(0.3, 2.0), mu2 * s.uniform(0.3, 2.0));
    const Vector3d v(s.uniform(-1.0, 1.0), s.uniform(-1.0, 1.0), s.uniform(-1.0, 1.0));
    const Eigen::Matrix3d da = augmented_kinematics_derivative(v, law);
    const double h = 1e-6;
    for (int k = 0; k < 3; ++k) {
      Vector3d step = Vector3d::Zero();
      step(k) = h;
      const Vector3d fd =
          (augmented_kinematics(v + step, law) - augmented_kinematics(v - step, law)) / (2.0 * h);
      EXPECT_LE((da.col(k) - fd).norm(), 1e-6 * (1.0 + fd.norm())) << "column " << k;
    }
  }
}

TEST(FrictionPredictor, ProjectionDerivativeAgreesWithCentralDifferences) {
  // Identity inside, zero in the polar cone; on the slip branch against
  // differences of a larger step than the function's own (relative 1e-6),
  // at points r + t n off the surface (n the outward normal: proj = r).
  Sampler s(73);
  const FrictionLaw iso = FrictionLaw::isotropic(0.4);
  EXPECT_EQ(projection_derivative(Vector3d(1.0, 0.1, 0.1), ContactState::stick, iso),
            Matrix3d::Identity());
  EXPECT_EQ(projection_derivative(Vector3d(-1.0, 0.1, 0.1), ContactState::open, iso),
            Matrix3d::Zero());
  for (int i = 0; i < 200; ++i) {
    const double mu1 = s.uniform(0.1, 1.0), mu2 = mu1 * s.uniform(0.3, 3.0);
    const FrictionLaw law = FrictionLaw::orthotropic(mu1, mu2, mu1, mu2);
    const Vector3d r = point_in_cone(s, mu1, mu2, 1.0, 1.0);
    const Vector3d tau = r + s.uniform(0.1, 2.0) * cone_normal(r, mu1, mu2);
    const ConeProjection p = project_onto_friction_cone(tau, law);
    ASSERT_EQ(p.state, ContactState::slip);
    const Matrix3d dp = projection_derivative(tau, p.state, law);
    const double h = 1e-4;
    for (int k = 0; k < 3; ++k) {
      Vector3d step = Vector3d::Zero();
      step(k) = h;
      const Vector3d fd = (project_onto_friction_cone(tau + step, law).r -
                           project_onto_friction_cone(tau - step, law).r) /
                          (2.0 * h);
      EXPECT_LE((dp.col(k) - fd).norm(), 1e-5) << "column " << k;
    }
  }
}

TEST(FrictionCertificate, NonNegativeOnAdmissibleAndZeroOnTheGraph) {
  Sampler s(41);
  for (int i = 0; i < 500000; ++i) {
    const RandomLaw l = random_law(s);
    const FrictionLaw law = l.law();
    const double F = s.log_uniform(1e-3, 1e6);
    const double U = s.log_uniform(1e-9, 1e-1);
    // Admissible: g >= 0, r in K_mu, any du_t: G >= 0 (the bipotential inequality).
    const Vector3d r = point_in_cone(s, l.mu1, l.mu2, F, s.uniform(0.0, 1.0));
    const double g = (s.integer(0, 1) == 0) ? 0.0 : U * s.uniform(0.0, 1.0);
    const Vector2d du(U * s.normal(), U * s.normal());
    const double scale = F * U * (1.0 + law.omega_squared().maxCoeff());
    ASSERT_GE(law_certificate(r, g, du, law), -1e-14 * scale);
    // On the graph: G = 0 (open, stick, slip).
    EXPECT_EQ(law_certificate(Vector3d::Zero(), g, du, law), 0.0);
    EXPECT_EQ(law_certificate(r, 0.0, Vector2d::Zero(), law), 0.0);
    const Vector3d rs = point_in_cone(s, l.mu1, l.mu2, F, 1.0);
    const double np = norm_p(rs.tail<2>(), l.p1, l.p2);
    const Vector2d dus(-U * rs(1) / (l.p1 * l.p1 * np), -U * rs(2) / (l.p2 * l.p2 * np));
    ASSERT_NEAR(law_certificate(rs, 0.0, dus, law), 0.0, 1e-13 * scale);
    // Off the graph: slipping while strictly inside, or against the rule.
    if (r(0) > 0 && friction_function(r, law) < -1e-3 * r(0)) {
      ASSERT_GT(law_certificate(r, 0.0, du, law), 0.0);
    }
    ASSERT_GT(law_certificate(rs, 0.0, -dus, law),
              1.9 * rs(0) * law.dual_norm_mu(law.omega_squared().cwiseProduct(dus)) * (1 - 1e-12));
  }
  // A worked value: isotropic mu = 0.5, r = (2, 0.6, 0), du = (0.1, 0), g = 0.2:
  // G = 2 * 0.05 + 0.06 + 0.4.
  EXPECT_NEAR(
      law_certificate(Vector3d(2, 0.6, 0), 0.2, Vector2d(0.1, 0), FrictionLaw::isotropic(0.5)),
      0.56, 1e-15);
  EXPECT_EQ(law_certificate(Vector3d(2, 0, 0), 0.25, Vector2d(1, 1), FrictionLaw::isotropic(0)),
            0.5);
}

TEST(FrictionCertificate, CoulombGraphOfTheBipotentialPaper) {
  // Graph (5.0.1) of Buliga, de Saxce, Vallee (first seed paper), isotropic mu.
  // It is written for pairs (x, y) with x = (x_n, x_t), y = (y_n, y_t):
  //   separation  x_n < 0, y = 0;   sticking  x = 0, |y_t| <= mu y_n;
  //   sliding     x_n = 0, x_t != 0, y_t = mu y_n x_t / |x_t|.
  // physics.md 3.1 writes the bipotential as b(-(g, x_t), r): the paper's x is minus
  // physics.md's kinematics and its y is physics.md's reaction, so
  //   g = -x_n,  du_t = -x_t  (omega = 1 for isotropic friction),  r = (y_n, y_t).
  // (Sliding: du_t = -x_t is opposite to r_t = y_t, physics.md's rule with p = mu.)
  Sampler s(53);
  for (int i = 0; i < 200000; ++i) {
    const double mu = s.log_uniform(0.01, 2.0);
    const FrictionLaw law = FrictionLaw::isotropic(mu);
    const double rho = s.log_uniform(1e-3, 1e3);
    const double yn = s.log_uniform(1e-3, 1e3);
    const double th = s.uniform(0.0, 2.0 * kPi);
    const Vector2d e(std::cos(th), std::sin(th));
    // separation
    {
      const double xn = -s.log_uniform(1e-9, 1.0);
      const Vector2d xt = s.log_uniform(1e-9, 1.0) * e;
      const double g = -xn;
      const Vector2d du = -xt;
      EXPECT_EQ(law_certificate(Vector3d::Zero(), g, du, law), 0.0);
      ASSERT_EQ(bipotential_update(Vector3d::Zero(), g, du, rho, law).r, Vector3d::Zero());
    }
    // sticking
    {
      const Vector2d yt = s.uniform(0.0, 1.0) * mu * yn * e;
      const Vector3d r(yn, yt(0), yt(1));
      EXPECT_EQ(law_certificate(r, 0.0, Vector2d::Zero(), law), 0.0);
      ASSERT_LE((bipotential_update(r, 0.0, Vector2d::Zero(), rho, law).r - r).norm(), 1e-14 * yn);
    }
    // sliding
    {
      const Vector2d xt = s.log_uniform(1e-9, 1.0) * e;
      const Vector2d yt = mu * yn * xt / xt.norm();
      const Vector3d r(yn, yt(0), yt(1));
      const Vector2d du = -xt;
      ASSERT_NEAR(law_certificate(r, 0.0, du, law), 0.0, 1e-14 * yn * xt.norm());
      ASSERT_LE((bipotential_update(r, 0.0, du, rho, law).r - r).norm(),
                1e-13 * std::max(r.norm(), predictor_norm(r, 0.0, du, rho, law)));
      // The same pair with the paper's sign of x_t taken literally as du_t is
      // not on physics.md's graph: the mapping's minus sign matters.
      ASSERT_GT(law_certificate(r, 0.0, xt, law), 1.9 * mu * yn * xt.norm());
    }
  }
}

// ---------------------------------------------------------------------------
// Automatic rho and the one-node problem

TEST(FrictionLocal, AutomaticRho) {
  // rho = 1 / lambda_max(B W B), B = diag(1, beta, beta), beta = max(1, p1, p2)
  // (D^1/2 S = B: the scaled update weighs the slip itself). Diagonal W:
  // 1 / max(w_n, beta^2 w_t1, beta^2 w_t2).
  const Matrix3d W = Eigen::Vector3d(2.0, 3.0, 5.0).asDiagonal();
  const FrictionLaw c = FrictionLaw::orthotropic(0.3, 0.15, 0.05, 0.2);
  EXPECT_NEAR(automatic_rho(W, c), 1.0 / 5.0, 1e-15);
  EXPECT_NEAR(automatic_rho(W, FrictionLaw::isotropic(0.2)), 0.2, 1e-15);
  EXPECT_NEAR(automatic_rho(W, FrictionLaw::isotropic(0.0)), 0.5, 1e-15);
  EXPECT_NEAR(automatic_rho(W, FrictionLaw::isotropic(1e6)) * 5e12, 1.0, 1e-15);
  // A non-associated law with p > 1: beta = 4.
  const FrictionLaw big = FrictionLaw::orthotropic(2.0, 1.0, 4.0, 0.5);
  EXPECT_NEAR(automatic_rho(W, big) * 5.0 * 16.0, 1.0, 1e-15);
  // An associated law with mu <= 1 keeps physics.md's rule: 1 / lambda_max(D^1/2 W D^1/2).
  const FrictionLaw b = FrictionLaw::orthotropic(0.3, 0.15, 0.3, 0.15);
  EXPECT_NEAR(automatic_rho(W, b), 1.0 / 5.0, 1e-15);
  // A full W: compare with the largest eigenvalue computed another way (power iteration).
  Matrix3d L;
  L << 1.0, 0.0, 0.0, 0.2, 0.9, 0.0, -0.1, 0.3, 1.1;
  const Matrix3d Wf = 1e-5 * L * L.transpose();
  for (const FrictionLaw& law : {c, big}) {
    const double beta = std::max({1.0, law.p1(), law.p2()});
    const Vector3d d(1.0, beta, beta);
    const Matrix3d M = d.asDiagonal() * Wf * d.asDiagonal();
    Vector3d v(1, 1, 1);
    for (int i = 0; i < 500; ++i) v = (M * v).normalized();
    EXPECT_NEAR(automatic_rho(Wf, law) * v.dot(M * v), 1.0, 1e-12);
  }
  Matrix3d bad = Matrix3d::Identity();
  bad(2, 2) = -1.0;
  EXPECT_THROW((void)automatic_rho(bad, c), NumericalError);
}

Matrix3d random_compliance(Sampler& s) {
  // A node's condensed compliance (mm/N): SPD, normal and tangential parts of
  // the same order, moderate coupling.
  Matrix3d L = Matrix3d::Zero();
  for (int i = 0; i < 3; ++i) {
    L(i, i) = s.uniform(0.6, 1.3);
    for (int j = 0; j < i; ++j) L(i, j) = s.uniform(-0.3, 0.3);
  }
  return s.log_uniform(1e-7, 1e-3) * L * L.transpose();
}

TEST(FrictionLocal, SolveNodeLawSatisfiesTheLawForTableOneCases) {
  const FrictionLaw cases[] = {FrictionLaw::isotropic(0.2),
                               FrictionLaw::orthotropic(0.3, 0.15, 0.3, 0.15),
                               FrictionLaw::orthotropic(0.3, 0.15, 0.05, 0.2)};
  Sampler s(61);
  for (const FrictionLaw& law : cases) {
    int n_state[3] = {0, 0, 0}, n_unconverged = 0;
    long total_iterations = 0;
    const int n = 30000;
    for (int i = 0; i < n; ++i) {
      const Matrix3d W = random_compliance(s);
      const double U = s.log_uniform(1e-5, 1e-1);
      const double Ut = U * s.log_uniform(1e-3, 3.0);  // from deep stick to gross slip
      const Vector3d q(U * s.uniform(-1.0, 0.3), Ut * s.normal(), Ut * s.normal());
      const double rho_auto = automatic_rho(W, law);
      const double rho = rho_auto * ((i % 3 == 0) ? 1.0 : s.log_uniform(0.1, 10.0));
      const Vector3d r0 = (i % 2 == 0) ? Vector3d::Zero() : Vector3d(U / W(0, 0) * s.direction());
      const LocalSolution sol = solve_node_law(W, q, law, rho, r0, 1e-12, 200);
      ASSERT_TRUE(sol.r.allFinite());
      ASSERT_TRUE(sol.converged) << "W\n" << W << "\nq " << q.transpose();
      ++n_state[static_cast<int>(sol.state)];
      total_iterations += sol.iterations;
      if (!sol.converged) ++n_unconverged;
      const Vector3d k = q + W * sol.r;  // (g, du_t1, du_t2)
      const double scale = sol.r.norm() * (q.norm() + (W * sol.r).norm()) + 1e-300;
      const double G = law_certificate(sol.r, k(0), k.tail<2>(), law);
      ASSERT_LE(std::abs(G), 1e-12 * scale) << "state " << static_cast<int>(sol.state);
      ASSERT_GE(k(0), -1e-12 * (q.norm() + (W * sol.r).norm()));
      ASSERT_LE(friction_function(sol.r, law), 1e-12 * sol.r.norm());
      ASSERT_GE(sol.r(0), 0.0);
      // A fixed point of the predictor-corrector for this rho and for another one.
      for (const double rr : {rho, 3.7 * rho_auto}) {
        const Vector3d rn = bipotential_update(sol.r, k(0), k.tail<2>(), rr, law).r;
        ASSERT_LE(
            (rn - sol.r).norm(),
            1e-12 * std::max(sol.r.norm(), predictor_norm(sol.r, k(0), k.tail<2>(), rr, law)));
      }
    }
    EXPECT_EQ(n_unconverged, 0);
    EXPECT_GT(n_state[0], n / 20);
    EXPECT_GT(n_state[1], n / 20);
    EXPECT_GT(n_state[2], n / 20);
    EXPECT_LE(static_cast<double>(total_iterations) / n, 10.0);
  }
}

TEST(FrictionLocal, SolveNodeLawKnownSolutions) {
  const Matrix3d W = Eigen::Vector3d(1e-4, 2e-4, 2e-4).asDiagonal();
  const FrictionLaw law = FrictionLaw::isotropic(0.2);
  // Open: q_n > 0.
  LocalSolution s =
      solve_node_law(W, Vector3d(1e-3, 0.5, 0), law, 0.0, Vector3d::Zero(), 1e-12, 50);
  EXPECT_EQ(s.state, ContactState::open);
  EXPECT_EQ(s.r, Vector3d::Zero());
  // Stick: r = -W^-1 q = (10, 1, 0) is inside (|r_t| = 1 <= 0.2 * 10).
  s = solve_node_law(W, Vector3d(-1e-3, -2e-4, 0), law, 0.0, Vector3d::Zero(), 1e-12, 50);
  EXPECT_EQ(s.state, ContactState::stick);
  EXPECT_NEAR((s.r - Vector3d(10, 1, 0)).norm(), 0.0, 1e-12);
  // Slip, decoupled W: r_n = 10 from g = 0, r_t = 0.2 * 10 = 2 against the slip,
  // du_t1 = q_t1 + 2e-4 * (-2) = -1e-2 + ... < 0 consistent.
  s = solve_node_law(W, Vector3d(-1e-3, 1e-2, 0), law, 0.0, Vector3d::Zero(), 1e-12, 50);
  EXPECT_EQ(s.state, ContactState::slip);
  EXPECT_NEAR((s.r - Vector3d(10, -2, 0)).norm(), 0.0, 1e-11);
  // Frictionless: r = (-q_n / W_nn, 0, 0).
  s = solve_node_law(W, Vector3d(-1e-3, 1e-2, 0), FrictionLaw::isotropic(0.0), 0.0,
                     Vector3d::Zero(), 1e-12, 50);
  EXPECT_NEAR((s.r - Vector3d(10, 0, 0)).norm(), 0.0, 1e-12);
  EXPECT_TRUE(s.converged);
}

}  // namespace
}  // namespace bipo
