// The wear module (contact/wear.hpp) against its formulas: Archard's and the
// energy law's depth of a step, a cycle's depth counted K times and its
// volume, nodes that do not wear; the gap offset of the contact module adds
// the worn depth to the gap exactly; the `wear` keys of the case file and
// their errors (docs/case-file.md, `wear`); a run's wear outputs agree
// with each other (docs/outputs.md).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "contact/node_to_plane.hpp"
#include "contact/wear.hpp"
#include "core/errors.hpp"
#include "io/case_file.hpp"

namespace bipo {
namespace {

ContactNodeState state(double rn, double slip, double dissipation) {
  ContactNodeState s;
  s.r = Eigen::Vector3d(rn, -0.3 * rn, 0.0);
  s.slip = Eigen::Vector2d(0.6 * slip, 0.8 * slip);  // |du_t| = slip
  s.dissipation = dissipation;
  return s;
}

TEST(Wear, StepDepthFollowsArchardAndTheEnergyLaw) {
  // Archard: k (r_n / A) |du_t| = 1e-3 * (20 / 4) * 0.5.
  EXPECT_DOUBLE_EQ(step_wear_depth(WearLaw::archard, 1e-3, 20.0, 0.5, 7.0, 4.0), 2.5e-3);
  // Energy: k D / A = 1e-3 * 7 / 4.
  EXPECT_DOUBLE_EQ(step_wear_depth(WearLaw::energy, 1e-3, 20.0, 0.5, 7.0, 4.0), 1.75e-3);
  // No area (not on a contact face) or no compressive force: no wear.
  EXPECT_EQ(step_wear_depth(WearLaw::archard, 1e-3, 20.0, 0.5, 7.0, 0.0), 0.0);
  EXPECT_EQ(step_wear_depth(WearLaw::archard, 1e-3, 0.0, 0.5, 0.0, 4.0), 0.0);
}

TEST(Wear, CycleDepthIsCountedKTimesWithItsVolume) {
  NodalWear wear(WearLaw::archard, 0.01, {2.0, 1.0, 1.0}, {true, true, false});
  const std::vector<ContactNodeState> step{state(4.0, 0.1, 0.0), state(1.0, 0.2, 0.0),
                                           state(4.0, 0.1, 0.0)};
  wear.add_step(step);
  wear.add_step(step);
  // Node 0: 2 x 0.01 * (4 / 2) * 0.1 = 4e-3; node 1: 2 x 0.01 * 1 * 0.2 = 4e-3;
  // node 2 does not wear.
  EXPECT_DOUBLE_EQ(wear.cycle_depth()[0], 4e-3);
  EXPECT_DOUBLE_EQ(wear.cycle_depth()[1], 4e-3);
  EXPECT_EQ(wear.cycle_depth()[2], 0.0);
  EXPECT_EQ(wear.depth()[0], 0.0);
  const double volume = wear.end_cycle(5);
  EXPECT_DOUBLE_EQ(wear.depth()[0], 2e-2);
  EXPECT_DOUBLE_EQ(wear.depth()[1], 2e-2);
  EXPECT_DOUBLE_EQ(volume, 2e-2 * 2.0 + 2e-2 * 1.0);
  EXPECT_DOUBLE_EQ(wear.volume(), volume);
  EXPECT_DOUBLE_EQ(wear.max_depth(), 2e-2);
  EXPECT_EQ(wear.cycle_depth()[0], 0.0);  // the next cycle starts from nothing
}

TEST(Wear, GapOffsetAddsTheWornDepthToTheGap) {
  RigidPlane plane;
  std::vector<ContactNode> nodes(2);
  nodes[0].position = Eigen::Vector3d(0.0, 0.0, 0.25);
  nodes[1].position = Eigen::Vector3d(1.0, 0.0, 0.0);
  NodeToPlaneContact contact({plane}, nodes);
  const Eigen::VectorXd u = Eigen::VectorXd::LinSpaced(6, -0.1, 0.1);
  const Eigen::VectorXd before = contact.kinematics(u);
  contact.set_gap_offset(Eigen::Vector2d(0.125, 0.5));
  const Eigen::VectorXd after = contact.kinematics(u);
  EXPECT_EQ(after(0), before(0) + 0.125);
  EXPECT_EQ(after(3), before(3) + 0.5);
  EXPECT_EQ(after.segment<2>(1), before.segment<2>(1));  // slips unchanged
  EXPECT_THROW(contact.set_gap_offset(Eigen::Vector3d::Zero()), std::invalid_argument);
}

class WearKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ =
        std::filesystem::temp_directory_path() /
        ("bipo_wear_keys_" + std::to_string(::getpid()) + "_" +
         std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".yaml");
  }
  void TearDown() override { std::filesystem::remove(file_); }
  Case read(const std::string& wear, bool cycles = true) {
    std::ofstream(file_) << "mesh: {cylinder: {}}\n"
                            "material: {young: 210000, poisson: 0.3}\n"
                            "load_program:\n  - {to: 1, increments: 1}\n"
                         << (cycles ? "  - {repeat: 2, segments: [{to: 0.5, increments: 2}]}\n"
                                    : "")
                         << "contact:\n  - {name: floor, set: bottom, plane: {point: [0, 0, 0], "
                            "normal: [0, 0, 1]}, friction: {mu: 0.3}}\n"
                         << wear;
    return read_case(file_);
  }
  void expect_error(const std::string& wear, const std::string& detail, bool cycles = true) {
    try {
      (void)read(wear, cycles);
      ADD_FAILURE() << "no error for " << wear;
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(file_.string() + ":", 0), 0u) << msg;
      EXPECT_NE(msg.find(detail), std::string::npos) << msg << "\nexpected: " << detail;
    }
  }
  std::filesystem::path file_;
};

