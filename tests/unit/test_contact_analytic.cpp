// The closed forms of tests/verification/contact_analytic.hpp against
// identities they must satisfy, computed another way: resultants of the
// pressure profiles by quadrature, the stiffness 2 a E* as a numerical
// derivative, the loops' areas by quadrature of their branches (built from
// the inverse of the Mindlin curve for gross slip), the limits c = a at
// Q = 0 and c = 0 at Q = mu P, the small-amplitude Q*^3 law, and the
// classical ratio k_t / k_n = 2 (1 - nu) / (2 - nu).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numbers>

#include "../verification/contact_analytic.hpp"

namespace bipo::analytic {
namespace {

constexpr double kE = 210000.0, kNu = 0.3;

/// Composite Simpson rule with n (even) intervals.
double simpson(const std::function<double(double)>& f, double lo, double hi, int n) {
  const double h = (hi - lo) / n;
  double sum = f(lo) + f(hi);
  for (int i = 1; i < n; ++i) sum += (i % 2 == 1 ? 4.0 : 2.0) * f(lo + i * h);
  return sum * h / 3.0;
}

TEST(ContactAnalytic, RigidIndenterModuli) {
  EXPECT_DOUBLE_EQ(contact_modulus(kE, kNu), kE / 0.91);
  // k_t / k_n = 2 a G* / (2 a E*) = 2 (1 - nu) / (2 - nu) (Johnson 7.2).
  EXPECT_NEAR(tangential_modulus(kE, kNu) / contact_modulus(kE, kNu), 1.4 / 1.7, 1e-15);
  EXPECT_NEAR(dundurs_beta_rigid(kNu), 2.0 / 7.0, 1e-15);
  EXPECT_EQ(dundurs_beta_rigid(0.5), 0.0);
}

TEST(ContactAnalytic, HertzSphereResultantAndStiffness) {
  const double e_star = contact_modulus(kE, kNu), load = 100.0, radius = 10.0;
  const HertzSphere h = hertz_sphere(load, radius, e_star);
  // The pressure integrates to P: 2 pi int_0^a p(r) r dr, substituting r =
  // a sin(t) to remove the square root's end singularity.
  const double resultant = simpson(
      [&](double t) {
        const double r = h.radius * std::sin(t);
        return 2.0 * std::numbers::pi * hertz_sphere_pressure(r, h) * r * h.radius * std::cos(t);
      },
      0.0, 0.5 * std::numbers::pi, 200);
  EXPECT_NEAR(resultant, load, 1e-9 * load);
  EXPECT_NEAR(hertz_sphere_load(h.approach, radius, e_star), load, 1e-12 * load);
  // dP / ddelta = 2 a E* (Johnson 4.2), by central differences.
  const double d = 1e-4 * h.approach;
  const double stiffness = (hertz_sphere_load(h.approach + d, radius, e_star) -
                            hertz_sphere_load(h.approach - d, radius, e_star)) /
                           (2.0 * d);
  EXPECT_NEAR(stiffness, 2.0 * h.radius * e_star, 1e-7 * stiffness);
  EXPECT_EQ(hertz_sphere_pressure(h.radius * 1.01, h), 0.0);
}

TEST(ContactAnalytic, HertzCylinderResultantAndPeak) {
  const double e_star = contact_modulus(kE, kNu), load = 50.0, radius = 20.0;
  const HertzCylinder h = hertz_cylinder(load, radius, e_star);
  const double resultant = simpson(
      [&](double t) {
        return hertz_cylinder_pressure(h.half_width * std::sin(t), h) * h.half_width * std::cos(t);
      },
      -0.5 * std::numbers::pi, 0.5 * std::numbers::pi, 200);
  EXPECT_NEAR(resultant, load, 1e-9 * load);
  // p0 = b E* / (2 R), the curvature form of the same solution (Johnson 4.2).
  EXPECT_NEAR(h.peak, h.half_width * e_star / (2.0 * radius), 1e-12 * h.peak);
}

TEST(ContactAnalytic, CattaneoMindlinLimits) {
  const double mu_p = 30.0, a = 0.5, g_star = tangential_modulus(kE, kNu);
  EXPECT_EQ(stick_ratio(0.0, mu_p), 1.0);
  EXPECT_EQ(stick_ratio(mu_p, mu_p), 0.0);
  EXPECT_NEAR(stick_ratio(0.875 * mu_p, mu_p), 0.5, 1e-15);
  // Initial slope: the stick compliance (2 - nu) / (8 G a).
  const double q = 1e-7 * mu_p;
  EXPECT_NEAR(mindlin_displacement(q, mu_p, a, g_star) / q,
              (2.0 - kNu) / (8.0 * shear_modulus(kE, kNu) * a), 1e-6 / (2.0 * a * g_star));
  // At gross slip: 3 mu P (2 - nu) / (16 G a).
  EXPECT_NEAR(mindlin_displacement(mu_p, mu_p, a, g_star),
              3.0 * mu_p * (2.0 - kNu) / (16.0 * shear_modulus(kE, kNu) * a), 1e-18);
  EXPECT_EQ(mindlin_displacement(-0.4 * mu_p, mu_p, a, g_star),
            -mindlin_displacement(0.4 * mu_p, mu_p, a, g_star));
}

TEST(ContactAnalytic, MindlinDeresiewiczLoopClosesAndItsAreaIsTheEnergy) {
  const double mu_p = 30.0, a = 0.5, g_star = tangential_modulus(kE, kNu);
  for (const double x : {0.05, 0.3, 0.7, 1.0}) {
    const double qa = x * mu_p;
    const double top = mindlin_displacement(qa, mu_p, a, g_star);
    // The branches meet the first-loading curve's ends: the loop closes.
    EXPECT_NEAR(mindlin_loop_displacement(qa, qa, true, mu_p, a, g_star), top, 1e-15);
    EXPECT_NEAR(mindlin_loop_displacement(-qa, qa, true, mu_p, a, g_star), -top, 1e-15);
    EXPECT_NEAR(mindlin_loop_displacement(qa, qa, false, mu_p, a, g_star), top, 1e-15);
    const double area = simpson(
        [&](double q) {
          return mindlin_loop_displacement(q, qa, true, mu_p, a, g_star) -
                 mindlin_loop_displacement(q, qa, false, mu_p, a, g_star);
        },
        -qa, qa, 20000);
    const double w = mindlin_energy_per_cycle(qa, mu_p, a, g_star);
    // Simpson's error at x = 1 is set by the (1 - x)^(2/3) end of the branch.
    EXPECT_NEAR(area, w, (x < 1.0 ? 1e-9 : 1e-5) * w) << "Q*/(mu P) = " << x;
  }
}

TEST(ContactAnalytic, MindlinEnergyTendsToTheCubicLawAtSmallAmplitude) {
  const double mu_p = 30.0, a = 0.5, g_star = tangential_modulus(kE, kNu);
  // W = (2 - nu) Q*^3 / (36 G a mu P) (1 + O(x)): the relative error falls
  // tenfold with x.
  double previous = 1.0;
  for (const double x : {1e-1, 1e-2, 1e-3}) {
    const double exact = mindlin_energy_per_cycle(x * mu_p, mu_p, a, g_star);
    const double cubic =
        (2.0 - kNu) * std::pow(x * mu_p, 3) / (36.0 * shear_modulus(kE, kNu) * a * mu_p);
    EXPECT_NEAR(mindlin_energy_small_amplitude(x * mu_p, mu_p, a, g_star), cubic, 1e-13 * cubic);
    const double error = std::abs(exact / cubic - 1.0);
    EXPECT_LT(error, x) << x;
    EXPECT_LT(error, 0.2 * previous) << x;
    previous = error;
  }
}

TEST(ContactAnalytic, GrossSlipLoopAreas) {
  const double mu_p = 30.0, a = 0.5, g_star = tangential_modulus(kE, kNu);
  const double slide = mindlin_displacement(mu_p, mu_p, a, g_star);
  // Q on the first-loading curve as a function of delta, its inverse:
  // Q = mu P [1 - (1 - d / delta_s)^(3/2)], mu P beyond delta_s (sliding).
  const auto q_of = [&](double d) {
    return d >= slide ? mu_p : mu_p * (1.0 - std::pow(1.0 - d / slide, 1.5));
  };
  for (const double amplitude : {slide, 1.5 * slide, 4.0 * slide}) {
    // Masing: the loading branch from -delta* and the unloading one from delta*.
    const double area = simpson(
        [&](double d) {
          const double up = -mu_p + 2.0 * q_of(0.5 * (d + amplitude));
          const double down = mu_p - 2.0 * q_of(0.5 * (amplitude - d));
          return std::min(up, mu_p) - std::max(down, -mu_p);
        },
        -amplitude, amplitude, 200000);
    const double w = gross_slip_energy_sphere(amplitude, mu_p, a, g_star);
    EXPECT_NEAR(area, w, 1e-6 * w) << amplitude / slide;
  }
  // The rigid flat's parallelogram: zero at the onset, 4 mu P per unit of
  // amplitude beyond it.
  const double k = 2.0 * a * g_star;
  EXPECT_NEAR(gross_slip_energy_flat(mu_p / k, mu_p, k), 0.0, 1e-15);
  EXPECT_NEAR(gross_slip_energy_flat(mu_p / k + 0.01, mu_p, k), 4.0 * mu_p * 0.01, 1e-12);
}

TEST(ContactAnalytic, ArchardAndEnergyWear) {
  // h = k p s: 1e-8 /MPa, 100 MPa, 2 mm of sliding give 2e-6 mm.
  EXPECT_DOUBLE_EQ(archard_depth(1e-8, 100.0, 2.0), 2e-6);
  // Energy law at the Coulomb limit = Archard with k = alpha mu.
  EXPECT_DOUBLE_EQ(energy_wear_depth(5e-8, 0.4, 100.0, 2.0), archard_depth(2e-8, 100.0, 2.0));
}

}  // namespace
}  // namespace bipo::analytic
