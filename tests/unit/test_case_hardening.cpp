// Hostile and broken case files (issue 11): each gives an InputError whose
// message names the file, the line and the key path, in bounded time and
// memory. Files that made the YAML library loop, or asked for absurd sizes,
// also go through the real `bipo check` under a wall-time and address-space
// limit, which must end with exit code 2.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../sanitized_build.hpp"
#include "app/run.hpp"
#include "cli_support.hpp"
#include "core/errors.hpp"
#include "io/case_file.hpp"
#include "io/safe_name.hpp"

namespace fs = std::filesystem;
using namespace std::string_literals;

using namespace bipo_test;  // NOLINT: the shared helpers of cli_support.hpp

namespace {

class CaseHardening : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name)
      if (c == '/') c = '_';
    dir_ = fs::temp_directory_path() / ("bipo_hard_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  /// Writes `bytes` as they are (NUL and invalid UTF-8 included).
  [[nodiscard]] fs::path write(const std::string& bytes,
                               const std::string& name = "case.yaml") const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

  /// The message of the InputError that reading `file` must throw.
  static std::string error_of(const fs::path& file) {
    try {
      (void)bipo::read_case(file);
    } catch (const bipo::InputError& e) {
      return e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not an InputError: " << e.what();
      return "";
    }
    ADD_FAILURE() << "no error for " << file;
    return "";
  }

  /// Reads `yaml` expecting "<file>:<line>: <path>: ..." containing `detail`.
  void expect_error(const std::string& yaml, const std::string& path, int line,
                    const std::string& detail) const {
    const fs::path file = write(yaml);
    const std::string msg = error_of(file);
    const std::string prefix = file.string() + ":" + std::to_string(line) + ": " + path + ": ";
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << "message: " << msg << "\nexpected prefix: " << prefix;
    EXPECT_NE(msg.find(detail), std::string::npos)
        << "message: " << msg << "\nexpected: " << detail;
  }

  /// `bipo check <file>` with at most 20 s of wall time and 4 GB of address
  /// space (the looping inputs of issue 11 grew to 14 GB). Under
  /// AddressSanitizer, which reserves terabytes of address space for its
  /// shadow memory, only the time is bounded.
  [[nodiscard]] Outcome bounded_check(const fs::path& file) const {
#if defined(BIPO_TEST_SANITIZED)
    const std::string memory_limit;
#else
    const std::string memory_limit = "ulimit -v 4000000; ";
#endif
    const fs::path err = dir_ / "stderr.txt";
    const std::string command = "cd " + quoted(dir_) + " && sh -c '" + memory_limit +
                                "exec timeout 20 \"$0\" check \"$1\"' " + quoted(BIPO_EXE) + " " +
                                quoted(file) + " 2>" + quoted(err);
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, "", slurp(err)};
  }

  /// Asserts that `bipo check` ends with exit 2 naming `file:line:`.
  void expect_check_refuses(const fs::path& file, int line, const std::string& detail) const {
    const Outcome o = bounded_check(file);
    EXPECT_EQ(o.exit_code, 2) << "(124: time limit; 1 or a signal: memory) " << o.err;
    EXPECT_NE(o.err.find(file.string() + ":" + std::to_string(line) + ":"), std::string::npos)
        << o.err;
    EXPECT_NE(o.err.find(detail), std::string::npos) << o.err;
  }

  fs::path dir_;
};

}  // namespace

TEST_F(CaseHardening, TheBaseCaseIsValid) {
  const bipo::Case c = bipo::read_case(write(small_case));
  EXPECT_EQ(c.contacts.size(), 1u);
  EXPECT_EQ(c.key_lines.at("contact[0].set"), 7);
  EXPECT_EQ(c.key_lines.at("boundary_conditions[0].set"), 5);
}

// --- item 6: one YAML document, read without looping ------------------------------

struct StrayCase {
  const char* name;
  std::string text;
  int line;
  std::string path;  ///< the start of the key path and what follows, or of a syntax error
  std::string detail;
};

class OneDocument : public CaseHardening, public ::testing::WithParamInterface<StrayCase> {};

TEST_P(OneDocument, IsAnInputErrorNamingTheLineAlsoThroughBipoCheck) {
  const StrayCase& p = GetParam();
  const fs::path file = write(p.text);
  const std::string msg = error_of(file);
  const std::string prefix = file.string() + ":" + std::to_string(p.line) + ": " + p.path;
  EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg << "\nexpected prefix: " << prefix;
  EXPECT_NE(msg.find(p.detail), std::string::npos) << msg;
  expect_check_refuses(file, p.line, p.detail);
}

