// Runs of `mpirun -n N bipo run` (docs/parallel.md) against the serial
// CHOLMOD run of the same case, the independent truth: the history's normal
// force and dissipation columns to 1e-8 of each column's largest value (case
// C up to increment 59: from 60 on its increment problem has several
// certified solutions, docs/punch.md), the same result files with the same
// CSV headers, exactly one results folder written (rank 0's) and no staging
// folder left, input errors reported once with one exit code, `bipo check`
// printing once, `bipo mesh` writing the serial command's file byte for
// byte, once (rank 0), and an error of its path ending every rank with code
// 2, said once; the sparse contact path over CG and GAMG on two and three
// ranks against the serial run's first cycle, on the whole punch and on a
// small quarter with held components, each rank keeping its rows of the Newton
// step's GMRES vectors and receiving only border rows from the others, and
// each rank assembling fewer stiffness entries than the serial run's whole.
// Built only with the PETSc plugin and an mpirun (tests/CMakeLists.txt).
// MpiRun.* is in the default suite (about 30 s); MpiStudy.* (cases B and C
// on one and two ranks) is labelled `study`.
#include <sys/wait.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <vector>

#include "../process_temp_path.hpp"
#include "../regression/punch_support.hpp"

namespace {

using namespace bipo_regression;

/// `mpirun -n <ranks> bipo <arguments...>`, output to `log`; bipo's exit code.
int run_mpi(int ranks, const std::vector<std::string>& arguments, const fs::path& log) {
  std::string command;
  // --oversubscribe: two ranks may share a machine of fewer free cores.
  command.append("\"" BIPO_MPIRUN "\" -n ")
      .append(std::to_string(ranks))
      .append(" --oversubscribe");
  command.append(" \"").append(bipo_exe().string()).append("\"");
  for (const auto& a : arguments) command.append(" \"").append(a).append("\"");
  command.append(" > \"").append(log.string()).append("\" 2>&1");
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The folders of fresh_folder: removed when every test has passed, kept
/// for a look otherwise (their names end in the process id).
std::vector<fs::path>& made_folders() {
  static std::vector<fs::path> folders;
  return folders;
}
class RemoveFoldersAfterSuccess : public ::testing::Environment {
 public:
  void TearDown() override {
    if (!::testing::UnitTest::GetInstance()->Passed()) return;
    for (const fs::path& folder : made_folders()) fs::remove_all(folder);
  }
};
[[maybe_unused]] ::testing::Environment* const remove_folders =
    ::testing::AddGlobalTestEnvironment(new RemoveFoldersAfterSuccess);

/// A fresh folder for one test.
fs::path fresh_folder(const std::string& name) {
  const fs::path folder = bipo::test::process_temp_path("bipo_mpi_" + name);
  fs::remove_all(folder);
  fs::create_directories(folder);
  made_folders().push_back(folder);
  return folder;
}

/// Runs shipped case `case_name` on `ranks` ranks (with `sets` as --set
/// values) into folder/results; expects exit code 0.
fs::path run_case_on_ranks(const std::string& case_name, int ranks, const fs::path& folder,
                           const std::vector<std::string>& sets = {}) {
  const fs::path case_file = folder / (case_name + ".yaml");
  std::ofstream(case_file) << case_copy_text(case_name, folder / "results");
  std::vector<std::string> arguments{"run", case_file.string(), "-q"};
  for (const auto& s : sets) arguments.insert(arguments.end(), {"--set", s});
  const int code = run_mpi(ranks, arguments, folder / "log.txt");
  EXPECT_EQ(code, 0) << read_text(folder / "log.txt");
  return folder / "results";
}

/// The relative paths of the files under `root`.
std::set<std::string> files_under(const fs::path& root) {
  std::set<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    files.insert(fs::relative(entry.path(), root).string());
  return files;
}

/// The first line of every CSV file under `root`.
std::map<std::string, std::string> csv_headers(const fs::path& root) {
  std::map<std::string, std::string> headers;
  for (const std::string& file : files_under(root)) {
    if (fs::path(file).extension() != ".csv") continue;
    std::istringstream in(read_text(root / file));
    std::getline(in, headers[file]);
  }
  return headers;
}

/// `parallel` against `serial`: the same files and CSV headers, and the
/// history's normal force and dissipation to 1e-8 of each column's largest
/// magnitude, over the first `rows` increments (all when 0).
void expect_same_history_rows(const fs::path& parallel, const fs::path& serial, std::size_t rows);

void expect_same_results(const fs::path& parallel, const fs::path& serial, std::size_t rows = 0) {
  EXPECT_EQ(files_under(parallel), files_under(serial));
  EXPECT_EQ(csv_headers(parallel), csv_headers(serial));
  ASSERT_EQ(read_csv(parallel / "history.csv").rows(), read_csv(serial / "history.csv").rows());
  expect_same_history_rows(parallel, serial, rows);
}

/// The history columns of expect_same_results over the first `rows`
/// increments (all of the serial run's when 0); the parallel run may have
/// stopped earlier than the serial one, but not before `rows`.
void expect_same_history_rows(const fs::path& parallel, const fs::path& serial, std::size_t rows) {
  const Table p = read_csv(parallel / "history.csv");
  const Table s = read_csv(serial / "history.csv");
  const std::size_t compared = rows == 0 ? s.rows() : std::min(rows, s.rows());
  ASSERT_GE(p.rows(), compared);
  for (const std::string column : {"normal_force", "dissipation", "accumulated_dissipation"}) {
    const double scale = max_abs(s[column]);
    ASSERT_GT(scale, 0.0) << column;
    for (std::size_t i = 0; i < compared; ++i)
      ASSERT_NEAR(p[column][i], s[column][i], 1e-8 * scale) << column << " at increment " << i + 1;
  }
}

/// The text of summary.json.
std::string summary_of(const fs::path& results) {
  return read_text(results / "summary.json");
}

/// The lines of `text` that start with "bipo: " (bipo's own messages, not
/// mpirun's).
int bipo_message_lines(const std::string& text) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.rfind("bipo: ", 0) == 0 ? 1 : 0;
  return n;
}

/// `bipo run <case_file> -q` on `ranks` ranks (two unless said) with the
/// sparse contact path over CG and GAMG, output to folder/log.txt; expects
/// exit code 0.
void run_sparse_on_ranks(const fs::path& case_file, const fs::path& folder, int ranks = 2) {
  const int code = run_mpi(ranks,
                           {"run", case_file.string(), "-q", "--set",
                            "solver.contact_solver=sparse", "--set", "solver.petsc.method=cg_gamg"},
                           folder / "log.txt");
  EXPECT_EQ(code, 0) << read_text(folder / "log.txt");
}

/// Case A's first loading and one cycle (20 increments), results to
/// folder/results: the file folder/punch_A.yaml, written; its path.
fs::path case_a_one_cycle(const fs::path& folder) {
  std::string text = case_copy_text("punch_A", folder / "results");
  const std::string repeat = "- repeat: 6";
  const auto at = text.find(repeat);
  if (at == std::string::npos) throw std::runtime_error("punch_A.yaml has no '" + repeat + "'");
  text.replace(at, repeat.size(), "- repeat: 1");
  std::ofstream(folder / "punch_A.yaml") << text;
  return folder / "punch_A.yaml";
}

/// summary.json's contact_solver.newton_step_rows_per_rank and dofs.free.
std::pair<std::vector<int>, int> newton_step_rows_and_free(const std::string& summary) {
  const nlohmann::json json = nlohmann::json::parse(summary);
  return {json.at("contact_solver").at("newton_step_rows_per_rank").get<std::vector<int>>(),
          json.at("dofs").at("free").get<int>()};
}

TEST(MpiRun, TwoRanksGiveTheSerialResultsOfCaseAWithOneResultsFolder) {
  const fs::path folder = fresh_folder("two_ranks_A");
  const fs::path results = run_case_on_ranks("punch_A", 2, folder);
  expect_same_results(results, cached_results("punch_A"));
  const std::string summary = summary_of(results);
  EXPECT_NE(summary.find("\"ranks\": 2"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"linear_solver\": \"PETSc"), std::string::npos) << summary;
  // Each rank assembled the elements of its rows and of the contact face:
  // fewer stiffness entries than the serial run's whole, more than half.
  const auto stiffness_entries = [](const std::string& text) {
    return nlohmann::json::parse(text)
        .at("parallel")
        .at("stiffness_entries_per_rank")
        .get<std::vector<long>>();
  };
  const std::vector<long> held = stiffness_entries(summary);
  const std::vector<long> whole = stiffness_entries(summary_of(cached_results("punch_A")));
  ASSERT_EQ(held.size(), 2U);
  ASSERT_EQ(whole.size(), 1U);
  for (const long rank_entries : held) {
    EXPECT_LT(rank_entries, whole[0]);
    EXPECT_GT(2 * rank_entries, whole[0]);
  }
  // Rank 0 alone wrote: one results folder, nothing else, no staging left.
  std::set<std::string> entries;
  for (const auto& entry : fs::directory_iterator(folder))
    entries.insert(entry.path().filename().string());
  EXPECT_EQ(entries, (std::set<std::string>{"log.txt", "punch_A.yaml", "results"}));
  for (const std::string& file : files_under(results))
    EXPECT_EQ(file.find(".bipo-staging"), std::string::npos) << file;
}

TEST(MpiRun, OneRankWithPetscGivesTheSerialResultsOfCaseA) {
  const fs::path folder = fresh_folder("one_rank_A");
  const fs::path results = run_case_on_ranks("punch_A", 1, folder, {"solver.linear=petsc"});
  expect_same_results(results, cached_results("punch_A"));
  EXPECT_NE(summary_of(results).find("\"ranks\": 1"), std::string::npos);
}

// The sparse contact path over CG and GAMG on `ranks` ranks, with its
// second preconditioner (P = K_ff + springs, a GAMG of its own): case A's
// first loading and one cycle (20 increments) against the serial CHOLMOD
// run's first 20 rows; each rank keeps its rows of the Newton step's GMRES
// vectors, and receives the other ranks' border rows alone, in the step's
// products and in the equilibrium check.
void expect_serial_results_of_a_sparse_cycle_of_case_a(int ranks, const std::string& name) {
  const fs::path folder = fresh_folder(name);
  run_sparse_on_ranks(case_a_one_cycle(folder), folder, ranks);
  const fs::path results = folder / "results";
  EXPECT_EQ(read_csv(results / "history.csv").rows(), 20u);
  expect_same_history_rows(results, cached_results("punch_A"), 20);
  const std::string summary = summary_of(results);
  EXPECT_NE(summary.find("\"ranks\": " + std::to_string(ranks)), std::string::npos) << summary;
  EXPECT_NE(
      summary.find("\"linear_solver\": \"PETSc cg_gamg on " + std::to_string(ranks) + " ranks"),
      std::string::npos)
      << summary;
  EXPECT_EQ(summary.find("\"factorizations\": 0,"), std::string::npos) << summary;
  // The second multigrid is weighed as each rank's share of it against
  // each rank's share of the memory.
  EXPECT_NE(summary.find("\"preconditioner_reason\": \"solver.sparse_preconditioner: auto; a "
                         "second multigrid set-up on P takes about "),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find(" a rank, within half of the "), std::string::npos) << summary;
  // Each rank keeps its own rows of the Newton step's GMRES vectors (the
  // rows of K_ff that its PETSc matrix holds; no held components here):
  // together every row once, each rank within a factor 2 of its share.
  const auto [rows_per_rank, free] = newton_step_rows_and_free(summary);
  ASSERT_EQ(rows_per_rank.size(), static_cast<std::size_t>(ranks)) << summary;
  int together = 0;
  for (const int rows : rows_per_rank) {
    together += rows;
    EXPECT_GT(2 * ranks * rows, free) << summary;
    EXPECT_LT(ranks * rows, 2 * free) << summary;
  }
  EXPECT_EQ(together, free) << summary;
  // A product K_ff x of the step, and the equilibrium check, bring each
  // rank only other ranks' rows on its borders: some, not all.
  const nlohmann::json json = nlohmann::json::parse(summary);
  const auto step_received =
      json.at("contact_solver").at("newton_step_received_rows_per_rank").get<std::vector<int>>();
  const auto check_received =
      json.at("parallel").at("equilibrium_check_received_rows_per_rank").get<std::vector<int>>();
  ASSERT_EQ(step_received.size(), static_cast<std::size_t>(ranks)) << summary;
  ASSERT_EQ(check_received.size(), static_cast<std::size_t>(ranks)) << summary;
  for (int rank = 0; rank < ranks; ++rank) {
    EXPECT_GT(step_received[rank], 0) << summary;
    EXPECT_LT(step_received[rank], (free - rows_per_rank[rank]) / 2) << summary;
    EXPECT_GE(check_received[rank], step_received[rank]) << summary;
    EXPECT_LT(check_received[rank], (free - rows_per_rank[rank]) / 2) << summary;
  }
}

TEST(MpiRun, TwoRanksWithCgGamgOnTheSparsePathGiveTheSerialResultsOfCaseAForACycle) {
  expect_serial_results_of_a_sparse_cycle_of_case_a(2, "two_ranks_sparse_A");
}

// Three ranks (a machine of four cores runs four): ranks that may share no
// border, gathers of three parts, more than one neighbour a rank.
TEST(MpiRun, ThreeRanksWithCgGamgOnTheSparsePathGiveTheSerialResultsOfCaseAForACycle) {
  expect_serial_results_of_a_sparse_cycle_of_case_a(3, "three_ranks_sparse_A");
}

// Two runs of one case on the same ranks give the same bits: the rows'
// division (PT-Scotch, on one thread: plugin.cpp) and every solve after it
// are the same. With PT-Scotch's threads the division changed from run to
// run, and the results' last digits with it (4 runs of the seed punch A:
// 3 divisions and 3 histories, normal force apart by up to 9.9e-12).
// Case A's first loading and one cycle, the sparse path over CG and GAMG.
TEST(MpiRun, TwoRunsOnTwoRanksGiveTheSameBits) {
  const fs::path folder = fresh_folder("two_ranks_twice");
  run_sparse_on_ranks(case_a_one_cycle(folder), folder);
  fs::rename(folder / "results", folder / "first");
  run_sparse_on_ranks(folder / "punch_A.yaml", folder);
  const Table first = read_csv(folder / "first" / "history.csv");
  const Table second = read_csv(folder / "results" / "history.csv");
  ASSERT_EQ(first.names, second.names);
  ASSERT_EQ(first.rows(), 20u);
  ASSERT_EQ(second.rows(), 20u);
  for (const std::string& column : first.names) {
    if (column != "seconds") {
      EXPECT_TRUE(first[column] == second[column]) << column;
    }
  }
  const auto division = [](const fs::path& results) {
    return nlohmann::json::parse(summary_of(results))
        .at("parallel")
        .at("stiffness_entries_per_rank");
  };
  EXPECT_EQ(division(folder / "first"), division(folder / "results"));
}

// The quarter model's contact nodes on the symmetry planes hold a
// component at zero: the sparse path's Newton step carries a slot for each,
// which the rank of the node's rows keeps beside them. A small
// quarter (core = ring = 12, 6 layers), first loading and one cycle, on two
// ranks with the sparse path over CG and GAMG, against the serial CHOLMOD
// run of the same file (its default, dense path).
TEST(MpiRun, TwoRanksOnAQuarterWithHeldComponentsOnTheSparsePathGiveTheSerialResults) {
  const fs::path folder = fresh_folder("two_ranks_quarter_sparse");
  std::string text = case_copy_text("punch_A_converged", folder / "results");
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"core: 32, ring: 32, layers: 16",
                                            "core: 12, ring: 12, layers: 6"},
        {"- repeat: 6", "- repeat: 1"}}) {
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  }
  std::string serial_text = text;
  serial_text.replace(serial_text.find(folder.string() + "/results"),
                      (folder.string() + "/results").size(), (folder / "serial").string());
  ASSERT_EQ(run_text_into(serial_text, folder / "serial_case", "quarter.yaml"), 0)
      << read_text(folder / "serial_case" / "log.txt");
  std::ofstream(folder / "quarter.yaml") << text;
  run_sparse_on_ranks(folder / "quarter.yaml", folder);
  const fs::path results = folder / "results";
  EXPECT_EQ(read_csv(results / "history.csv").rows(), 20u);
  expect_same_history_rows(results, folder / "serial", 20);
  const std::string summary = summary_of(results);
  const auto [rows_per_rank, free] = newton_step_rows_and_free(summary);
  ASSERT_EQ(rows_per_rank.size(), 2u) << summary;
  // The held slots come on top of the free unknowns.
  EXPECT_GT(rows_per_rank[0] + rows_per_rank[1], free) << summary;
  EXPECT_LT(rows_per_rank[0] + rows_per_rank[1], free + free / 10) << summary;
}

