// Command-line values in place of a case file's (io/case_overrides.hpp and
// read_case with overrides): a value read exactly as the same value written
// in the file, the key path syntax, hostile values refused with the option,
// the key path and what was expected, values shared through YAML anchors
// refused, and relative paths resolved against the working directory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "io/case_file.hpp"
#include "io/case_overrides.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kCase =
    "mesh: {cylinder: {core: 2, ring: 1, layers: 1}}\n"
    "material: {young: 1000, poisson: 0.3}\n"
    "load_program: [{to: 1.0, increments: 2}]\n"
    "boundary_conditions:\n"
    "  - {set: top, displacement: {x: 0, y: 0, z: -0.01}}\n"
    "contact:\n"
    "  - set: bottom\n"
    "    plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n"
    "    friction: {mu: 0.3}\n";

class CaseOverrides : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("bipo_overrides_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  [[nodiscard]] fs::path write(const std::string& text,
                               const std::string& name = "case.yaml") const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }

  /// The case of kCase (or `text`) with the --set arguments `sets`.
  [[nodiscard]] bipo::Case read(const std::vector<std::string>& sets,
                                const std::string& text = kCase) const {
    std::vector<bipo::CaseOverride> overrides;
    for (const auto& s : sets) overrides.push_back(bipo::parse_override(s, "--set"));
    return bipo::read_case(write(text), overrides);
  }

  /// The message of the InputError that reading with `sets` throws.
  [[nodiscard]] std::string error(const std::vector<std::string>& sets,
                                  const std::string& text = kCase) const {
    try {
      (void)read(sets, text);
    } catch (const bipo::InputError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error for " << sets.back();
    return "";
  }

  fs::path dir_;
};

TEST_F(CaseOverrides, AValueIsReadAsTheSameValueWrittenInTheFile) {
  const bipo::Case set = read({"contact[0].friction={mu1: 0.25, mu2: 0.1, p1: 0.05, p2: 0.2}",
                               "material.young=2e3", "solver.max_cuts=6", "title='a b'"});
  const bipo::Case file = bipo::read_case(
      write("title: 'a b'\n" +
                std::string(kCase)
                    .replace(kCase.find("{mu: 0.3}"), 9, "{mu1: 0.25, mu2: 0.1, p1: 0.05, p2: 0.2}")
                    .replace(kCase.find("young: 1000"), 11, "young: 2e3") +
                "solver: {max_cuts: 6}\n",
            "edited.yaml"));
  EXPECT_EQ(set.contacts.at(0).friction.mu1, file.contacts.at(0).friction.mu1);
  EXPECT_EQ(set.contacts.at(0).friction.mu1, 0.25);
  EXPECT_EQ(set.contacts.at(0).friction.p2, 0.2);
  EXPECT_EQ(set.material.young, 2000.0);
  EXPECT_EQ(set.solver.max_cuts, 6);
  EXPECT_EQ(set.title, "a b");
  ASSERT_EQ(set.overrides.size(), 4u);
  EXPECT_EQ(set.overrides[2].text(), "solver.max_cuts=6");
  // The new map `solver` was added by the override: its scope.
  EXPECT_EQ(set.overrides[2].scope, "solver");
  EXPECT_EQ(set.overrides[1].scope, "material.young");
  // The last value given for a key wins.
  EXPECT_EQ(read({"material.young=5", "material.young=7"}).material.young, 7.0);
  // An index one past the end appends an item.
  const bipo::Case appended =
      read({"probes[0]={name: c, point: [0, 0, 0]}", "probes[1]={name: d, point: [1, 0, 0]}"});
  ASSERT_EQ(appended.probes.size(), 2u);
  EXPECT_EQ(appended.probes[1].name, "d");
}