INSTANTIATE_TEST_SUITE_P(
    CaseFile, OneDocument,
    ::testing::Values(
        StrayCase{"CommaAlone", ",", 1, "YAML syntax error", "at column 1: unexpected ','"},
        StrayCase{"CaseThenCommaDocument", small_case + "---\n,\n", 10, "(top level)",
                  "expected a single YAML document, got a second one starting on line 10"},
        StrayCase{"CaseThenSecondCase", small_case + "---\ntitle: x\n", 10, "(top level)",
                  "expected a single YAML document, got a second one starting on line 10"},
        StrayCase{"CaseThenEmptyDocument", small_case + "---\n", 10, "(top level)",
                  "a second one starting on line 10"},
        StrayCase{"CaseThenBrokenDocument", small_case + "---\n[\n", 10, "(top level)",
                  "a second one starting on line 10"},
        StrayCase{"ListThenComma", "- 1\n,\n", 2, "YAML syntax error",
                  "at column 1: unexpected ','"},
        StrayCase{"BraceAlone", "}", 1, "YAML syntax error", "at column 1"},
        StrayCase{"FlowNestedDeep", "title: " + std::string(100000, '['), 1, "title[0].?[0].?[0]",
                  "...: expected lists and maps nested at most 64 levels deep, got deeper"},
        StrayCase{"MapsNestedDeep", std::string(100000, '{'), 1, "?.?.?.?.?",
                  "nested at most 64 levels deep"},
        StrayCase{"BlockNestedDeep",
                  [] {
                    std::string text = "load_program:\n";
                    for (int level = 1; level <= 70; ++level)
                      text += std::string(static_cast<std::size_t>(level), ' ') + "- \n";
                    return text;
                  }(),
                  65, "load_program[0][0][0][0]",
                  "...: expected lists and maps nested at most 64"}),
    [](const auto& tested) { return std::string(tested.param.name); });

TEST_F(CaseHardening, NestingIsCountedFromTheTopMap) {
  // The top map and 63 lists: a wrong type, not a nesting error; one more
  // list is one level too many.
  expect_error(small_case + "title: " + std::string(63, '[') + std::string(63, ']') + "\n", "title",
               10, "expected a string, got a list");
  std::string path = "title";
  for (int i = 0; i < 18; ++i) path += "[0]";
  expect_error(small_case + "title: " + std::string(64, '[') + std::string(64, ']') + "\n",
               path + "...", 10, "nested at most 64 levels deep");
}

TEST_F(CaseHardening, BillionLaughsAliasesCostNoMemory) {
  // Each list holds ten aliases of the previous one: 10^9 items if expanded.
  std::string text = small_case + "loads:\n  - &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    text += "  - &l" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k > 0 ? ", *l" : "*l") + std::to_string(i - 1);
    text += "]\n";
  }
  const fs::path file = write(text);
  const std::string msg = error_of(file);
  EXPECT_EQ(msg.rfind(file.string() + ":11: loads[0]: expected a map with keys set, "
                                      "force_per_node, program, got a list",
                      0),
            0u)
      << msg;
  expect_check_refuses(file, 11, "loads[0]: expected a map");
}

TEST_F(CaseHardening, AliasesOfALongProgramAreCountedEachTimeTheyAreUsed) {
  // 10^5 segments, given to condition after condition by an alias: the
  // tenth use (boundary_conditions[10]) passes 10^6 stored segments.
  // The messages give the line of the anchored list, the key path the use.
  std::string text = replaced(
      small_case.substr(0, small_case.find("contact:")), "load_program: [{to: 1.0, increments: 2}]",
      "load_program: &p [{repeat: 100000, segments: [{to: 1, increments: 10}]}]");
  for (int i = 0; i < 12; ++i) text += "  - {set: top, displacement: {z: 0}, program: *p}\n";
  expect_error(text, "boundary_conditions[10].program[0].segments", 3,
               "expected at most 1000000 segments in all the load programs of the case together "
               "(repeat blocks count once per repetition), got more");
}

// --- item 8: size bounds ------------------------------------------------------------

TEST_F(CaseHardening, TenMillionRepeatsAreRefusedBeforeAnythingIsStored) {
  const std::string yaml =
      replaced(small_case, "load_program: [{to: 1.0, increments: 2}]",
               "load_program:\n  - repeat: 10000000\n    segments: [{to: 1, increments: 1}]");
  expect_error(yaml, "load_program[0].repeat", 4,
               "expected an integer in [1, 100000], got 10000000");
  expect_check_refuses(write(yaml), 4, "load_program[0].repeat");
}