TEST(MpiRun, InputErrorOnTwoRanksIsReportedOnceWithExitCode2AndNoFolder) {
  const fs::path folder = fresh_folder("input_error");
  std::string text = case_copy_text("punch_A", folder / "results");
  const std::string poisson = "poisson: 0.3";
  ASSERT_NE(text.find(poisson), std::string::npos);
  text.replace(text.find(poisson), poisson.size(), "poisson: 0.7");
  std::ofstream(folder / "bad.yaml") << text;
  const int code = run_mpi(2, {"run", (folder / "bad.yaml").string()}, folder / "log.txt");
  const std::string log = read_text(folder / "log.txt");
  EXPECT_EQ(code, 2) << log;
  EXPECT_EQ(bipo_message_lines(log), 1) << log;
  EXPECT_NE(log.find("material.poisson"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(folder / "results"));
}

TEST(MpiRun, ResultsFolderErrorSeenByRankZeroEndsEveryRankWithItsCode) {
  // Only rank 0 checks and writes the results folder; here it is a file.
  const fs::path folder = fresh_folder("folder_error");
  std::ofstream(folder / "results") << "not a folder\n";
  std::ofstream(folder / "case.yaml") << case_copy_text("punch_A", folder / "results");
  const int code = run_mpi(2, {"run", (folder / "case.yaml").string()}, folder / "log.txt");
  const std::string log = read_text(folder / "log.txt");
  EXPECT_EQ(code, 2) << log;
  EXPECT_EQ(bipo_message_lines(log), 1) << log;
  EXPECT_EQ(read_text(folder / "results"), "not a folder\n");
}

TEST(MpiRun, CheckOnTwoRanksPrintsOnceAndWritesNothing) {
  const fs::path folder = fresh_folder("check");
  std::ofstream(folder / "case.yaml") << case_copy_text("punch_A", folder / "results");
  const int code = run_mpi(2, {"check", (folder / "case.yaml").string()}, folder / "log.txt");
  const std::string log = read_text(folder / "log.txt");
  EXPECT_EQ(code, 0) << log;
  std::istringstream lines(log);
  int ok_lines = 0;
  for (std::string line; std::getline(lines, line);)
    ok_lines += line.find(": OK: 1685 nodes") != std::string::npos ? 1 : 0;
  EXPECT_EQ(ok_lines, 1) << log;
  EXPECT_FALSE(fs::exists(folder / "results"));
}

/// The lines of `text` that contain `part`.
int lines_with(const std::string& text, const std::string& part) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(part) != std::string::npos ? 1 : 0;
  return n;
}

