// Cattaneo-Mindlin and Mindlin-Deresiewicz against the finite-element sphere
// (issue 15, items 5 and 6; docs/fretting.md, "Verification"): a rigid
// sphere (R = 10) on an elastic block (E = 1000, nu = 0.3), pressed
// frictionless (the friction program switches mu = 0.3 on after the
// pressing, docs/case-file.md), then moved tangentially along y: first
// monotonically to delta* (Cattaneo-Mindlin, Johnson 7.2), then two cycles
// -delta* -> +delta* (Mindlin-Deresiewicz, Johnson 7.4) named by
// `cycles: {program: contact.ball.motion}`. Truth: contact_analytic.hpp.
//
// The model: `mesh.block` with `symmetry: half` (x >= 0; the plane x = 0 is
// a mirror plane of a tangential load along y, so ux = 0 there), 12 x 24 x
// 12, 20 x 40 x 20 hexahedra graded 18:1 toward the contact point (nodes
// along the axes at 0, 0.10, 0.21, 0.35, 0.50, 0.69, 0.90, 1.14 for a
// contact radius a = 1.03), its top face pressed down by 0.1 and held.
// Totals of the half model are doubled. P and Q come from history.csv
// (force_ball_z, _y), a from Hertz at the measured P (the local contact
// radius does not depend on how far away the block is held). Tolerances,
// and where they come from:
// - the finite block: its top face, held at depth H = 12, is where a
//   half-space under the tangential force Q would move by Cerruti's u =
//   Q (3 - 2 nu) / (8 pi G H) (Johnson 3.3, the point on the load's line
//   of action): added to Mindlin's displacement as a first-order
//   correction (3.5 % of the stick compliance here), as test_hertz does
//   for the normal load;
// - the stick radius c is measured like test_hertz's a, from the area of
//   the stuck nodes (state 1) against that of the closed nodes: a ring of
//   nodes changes state at once, so c is resolved to about half the node
//   spacing at the stick edge, the stated tolerance (0.11 a near r = a,
//   0.09 a near r = 0.7 a; seen: at most 0.03);
// - the coupling: Dundurs' beta = 2/7 at nu = 0.3 (contact_analytic.hpp).
//   Pressing frictionless removes the inward shear of the pressing; what is
//   left (the tangential load changing the pressure) moves the results by
//   much less than the mesh's error here: P stays within 1e-3 over the
//   cycles;
// - linear hexahedra are stiff by O(h^2) and the loop's increments are
//   delta* / 8: displacements within 4 % of the closed form (seen: 2.3 %),
//   the loop's shape within 3 % of delta* (seen: 1.7 %), its energy within
//   5 % (seen: +2.8 % at Q*/mu P = 0.6). At Q*/mu P = 0.3 the slip annulus
//   (0.11 a wide) is narrower than one element and the energy per cycle,
//   which comes from it alone, is 42 % low on this mesh and 15 % high on
//   a finer one: the sweep (label `study`) asserts what each resolves
//   (docs/fretting.md gives the numbers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "../process_temp_path.hpp"
#include "contact_analytic.hpp"
#include "csv_columns.hpp"