TEST_F(CaseHardening, ProgramTotalsAreCheckedWithoutOverflow) {
  const auto with_program = [](const std::string& program) {
    return replaced(small_case, "load_program: [{to: 1.0, increments: 2}]",
                    "load_program: " + program);
  };
  // 10^6 increments exactly is allowed; one more names the item that passes.
  const bipo::Case full = bipo::read_case(
      write(with_program("[{repeat: 100000, segments: [{to: 1, increments: 10}]}]")));
  EXPECT_EQ(full.program.n_increments(), 1'000'000);
  EXPECT_EQ(full.program.n_cycles(), 100'000);
  expect_error(with_program("\n  - {repeat: 100000, segments: [{to: 1, increments: 10}]}\n"
                            "  - {to: 0, increments: 1}"),
               "load_program[1]", 5,
               "expected at most 1000000 increments in the whole program, got 1000001 up to here");
  // 10^5 x 2 x 10^6 increments: far beyond int, counted exactly.
  expect_error(with_program("[{repeat: 100000, segments: [{to: 1, increments: 1000000}, "
                            "{to: 0, increments: 1000000}]}]"),
               "load_program[0]", 3, "got 200000000000 up to here");
  for (const std::string n : {"2147483648", "99999999999999999999999", "-1", "1e3", "0x10"}) {
    expect_error(with_program("[{to: 1, increments: " + n + "}]"), "load_program[0].increments", 3,
                 "expected an integer in [1, 1000000], got " + n);
  }
  // Integers are decimal: a leading zero is not octal.
  const bipo::Case decimal = bipo::read_case(write(with_program("[{to: 1, increments: 010}]")));
  EXPECT_EQ(decimal.program.n_increments(), 10);
}

TEST_F(CaseHardening, FileSizeIsBounded) {
  // 16 MiB of comment after a valid case: one byte too many.
  const std::size_t limit = 16u * 1024u * 1024u;
  std::string text = small_case + "#";
  text += std::string(limit - text.size(), 'x');
  ASSERT_EQ(text.size(), limit);
  EXPECT_NO_THROW((void)bipo::read_case(write(text)));
  const fs::path file = write(text + "x");
  const std::string msg = error_of(file);
  EXPECT_EQ(msg, file.string() +
                     ": expected a case file of at most 16777216 bytes (16 MiB), "
                     "got more");
}

TEST_F(CaseHardening, TheNumberOfYamlValuesIsBounded) {
  std::string list = "[0";
  for (int i = 0; i < 1'000'000; ++i) list += ",0";
  const fs::path file = write(small_case + "title: " + list + "]\n");
  const std::string msg = error_of(file);
  EXPECT_EQ(msg.rfind(file.string() + ":10: title[", 0), 0u) << msg;
  EXPECT_NE(msg.find("]: expected at most 1000000 YAML values (scalars, lists and maps, keys "
                     "included) in the case file, got more"),
            std::string::npos)
      << msg;
}

TEST_F(CaseHardening, GeneratedMeshSizeIsBoundedBeforeGenerating) {
  expect_error(replaced(small_case, "core: 2", "core: 100000"), "mesh.cylinder.core", 1,
               "expected an integer in [1, 10000], got 100000");
  const std::string huge =
      replaced(small_case, "core: 2, ring: 1, layers: 1", "core: 1000, ring: 1000, layers: 1000");
  expect_error(huge, "mesh.cylinder", 1,
               "expected a mesh of at most 10000000 nodes, got core 1000, ring 1000 and layers "
               "1000, which make 5007003001 nodes");
  expect_check_refuses(write(huge), 1, "mesh.cylinder: expected a mesh of at most 10000000 nodes");
}

// --- item 9: non-finite and absurd values -------------------------------------------

struct BadValue {
  const char* name;
  std::string from;  ///< text of small_case (or of the extra lines) to replace
  std::string to;
  std::string path;
  int line;
  std::string detail;
};

/// small_case with a load, a probe, a plane motion and solver and output settings
/// (lines 10 to 16), so that every numeric key can be replaced.
const std::string kAllKeys = small_case +
                             "    direction: {angle: 0}\n"                        // 10
                             "    rho: 1000\n"                                    // 11
                             "    motion: {displacement: [0.001, 0, 0]}\n"        // 12
                             "loads: [{set: top, force_per_node: [0, 0, -1]}]\n"  // 13
                             "probes: [{name: P, point: [0, 0, 0]}]\n"            // 14
                             "solver: {force_tolerance: 1e-10, law_tolerance: 1e-10, "
                             "max_iterations: 100, max_cuts: 4, blas_threads: 1}\n"  // 15
                             "output: {every: 1}\n";                                 // 16

class AbsurdValue : public CaseHardening, public ::testing::WithParamInterface<BadValue> {};

TEST_P(AbsurdValue, IsAnInputErrorNamingTheKey) {
  const BadValue& p = GetParam();
  expect_error(replaced(kAllKeys, p.from, p.to), p.path, p.line, p.detail);
}

INSTANTIATE_TEST_SUITE_P(
    CaseFile, AbsurdValue,
    ::testing::Values(
        BadValue{"YoungDenormal", "young: 1000", "young: 5e-324", "material.young", 2,
                 "expected a number in [1e-6, 1e15], got 5e-324"},
        BadValue{"YoungHuge", "young: 1000", "young: 1e308", "material.young", 2,
                 "expected a number in [1e-6, 1e15], got 1e308"},
        BadValue{"YoungInfinite", "young: 1000", "young: .inf", "material.young", 2, "got .inf"},
        BadValue{"YoungOverflowing", "young: 1000", "young: 1e400", "material.young", 2,
                 "got 1e400"},
        BadValue{"PoissonJustBelowHalf", "poisson: 0.3", "poisson: 0.49999999999999994",
                 "material.poisson", 2,
                 "expected a number in [-0.99999, 0.49999], got 0.49999999999999994"},
        BadValue{"PoissonNearMinusOne", "poisson: 0.3", "poisson: -0.999999", "material.poisson", 2,
                 "got -0.999999"},
        BadValue{"BottomGradingHuge", "layers: 1", "layers: 1, bottom_grading: 1e308",
                 "mesh.cylinder.bottom_grading", 1, "expected a number in [1, 10], got 1e308"},
        BadValue{"RimGradingEleven", "layers: 1", "layers: 1, rim_grading: 11",
                 "mesh.cylinder.rim_grading", 1, "expected a number in [1, 10], got 11"},
        BadValue{"RadiusZero", "layers: 1", "layers: 1, radius: 0", "mesh.cylinder.radius", 1,
                 "expected a number in [1e-9, 1e9], got 0"},
        BadValue{"HeightHuge", "layers: 1", "layers: 1, height: 1e10", "mesh.cylinder.height", 1,
                 "expected a number in [1e-9, 1e9], got 1e10"},
        BadValue{"LayersZero", "layers: 1", "layers: 0", "mesh.cylinder.layers", 1,
                 "expected an integer in [1, 10000], got 0"},
        BadValue{"RingHuge", "ring: 1", "ring: 10001", "mesh.cylinder.ring", 1,
                 "expected an integer in [1, 10000], got 10001"},
        BadValue{"FactorNan", "to: 1.0", "to: .nan", "load_program[0].to", 3,
                 "expected a number in [-1e6, 1e6] (the factor at the end of the segment), got "
                 ".nan"},
        BadValue{"FactorHuge", "to: 1.0", "to: 1e7", "load_program[0].to", 3, "got 1e7"},
        BadValue{"DisplacementNan", "z: -0.01", "z: .NaN", "boundary_conditions[0].displacement.z",
                 5, "expected a number in [-1e9, 1e9], got .NaN"},
        BadValue{"DisplacementHuge", "x: 0,", "x: -1e10,", "boundary_conditions[0].displacement.x",
                 5, "got -1e10"},
        BadValue{"PointInfinite", "point: [0, 0, 0]", "point: [0, .inf, 0]",
                 "contact[0].plane.point[1]", 8, "expected a number in [-1e9, 1e9], got .inf"},
        BadValue{"NormalNan", "normal: [0, 0, 1]", "normal: [0, .nan, 1]",
                 "contact[0].plane.normal[1]", 8, "expected a finite number, got .nan"},
        BadValue{"NormalZero", "normal: [0, 0, 1]", "normal: [0, 0, 0.0]",
                 "contact[0].plane.normal", 8, "expected a non-zero normal"},
        BadValue{"MuTiny", "mu: 0.3", "mu: 1e-7", "contact[0].friction.mu", 9,
                 "expected 0 or a number in [1e-6, 1e6], got 1e-7"},
        BadValue{"MuHuge", "mu: 0.3", "mu: 1.1e6", "contact[0].friction.mu", 9, "got 1.1e6"},
        BadValue{"SlidingCoefficientDenormal", "mu: 0.3", "mu: 0.3, p: 1e-320",
                 "contact[0].friction.p", 9, "got 1e-320"},
        BadValue{"AngleHuge", "angle: 0", "angle: 1e308", "contact[0].direction.angle", 10,
                 "expected an angle in degrees in [-360, 360], got 1e308"},
        BadValue{"AngleNan", "angle: 0", "angle: .nan", "contact[0].direction.angle", 10,
                 "got .nan"},
        BadValue{"DirectionVectorInfinite", "{angle: 0}", "{vector: [1, -.inf, 0]}",
                 "contact[0].direction.vector[1]", 10, "expected a finite number, got -.inf"},
        BadValue{"RhoZero", "rho: 1000", "rho: 0", "contact[0].rho", 11,
                 "expected auto or a number in [1e-30, 1e30], got 0"},
        BadValue{"RhoHuge", "rho: 1000", "rho: 1e31", "contact[0].rho", 11, "got 1e31"},
        BadValue{"MotionInfinite", "[0.001, 0, 0]", "[0.001, 0, -.Inf]",
                 "contact[0].motion.displacement[2]", 12, "got -.Inf"},
        BadValue{"ForceNan", "[0, 0, -1]", "[.nan, 0, -1]", "loads[0].force_per_node[0]", 13,
                 "expected a number in [-1e20, 1e20], got .nan"},
        BadValue{"ForceHuge", "[0, 0, -1]", "[0, 0, -1e21]", "loads[0].force_per_node[2]", 13,
                 "got -1e21"},
        BadValue{"ProbePointHuge", "point: [0, 0, 0]}", "point: [1e10, 0, 0]}",
                 "probes[0].point[0]", 14, "expected a number in [-1e9, 1e9], got 1e10"},
        BadValue{"ForceToleranceBelowRoundOff", "force_tolerance: 1e-10", "force_tolerance: 1e-16",
                 "solver.force_tolerance", 15, "expected a number in [1e-15, 1], got 1e-16"},
        BadValue{"LawToleranceNan", "law_tolerance: 1e-10", "law_tolerance: .nan",
                 "solver.law_tolerance", 15, "got .nan"},
        BadValue{"LawToleranceAboveOne", "law_tolerance: 1e-10", "law_tolerance: 2",
                 "solver.law_tolerance", 15, "got 2"},
        BadValue{"MaxIterationsHuge", "max_iterations: 100", "max_iterations: 1000001",
                 "solver.max_iterations", 15, "expected an integer in [1, 1000000], got 1000001"},
        BadValue{"MaxCutsMillion", "max_cuts: 4", "max_cuts: 1000000", "solver.max_cuts", 15,
                 "expected an integer in [0, 30], got 1000000"},
        BadValue{"MaxCutsThirtyOne", "max_cuts: 4", "max_cuts: 31", "solver.max_cuts", 15,
                 "got 31"},
        BadValue{"BlasThreadsHuge", "blas_threads: 1", "blas_threads: 1025", "solver.blas_threads",
                 15, "expected auto or an integer in [1, 1024], got 1025"},
        BadValue{"EveryZero", "every: 1", "every: 0", "output.every", 16,
                 "expected an integer in [1, 1000000], got 0"},
        BadValue{"EveryHuge", "every: 1", "every: 1000001", "output.every", 16, "got 1000001"}),
    [](const auto& tested) { return std::string(tested.param.name); });

TEST_F(CaseHardening, TheLimitsOfEachRangeAreAccepted) {
  std::string text = kAllKeys;
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"young: 1000", "young: 1e15"},
           {"poisson: 0.3", "poisson: 0.49999"},
           {"layers: 1", "layers: 1, bottom_grading: 10, rim_grading: 10, radius: 1e9"},
           {"to: 1.0", "to: -1e6"},
           {"mu: 0.3", "mu: 100, p: 1e-6"},
           {"angle: 0", "angle: -360"},
           {"rho: 1000", "rho: 1e-30"},
           {"[0, 0, -1]", "[0, 0, 1e20]"},
           {"point: [0, 0, 0]}", "point: [-1e9, 0, 1e9]}"},
           {"force_tolerance: 1e-10", "force_tolerance: 1e-15"},
           {"law_tolerance: 1e-10", "law_tolerance: 1"},
           {"max_cuts: 4", "max_cuts: 30"},
           {"blas_threads: 1", "blas_threads: 1024"},
           {"every: 1", "every: 1000000"}})
    text = replaced(text, from, to);
  const bipo::Case c = bipo::read_case(write(text));
  EXPECT_EQ(c.material.young, 1e15);
  EXPECT_EQ(c.material.poisson, 0.49999);
  EXPECT_EQ(c.contacts[0].friction.p1, 1e-6);
  EXPECT_EQ(c.solver.max_cuts, 30);
  EXPECT_EQ(c.output.every, 1000000);
}

