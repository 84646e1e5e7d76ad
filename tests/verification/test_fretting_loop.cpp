// The gross-slip fretting loop (issue 15, item 5; docs/outputs.md, "Cycles"):
// an elastic cylinder pressed on a rigid plane that then moves +-delta, well
// beyond the sliding onset, for two cycles named by `cycles.program`. Checked
// against the exact discrete energy balance of the bipotential's dissipation
// and against the rigid-plastic loop 4 mu P (delta - delta_stick).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "csv_columns.hpp"

namespace {

using bipo_test::read_csv;

namespace fs = std::filesystem;

constexpr double kMu = 0.3, kDelta = 1e-3;
constexpr int kHalfCycle = 100;  // increments from +delta to -delta
// Press (2 increments), go to +delta (50), then 2 cycles +delta -> -delta -> +delta.
const std::string kCase = R"(title: gross-slip fretting loop
mesh: {cylinder: {radius: 10, height: 10, core: 4, ring: 2, layers: 2}}
material: {young: 210000, poisson: 0.3}
load_program: [{to: 1, increments: 2}, {to: 1, increments: 450}]
boundary_conditions:
  - {set: top, displacement: {x: 0, y: 0, z: -0.0001}}
contact:
  - name: base
    set: bottom
    plane: {point: [0, 0, 0], normal: [0, 0, 1]}
    friction: {mu: 0.3}
    motion:
      displacement: [0.001, 0, 0]
      program:
        - {to: 0, increments: 2}
        - {to: 1, increments: 50}
        - repeat: 2
          segments: [{to: -1, increments: 100}, {to: 1, increments: 100}]
cycles: {program: contact.base.motion}
output: {vtk: false}
)";

class GrossSlipLoop : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("bipo_gross_slip_loop_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "case.yaml") << kCase;
    const std::string command = std::string("'") + BIPO_EXE + "' run -q -o '" +
                                (dir_ / "out").string() + "' '" + (dir_ / "case.yaml").string() +
                                "'";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    cycles_ = read_csv(dir_ / "out" / "cycles.csv");
    history_ = read_csv(dir_ / "out" / "history.csv");
    maps_ = read_csv(dir_ / "out" / "maps" / "index.csv");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static inline fs::path dir_;
  static inline std::map<std::string, std::vector<double>> cycles_, history_, maps_;
};

TEST_F(GrossSlipLoop, DriverWorkIsDissipationPlusWorkOnTheBodyExactly) {
  // Per step, with end-of-step forces (the implicit scheme): the plane's
  // force on the body R times its displacement increment dw is the work of
  // the nodal reactions on the nodes' displacement increments, sum r_i . du_i,
  // plus the bipotential's dissipation sum -r_t . (du - dw)_t (the normal
  // part r_n (du - dw)_n vanishes: the nodes stay closed). An identity of
  // the discrete solution: only round-off and the law tolerance separate the
  // sides.
  ASSERT_EQ(cycles_["cycle"].size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) {
    const double lhs = cycles_["driver_work"][k] - cycles_["work_on_body"][k];
    EXPECT_NEAR(lhs, cycles_["dissipation"][k], 1e-9 * cycles_["dissipation"][k]) << "cycle " << k;
  }
}

TEST_F(GrossSlipLoop, LoopAreaIsFourMuPTimesDeltaMinusDeltaStick) {
  const auto& steps = history_["step"];
  // The first increment after the turn at +delta (step 52 + 1): all nodes
  // stick, so its force change over its displacement change is k_t.
  const std::size_t turn = 51, after = 52;  // 0-based rows
  ASSERT_GT(steps.size(), after);
  ASSERT_EQ(history_["n_slip"][after], 0.0) << "the first reversal increment must stick";
  const auto& x = history_["loop_displacement"];
  const auto& f = history_["loop_force"];
  EXPECT_NEAR(x[turn], kDelta, 1e-15);
  const double k_t = (f[after] - f[turn]) / (x[after] - x[turn]);
  for (std::size_t k = 1; k <= 2; ++k) {
    // P at the cycle's end; it varies by 1e-4 relative over the cycle.
    const std::size_t end = turn + 2 * kHalfCycle * k;
    const double p = history_["normal_force_base"][end];
    const double mu_p = kMu * p;
    EXPECT_NEAR(std::abs(f[end]), mu_p, 1e-6 * mu_p) << "gross slip: |F_t| = mu P";
    const double expected = 4.0 * mu_p * (kDelta - mu_p / k_t);
    // The rigid-plastic loop has sharp corners; the computed one cuts them
    // within the increment that crosses from stick to slip (the trapezoid
    // of its chord): at most mu P dw per corner pair against 4 mu P delta,
    // dw / (2 delta) = 1 %, the tolerance.
    EXPECT_NEAR(cycles_["loop_area"][k], expected, 0.01 * expected) << "cycle " << k;
    // The loop area is the trapezoid rule of the force over w; the
    // dissipation uses end-of-step forces: they differ by the backward-
    // Euler term sum (du^T K du) / 2 (the same order, dw / delta).
    EXPECT_NEAR(cycles_["loop_area"][k], cycles_["dissipation"][k], 0.01 * expected);
    EXPECT_EQ(cycles_["regime"][k], 2.0) << "gross slip";
    EXPECT_EQ(cycles_["n_stuck_cycle"][k], 0.0);
    // Every node slides back and forth: half its peak-to-peak slip is delta
    // less its elastic travel, which is at most delta_stick.
    EXPECT_LE(cycles_["max_slip_amplitude"][k], kDelta);
    EXPECT_GE(cycles_["max_slip_amplitude"][k], kDelta - mu_p / k_t);
  }
}

