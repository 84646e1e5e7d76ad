// Hertz contact (docs/physics.md section 2.1): a rigid sphere of radius R
// pressed by d into an elastic block, frictionless, against the Hertz
// solution for a rigid sphere on an elastic half-space (Johnson, Contact
// Mechanics, 1985, section 4.2): E* = E / (1 - nu^2), contact radius
// a = sqrt(R d), total force P = 4/3 E* R^1/2 d^3/2, peak pressure
// p0 = 3 P / (2 pi a^2) = 2 E* a / (pi R).
//
// The quarter model (symmetry planes x = 0 and y = 0 through the sphere's
// axis): the built-in block (`mesh.block`, docs/case-file.md "The block"), a
// cube of side H = 25 a, its top face held, graded geometrically toward the
// contact centre, at two levels of one mapped refinement: 10 elements per
// edge each 1.5625 times the previous, and 20 each 1.25 times (the square
// root: every coarse element split in 8); first element 0.164 a and 0.073 a,
// the element across the contact edge r = a 0.63 a and 0.28 a. Frictionless contact is
// path-independent, so one increment reaches d. The errors must decrease
// from the coarse to the fine mesh, and the fine mesh's must be within
// tolerances that say where they come from:
// - the block is finite: its top face, held, is where a half-space would
//   move by Boussinesq's u_H = P (1 + nu)(3 - 2 nu) / (2 pi E H) under the
//   total force P (Johnson, section 3.2), so the block at approach d is the
//   half-space at approach d + u_H: +4.5 % in P, +1.5 % in a and p0. The
//   test compares with Hertz at d + u_H (solved with P), a first-order
//   correction (the block's free sides make it slightly softer again);
// - linear hexahedra: nodal forces of a smooth pressure exact to O(h^2);
// - a is measured from the contact area (the nodes with r_n > 0 carry a
//   quarter of pi a^2 in the quarter model), which overstates it by up to
//   half the element across the edge: 14 % (coarse) and 7 % (fine) of a;
// - the nodal pressure r_n / A at the axis (A the node's tributary area,
//   docs/outputs.md) is the mean over [0, h/2]^2, within about 1 % of p0
//   for the fine mesh (p(r) = p0 sqrt(1 - r^2/a^2): -h^2/(24 a^2) p0 and
//   the corner), plus the linear elements' error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <numbers>
#include <string>

#include "../process_temp_path.hpp"
#include "app/run.hpp"
#include "io/case_file.hpp"
#include "io/contact_face_outputs.hpp"
#include "solver/analysis.hpp"
#include "solver/driver.hpp"
#include "solver/step_snapshot.hpp"