TEST_F(CaseHardening, NormalsAndDirectionsOfAnyFiniteLengthAreNormalized) {
  for (const std::string normal : {"[0, 0, 1e200]", "[0, 0, 5e-324]", "[0, 0, 1.7e308]"}) {
    const bipo::Case c =
        bipo::read_case(write(replaced(small_case, "normal: [0, 0, 1]", "normal: " + normal)));
    EXPECT_EQ(c.contacts[0].normal, Eigen::Vector3d(0, 0, 1)) << normal;
  }
  const bipo::Case both =
      bipo::read_case(write(replaced(small_case, "normal: [0, 0, 1]}",
                                     "normal: [1e300, 1e300, 0]}\n    direction: {vector: "
                                     "[0, 0, 1e-310]}")));
  const double s = std::sqrt(0.5);
  EXPECT_NEAR((both.contacts[0].normal - Eigen::Vector3d(s, s, 0)).norm(), 0.0, 1e-15);
  EXPECT_EQ(both.contacts[0].direction, Eigen::Vector3d(0, 0, 1));
  // Ordinary vectors are normalized as before, to the last bit.
  const bipo::Case plain =
      bipo::read_case(write(replaced(small_case, "normal: [0, 0, 1]", "normal: [3, 4, 12]")));
  EXPECT_EQ(plain.contacts[0].normal, Eigen::Vector3d(3, 4, 12).normalized());
}