TEST_F(WearKeys, ReadToTheRightValues) {
  EXPECT_FALSE(read("").wear.has_value());
  const Case c = read(
      "wear: {law: energy, coefficient: 1e-7, cycle_jump: 10, max_cycles: 1000, "
      "max_depth: 0.05, contact: floor}\n");
  ASSERT_TRUE(c.wear.has_value());
  EXPECT_EQ(c.wear->law, WearLawChoice::energy);
  EXPECT_EQ(c.wear->coefficient, 1e-7);
  EXPECT_EQ(c.wear->cycle_jump, 10);
  EXPECT_EQ(c.wear->max_cycles, 1000);
  EXPECT_EQ(c.wear->max_depth, 0.05);
  EXPECT_EQ(c.wear->contact, "floor");
  const Case d = read("wear: {law: archard, coefficient: 0}\n");
  EXPECT_EQ(d.wear->law, WearLawChoice::archard);
  EXPECT_EQ(d.wear->cycle_jump, 1);
  EXPECT_FALSE(d.wear->max_cycles.has_value());
  EXPECT_TRUE(d.wear->contact.empty());
}

TEST_F(WearKeys, ErrorsNameTheKeyAndWhatWasExpected) {
  expect_error("wear: {law: usure, coefficient: 1}\n", "wear.law: expected archard or energy");
  expect_error("wear: {law: archard}\n", "coefficient");
  expect_error("wear: {law: archard, coefficient: -1}\n", "wear.coefficient: expected a number");
  expect_error("wear: {law: archard, coefficient: 1, cycle_jump: 0}\n", "wear.cycle_jump");
  expect_error("wear: {law: archard, coefficient: 1, max_cycles: 2.5}\n", "wear.max_cycles");
  expect_error("wear: {law: archard, coefficient: 1, max_depth: 0}\n", "wear.max_depth");
  expect_error("wear: {law: archard, coefficient: 1, contact: wall}\n",
               "wear.contact: expected the name of a contact plane");
  expect_error("wear: {law: archard, coefficient: 1, every: 2}\n", "unknown key 'every'");
  expect_error("wear: {law: archard, coefficient: 1}\n", "repeat block", false);
}

