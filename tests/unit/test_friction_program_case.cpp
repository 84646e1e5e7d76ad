// The case file's contact[i].friction_program (docs/case-file.md, `contact`):
// read to the right values, the law of each increment, and each error named
// by file, key path and line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "../process_temp_path.hpp"
#include "core/errors.hpp"
#include "io/case_file.hpp"

namespace bipo {
namespace {

namespace fs = std::filesystem;

class FrictionProgramCase : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device random;
    dir_ = bipo::test::process_temp_path("bipo_friction_program_" + std::to_string(random()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// A case of 10 increments whose plane has `program` (one line of YAML).
  fs::path write(const std::string& program) {
    const fs::path p = dir_ / "case.yaml";
    std::ofstream(p) << "mesh: {block: {}}\nmaterial: {young: 1, poisson: 0.3}\n"
                        "load_program: [{to: 1, increments: 4}, {to: 0, increments: 6}]\n"
                        "contact:\n"
                        "  - set: bottom\n"
                        "    plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n"
                        "    friction: {mu: 0}\n"
                        "    friction_program: "
                     << program << "\n";
    return p;
  }
  /// The message of reading `program`; it must start with "<file>:8: <path>: ".
  std::string error(const std::string& program, const std::string& path) {
    const fs::path file = write(program);
    try {
      (void)read_case(file);
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(file.string() + ":8: " + path + ": ", 0), 0u) << msg;
      return msg;
    }
    ADD_FAILURE() << "no error for " << program;
    return "";
  }
  fs::path dir_;
};

TEST_F(FrictionProgramCase, ReadsTheChangesAndGivesEachIncrementItsLaw) {
  const Case c =
      read_case(write("[{from_increment: 5, friction: {mu: 0.3}}, "
                      "{from_increment: 8, friction: {mu1: 0.4, mu2: 0.2, p1: 0.1, p2: 0.2}}]"));
  const ContactPlane& plane = c.contacts.at(0);
  ASSERT_EQ(plane.friction_program.size(), 2u);
  EXPECT_EQ(plane.friction_program[0].from_increment, 5);
  EXPECT_EQ(plane.friction_program[1].friction.p1, 0.1);
  for (int k = 1; k <= 4; ++k) EXPECT_EQ(plane.friction_at(k).mu1, 0.0) << k;
  for (int k = 5; k <= 7; ++k) EXPECT_EQ(plane.friction_at(k).mu1, 0.3) << k;
  for (int k = 8; k <= 10; ++k) EXPECT_EQ(plane.friction_at(k).mu2, 0.2) << k;
}

TEST_F(FrictionProgramCase, NamesTheBadKey) {
  const std::string p = "contact[0].friction_program";
  EXPECT_NE(error("[]", p).find("non-empty list"), std::string::npos);
  EXPECT_NE(error("{mu: 0.3}", p).find("a non-empty list"), std::string::npos);
  EXPECT_NE(error("[{from_increment: 1, friction: {mu: 0.3}}]", p + "[0].from_increment")
                .find("an integer in [2, 10]"),
            std::string::npos);
  EXPECT_NE(
      error("[{from_increment: 11, friction: {mu: 0.3}}]", p + "[0].from_increment").find("got 11"),
      std::string::npos);
  EXPECT_NE(error("[{from_increment: 5, friction: {mu: 0.3}}, {from_increment: 5, friction: {mu: "
                  "0}}]",
                  p + "[1].from_increment")
                .find("an integer in [6, 10]"),
            std::string::npos);
  EXPECT_NE(error("[{from_increment: 5}]", p + "[0].friction").find("missing required key"),
            std::string::npos);
  EXPECT_NE(error("[{from_increment: 5, friction: {mu: -1}}]", p + "[0].friction.mu")
                .find("0 or a number in [1e-6, 1e6]"),
            std::string::npos);
  EXPECT_NE(
      error("[{from_increment: 5, friction: {mu: 0.3}, at: 2}]", p + "[0].at").find("unknown key"),
      std::string::npos);
}

}  // namespace
}  // namespace bipo