// --- item 2: names that become file names -------------------------------------------

TEST(SafeFileName, Rule) {
  for (const std::string& good :
       std::vector<std::string>{"P", "_", "9", "floor_1", "a.b-c", std::string(64, 'n')})
    EXPECT_TRUE(bipo::is_safe_file_name(good)) << good;
  for (const std::string& bad :
       {""s, "/dir/victim"s, "../history"s, "a\0b"s, ".hidden"s, "-x"s, "a b"s, "a/b"s, "a\\b"s,
        std::string(65, 'n'), "caf\xC3\xA9"s, "a<b"s, "a,b"s, "a\nb"s})
    EXPECT_FALSE(bipo::is_safe_file_name(bad)) << bad;
  EXPECT_EQ(bipo::unsafe_file_name_reason("ok.1"), "");
  EXPECT_EQ(bipo::unsafe_file_name_reason(""), "it is empty");
  EXPECT_EQ(bipo::unsafe_file_name_reason("/dir/victim"),
            "it starts with '/' (a name starts with a letter, a digit or '_')");
  EXPECT_EQ(bipo::unsafe_file_name_reason("a\0b"s), "it contains byte 0x00 at position 2");
  EXPECT_EQ(bipo::unsafe_file_name_reason(std::string(65, 'n')),
            "it has 65 characters, more than 64");
}