// Wear needs cycles in the program `cycles.program` names, not in the
// load_program: a load_program without a repeat block is accepted when the
// named motion program has one, and refused (naming the program) when not.
TEST_F(WearKeys, CyclesComeFromTheNamedProgram) {
  const auto text = [](const std::string& motion_program) {
    return "mesh: {cylinder: {}}\n"
           "material: {young: 210000, poisson: 0.3}\n"
           "load_program: [{to: 1, increments: 1}, {to: 1, increments: 4}]\n"
           "contact:\n  - {name: floor, set: bottom, plane: {point: [0, 0, 0], normal: [0, 0, 1]},"
           " friction: {mu: 0.3}, motion: {displacement: [0.01, 0, 0], program: " +
           motion_program +
           "}}\n"
           "cycles: {program: contact.floor.motion}\n"
           "wear: {law: archard, coefficient: 1e-6}\n";
  };
  std::ofstream(file_) << text(
      "[{to: 0, increments: 1}, {repeat: 2, segments: [{to: 1, increments: 1}, {to: -1, "
      "increments: 1}]}]");
  const Case c = read_case(file_);
  ASSERT_TRUE(c.wear.has_value());
  EXPECT_EQ(cycle_program(c).n_cycles(), 2);
  std::ofstream(file_) << text("[{to: 0, increments: 1}, {to: 1, increments: 4}]");
  try {
    (void)read_case(file_);
    ADD_FAILURE() << "no error without cycles in the named program";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("wear: expected cycles"), std::string::npos) << msg;
    EXPECT_NE(msg.find("contact.floor.motion"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace bipo

namespace bipo {
namespace {

/// Numbers of one CSV column (by header name) of a file's text.
std::vector<double> csv_column(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string line, cell;
  std::getline(in, line);
  std::istringstream header(line);
  int index = -1;
  for (int k = 0; std::getline(header, cell, ','); ++k)
    if (cell == name) index = k;
  EXPECT_GE(index, 0) << name;
  std::vector<double> values;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    for (int k = 0; std::getline(row, cell, ','); ++k)
      if (k == index) values.push_back(std::stod(cell));
  }
  return values;
}

// A run with wear through the program: the outputs agree with each other
// (summary volume = sum of cycles.csv's wear_volume = sum h A of the last
// scar profile; the last map's wear_depth = the profile's), and max_cycles
// with a jump of 3 ends the run after two of its three cycles (3 + 2).
TEST(WearRun, OutputsAgreeAndMaxCyclesEndsTheRun) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("bipo_wear_run_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "case.yaml")
      << bipo_test::replaced(
             bipo_test::small_case, "load_program: [{to: 1.0, increments: 2}]\n",
             "load_program:\n  - {to: 1.0, increments: 2}\n"
             "  - {repeat: 3, segments: [{to: 1.0, increments: 4}, {to: 1.0, increments: 4}]}\n")
      << "    motion:\n      displacement: [0.01, 0, 0]\n"
         "      program: [{to: 0, increments: 2}, {repeat: 3, segments: [{to: 1, increments: "
         "4}, {to: -1, increments: 4}]}]\n"
         "wear: {law: archard, coefficient: 1e-4, cycle_jump: 3, max_cycles: 5}\n";
  const auto run = bipo_test::run_bipo(dir, "run -q -o out case.yaml", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto summary = nlohmann::json::parse(bipo_test::slurp(dir / "out" / "summary.json"));
  EXPECT_EQ(summary["status"], "completed");
  EXPECT_EQ(summary["wear"]["represented_cycles"], 5);
  EXPECT_NE(summary["wear"]["stop_reason"].get<std::string>().find("wear.max_cycles"),
            std::string::npos);
  EXPECT_EQ(summary["steps_converged"], 2 + 2 * 8);
  const double volume = summary["wear"]["volume"];
  ASSERT_GT(volume, 0.0);
  const std::string cycles = bipo_test::slurp(dir / "out" / "cycles.csv");
  double cycles_volume = 0.0;
  for (double v : csv_column(cycles, "wear_volume")) cycles_volume += v;
  EXPECT_NEAR(cycles_volume, volume, 1e-12 * volume);
  EXPECT_EQ(csv_column(cycles, "represented_cycles"), (std::vector<double>{0, 3, 5}));
  ASSERT_FALSE(fs::exists(dir / "out" / "wear" / "cycle_0003.csv"));
  const std::string profile = bipo_test::slurp(dir / "out" / "wear" / "cycle_0002.csv");
  const auto depth = csv_column(profile, "wear_depth");
  const auto area = csv_column(profile, "area");
  double profile_volume = 0.0, max_depth = 0.0;
  for (std::size_t i = 0; i < depth.size(); ++i) {
    profile_volume += depth[i] * area[i];
    max_depth = std::max(max_depth, depth[i]);
  }
  EXPECT_NEAR(profile_volume, volume, 1e-12 * volume);
  EXPECT_EQ(max_depth, summary["wear"]["max_depth"].get<double>());
  const std::string last_map = bipo_test::slurp(dir / "out" / "maps" / "step_000018.csv");
  EXPECT_EQ(csv_column(last_map, "wear_depth"), depth);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace bipo