// Rank 0 alone writes the mesh (ranks writing one file at once could leave
// it corrupt): byte for byte the serial command's file, one line printed.
TEST(MpiRun, MeshOnTwoRanksWritesTheSerialFileOnce) {
  const fs::path folder = fresh_folder("mesh");
  const std::vector<std::string> arguments{"mesh", "cylinder", "--core", "6", "--ring",
                                           "4",    "--layers", "5",      "-o"};
  std::vector<std::string> serial = arguments, parallel = arguments;
  serial.push_back((folder / "serial.msh").string());
  parallel.push_back((folder / "ranks.msh").string());
  ASSERT_EQ(run_bipo(serial, (folder / "serial.log").string()), 0)
      << read_text(folder / "serial.log");
  ASSERT_EQ(run_mpi(2, parallel, folder / "log.txt"), 0) << read_text(folder / "log.txt");
  const std::string log = read_text(folder / "log.txt");
  EXPECT_EQ(lines_with(log, "wrote "), 1) << log;
  EXPECT_EQ(lines_with(log, ": 870 nodes"), 1) << log;  // (5 + 1) ((6 + 1)^2 + 4 6 4)
  const std::string serial_bytes = read_text(folder / "serial.msh");
  EXPECT_GT(serial_bytes.size(), 10000u);
  EXPECT_TRUE(read_text(folder / "ranks.msh") == serial_bytes);
}