TEST_F(GrossSlipLoop, ContactForceInHistoryBalancesThePlatenReaction) {
  // The body is held by the platen (top) and the plane only: the plane's
  // total reaction and the platen's balance, to the equilibrium tolerance.
  const auto& steps = history_["step"];
  for (std::size_t row = 0; row < steps.size(); ++row) {
    for (const char* c : {"x", "y", "z"}) {
      const double plane = history_[std::string("force_base_") + c][row];
      const double platen = history_[std::string("reaction_top_") + c][row];
      EXPECT_NEAR(plane + platen, 0.0, 1e-6 * history_["normal_force_base"][row])
          << "step " << steps[row] << " " << c;
    }
    EXPECT_DOUBLE_EQ(history_["normal_force_base"][row], history_["force_base_z"][row]);
    EXPECT_DOUBLE_EQ(history_["tangential_force_base_t1"][row], history_["force_base_x"][row]);
  }
}

TEST_F(GrossSlipLoop, MapsAtEveryExtremeOfTheMotion) {
  // The motion turns at steps 52 (+delta), 152 (-delta), 252, 352; 452 ends
  // the program (and a segment of load_program: written as a segment end).
  const std::vector<double> expected_steps{2, 52, 152, 252, 352, 452};
  EXPECT_EQ(maps_["step"], expected_steps);
  const auto& x = history_["w_base_x"];
  for (std::size_t j = 1; j + 1 < expected_steps.size(); ++j) {
    const auto row = static_cast<std::size_t>(expected_steps[j]) - 1;
    EXPECT_NEAR(std::abs(x[row]), kDelta, 1e-15) << "step " << expected_steps[j];
  }
}

TEST(SmallFretting, ANodeStuckThroughTheCycleIsPartialSlip) {
  // The same cylinder moved +-0.08 delta, below delta_stick = mu P / k_t
  // (about 0.096 delta here): the rim slips, the inner nodes stick through
  // every cycle, and the force stays below mu P.
  const auto dir =
      fs::temp_directory_path() / ("bipo_small_fretting_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string text = kCase;
  text.replace(text.find("[0.001, 0, 0]"), 13, "[0.00008, 0, 0]");
  text.replace(text.find("increments: 100}, {to: 1, increments: 100}"), 42,
               "increments: 20}, {to: 1, increments: 20}");
  text.replace(text.find("increments: 450}"), 16, "increments: 130}");
  std::ofstream(dir / "case.yaml") << text;
  const std::string command = std::string("'") + BIPO_EXE + "' run -q -o '" +
                              (dir / "out").string() + "' '" + (dir / "case.yaml").string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  auto cycles = read_csv(dir / "out" / "cycles.csv");
  auto history = read_csv(dir / "out" / "history.csv");
  ASSERT_EQ(cycles["cycle"].size(), 3u);
  double max_force = 0.0;
  for (const double f : history["loop_force"]) max_force = std::max(max_force, std::abs(f));
  EXPECT_LT(max_force, kMu * history["normal_force_base"].back());
  for (std::size_t k = 1; k <= 2; ++k) {
    EXPECT_EQ(cycles["regime"][k], 1.0) << "cycle " << k;
    EXPECT_GT(cycles["n_stuck_cycle"][k], 0.0);
    EXPECT_GT(cycles["n_slipped_cycle"][k], 0.0);
    EXPECT_GT(cycles["dissipation"][k], 0.0);
    // The rim's slip is a small part of the plane's travel.
    EXPECT_LT(cycles["max_slip_amplitude"][k], 0.25 * 0.08 * kDelta);
    // The exact balance holds in partial slip too (1e-9 of the driver's
    // work: the dissipation of the stuck nodes is round-off, clamped at 0).
    const double lhs = cycles["driver_work"][k] - cycles["work_on_body"][k];
    EXPECT_NEAR(lhs, cycles["dissipation"][k], 1e-9 * std::abs(cycles["driver_work"][k]));
  }
  fs::remove_all(dir);
}

}  // namespace
