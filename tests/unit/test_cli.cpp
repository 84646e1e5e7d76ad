// The command-line program as a user meets it: the real bipo executable is
// run on good and bad case files, and its exit code (0 ok, 1 other error,
// 2 input error, 3 numerical failure), its messages and the files it leaves
// behind are checked.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_support.hpp"
#include "parallel/parallel_runtime.hpp"
#include "version.hpp"

namespace fs = std::filesystem;

using namespace bipo_test;  // NOLINT: the shared helpers of cli_support.hpp

namespace {

/// A fresh folder per test (tests run in parallel, one process each).
class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("bipo_cli_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  /// Runs `bipo <arguments>` from the test folder.
  [[nodiscard]] Outcome bipo(const std::string& arguments) const {
    return run_bipo(dir_, arguments, dir_);
  }

  /// Writes `text` to a file of the test folder and returns its path.
  [[nodiscard]] fs::path write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p;
  }

  /// Runs each case alone into alone_<name>, then all of them in one
  /// `bipo <run_options> <files...>` (into results/<name>), whose outcome it
  /// returns.
  [[nodiscard]] Outcome run_alone_and_together(
      const std::vector<std::pair<std::string, std::string>>& cases,
      const std::string& run_options) const {
    std::string together = run_options;
    for (const auto& [name, text] : cases) {
      const fs::path file = write(name + ".yaml", text);
      together.append(" ").append(quoted(file));
      std::string command = "run --quiet ";
      command.append(quoted(file)).append(" --output ").append(quoted(dir_ / ("alone_" + name)));
      const Outcome alone = bipo(command);
      EXPECT_EQ(alone.exit_code, 0) << alone.err;
    }
    return bipo(together);
  }
  fs::path dir_;
};

TEST_F(Cli, VersionAndHelp) {
  const Outcome version = bipo("--version");
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_NE(version.out.find(std::string("bipo ") + bipo::version_string), std::string::npos)
      << version.out;

  const Outcome help = bipo("--help");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  for (const char* word : {"run", "check", "mesh", "--version"})
    EXPECT_NE(help.out.find(word), std::string::npos) << word << " not in:\n" << help.out;

  const Outcome nothing = bipo("");
  EXPECT_NE(nothing.exit_code, 0) << "no sub-command must be an error";
}

TEST_F(Cli, CheckOfThePunchCasePrintsItsSize) {
  const Outcome o = bipo("check " + quoted(fs::path(BIPO_SOURCE_DIR) / "cases" / "punch_A.yaml"));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const char* text : {"1685 nodes", "1280 hexahedra", "337 contact nodes"})
    EXPECT_NE(o.out.find(text), std::string::npos) << text << " not in: " << o.out;
}

TEST_F(Cli, CheckOfTheSmallCaseSucceeds) {
  const Outcome o = bipo("check " + quoted(write("good.yaml", small_case)));
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("17 contact nodes"), std::string::npos) << o.out;
}

/// Each bad case: exit code 2 and a message that says where and what.
TEST_F(Cli, CheckOfBadCasesIsAnInputErrorNamingFileAndKey) {
  struct Bad {
    std::string file;
    std::string text;
    std::vector<std::string> expected;  // pieces of the message
  };
  const std::vector<Bad> bad{
      {"unknown_key.yaml",
       small_case + "extra: 1\n",
       {"unknown_key.yaml:10:", "extra", "unknown key"}},
      {"wrong_type.yaml",
       replaced(small_case, "young: 1000", "young: stiff"),
       {"wrong_type.yaml:2:", "material.young", "stiff"}},
      {"missing_key.yaml",
       replaced(small_case, "material: {young: 1000, poisson: 0.3}\n", ""),
       {"missing_key.yaml:", "material", "missing required key"}},
      {"young_zero.yaml",
       replaced(small_case, "young: 1000", "young: 0"),
       {"young_zero.yaml:2:", "material.young"}},
      {"young_negative.yaml",
       replaced(small_case, "young: 1000", "young: -5"),
       {"young_negative.yaml:2:", "material.young"}},
      {"poisson_half.yaml",
       replaced(small_case, "poisson: 0.3", "poisson: 0.5"),
       {"poisson_half.yaml:2:", "material.poisson", "0.5"}},
      {"unknown_set.yaml",
       replaced(small_case, "set: bottom", "set: nope"),
       {"unknown_set.yaml", "contact[0].set", "nope"}},
      {"contact_and_dirichlet.yaml",
       replaced(small_case, "set: top", "set: bottom"),
       {"contact_and_dirichlet.yaml", "bottom", "contact"}},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.file);
    const Outcome o = bipo("check " + quoted(write(b.file, b.text)));
    EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
    EXPECT_NE(o.err.find("input error"), std::string::npos) << o.err;
    for (const std::string& piece : b.expected)
      EXPECT_NE(o.err.find(piece), std::string::npos) << "'" << piece << "' not in: " << o.err;
  }
}