namespace {

using bipo_test::read_csv;

namespace fs = std::filesystem;
namespace an = bipo::analytic;
using Columns = std::map<std::string, std::vector<double>>;

constexpr double kYoung = 1000.0, kPoisson = 0.3, kRadius = 10.0, kMu = 0.3;
constexpr double kDepth = 12.0;  // H, the block's height, where its top is held
constexpr int kRamp = 20, kHalfCycle = 16;

/// The case: press (2 increments), ramp to +amplitude (kRamp, a map every 5),
/// two cycles of 2 kHalfCycle increments.
constexpr const char* kMesh = "elements: [20, 40, 20], grading: [18, 18, 18]";
/// The sweep's finer mesh (element across r = a: 0.14 a against 0.23 a).
constexpr const char* kFineMesh = "elements: [32, 64, 32], grading: [24, 24, 24]";

std::string fretting_case(double amplitude, const std::string& elements_and_grading) {
  std::ostringstream text;
  text << "mesh:\n"
          "  block: {size: [12, 24, 12], "
       << elements_and_grading
       << ", symmetry: half}\n"
          "material: {young: 1000, poisson: 0.3}\n"
          "load_program:\n"
          "  - {to: 1, increments: 2}\n"
          "  - repeat: 4\n"
          "    segments: [{to: 1, increments: 5}]\n"
          "  - {to: 1, increments: 64}\n"
          "boundary_conditions:\n"
          "  - {set: top, displacement: {x: 0, y: 0, z: -0.1}}\n"
          "  - {set: symmetry_x0, displacement: {x: 0}}\n"
          "contact:\n"
          "  - name: ball\n"
          "    set: bottom\n"
          "    sphere: {center: [0, 0, -10], radius: 10}\n"
          "    friction: {mu: 0}\n"
          "    friction_program: [{from_increment: 3, friction: {mu: 0.3}}]\n"
          "    motion:\n"
          "      displacement: [0, "
       << amplitude
       << ", 0]\n"
          "      program:\n"
          "        - {to: 0, increments: 2}\n"
          "        - {to: 1, increments: 20}\n"
          "        - repeat: 2\n"
          "          segments: [{to: -1, increments: 16}, {to: 1, increments: 16}]\n"
          "cycles: {program: contact.ball.motion}\n"
          "output: {vtk: false}\n";
  return text.str();
}

struct FrettingRun {
  fs::path out;
  Columns history, cycles, maps;
};

FrettingRun run_case(const std::string& name, double amplitude, const char* mesh = kMesh) {
  const fs::path dir = bipo::test::process_temp_path("bipo_fretting_sphere_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "case.yaml") << fretting_case(amplitude, mesh);
  const std::string command = std::string("'") + BIPO_EXE + "' run -q -o '" +
                              (dir / "out").string() + "' '" + (dir / "case.yaml").string() + "'";
  FrettingRun run;
  run.out = dir / "out";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  run.history = read_csv(run.out / "history.csv");
  run.cycles = read_csv(run.out / "cycles.csv");
  run.maps = read_csv(run.out / "maps" / "index.csv");
  return run;
}

/// The whole body's P, Q and the contact's closed forms at a history row.
struct Load {
  double p, q, w, a, mu_p;
};

Load load_at(const FrettingRun& run, std::size_t row) {
  Load l{};
  l.p = 2.0 * run.history.at("force_ball_z")[row];
  l.q = 2.0 * run.history.at("force_ball_y")[row];
  l.w = run.history.at("w_ball_y")[row];
  l.a = an::hertz_sphere(l.p, kRadius, an::contact_modulus(kYoung, kPoisson)).radius;
  l.mu_p = kMu * l.p;
  return l;
}

const double kGStar = an::tangential_modulus(kYoung, kPoisson);

/// Cerruti's far-field compliance of the block held at depth H (header).
double block_compliance() {
  return (3.0 - 2.0 * kPoisson) /
         (8.0 * std::numbers::pi * an::shear_modulus(kYoung, kPoisson) * kDepth);
}

/// Monotonic loading: the sphere's displacement against Mindlin's plus the
/// block's, at every step of the ramp (4 % of it; header).
void expect_mindlin_compliance(const FrettingRun& run) {
  for (std::size_t row = 2; row < 2 + kRamp; ++row) {
    const Load l = load_at(run, row);
    ASSERT_LT(l.q, l.mu_p) << "step " << row + 1;
    const double expected =
        an::mindlin_displacement(l.q, l.mu_p, l.a, kGStar) + block_compliance() * l.q;
    EXPECT_NEAR(l.w, expected, 0.04 * expected)
        << "step " << row + 1 << ", Q / mu P = " << l.q / l.mu_p;
  }
}

/// The stick radius on the maps of the ramp (steps 7, 12, 17, 22) against
/// c / a = (1 - Q / mu P)^(1/3), within half the node spacing at the stick
/// edge (header); c / a falls as Q rises.
void expect_stick_radius(const FrettingRun& run) {
  double previous = 2.0;
  int checked = 0;
  for (std::size_t m = 0; m < run.maps.at("step").size(); ++m) {
    const auto step = static_cast<std::size_t>(run.maps.at("step")[m]);
    if (step < 3 || step > 2 + kRamp) continue;
    const Load l = load_at(run, step - 1);
    char file[32];
    std::snprintf(file, sizeof file, "step_%06zu.csv", step);
    const Columns map = read_csv(run.out / "maps" / file);
    double stuck = 0.0, closed = 0.0;
    std::vector<double> axis;  // node positions along the motion's line x = 0
    for (std::size_t i = 0; i < map.at("node").size(); ++i) {
      if (map.at("state")[i] == 1.0) stuck += map.at("area")[i];
      if (map.at("state")[i] != 0.0) closed += map.at("area")[i];
      if (map.at("x")[i] == 0.0 && map.at("y")[i] >= 0.0) axis.push_back(map.at("y")[i]);
    }
    std::sort(axis.begin(), axis.end());
    const double ratio = std::sqrt(stuck / closed);
    const double expected = an::stick_ratio(l.q, l.mu_p);
    const double edge = expected * std::sqrt(2.0 * closed / std::numbers::pi);
    const auto above = std::upper_bound(axis.begin(), axis.end(), edge);
    ASSERT_TRUE(above != axis.begin() && above != axis.end());
    const double spacing = *above - *(above - 1);
    EXPECT_NEAR(ratio, expected, 0.5 * spacing / l.a)
        << "step " << step << ", Q / mu P = " << l.q / l.mu_p;
    EXPECT_LT(ratio, previous) << "step " << step;
    previous = ratio;
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

/// The steady cycles: energy against Mindlin-Deresiewicz at the measured
/// Q*, and the loop's points against the Masing branches, plus the block.
void expect_mindlin_deresiewicz(const FrettingRun& run, double energy_tolerance,
                                bool check_energy = true) {
  ASSERT_EQ(run.cycles.at("cycle").size(), 3u);
  const std::size_t first = 2 + kRamp, steps = 2 * kHalfCycle;
  for (std::size_t k = 1; k <= 2; ++k) {
    const std::size_t begin = first + (k - 1) * steps;
    double q_star = 0.0;
    for (std::size_t row = begin; row < begin + steps; ++row)
      q_star = std::max(q_star, std::abs(load_at(run, row).q));
    const Load end = load_at(run, begin + steps - 1);
    const double energy = an::mindlin_energy_per_cycle(q_star, end.mu_p, end.a, kGStar);
    if (check_energy) {
      EXPECT_NEAR(2.0 * run.cycles.at("dissipation")[k], energy, energy_tolerance * energy)
          << "cycle " << k << ", Q* / mu P = " << q_star / end.mu_p;
      EXPECT_NEAR(2.0 * run.cycles.at("loop_area")[k], energy, energy_tolerance * energy);
    }
    EXPECT_EQ(run.cycles.at("regime")[k], 1.0) << "partial slip";
    const double top =
        an::mindlin_displacement(q_star, end.mu_p, end.a, kGStar) + block_compliance() * q_star;
    for (std::size_t row = begin; row < begin + steps; ++row) {
      const Load l = load_at(run, row);
      const bool unloading = row < begin + kHalfCycle;
      const double masing =
          an::mindlin_loop_displacement(l.q, q_star, unloading, end.mu_p, end.a, kGStar) +
          block_compliance() * l.q;
      EXPECT_NEAR(l.w, masing, 0.03 * top) << "step " << row + 1 << ", Q / Q* = " << l.q / q_star;
    }
  }
  // Masing: the first full cycle is already the steady one (seen: 1e-4 of
  // it at Q* / mu P = 0.6, 3e-3 at 0.3, where a few rim nodes settle).
  EXPECT_NEAR(run.cycles.at("dissipation")[2], run.cycles.at("dissipation")[1],
              1e-2 * run.cycles.at("dissipation")[1]);
}

/// The sphere's amplitude for Q* / mu P = x: Mindlin's displacement plus the
/// block's at P = 160.4 (the whole body's force at this pressing, a = 1.031).
double amplitude_for(double x) {
  const double p = 160.4, mu_p = kMu * p;
  const double a = an::hertz_sphere(p, kRadius, an::contact_modulus(kYoung, kPoisson)).radius;
  return an::mindlin_displacement(x * mu_p, mu_p, a, kGStar) + block_compliance() * x * mu_p;
}

// One test, one run (each ctest entry is its own process: a fixture's
// shared run would be computed once per test, in parallel, in one folder).
TEST(FrettingSphere, CattaneoMindlinThenMindlinDeresiewiczOnAHalfBlock) {
  const FrettingRun run = run_case("0.6", amplitude_for(0.6));
  ASSERT_FALSE(run.history.empty() || run.cycles.empty() || run.maps.empty());
  expect_stick_radius(run);
  expect_mindlin_compliance(run);
  expect_mindlin_deresiewicz(run, 0.05);  // seen: +2.8 %
  fs::remove_all(run.out.parent_path());
}

// The sweep (about 4 minutes): Q* / mu P = 0.9 and 0.3, and 0.3 on a finer
// mesh, run by the ctest entry FrettingSphere.AmplitudeSweep (label `study`,
// tests/CMakeLists.txt), which sets BIPO_STUDY; skipped in the default suite.
TEST(FrettingSphereSweep, NearGrossSlipAndSmallAmplitude) {
  if (std::getenv("BIPO_STUDY") == nullptr) GTEST_SKIP() << "set BIPO_STUDY to run the sweep";
  const FrettingRun high = run_case("0.9", amplitude_for(0.9));
  ASSERT_FALSE(high.history.empty() || high.cycles.empty() || high.maps.empty());
  expect_stick_radius(high);
  expect_mindlin_compliance(high);
  expect_mindlin_deresiewicz(high, 0.05);  // seen: -0.9 %
  fs::remove_all(high.out.parent_path());
  // Small amplitude: the displacements and the loop's shape hold on the
  // default mesh; the energy, from a slip annulus (0.11 a) narrower than
  // an element there, does not (seen: -42 %), and is checked on the finer
  // mesh, whose ring of nodes near r = a is 0.14 a wide (seen: +15 %: the
  // annulus is still one ring wide, so 20 %).
  const FrettingRun low = run_case("0.3", amplitude_for(0.3));
  expect_stick_radius(low);
  expect_mindlin_compliance(low);
  expect_mindlin_deresiewicz(low, 0.0, false);
  fs::remove_all(low.out.parent_path());
  const FrettingRun fine = run_case("0.3_fine", amplitude_for(0.3), kFineMesh);
  expect_stick_radius(fine);
  expect_mindlin_compliance(fine);
  expect_mindlin_deresiewicz(fine, 0.2);
  fs::remove_all(fine.out.parent_path());
}

}  // namespace
