// The case keys of the linear solver (docs/case-file.md, solver.linear and
// solver.petsc): values read as written, defaults when absent, and each
// error naming the file, the line and the key path.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../process_temp_path.hpp"
#include "core/errors.hpp"
#include "io/case_file.hpp"
#include "solver/analysis.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kHead =
    "mesh: {cylinder: {}}\n"
    "material: {young: 210000, poisson: 0.3}\n"
    "load_program: [{to: 1, increments: 5}]\n";

class PetscCaseKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = bipo::test::process_temp_path("bipo_petsc_keys_" + std::string(info->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  bipo::Case read(const std::string& yaml) {
    std::ofstream(dir_ / "case.yaml") << yaml;
    return bipo::read_case(dir_ / "case.yaml");
  }

  /// Expects "<file>:<line>: <path>: ...<detail>...".
  void expect_error(const std::string& yaml, int line, const std::string& path,
                    const std::string& detail) {
    try {
      (void)read(yaml);
      ADD_FAILURE() << "no error for " << path;
    } catch (const bipo::InputError& e) {
      const std::string message = e.what();
      const std::string prefix =
          (dir_ / "case.yaml").string() + ":" + std::to_string(line) + ": " + path + ": ";
      EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
      EXPECT_NE(message.find(detail), std::string::npos) << message;
    }
  }

  fs::path dir_;
};

TEST_F(PetscCaseKeys, DefaultsAreAutomaticAndMumpsDirect) {
  const bipo::Case c = read(kHead);
  EXPECT_EQ(c.solver.linear, bipo::LinearSolverChoice::automatic);
  EXPECT_EQ(c.solver.petsc.method, bipo::PetscMethod::direct);
  EXPECT_EQ(c.solver.petsc.relative_tolerance, 1e-12);
  EXPECT_EQ(c.solver.petsc.max_iterations, 10000);
}

TEST_F(PetscCaseKeys, ValuesAreReadAsWritten) {
  bipo::Case c = read(kHead +
                      "solver:\n  linear: petsc\n  petsc: {method: cg_gamg, relative_tolerance: "
                      "1e-9, max_iterations: 250}\n");
  EXPECT_EQ(c.solver.linear, bipo::LinearSolverChoice::petsc);
  EXPECT_EQ(c.solver.petsc.method, bipo::PetscMethod::cg_gamg);
  EXPECT_EQ(c.solver.petsc.relative_tolerance, 1e-9);
  EXPECT_EQ(c.solver.petsc.max_iterations, 250);
  c = read(kHead + "solver: {linear: cholmod, petsc: {method: cg_hypre}}\n");
  EXPECT_EQ(c.solver.linear, bipo::LinearSolverChoice::cholmod);
  EXPECT_EQ(c.solver.petsc.method, bipo::PetscMethod::cg_hypre);
  for (const char* automatic : {"auto", "automatic"})
    EXPECT_EQ(read(kHead + "solver: {linear: " + automatic + "}\n").solver.linear,
              bipo::LinearSolverChoice::automatic);
}

TEST_F(PetscCaseKeys, AnUnsetKrylovToleranceFollowsTheFriction) {
  // 1e-15 above mu = 100 (any coefficient, any plane, any friction_program
  // change), 1e-12 below; a tolerance the case gives is kept, and MUMPS
  // has none.
  const auto tolerance = [&](const std::string& friction, const std::string& petsc) {
    const bipo::Case c = read(kHead +
                              "contact:\n  - set: bottom\n"
                              "    plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n"
                              "    friction: " +
                              friction + "\nsolver: {linear: petsc, petsc: " + petsc + "}\n");
    return bipo::effective_petsc_settings(c).relative_tolerance;
  };
  const std::string gamg = "{method: cg_gamg}";
  EXPECT_EQ(tolerance("{mu: 0.2}", gamg), 1e-12);
  EXPECT_EQ(tolerance("{mu: 100}", gamg), 1e-12);
  EXPECT_EQ(tolerance("{mu: 1e6}", gamg), 1e-15);
  EXPECT_EQ(tolerance("{mu: 1000}", "{method: cg_hypre}"), 1e-15);
  EXPECT_EQ(tolerance("{mu1: 0.3, mu2: 0.1, p1: 0.05, p2: 500}", gamg), 1e-15);
  EXPECT_EQ(tolerance("{mu: 0.2}\n    friction_program: [{from_increment: 3, friction: {mu: 1e4}}]",
                      gamg),
            1e-15);
  EXPECT_EQ(tolerance("{mu: 1e6}", "{method: cg_gamg, relative_tolerance: 1e-10}"), 1e-10);
  EXPECT_EQ(tolerance("{mu: 1e6}", "{method: cg_gamg, relative_tolerance: 1e-12}"), 1e-12);
  EXPECT_EQ(tolerance("{mu: 1e6}", "{method: direct}"), 1e-12);
}

TEST_F(PetscCaseKeys, ErrorsNameTheKeyPathAndLine) {
  expect_error(kHead + "solver:\n  linear: mumps\n", 5, "solver.linear",
               "expected auto, cholmod or petsc, got mumps");
  expect_error(kHead + "solver:\n  petsc:\n    method: gmres\n", 6, "solver.petsc.method",
               "expected direct, cg_gamg or cg_hypre, got gmres");
  expect_error(kHead + "solver:\n  petsc: {relative_tolerance: 2}\n", 5,
               "solver.petsc.relative_tolerance", "expected a number in [1e-15, 1], got 2");
  expect_error(kHead + "solver:\n  petsc: {max_iterations: 0}\n", 5, "solver.petsc.max_iterations",
               "expected an integer in [1, 1000000], got 0");
  expect_error(kHead + "solver:\n  petsc: {options: -ksp_view}\n", 5, "solver.petsc.options",
               "unknown key 'options'");
  expect_error(kHead + "solver:\n  petsc: direct\n", 5, "solver.petsc", "");
}

}  // namespace