/// One inverted tetrahedron (nodes 2 and 3 swapped) in a hand-written Gmsh
/// 2.2 file: an input error naming the file and the element.
TEST_F(Cli, CheckOfAnInvertedTetrahedronIsAnInputError) {
  (void)write("tet.msh",
              "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
              "$PhysicalNames\n2\n2 1 \"bottom\"\n3 2 \"all\"\n$EndPhysicalNames\n"
              "$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n"
              "$Elements\n2\n1 2 2 1 1 1 2 3\n2 4 2 2 1 1 3 2 4\n$EndElements\n");
  const fs::path c = write("tet.yaml",
                           "mesh: {file: tet.msh}\n"
                           "material: {young: 1000, poisson: 0.3}\n"
                           "load_program: [{to: 1.0, increments: 1}]\n");
  const Outcome o = bipo("check " + quoted(c));
  EXPECT_EQ(o.exit_code, 2) << o.out << o.err;
  EXPECT_NE(o.err.find("tet.msh"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("Tetrahedron"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("tetrahedron 2 is inverted"), std::string::npos) << o.err;
}

/// A run that stops on bad input writes nothing that claims a result.
TEST_F(Cli, RunOfABadCaseLeavesNoCompletedResults) {
  const fs::path c = write("bad.yaml", replaced(small_case, "set: bottom", "set: nope"));
  const fs::path results = dir_ / "results";
  const Outcome o = bipo("run " + quoted(c) + " --output " + quoted(results));
  EXPECT_EQ(o.exit_code, 2) << o.err;
  const fs::path summary = results / "summary.json";
  if (fs::exists(summary)) {
    const auto j = nlohmann::json::parse(slurp(summary));
    EXPECT_NE(j.value("status", ""), "completed");
  }
  EXPECT_FALSE(fs::exists(results / "history.csv"));
}

TEST_F(Cli, GeneratedMeshIsUsableByACase) {
  const Outcome m = bipo("mesh cylinder --core 2 --ring 1 --layers 1 --output small.msh");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("34 nodes"), std::string::npos) << m.out;
  ASSERT_TRUE(fs::exists(dir_ / "small.msh"));
  const fs::path c = write("from_file.yaml",
                           replaced(small_case, "mesh: {cylinder: {core: 2, ring: 1, layers: 1}}",
                                    "mesh: {file: small.msh}"));
  const Outcome o = bipo("check " + quoted(c));
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("34 nodes"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("17 contact nodes"), std::string::npos) << o.out;

  // Command-line errors are input errors (exit 2), with the option named.
  const Outcome bad_option = bipo("mesh cylinder --format 3.0 --output x.msh");
  EXPECT_EQ(bad_option.exit_code, 2) << bad_option.err;
  EXPECT_NE(bad_option.err.find("--format"), std::string::npos) << bad_option.err;
  const Outcome unknown_option = bipo("mesh cylinder --cores 4 --output x.msh");
  EXPECT_EQ(unknown_option.exit_code, 2) << unknown_option.err;
  EXPECT_NE(unknown_option.err.find("--cores"), std::string::npos) << unknown_option.err;
  const Outcome bad_sector = bipo("mesh cylinder --sector half --output x.msh");
  EXPECT_EQ(bad_sector.exit_code, 2) << bad_sector.err;
  EXPECT_NE(bad_sector.err.find("--sector"), std::string::npos) << bad_sector.err;
  EXPECT_FALSE(fs::exists(dir_ / "x.msh"));

  const Outcome quarter =
      bipo("mesh cylinder --core 4 --ring 2 --layers 1 --sector quarter --output quarter.msh");
  ASSERT_EQ(quarter.exit_code, 0) << quarter.err;
  EXPECT_NE(quarter.out.find("38 nodes, 12 hexahedra"), std::string::npos) << quarter.out;
  const std::string quarter_msh = slurp(dir_ / "quarter.msh");
  EXPECT_NE(quarter_msh.find("\"symmetry_x0\""), std::string::npos);
  EXPECT_NE(quarter_msh.find("\"symmetry_y0\""), std::string::npos);
  const Outcome odd_quarter = bipo("mesh cylinder --core 5 --sector quarter --output odd.msh");
  EXPECT_EQ(odd_quarter.exit_code, 2) << odd_quarter.err;
  EXPECT_NE(odd_quarter.err.find("even core"), std::string::npos) << odd_quarter.err;
  EXPECT_FALSE(fs::exists(dir_ / "odd.msh"));
  // The generator's bounds (mesh/generate.hpp), the same as the case file's:
  // a request for an absurd mesh stops at once, before any allocation.
  for (const auto& [options, named] : std::vector<std::pair<std::string, std::string>>{
           {"--core 100000", "core"},
           {"--core 3000 --ring 3000 --layers 3000", "at most 10000000 nodes"},
           {"--bottom-grading 1e308", "bottom_grading"},
           {"--radius 1e300", "radius"},
           {"--height nan", "height"}}) {
    const Outcome absurd = bipo("mesh cylinder " + options + " --output absurd.msh");
    EXPECT_EQ(absurd.exit_code, 2) << options << ": " << absurd.err;
    EXPECT_NE(absurd.err.find(named), std::string::npos) << options << ": " << absurd.err;
    EXPECT_FALSE(fs::exists(dir_ / "absurd.msh")) << options;
  }

  const Outcome graded = bipo(
      "mesh cylinder --core 2 --ring 1 --layers 1 --rim-grading 2 --bottom-grading 1.5 "
      "--output graded.msh");
  ASSERT_EQ(graded.exit_code, 0) << graded.err;
  EXPECT_NE(graded.out.find("34 nodes"), std::string::npos) << graded.out;
  const Outcome bad_grading = bipo("mesh cylinder --rim-grading 0.5 --output y.msh");
  EXPECT_EQ(bad_grading.exit_code, 2);
  EXPECT_NE(bad_grading.err.find("rim_grading"), std::string::npos) << bad_grading.err;
  EXPECT_FALSE(fs::exists(dir_ / "y.msh"));
}

TEST_F(Cli, RunOfTheSmallCaseCompletes) {
  const fs::path c = write("good.yaml", small_case);
  const Outcome o = bipo("run " + quoted(c) + " --output out --quiet");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(o.err.empty()) << "--quiet printed: " << o.err;
  const fs::path out = dir_ / "out";
  const auto j = nlohmann::json::parse(slurp(out / "summary.json"));
  EXPECT_EQ(j.value("status", ""), "completed");
  EXPECT_EQ(j.value("steps_converged", -1), 2);
  for (const char* name : {"history.csv", "bipo.pvd", "contact.pvd"})
    EXPECT_TRUE(fs::exists(out / name)) << name;
  EXPECT_FALSE(fs::exists(out / "history.csv.partial"));
}

// The first line of a case's run gives the set-up's time: the sum of the
// summary's set-up phases, the load patterns' solve included (to the
// line's three decimals; on this mesh of 10,000 unknowns that solve takes
// milliseconds, which the line once left out).
TEST_F(Cli, TheRunsFirstLineGivesTheSumOfTheSetUpPhases) {
  std::string text =
      replaced(small_case, "core: 2, ring: 1, layers: 1", "core: 12, ring: 12, layers: 6");
  text = replaced(text, "increments: 2", "increments: 1");
  const fs::path c = write("good.yaml", text);
  const Outcome o = bipo("run " + quoted(c) + " --output out");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string marker = "; set-up ";
  const std::size_t at = o.err.find(marker);
  ASSERT_NE(at, std::string::npos) << o.err;
  const double printed = std::stod(o.err.substr(at + marker.size()));
  const auto seconds = nlohmann::json::parse(slurp(dir_ / "out" / "summary.json"))["seconds"];
  const double sum = seconds.value("assembly", -1.0) + seconds.value("factorization", -1.0) +
                     seconds.value("delassus", -1.0) + seconds.value("load_patterns", -1.0);
  EXPECT_GT(seconds.value("load_patterns", -1.0), 0.0);
  EXPECT_NEAR(printed, sum, 0.0005 + 1e-12) << o.err;
}

/// Contact iterations capped at one sweep with a tolerance that one sweep
/// cannot reach and no cuts: the run stops with exit code 3, says which
/// increment failed, and keeps the converged steps (the first increment does
/// not move anything and converges at once).
TEST_F(Cli, NumericalFailureStopsCleanlyAndKeepsConvergedSteps) {
  std::string text = replaced(small_case, "load_program: [{to: 1.0, increments: 2}]",
                              "load_program: [{to: 0.0, increments: 1}, {to: 1.0, increments: 2}]");
  text = replaced(text, "x: 0, y: 0, z: -0.01", "x: 0.01, y: 0, z: -0.01");
  text = replaced(text, "friction: {mu: 0.3}", "friction: {mu1: 0.3, mu2: 0.1, p1: 0.05, p2: 0.2}");
  text += "solver: {max_iterations: 1, max_cuts: 0, law_tolerance: 1e-14}\n";
  const fs::path c = write("hard.yaml", text);
  const Outcome o = bipo("run " + quoted(c) + " --output out");
  ASSERT_EQ(o.exit_code, 3) << o.out << o.err;
  EXPECT_NE(o.err.find("numerical failure"), std::string::npos) << o.err;

  const fs::path out = dir_ / "out";
  ASSERT_TRUE(fs::exists(out / "summary.json"));
  const auto j = nlohmann::json::parse(slurp(out / "summary.json"));
  EXPECT_EQ(j.value("status", ""), "failed");
  const int converged = j.value("steps_converged", -1);
  EXPECT_NE(j.value("message", "").find("did not converge"), std::string::npos);
  EXPECT_GE(converged, 0);
  EXPECT_LT(converged, 3);
  // Without cuts, each converged step is one increment: the next one failed.
  const std::string failed = "increment " + std::to_string(converged + 1) + " ";
  EXPECT_NE(o.err.find(failed), std::string::npos) << failed << "not in: " << o.err;
  // The history of the converged steps is there, finished: a header and
  // one row per converged step.
  ASSERT_TRUE(fs::exists(out / "history.csv"));
  std::ifstream history(out / "history.csv");
  int lines = 0;
  for (std::string line; std::getline(history, line);) ++lines;
  EXPECT_EQ(lines, 1 + converged);
}

/// The history of a run without its last column (the step's wall time).
std::string history_without_times(const fs::path& file) {
  std::ifstream in(file);
  std::string text;
  for (std::string line; std::getline(in, line);) text += line.substr(0, line.rfind(',')) + "\n";
  return text;
}

/// A family of small cases: the first three on one body, supports and contact
/// nodes (different friction laws and loads), the fourth with another
/// material.
std::vector<std::pair<std::string, std::string>> family_of_cases() {
  return {{"iso", small_case},
          {"ortho", replaced(small_case, "friction: {mu: 0.3}",
                             "friction: {mu1: 0.3, mu2: 0.1, p1: 0.05, p2: 0.2}")},
          {"deeper", replaced(small_case, "z: -0.01", "z: -0.02")},
          {"softer", replaced(small_case, "young: 1000", "young: 500")}};
}

TEST_F(Cli, SeveralCasesInOneRunShareTheSetUpAndGiveTheSameResults) {
  // The second and third share the first's set-up; the fourth has another
  // material and is set up on its own.
  const auto cases = family_of_cases();
  const Outcome o = run_alone_and_together(cases, "run --quiet");
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  for (const auto& [name, text] : cases) {
    const fs::path shared = dir_ / "results" / name;
    const fs::path alone = dir_ / ("alone_" + name);
    EXPECT_EQ(history_without_times(shared / "history.csv"),
              history_without_times(alone / "history.csv"))
        << name;
    const auto j = nlohmann::json::parse(slurp(shared / "summary.json"));
    EXPECT_EQ(j.value("status", ""), "completed") << name;
    EXPECT_EQ(j.value("setup_shared", true), name == "ortho" || name == "deeper") << name;
    EXPECT_FALSE(nlohmann::json::parse(slurp(alone / "summary.json")).value("setup_shared", true));
  }
}

TEST_F(Cli, CasesThatAskForAnotherSolverAreSetUpWithIt) {
  // One body, one command: a case whose solver keys shape the set-up
  // (contact path, its preconditioner, backend, PETSc method or tolerance)
  // is set up on its own and runs with what it asked for; keys of the
  // increment loop alone (law_tolerance) do not stop sharing.
  const std::string sliding =
      replaced(small_case, "x: 0, y: 0, z: -0.01", "x: 0.02, y: 0, z: -0.01");
  std::vector<std::pair<std::string, std::string>> cases = {
      {"dense", sliding},
      {"tighter", sliding + "solver: {law_tolerance: 1e-11}\n"},
      {"sparse", sliding + "solver: {contact_solver: sparse}\n"},
      {"own", sliding + "solver: {contact_solver: sparse, sparse_preconditioner: own_factor}\n"}};
  const bool petsc = bipo::parallel_plugin_path().rfind("none", 0) != 0;
  if (petsc) {
    cases.emplace_back("gamg", sliding + "solver: {linear: petsc, petsc: {method: cg_gamg}}\n");
    cases.emplace_back("bonded", replaced(cases.back().second, "{mu: 0.3}", "{mu: 1e6}"));
  }
  std::string command = "run --quiet";
  for (const auto& [name, text] : cases)
    command.append(" ").append(quoted(write(name + ".yaml", text)));
  const Outcome o = bipo(command);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto summary = [&](const std::string& name) {
    return nlohmann::json::parse(slurp(dir_ / "results" / name / "summary.json"));
  };
  EXPECT_TRUE(summary("tighter").value("setup_shared", false));
  for (const char* name : {"dense", "sparse", "own"})
    EXPECT_FALSE(summary(name).value("setup_shared", true)) << name;
  EXPECT_EQ(summary("sparse")["contact_solver"].value("kind", ""), "sparse");
  // stiffness_factor (auto here) factorizes its preconditioner; own_factor never.
  EXPECT_GT(summary("sparse")["contact_solver"].value("factorizations", -1), 0);
  EXPECT_EQ(summary("own")["contact_solver"].value("factorizations", -1), 0);
  // Which one ran is in the summary (auto's choice included); not on the dense path.
  EXPECT_EQ(summary("sparse")["contact_solver"].value("preconditioner", ""), "stiffness_factor");
  EXPECT_EQ(summary("own")["contact_solver"].value("preconditioner", ""), "own_factor");
  EXPECT_FALSE(summary("dense")["contact_solver"].contains("preconditioner"));
  // The step solver's costs beyond GMRES, on every path (0 on the dense one).
  for (const char* name : {"dense", "sparse", "own"})
    for (const char* key :
         {"long_restart_steps", "long_restart_refused_steps", "motion_corrections"})
      EXPECT_GE(summary(name)["contact_solver"].value(key, -1), 0) << name << " " << key;
  EXPECT_EQ(summary("dense")["contact_solver"].value("motion_corrections", -1), 0);
  // The dense path's Newton steps by how each was solved: at most one solve a
  // Newton step (none where every node sticks); not on the sparse path.
  const auto dense = summary("dense")["contact_solver"].value("dense_steps", nlohmann::json{});
  const long solved = dense.value("fresh_lu", -1L) + dense.value("reused_lu", -1L) +
                      dense.value("gmres_solves", -1L);
  EXPECT_GT(dense.value("fresh_lu", -1L), 0) << dense.dump();
  EXPECT_GE(dense.value("reused_lu", -1L), 0) << dense.dump();
  EXPECT_GT(solved, 0) << dense.dump();
  EXPECT_LE(solved, summary("dense").value("total_newton_iterations", -1L)) << dense.dump();
  EXPECT_LE(dense.value("bordered_solves", -1L), dense.value("gmres_solves", -1L));
  EXPECT_GE(dense.value("gmres_iterations", -1L), dense.value("gmres_solves", 0L));
  EXPECT_GE(dense.value("gmres_failures", -1L), 0);
  // A fresh LU is made in single precision once at most, and ends as a
  // double one once at most (at its factorization or a failed refinement).
  EXPECT_LE(dense.value("single_precision_lu", -1L), dense.value("fresh_lu", -1L)) << dense.dump();
  EXPECT_LE(dense.value("single_precision_fallbacks", -1L), dense.value("fresh_lu", -1L))
      << dense.dump();
  EXPECT_GE(
      dense.value("single_precision_lu", -1L) + dense.value("single_precision_fallbacks", -1L),
      dense.value("fresh_lu", -1L))
      << dense.dump();
  EXPECT_GE(dense.value("refinement_steps", -1L), 0) << dense.dump();
  EXPECT_FALSE(summary("sparse")["contact_solver"].contains("dense_steps"));
  if (!petsc) GTEST_SKIP() << "no parallel plugin: the PETSc cases were not run";
  for (const char* name : {"gamg", "bonded"}) {
    const auto j = summary(name);
    EXPECT_FALSE(j.value("setup_shared", true)) << name;
    EXPECT_EQ(j["parallel"].value("linear_solver", "").rfind("PETSc cg_gamg", 0), 0u) << j.dump();
  }
  // mu = 1e6 takes the tighter tolerance (effective_petsc_settings).
  EXPECT_NE(
      summary("bonded")["parallel"].value("linear_solver", "").find("relative tolerance 1e-15"),
      std::string::npos);
  EXPECT_NE(summary("gamg")["parallel"].value("linear_solver", "").find("relative tolerance 1e-12"),
            std::string::npos);
}

TEST_F(Cli, SeveralCasesAtOnceGiveTheSameResultsAsOneAfterTheOther) {
  // The cases of the test above, three at a time (--jobs 3): each result is
  // byte-identical to the case run alone, the set-up is shared the same way,
  // and progress lines say which case they belong to.
  const auto cases = family_of_cases();
  const Outcome o = run_alone_and_together(cases, "run --jobs 3");
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  int shared = 0;
  for (const auto& [name, text] : cases) {
    const fs::path at_once = dir_ / "results" / name;
    const fs::path alone = dir_ / ("alone_" + name);
    EXPECT_EQ(history_without_times(at_once / "history.csv"),
              history_without_times(alone / "history.csv"))
        << name;
    for (const char* file : {"cycles.csv", "maps/step_000002.csv"}) {
      ASSERT_TRUE(fs::exists(at_once / file)) << name << " " << file;
      EXPECT_EQ(slurp(at_once / file), slurp(alone / file)) << name << " " << file;
    }
    const auto j = nlohmann::json::parse(slurp(at_once / "summary.json"));
    EXPECT_EQ(j.value("status", ""), "completed") << name;
    shared += j.value("setup_shared", false) ? 1 : 0;
    if (name == "softer") {
      EXPECT_FALSE(j.value("setup_shared", true)) << "another material";
    }
    EXPECT_NE(o.err.find(name + ".yaml: increment"), std::string::npos) << o.err;
  }
  // iso, ortho and deeper are one body: whichever starts first sets up.
  EXPECT_EQ(shared, 2);
}

TEST_F(Cli, JobsIsAPositiveNumberOrAuto) {
  const fs::path c = write("good.yaml", small_case);
  for (const char* jobs : {"0", "-1", "two", "2x"}) {
    const Outcome o = bipo("run " + quoted(c) + " --jobs=" + jobs);
    EXPECT_EQ(o.exit_code, 2) << jobs << ": " << o.err;
    EXPECT_NE(o.err.find("--jobs"), std::string::npos) << o.err;
    EXPECT_FALSE(fs::exists(dir_ / "results")) << jobs;
  }
  const Outcome o = bipo("run --quiet --jobs auto " + quoted(c));
  EXPECT_EQ(o.exit_code, 0) << o.err;
}

namespace {

/// The sum of a history.csv column (by its header name).
double column_sum(const fs::path& history, const std::string& name) {
  std::ifstream in(history);
  std::string line, cell;
  std::getline(in, line);
  std::istringstream header(line);
  int column = 0;
  while (std::getline(header, cell, ',') && cell != name) ++column;
  double sum = 0.0;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    for (int k = 0; k <= column; ++k) std::getline(row, cell, ',');
    sum += std::stod(cell);
  }
  return sum;
}

}  // namespace