struct NameSite {
  const char* name;
  std::string from;  ///< text of kAllKeys holding the name to replace
  std::string to;    ///< the same with NAME where the bad name goes
  std::string path;
  int line;
};

struct BadName {
  const char* name;
  std::string yaml;    ///< as written in the case (a YAML scalar)
  std::string reason;  ///< the end of the message
};

class UnsafeName : public CaseHardening,
                   public ::testing::WithParamInterface<std::tuple<NameSite, BadName>> {};

TEST_P(UnsafeName, IsAnInputErrorNamingKeyAndCharacter) {
  const auto& [site, bad] = GetParam();
  const std::string to = replaced(site.to, "NAME", bad.yaml);
  expect_error(replaced(kAllKeys, site.from, to), site.path, site.line,
               "of 1 to 64 characters among letters, digits, '_', '-' and '.', starting with a "
               "letter, a digit or '_', got '");
  expect_error(replaced(kAllKeys, site.from, to), site.path, site.line, "': " + bad.reason);
}

INSTANTIATE_TEST_SUITE_P(
    CaseFile, UnsafeName,
    ::testing::Combine(
        ::testing::Values(
            NameSite{"ProbeName", "name: P,", "name: NAME,", "probes[0].name", 14},
            NameSite{"PlaneName", "  - set: bottom\n", "  - name: NAME\n    set: bottom\n",
                     "contact[0].name", 7},
            NameSite{"ContactSet", "  - set: bottom\n", "  - set: NAME\n", "contact[0].set", 7},
            NameSite{"ConditionSet", "{set: top, d", "{set: NAME, d", "boundary_conditions[0].set",
                     5},
            NameSite{"LoadSet", "[{set: top, f", "[{set: NAME, f", "loads[0].set", 13},
            NameSite{"ProbeSet", "name: P,", "name: P, set: NAME,", "probes[0].set", 14}),
        ::testing::Values(
            BadName{"AbsolutePath", "\"/dir/victim\"",
                    "it starts with '/' (a name starts with a letter, a digit or '_')"},
            BadName{"ParentFolder", "\"../history\"", "it starts with '.'"},
            BadName{"Nul", "\"a\\0b\"", "it contains byte 0x00 at position 2"},
            BadName{"Hidden", ".hidden", "it starts with '.'"},
            BadName{"Option", "\"-rf\"", "it starts with '-'"},
            BadName{"Space", "\"a b\"", "it contains ' ' at position 2"},
            BadName{"Markup", "\"a<b>\"", "it contains '<' at position 2"},
            BadName{"NonAscii", "\"caf\xC3\xA9\"", "it contains byte 0xC3 at position 4"},
            BadName{"TooLong", std::string(65, 'n'), "it has 65 characters, more than 64"},
            BadName{"Empty", "\"\"", "it is empty"})),
    [](const auto& tested) {
      return std::string(std::get<0>(tested.param).name) + "_" + std::get<1>(tested.param).name;
    });

TEST_F(CaseHardening, ProbeNamesAreUniqueIgnoringCase) {
  const std::string yaml =
      replaced(kAllKeys, "[{name: P, point: [0, 0, 0]}]",
               "\n  - {name: P, point: [0, 0, 0]}\n  - {name: p, point: [1, 0, 0]}");
  expect_error(yaml, "probes[1].name", 16,
               "expected a unique probe name (probe names become file names, compared ignoring "
               "case), got 'p' after 'P'");
}

TEST_F(CaseHardening, AProbeNamedAsAPathWritesNothingAnywhere) {
  // The name of issue 11 that overwrote a file outside the results folder.
  const fs::path victim = dir_ / "victim.csv";
  std::ofstream(victim) << "precious\n";
  const std::string yaml =
      replaced(kAllKeys, "name: P,", "name: \"" + (dir_ / "victim").string() + "\",") +
      "title: run\n";
  const fs::path file = write(replaced(yaml, "output: {every: 1}", "output: {directory: out}"));
  const std::string command = "cd " + quoted(dir_) + " && " + quoted(BIPO_EXE) + " run --quiet " +
                              quoted(file) + " 2>" + quoted(dir_ / "err.txt");
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2) << slurp(dir_ / "err.txt");
  EXPECT_NE(slurp(dir_ / "err.txt").find(file.string() + ":14: probes[0].name: "),
            std::string::npos)
      << slurp(dir_ / "err.txt");
  EXPECT_EQ(slurp(victim), "precious\n");
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// --- item 3: text that is not UTF-8 --------------------------------------------------

struct BadText {
  const char* name;
  std::string bytes;  ///< the whole file
  int line;
  std::string path;  ///< empty if the message names no key
  std::string detail;
};

class BadEncoding : public CaseHardening, public ::testing::WithParamInterface<BadText> {};