TEST(MpiRun, MeshToAMissingFolderOnTwoRanksExitsWithCode2AndOneMessage) {
  const fs::path folder = fresh_folder("mesh_error");
  const fs::path target = folder / "no_such_folder" / "cylinder.msh";
  const int code = run_mpi(2, {"mesh", "cylinder", "-o", target.string()}, folder / "log.txt");
  const std::string log = read_text(folder / "log.txt");
  EXPECT_EQ(code, 2) << log;
  EXPECT_EQ(bipo_message_lines(log), 1) << log;
  EXPECT_NE(log.find("cylinder.msh"), std::string::npos) << log;
  EXPECT_EQ(lines_with(log, "wrote "), 0) << log;
  EXPECT_FALSE(fs::exists(folder / "no_such_folder"));
}

class MpiStudy : public testing::TestWithParam<std::pair<std::string, int>> {};

TEST_P(MpiStudy, RanksGiveTheSerialResults) {
  const auto& [case_name, ranks] = GetParam();
  const fs::path folder = fresh_folder(case_name + "_" + std::to_string(ranks));
  const fs::path results = run_case_on_ranks(case_name, ranks, folder, {"solver.linear=petsc"});
  // Case C: up to increment 59, before its increment problem branches.
  expect_same_results(results, cached_results(case_name), case_name == "punch_C" ? 59 : 0);
}

INSTANTIATE_TEST_SUITE_P(CasesBAndC, MpiStudy,
                         testing::Values(std::pair{std::string("punch_B"), 1},
                                         std::pair{std::string("punch_B"), 2},
                                         std::pair{std::string("punch_C"), 1},
                                         std::pair{std::string("punch_C"), 2}));

}  // namespace