TEST_F(Cli, ProgressZeroShowsEveryNewtonStepOfTheIncrements) {
  // A sliding start (in-plane motion of the top) so that the increments take
  // Newton steps: --progress 0 gives a line after each one, numbered within
  // its increment, ending at the step count history.csv gives it.
  const std::string text = replaced(small_case, "x: 0, y: 0, z: -0.01", "x: 0.02, y: 0, z: -0.01");
  const fs::path c = write("slide.yaml", text);
  const Outcome o = bipo("run " + quoted(c) + " --output out --progress 0");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const double steps = column_sum(dir_ / "out" / "history.csv", "newton_iterations");
  ASSERT_GT(steps, 0.0);
  int lines = 0, last_step = 0;
  std::istringstream err(o.err);
  std::string line;
  for (int increment = 1; std::getline(err, line);) {
    const std::string head = "increment " + std::to_string(increment) + "/2, ";
    if (line.rfind(head, 0) == 0) {
      ASSERT_NE(line.find(" s in: newton " + std::to_string(last_step + 1) + ", residual "),
                std::string::npos)
          << line;
      ++last_step;
      ++lines;
    } else if (line.rfind("increment    " + std::to_string(increment) + "/2", 0) == 0) {
      EXPECT_NE(
          line.find("newton " + std::string(last_step < 10 ? " " : "") + std::to_string(last_step)),
          std::string::npos)
          << "the increment's line after " << last_step << " progress lines: " << line;
      ++increment;
      last_step = 0;
    }
  }
  EXPECT_EQ(lines, static_cast<int>(steps)) << o.err;
  // The default (10 s) shows none on a run this short, and --quiet none at all.
  const Outcome quiet = bipo("run " + quoted(c) + " --output out2");
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find(" s in: "), std::string::npos) << quiet.err;
}