TEST_P(BadEncoding, IsAnInputErrorNamingLineAndKey) {
  const BadText& p = GetParam();
  const fs::path file = write(p.bytes);
  const std::string msg = error_of(file);
  const std::string prefix = file.string() + ":" + std::to_string(p.line) + ": " +
                             (p.path.empty() ? "" : p.path + ": ") + "expected ";
  EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg << "\nexpected prefix: " << prefix;
  EXPECT_NE(msg.find(p.detail), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    CaseFile, BadEncoding,
    ::testing::Values(
        BadText{"Latin1InTitle", small_case + "title: Poin\xE7on\n", 10, "title",
                "expected UTF-8 text without control characters (tab and line breaks excepted), "
                "got byte 0xE7 (not UTF-8) at column 12"},
        BadText{"RawFFInTitle", "title: \"\xFF\"\n" + small_case, 1, "title",
                "got byte 0xFF (not UTF-8) at column 9"},
        BadText{"InANestedValue", replaced(small_case, "set: bottom", "set: bott\xC3"), 7,
                "contact[0].set", "got byte 0xC3 (not UTF-8) at column 14"},
        BadText{"InAComment", small_case + "# \xE9t\xE9\n", 10, "", "got byte 0xE9 (not UTF-8)"},
        BadText{"NulByte", small_case + "title: a\0b\n"s, 10, "title",
                "got a NUL byte at column 9"},
        BadText{"Escape", small_case + "title: x\x1B[31m\n", 10, "title",
                "got the control character U+001B at column 9"},
        BadText{"C1Control", small_case + "title: x\xC2\x85y\n", 10, "title",
                "got the control character U+0085 at column 9"},
        BadText{"Overlong", small_case + "title: \xC0\xAF\n", 10, "title",
                "got byte 0xC0 (not UTF-8)"},
        BadText{"Surrogate", small_case + "title: \xED\xA0\x80\n", 10, "title",
                "got byte 0xED (not UTF-8)"},
        BadText{"TruncatedAtTheEnd", small_case + "title: \xE2\x82", 10, "title",
                "got byte 0xE2 (not UTF-8)"},
        BadText{"Utf16", "\xFF\xFEm\0e\0"s, 1, "", "got byte 0xFF (not UTF-8) at column 1"},
        BadText{"EscapedNulInAString", small_case + "title: \"a\\0b\"\n", 10, "title",
                "expected a string of UTF-8 text without control characters, got a NUL byte at "
                "byte 2"},
        BadText{"EscapedControlInAPath", small_case + "output: {directory: \"out\\x1b\"}\n", 10,
                "output.directory", "got the control character U+001B at byte 4"}),
    [](const auto& tested) { return std::string(tested.param.name); });

TEST_F(CaseHardening, Utf8TextAndAByteOrderMarkAreAccepted) {
  const bipo::Case c = bipo::read_case(
      write("\xEF\xBB\xBF" + small_case + "title: \"Poin\xC3\xA7on \xE2\x8C\x80 10 mm\tA\"\n"));
  EXPECT_EQ(c.title, "Poin\xC3\xA7on \xE2\x8C\x80 10 mm\tA");
}

TEST_F(CaseHardening, ABadByteReachesBipoCheckAsExit2) {
  expect_check_refuses(write(small_case + "title: Poin\xE7on\n"), 10, "title: expected UTF-8 text");
}

TEST_F(CaseHardening, ACaseInAFolderWhoseNameIsNotUtf8IsRead) {
  const fs::path folder = dir_ / "caf\xE9";
  fs::create_directories(folder);
  const fs::path file = folder / "case.yaml";
  std::ofstream(file) << small_case;
  const bipo::Case c = bipo::read_case(file);
  EXPECT_EQ(c.source, fs::absolute(file).lexically_normal());
  EXPECT_EQ(c.output.directory.filename(), "case");
  // An error names the path with its bytes as they are.
  std::ofstream(file) << replaced(small_case, "young: 1000", "young: 0");
  EXPECT_EQ(error_of(file).rfind(file.string() + ":2: material.young: ", 0), 0u);
  const Outcome o = bounded_check(file);
  EXPECT_EQ(o.exit_code, 2) << o.err;
  std::ofstream(file) << small_case;
  EXPECT_EQ(bounded_check(file).exit_code, 0);
}

TEST_F(CaseHardening, APathThatIsNoFileSaysWhatItIs) {
  const auto mesh_file = [&](const std::string& path) {
    return replaced(small_case, "{cylinder: {core: 2, ring: 1, layers: 1}}",
                    "{file: \"" + path + "\"}");
  };
  fs::create_directories(dir_ / "folder.msh");
  expect_error(mesh_file("folder.msh"), "mesh.file", 1,
               "folder.msh: it is a directory, not a regular file)");
  ASSERT_EQ(::mkfifo((dir_ / "pipe.msh").c_str(), 0600), 0);
  expect_error(mesh_file("pipe.msh"), "mesh.file", 1,
               "pipe.msh: it is a FIFO (named pipe), not a regular file)");
  expect_error(mesh_file("/dev/null"), "mesh.file", 1,
               "/dev/null: it is a device (character device), not a regular file)");
  fs::create_symlink(dir_ / "loop_b.msh", dir_ / "loop_a.msh");
  fs::create_symlink(dir_ / "loop_a.msh", dir_ / "loop_b.msh");
  expect_error(mesh_file("loop_a.msh"), "mesh.file", 1, "loop_a.msh: symbolic link loop");
  expect_error(mesh_file("none.msh"), "mesh.file", 1, "none.msh: no such file)");
  // The case file itself: nothing is opened, so the FIFO cannot block.
  EXPECT_EQ(error_of(dir_ / "pipe.msh"),
            (dir_ / "pipe.msh").string() + ": expected a case file, got a FIFO (named pipe)");
  EXPECT_EQ(error_of(dir_ / "folder.msh"),
            (dir_ / "folder.msh").string() + ": expected a case file, got a directory");
  EXPECT_EQ(error_of("/dev/null"), "/dev/null: expected a case file, got a character device");
}

// --- item 9: errors found against the mesh name the key -------------------------------

struct MeshMismatch {
  const char* name;
  std::string from;
  std::string to;
  std::string located;  ///< "<line>: <key>: "
  std::string detail;
};

class AgainstTheMesh : public CaseHardening, public ::testing::WithParamInterface<MeshMismatch> {};

TEST_P(AgainstTheMesh, ErrorNamesFileLineAndKey) {
  const MeshMismatch& p = GetParam();
  const fs::path file = write(
      replaced(small_case + "loads: [{set: top, force_per_node: [0, 0, -1]}]\n", p.from, p.to));
  const bipo::Case c = bipo::read_case(file);
  std::ostringstream log;
  try {
    bipo::check_case(c, log);
    ADD_FAILURE() << "no error";
  } catch (const bipo::InputError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(c.source.string() + ":" + p.located, 0), 0u) << msg;
    EXPECT_NE(msg.find(p.detail), std::string::npos) << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(
    CaseFile, AgainstTheMesh,
    ::testing::Values(
        MeshMismatch{"UnknownConditionSet", "{set: top, d", "{set: nowhere, d",
                     "5: boundary_conditions[0].set: ", "unknown node set 'nowhere'"},
        MeshMismatch{"UnknownContactSet", "- set: bottom", "- set: floor",
                     "7: contact[0].set: ", "unknown node set 'floor'"},
        MeshMismatch{"UnknownLoadSet", "[{set: top, f", "[{set: lid, f",
                     "10: loads[0].set: ", "unknown node set 'lid'"},
        MeshMismatch{"TwoPlanesOnOneNode", "    friction: {mu: 0.3}\n",
                     "    friction: {mu: 0.3}\n  - set: bottom\n    plane: {point: [0, 0, 0], "
                     "normal: [0, 1, 1]}\n    friction: {mu: 0}\n",
                     "10: contact[1].set: ", "is in the contact sets of two planes"},
        MeshMismatch{"ConditionOnAContactNode", "{set: top, d",
                     "{set: bottom, displacement: {z: 0}}\n  - {set: top, d",
                     "5: boundary_conditions[0].set: ",
                     "of contact set 'bottom' (contact[0]) has uz prescribed by the condition on "
                     "set 'bottom'"},
        MeshMismatch{"ConflictingConditions", "{set: top, d",
                     "{set: all, displacement: {x: 1}}\n  - {set: top, d",
                     "6: boundary_conditions[1].set: ", "prescribe different values of ux"}),
    [](const auto& tested) { return std::string(tested.param.name); });

TEST_F(CaseHardening, AProbeOnASetWithoutPlaneNamesItsKeyInBipoRun) {
  const fs::path file = write(small_case + "probes: [{name: P, point: [0, 0, 10], set: top}]\n" +
                              "output: {directory: out, vtk: false}\n");
  const std::string command = "cd " + quoted(dir_) + " && " + quoted(BIPO_EXE) + " run --quiet " +
                              quoted(file) + " 2>" + quoted(dir_ / "err.txt");
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(slurp(dir_ / "err.txt")
                .find(fs::absolute(file).string() +
                      ":10: probes[0].set: probe 'P': set 'top' is not the node set of any "
                      "contact plane"),
            std::string::npos)
      << slurp(dir_ / "err.txt");
}

// --- the reader throws nothing but InputError ----------------------------------------

TEST_F(CaseHardening, MangledCasesGiveInputErrorsOnly) {
  // Every prefix of a full case, and the case with each byte replaced by
  // characters that matter to YAML or to the text checks: each read either
  // succeeds or throws InputError (anything else escapes as exit 1).
  const std::string text = kAllKeys + "title: \"t\"\n";
  std::vector<std::string> variants;
  for (std::size_t n = 0; n < text.size(); ++n) variants.push_back(text.substr(0, n));
  for (std::size_t i = 0; i < text.size(); ++i)
    for (const char c : {',', ']', '{', '&', '*', ':', '\xFF'}) {
      std::string v = text;
      v[i] = c;
      variants.push_back(v);
    }
  int read = 0, refused = 0;
  for (const auto& v : variants) {
    const fs::path file = write(v, "mangled.yaml");
    try {
      (void)bipo::read_case(file);
      ++read;
    } catch (const bipo::InputError& e) {
      ++refused;
      EXPECT_EQ(std::string(e.what()).rfind(file.string() + ":", 0), 0u) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not an InputError: " << e.what() << "\nfor:\n" << v;
    }
  }
  EXPECT_EQ(read + refused, static_cast<int>(variants.size()));
  EXPECT_GT(refused, static_cast<int>(text.size()));
}
