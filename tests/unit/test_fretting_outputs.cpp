// Fretting as a first-class case (docs/case-file.md `cycles`, docs/outputs.md):
// the program that defines the cycles, its turning points, and the reading
// of the `cycles` key with its errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../process_temp_path.hpp"
#include "core/errors.hpp"
#include "io/case_file.hpp"
#include "io/contact_face_outputs.hpp"
#include "model/case.hpp"

namespace fs = std::filesystem;

namespace {

bipo::LoadProgram program_of(std::initializer_list<std::pair<double, int>> segments) {
  bipo::LoadProgram p;
  for (const auto& [to, n] : segments) p.segments.push_back({to, n, 0});
  return p;
}

TEST(CycleProgram, ExtremesAreWhereTheFactorTurns) {
  // 0 -> 1 (2 inc), hold (1), -> -1 (4), -> 0 (2), -> 0.5 (1): a max at the
  // end of the first rise (k = 2, the hold does not move it), a min at k = 7;
  // k = 9 rises on to 0.5 and k = 10 ends the program: no turns.
  const auto p = program_of({{1.0, 2}, {1.0, 1}, {-1.0, 4}, {0.0, 2}, {0.5, 1}});
  const std::vector<int> expected{0, 0, 1, 0, 0, 0, 0, -1, 0, 0, 0};
  EXPECT_EQ(p.extremes(), expected);
}

TEST(CycleProgram, HoldsOnlyHaveNoExtremes) {
  const auto p = program_of({{0.0, 3}, {0.0, 2}});
  EXPECT_EQ(p.extremes(), std::vector<int>(6, 0));
}

TEST(CycleLoop, AreaAndWorkOfARectangleTraversedStepByStep) {
  // From (0, 0): up to force 2 at x = 0, right to x = 3, down to force 0,
  // back to x = 1 (not closed: the area closes it back to the start).
  bipo::CycleLoop loop;
  const double path[][2] = {{0, 0}, {0, 2}, {3, 2}, {3, 0}, {1, 0}};
  for (int k = 1; k < 5; ++k) loop.add(path[k - 1][0], path[k - 1][1], path[k][0], path[k][1]);
  EXPECT_DOUBLE_EQ(loop.area(), 6.0);
  // End-of-step force times the displacement increment: 2 * 3 + 0 * (-2).
  EXPECT_DOUBLE_EQ(loop.driver_work, 6.0);
  EXPECT_DOUBLE_EQ(loop.x0, 0.0);
  EXPECT_DOUBLE_EQ(loop.x, 1.0);
}

class CyclesKey : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = bipo::test::process_temp_path("bipo_cycles_key_" + std::string(info->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  bipo::Case read(const std::string& cycles) {
    const fs::path p = dir_ / "case.yaml";
    std::ofstream(p) << kCase << cycles;
    return bipo::read_case(p);
  }
  /// The message of the error `cycles` gives, checked to start with the
  /// file, line 12 (the line of `cycles`) and the key path.
  std::string error(const std::string& cycles) {
    try {
      (void)read(cycles);
    } catch (const bipo::InputError& e) {
      const std::string prefix = (dir_ / "case.yaml").string() + ":12: cycles.program: ";
      EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "no error for " << cycles;
    return "";
  }

  static constexpr const char* kCase =
      "mesh: {cylinder: {}}\n"
      "material: {young: 210000, poisson: 0.3}\n"
      "load_program: [{to: 1, increments: 5}, {repeat: 2, segments: [{to: 0, increments: 1}]}]\n"
      "boundary_conditions:\n"
      "  - {set: top, displacement: {z: -0.01}}\n"
      "loads:\n"
      "  - {set: top, force_per_node: [1, 0, 0], program: [{repeat: 3, segments: [{to: 1, "
      "increments: 1}]}, {to: 0, increments: 4}]}\n"
      "contact:\n"
      "  - {name: shaker, set: bottom, plane: {point: [0, 0, 0], normal: [0, 0, 1]}, friction: "
      "{mu: 0.3}, motion: {displacement: [0.01, 0, 0], program: [{to: 0, increments: 3}, "
      "{repeat: 2, segments: [{to: 1, increments: 1}, {to: -1, increments: 1}]}]}}\n"
      "\n\n";
  fs::path dir_;
};

TEST_F(CyclesKey, DefaultIsTheLoadProgram) {
  const bipo::Case c = read("");
  EXPECT_EQ(c.cycles.kind, bipo::CycleProgramRef::Kind::load_program);
  EXPECT_EQ(&bipo::cycle_program(c), &c.program);
  EXPECT_EQ(bipo::cycle_program(c).n_cycles(), 2);
}

TEST_F(CyclesKey, NamesAContactMotion) {
  const bipo::Case c = read("cycles: {program: contact.shaker.motion}\n");
  EXPECT_EQ(c.cycles.kind, bipo::CycleProgramRef::Kind::contact_motion);
  EXPECT_EQ(&bipo::cycle_program(c), &*c.contacts[0].motion_program);
  // Increments 4..5 are cycle 1, 6..7 cycle 2 of the shaker's program.
  EXPECT_EQ(bipo::cycle_program(c).cycle(3), 0);
  EXPECT_EQ(bipo::cycle_program(c).cycle(5), 1);
  EXPECT_EQ(bipo::cycle_program(c).cycle(6), 2);
}

TEST_F(CyclesKey, NamesALoadOrACondition) {
  const bipo::Case l = read("cycles: {program: 'loads[0]'}\n");
  EXPECT_EQ(l.cycles.kind, bipo::CycleProgramRef::Kind::load);
  EXPECT_EQ(bipo::cycle_program(l).n_cycles(), 3);
  // A condition without its own program: the load program's cycles.
  const bipo::Case b = read("cycles: {program: 'boundary_conditions[0]'}\n");
  EXPECT_EQ(b.cycles.kind, bipo::CycleProgramRef::Kind::boundary_condition);
  EXPECT_EQ(&bipo::cycle_program(b), &b.program);
}

TEST_F(CyclesKey, RefusesWhatNamesNoProgram) {
  EXPECT_NE(
      error("cycles: {program: contact.nobody.motion}\n").find("no contact is named 'nobody'"),
      std::string::npos);
  EXPECT_NE(error("cycles: {program: 'loads[1]'}\n").find("the case has 1 loads"),
            std::string::npos);
  EXPECT_NE(
      error("cycles: {program: 'boundary_conditions[x]'}\n").find("got 'boundary_conditions[x]'"),
      std::string::npos);
  EXPECT_NE(
      error("cycles: {program: shaker}\n").find("expected load_program, contact.<name>.motion"),
      std::string::npos);
}

}  // namespace