TEST_F(Cli, ProgressIsSecondsFromZeroToAMillion) {
  const fs::path c = write("good.yaml", small_case);
  for (const char* seconds : {"-1", "nan", "inf", "2e6", "ten", "5s", ""}) {
    const Outcome o = bipo("run " + quoted(c) + " --progress='" + seconds + "'");
    EXPECT_EQ(o.exit_code, 2) << seconds << ": " << o.err;
    EXPECT_NE(o.err.find("--progress"), std::string::npos) << o.err;
    EXPECT_FALSE(fs::exists(dir_ / "results")) << seconds;
  }
  const Outcome o = bipo("run --quiet --progress 0.5 " + quoted(c));
  EXPECT_EQ(o.exit_code, 0) << o.err;
}

TEST_F(Cli, TwoCasesWritingOneFolderAreAnInputError) {
  const std::string text = small_case + "output: {directory: same}\n";
  const fs::path a = write("a.yaml", text);
  const fs::path b = write("b.yaml", text);
  const Outcome o = bipo("run " + quoted(a) + " " + quoted(b));
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("a.yaml"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("b.yaml"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("same folder"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "same")) << "a case ran although the folders clash";
}

TEST_F(Cli, SeveralCasesWithOneOutputFolderAreAnInputError) {
  const fs::path a = write("a.yaml", small_case);
  const fs::path b = write("b.yaml", small_case);
  const Outcome o = bipo("run " + quoted(a) + " " + quoted(b) + " --output out");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("single case file"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  EXPECT_FALSE(fs::exists(dir_ / "results"));
}

TEST_F(Cli, ABadCaseAmongSeveralStopsBeforeAnyRun) {
  const fs::path good = write("good.yaml", small_case);
  const fs::path bad = write("bad.yaml", replaced(small_case, "young: 1000", "young: stiff"));
  const Outcome o = bipo("run " + quoted(good) + " " + quoted(bad));
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("bad.yaml:2:"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "results")) << "a case ran although another one is invalid";
}

/// `--set` gives the results of the case file edited to hold the value,
/// lists the value in summary.json and echoes it at start.
TEST_F(Cli, SetGivesTheResultsOfTheEditedFile) {
  const fs::path c = write("good.yaml", small_case);
  const fs::path edited = write("edited.yaml", replaced(small_case, "mu: 0.3", "mu: 0.1"));
  const Outcome set = bipo("run " + quoted(c) + " --set contact[0].friction.mu=0.1 --set " +
                           "solver.max_cuts=5 --set output.directory=by_set");
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_NE(set.err.find("--set contact[0].friction.mu=0.1 --set solver.max_cuts=5"),
            std::string::npos)
      << set.err;
  // The absolute results folder, relative to the working directory.
  EXPECT_NE(set.err.find("results in " + (dir_ / "by_set").string() + "\n"), std::string::npos)
      << set.err;
  const Outcome file = bipo("run --quiet " + quoted(edited) + " -o by_file");
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(history_without_times(dir_ / "by_set" / "history.csv"),
            history_without_times(dir_ / "by_file" / "history.csv"));
  const auto j = nlohmann::json::parse(slurp(dir_ / "by_set" / "summary.json"));
  EXPECT_EQ(j.at("overrides"),
            nlohmann::json::array(
                {"contact[0].friction.mu=0.1", "solver.max_cuts=5", "output.directory=by_set"}));
  EXPECT_EQ(nlohmann::json::parse(slurp(dir_ / "by_file" / "summary.json")).at("overrides"),
            nlohmann::json::array());
  // bipo check takes --set too.
  const Outcome check = bipo("check " + quoted(c) + " --set mesh.cylinder.core=4");
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_NE(check.out.find("41 contact nodes"), std::string::npos) << check.out;
}

/// Each bad --set: exit 2, a message naming the argument, the key path and
/// what was expected, and nothing written.
TEST_F(Cli, BadSetValuesAreInputErrorsAndWriteNothing) {
  const fs::path c = write("good.yaml", small_case);
  const std::vector<std::pair<std::string, std::string>> bad{
      {"contact[0].friction.muu=0.3", "unknown key 'muu'"},
      {"contact[1].friction.mu=0.3", "contact[1].set: missing required key"},
      {"contact[5].friction.mu=0.3", "expected an index in [0, 1]"},
      {"material.young=stiff", "expected a number"},
      {"contact[0].friction.mu=2e6", "expected 0 or a number in [1e-6, 1e6], got 2e6"},
      {"contact[0].set=nope", "contact[0].set: unknown node set 'nope'"},
      {"title=!!str x", "YAML tag"},
      {"contact[0]friction=1", "expected a key path"},
  };
  for (const auto& [set, piece] : bad) {
    SCOPED_TRACE(set);
    const Outcome o = bipo("run " + quoted(c) + " -o out --set '" + set + "'");
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_NE(o.err.find("--set " + set), std::string::npos) << o.err;
    EXPECT_NE(o.err.find(piece), std::string::npos) << o.err;
    EXPECT_FALSE(fs::exists(dir_ / "out" / "summary.json")) << o.err;
  }
}

/// docs/case-file.md, "Relative paths": relative to where the path is
/// written (the case file's folder in the file, the working directory on
/// the command line); the default results/<case name> in the working
/// directory. The header line names the absolute folder.
TEST_F(Cli, RelativeOutputPathsFollowOneRule) {
  fs::create_directories(dir_ / "cases");
  fs::create_directories(dir_ / "work");
  const fs::path in_file = dir_ / "cases" / "in_file.yaml";
  std::ofstream(in_file) << small_case + "output: {directory: ../by_file}\n";
  const fs::path no_key = dir_ / "cases" / "no_key.yaml";
  std::ofstream(no_key) << small_case;
  const fs::path work = dir_ / "work";
  const std::vector<std::pair<std::string, fs::path>> runs{
      {quoted(in_file), dir_ / "by_file"},
      {quoted(in_file) + " --set output.directory=by_set", work / "by_set"},
      {quoted(in_file) + " --output ../by_option", dir_ / "by_option"},
      {quoted(no_key), work / "results" / "no_key"},
  };
  for (const auto& [arguments, folder] : runs) {
    SCOPED_TRACE(arguments);
    const Outcome o = run_bipo(work, "run " + arguments, dir_);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_TRUE(fs::exists(folder / "summary.json")) << folder;
    EXPECT_NE(o.err.find("; results in " + folder.string() + "\n"), std::string::npos) << o.err;
  }
}

/// --sweep: one folder per value, one set-up for a friction law, an index
/// of the headline numbers that each folder holds, and the results of each
/// value as a run with --set.
TEST_F(Cli, SweepRunsEachValueWithOneSetUpAndIndexesThem) {
  const fs::path c = write("good.yaml", small_case);
  const Outcome o =
      bipo("run " + quoted(c) + " --quiet -o study --sweep contact[0].friction.mu=0,0.1,0.3");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const Outcome alone =
      bipo("run --quiet " + quoted(c) + " -o alone --set contact[0].friction.mu=0.1");
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  EXPECT_EQ(history_without_times(dir_ / "study" / "001_0.1" / "history.csv"),
            history_without_times(dir_ / "alone" / "history.csv"));
  std::ifstream index(dir_ / "study" / "index.csv");
  std::string line;
  std::getline(index, line);
  EXPECT_EQ(line.rfind("key,value,folder,status,setup_shared,steps_converged,normal_force_end,"
                       "dissipation_total,dissipation_cycle_0",
                       0),
            0u)
      << line;
  const std::vector<std::string> values{"0", "0.1", "0.3"};
  for (std::size_t i = 0; i < values.size(); ++i) {
    ASSERT_TRUE(std::getline(index, line));
    const std::string folder = "00" + std::to_string(i) + "_" + values[i];
    const auto j = nlohmann::json::parse(slurp(dir_ / "study" / folder / "summary.json"));
    EXPECT_EQ(j.at("overrides"), nlohmann::json::array({"contact[0].friction.mu=" + values[i]}));
    EXPECT_EQ(j.at("setup_shared"), i > 0) << folder;
    // The last normal force of the folder's history, as written there.
    std::ifstream history(dir_ / "study" / folder / "history.csv");
    std::string header, row, last;
    std::getline(history, header);
    while (std::getline(history, row)) last = row;
    std::size_t column = 0;
    for (std::size_t at = 0; at < header.find("normal_force,"); ++at) column += header[at] == ',';
    std::stringstream fields(last);
    std::string normal_force;
    for (std::size_t k = 0; k <= column; ++k) std::getline(fields, normal_force, ',');
    EXPECT_EQ(line.rfind("contact[0].friction.mu," + values[i] + "," + folder + ",completed," +
                             (i > 0 ? "true" : "false") + ",2," + normal_force + ",",
                         0),
              0u)
        << line;
  }
  // The sweep's errors: nothing runs.
  for (const auto& [arguments, piece] : std::vector<std::pair<std::string, std::string>>{
           {"--sweep contact[0].friction.mu=0.1,2e6", "--sweep contact[0].friction.mu=2e6"},
           {"--sweep output.every=1,2", "not of output"},
           {"--sweep contact[0].friction.mu=0.1 --sweep material.young=1", "one --sweep"}}) {
    const Outcome bad = bipo("run " + quoted(c) + " -o bad_study " + arguments);
    EXPECT_EQ(bad.exit_code, 2) << arguments << ": " << bad.err;
    EXPECT_NE(bad.err.find(piece), std::string::npos) << bad.err;
    EXPECT_FALSE(fs::exists(dir_ / "bad_study")) << arguments;
  }
}

TEST_F(Cli, MissingCaseFileIsAnInputError) {
  const Outcome o = bipo("check does_not_exist.yaml");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("does_not_exist.yaml"), std::string::npos) << o.err;
}

}  // namespace