TEST_F(CaseOverrides, ErrorsNameTheOptionTheKeyPathAndWhatWasExpected) {
  struct Bad {
    std::string set;
    std::vector<std::string> pieces;
  };
  const std::vector<Bad> bad{
      {"contact[0].friction.muu=0.3", {"contact[0].friction.muu:", "unknown key 'muu'", "mu1"}},
      {"contact[2].friction.mu=0.3", {"contact[2]:", "expected an index in [0, 1]", "got 2"}},
      {"material.young=stiff", {"material.young:", "expected a number in [1e-6, 1e15]", "stiff"}},
      {"material.poisson=0.5", {"material.poisson:", "[-0.99999, 0.49999]", "got 0.5"}},
      {"material.young.x=1", {"material.young.x:", "expected a map at material.young"}},
      {"contact[0].set.x[0]=1", {"expected a map at contact[0].set"}},
      {"material[0]=1", {"expected a list at material to take an index"}},
      {"load_program=[]", {"load_program:", "non-empty list", "empty list"}},
      {"contact[1].set=bottom", {"contact[1].plane:", "missing required key"}},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.set);
    const std::string message = error({b.set});
    EXPECT_NE(message.find("case.yaml: --set " + b.set + ": "), std::string::npos) << message;
    for (const std::string& piece : b.pieces)
      EXPECT_NE(message.find(piece), std::string::npos) << "'" << piece << "' not in " << message;
  }
  // An error at a key of the file that the override changed from inside
  // names the file's line and the override.
  const std::string both = error({"contact[0].friction.mu1=0.3"});
  EXPECT_NE(both.find("case.yaml:9: contact[0].friction: "), std::string::npos) << both;
  EXPECT_NE(both.find("(after --set contact[0].friction.mu1=0.3)"), std::string::npos) << both;
}

TEST_F(CaseOverrides, HostileArgumentsAreRefusedBeforeAnyFileIsRead) {
  struct Bad {
    std::string argument;
    std::string piece;
  };
  const std::vector<Bad> bad{
      {"contact[0].friction.mu", "expected KEY=VALUE"},
      {"=1", "expected a key path"},
      {"contact[0]..mu=1", "expected a key path"},
      {"contact[x].mu=1", "expected a key path"},
      {"contact[-1].mu=1", "expected a key path"},
      {"[0].mu=1", "expected a key path"},
      {"a b=1", "expected a key path"},
      {"contact[99999999999].mu=1", "expected a key path"},
      {std::string(300, 'a') + "=1", "expected a key path"},
      {"title=&a x", "a YAML anchor"},
      {"title=*a", "anchor"},
      {"title=!!binary aGk=", "the YAML tag"},
      {"title=!custom x", "the YAML tag"},
      {"title=[&a 1, *a]", "a YAML anchor"},
      {"title=a\nb", "control character U+000A"},
      {"title=a\x1b[31m", "control character U+001B"},
      {std::string("title=a\0b", 9), "control character U+0000"},
      {"title=caf\xE9", "byte 0xE9 (not UTF-8)"},
      {"title=" + std::string(bipo::kMaxOverrideBytes + 1, 'x'), "at most 65536 bytes"},
      {"title=" + std::string(100, '['), "nested more than 64"},
      {"title=[1, 2", "YAML syntax error"},
      {"title=a\n---\nb", "control character"},
      {"title={a: 1}}", "YAML syntax error"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.argument.substr(0, 60));
    try {
      (void)bipo::parse_override(b.argument, "--set");
      ADD_FAILURE() << "accepted";
    } catch (const bipo::InputError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("--set ", 0), 0u) << message;
      EXPECT_NE(message.find(b.piece), std::string::npos) << message;
      EXPECT_LT(message.size(), 600u) << "a long argument is cut short in messages";
    }
  }
}

TEST_F(CaseOverrides, AValueSharedThroughAnAnchorIsNotChangedThroughOneKey) {
  const std::string text = kCase +
                           "loads:\n"
                           "  - {set: top, force_per_node: [0, 0, 0], program: &p [{to: 1.0, "
                           "increments: 2}]}\n"
                           "  - {set: top, force_per_node: [0, 0, 0], program: *p}\n";
  for (const char* set : {"loads[0].program[0].to=2",
                          "loads[1].program=[{to: 2, "
                          "increments: 2}]",
                          "loads[1].program[0].increments=2"}) {
    SCOPED_TRACE(set);
    const std::string message = error({set}, text);
    EXPECT_NE(message.find("through a YAML anchor or alias"), std::string::npos) << message;
  }
  // Around the shared value, or replacing what holds it, is fine.
  const bipo::Case c = read({"loads[1]={set: top, force_per_node: [0, 0, 1]}"}, text);
  EXPECT_EQ(c.loads.at(1).force_per_node.z(), 1.0);
  EXPECT_TRUE(c.loads.at(0).program.has_value());
}