namespace bipo {
namespace {

constexpr double kYoung = 1000.0, kPoisson = 0.3, kRadius = 10.0, kIndentation = 0.1;
constexpr double kBlockSide = 25.0;  // H

struct HertzMeasure {
  double force = 0.0;           // P of the whole body (4 x the quarter's)
  double contact_radius = 0.0;  // a from the area of the nodes in contact
  double peak_pressure = 0.0;   // r_n / A at the node on the axis
};

/// The quarter block with n elements per edge, each `ratio` times the
/// previous from the contact centre (the block's grading is the ratio of
/// the last element to the first, ratio^(n - 1)).
HertzMeasure indent(int n, double ratio) {
  const std::string name = "bipo_hertz_" + std::to_string(n);
  const std::filesystem::path dir = bipo::test::process_temp_path(name);
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "case.yaml";
  const double grading = std::pow(ratio, n - 1);
  std::ofstream(file) << std::setprecision(17) << "mesh: {block: {size: [" << kBlockSide << ", "
                      << kBlockSide << ", " << kBlockSide << "], elements: [" << n << ", " << n
                      << ", " << n << "], grading: [" << grading << ", " << grading << ", "
                      << grading << "], symmetry: quarter}}\n"
                      << "material: {young: " << kYoung << ", poisson: " << kPoisson << "}\n"
                      << "load_program: [{to: 1, increments: 1}]\n"
                         "boundary_conditions:\n"
                         "  - {set: top, displacement: {x: 0, y: 0, z: 0}}\n"
                         "  - {set: symmetry_x0, displacement: {x: 0}}\n"
                         "  - {set: symmetry_y0, displacement: {y: 0}}\n"
                         "contact:\n"
                         "  - set: bottom\n"
                         "    sphere: {center: [0, 0, "
                      << -kRadius << "], radius: " << kRadius
                      << "}\n"
                         "    friction: {mu: 0}\n"
                         "    motion: {displacement: [0, 0, "
                      << kIndentation << "]}\n";
  const Case c = read_case(file);
  std::filesystem::remove_all(dir);
  const Mesh mesh = load_mesh(c);
  Analysis analysis(c, mesh);
  run_load_program(analysis, [](const Analysis&, const StepResult&) {});
  const RunDescription run = describe_run(analysis);
  const ContactSurface surface = contact_surface(run);
  HertzMeasure m;
  double area = 0.0;
  const auto& states = analysis.contact_states();
  for (int i = 0; i < analysis.contact().n_nodes(); ++i) {
    const double rn = states[i].r(0);
    m.force += 4.0 * to_global(analysis.contact().frame(i), states[i].r).z();
    if (rn > 0.0) area += 4.0 * surface.area[i];
    if (analysis.contact().nodes()[i].position.head<2>().norm() == 0.0)
      m.peak_pressure = rn / surface.area[i];
  }
  m.contact_radius = std::sqrt(area / std::numbers::pi);
  return m;
}

/// Hertz for a rigid sphere at approach d: (a, P, p0).
struct Hertz {
  double a, force, p0;
};

Hertz hertz(double indentation) {
  const double e_star = kYoung / (1.0 - kPoisson * kPoisson);
  const double a = std::sqrt(kRadius * indentation);
  const double force = 4.0 / 3.0 * e_star * std::sqrt(kRadius) * std::pow(indentation, 1.5);
  return {a, force, 3.0 * force / (2.0 * std::numbers::pi * a * a)};
}

TEST(Hertz, RigidSphereOnBlockConvergesToHertz) {
  // The independent identity p0 = 2 E* a / (pi R) checks the formulas.
  const Hertz plain = hertz(kIndentation);
  const double e_star = kYoung / (1.0 - kPoisson * kPoisson);
  ASSERT_NEAR(plain.p0, 2.0 * e_star * plain.a / (std::numbers::pi * kRadius), 1e-12 * plain.p0);
  // The finite block's correction (header): Hertz at d + u_H(P), a fixed point.
  Hertz exact = plain;
  for (int k = 0; k < 50; ++k) {
    const double u_h = exact.force * (1.0 + kPoisson) * (3.0 - 2.0 * kPoisson) /
                       (2.0 * std::numbers::pi * kYoung * kBlockSide);
    exact = hertz(kIndentation + u_h);
  }
  ASSERT_NEAR(exact.force / plain.force, 1.045, 0.005);

  const HertzMeasure coarse = indent(10, 1.5625);
  const HertzMeasure fine = indent(20, 1.25);
  const auto error = [](double measured, double truth) { return std::abs(measured / truth - 1.0); };
  for (const HertzMeasure* m : {&coarse, &fine})
    std::printf("P %.5g (%+.2f %%)  a %.5g (%+.2f %%)  p0 %.5g (%+.2f %%)\n", m->force,
                100.0 * (m->force / exact.force - 1.0), m->contact_radius,
                100.0 * (m->contact_radius / exact.a - 1.0), m->peak_pressure,
                100.0 * (m->peak_pressure / exact.p0 - 1.0));
  EXPECT_LT(error(fine.force, exact.force), error(coarse.force, exact.force));
  EXPECT_LT(error(fine.contact_radius, exact.a), error(coarse.contact_radius, exact.a));
  EXPECT_LT(error(fine.peak_pressure, exact.p0), error(coarse.peak_pressure, exact.p0));
  EXPECT_LT(error(fine.force, exact.force), 0.02);       // seen: 0.5 %
  EXPECT_LT(fine.contact_radius / exact.a - 1.0, 0.07);  // half an element; seen: +3 %
  EXPECT_GT(fine.contact_radius / exact.a - 1.0, 0.0);
  EXPECT_LT(error(fine.peak_pressure, exact.p0), 0.02);  // seen: 1.1 %
  // Without the correction, the stiffer finite block: P above Hertz by
  // about u_H / d x 3/2.
  EXPECT_GT(fine.force / plain.force - 1.0, 0.03);
  EXPECT_LT(fine.force / plain.force - 1.0, 0.07);
}

}  // namespace
}  // namespace bipo