TEST_F(CaseOverrides, RelativePathsAreRelativeToTheWorkingDirectory) {
  // In the file: relative to the file's folder; on the command line: to the
  // working directory (docs/case-file.md, "Relative paths").
  const fs::path cwd = fs::current_path();
  const bipo::Case in_file = read({}, kCase + "output: {directory: out}\n");
  EXPECT_EQ(in_file.output.directory, dir_ / "out");
  const bipo::Case set = read({"output.directory=out"}, kCase + "output: {directory: x}\n");
  EXPECT_EQ(set.output.directory, (cwd / "out").lexically_normal());
  EXPECT_EQ(read({"output={directory: ../o}"}).output.directory, (cwd / "../o").lexically_normal());
  EXPECT_EQ(read({"output.directory=/abs/o"}).output.directory, fs::path("/abs/o"));
  // The default: results/<case name> in the working directory.
  EXPECT_EQ(read({}).output.directory, (cwd / "results" / "case").lexically_normal());
  // A mesh file given on the command line is looked for from the working
  // directory: here it does not exist, and the message shows where it was sought.
  const std::string message = error({"mesh={file: no_such.msh}"});
  EXPECT_NE(message.find((cwd / "no_such.msh").string()), std::string::npos) << message;
}

TEST_F(CaseOverrides, SweepValuesAreSplitAtTheCommasOutsideBracketsAndQuotes) {
  const bipo::SweepValues s =
      bipo::parse_sweep("probes[0].point=[0, 0, 0], [1,0,0],'a,b',\"c,\\\"d\"");
  EXPECT_EQ(s.key, "probes[0].point");
  EXPECT_EQ(s.values, (std::vector<std::string>{"[0, 0, 0]", "[1,0,0]", "'a,b'", "\"c,\\\"d\""}));
  EXPECT_EQ(bipo::parse_sweep("a=1").values, std::vector<std::string>{"1"});
  for (const char* bad : {"a=1,,2", "a=", "a=1,&x 2", "a", "a=[1,2"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW((void)bipo::parse_sweep(bad), bipo::InputError);
  }
  std::string many = "a=0";
  for (std::size_t i = 0; i < bipo::kMaxSweepValues; ++i) many += ",1";
  EXPECT_THROW((void)bipo::parse_sweep(many), bipo::InputError);
}

/// Arguments of random bytes among the ones that matter to key paths and
/// YAML (brackets, quotes, anchors, tags, separators, a NUL, bytes above
/// 0x7F): whatever they hold, parsing and reading throw nothing but
/// InputError (the contract of read_case, io/case_file.hpp).
TEST_F(CaseOverrides, RandomArgumentsGiveNothingButInputErrors) {
  const std::string alphabet =
      std::string("contact[0].friction.mu=-+0123456789 ,:{}[]'\"&*!|>#%@`?\\ee") +
      std::string("\0\x7f\xc3\xa9\xff", 5);
  std::mt19937 random(16);  // fixed: a failure can be replayed
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1), length(0, 40);
  const fs::path file = write(kCase);
  int accepted = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    // Half start with a valid key, so that the values reach the reader.
    std::string argument = trial % 2 == 0 ? "contact[0].friction.mu=" : "";
    for (std::size_t n = length(random); n > 0; --n) argument += alphabet[pick(random)];
    try {
      (void)bipo::read_case(file, {bipo::parse_override(argument, "--set")});
      ++accepted;
    } catch (const bipo::InputError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not an InputError for '" << argument << "': " << e.what();
    }
  }
  EXPECT_GT(accepted, 0) << "some values are valid coefficients";
}

}  // namespace
