// The seed punch with its plane moved or turned, through the bipo
// executable (issue 11, item 10): a gap at the start runs (it stopped at
// increment 1 with "equilibrium residual 1.000000"), and a normal pointing
// away from the body is an input error (exit code 2) naming its key.
#include <sys/wait.h>

#include "punch_support.hpp"

namespace {

using namespace bipo_regression;

/// Case A's text with its contact plane's line replaced by `plane`.
std::string punch_a_with_plane(const fs::path& results, const std::string& plane) {
  std::string text = case_copy_text("punch_A", results);
  const std::string shipped = "plane: {point: [0, 0, 0], normal: [0, 0, 1]}";
  const auto at = text.find(shipped);
  if (at == std::string::npos) throw std::runtime_error("punch_A.yaml: plane line not found");
  return text.replace(at, shipped.size(), plane);
}

int exit_code(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

fs::path fresh_directory(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The bottom face 0.02 mm above the plane, the top pressed by 0.02 mm per
// increment of the first loading: increment 1 closes the gap without force,
// and the rest is case A pressed by 0.02 mm less.
TEST(SolverEdgesCli, PunchWithAGapAtTheStartRuns) {
  const fs::path dir = fresh_directory("bipo_punch_gap");
  const std::string text =
      punch_a_with_plane(dir / "results", "plane: {point: [0, 0, -0.02], normal: [0, 0, 1]}");
  const int status = run_text_into(text, dir, "punch_A_gap.yaml");
  ASSERT_EQ(exit_code(status), 0) << read_text(dir / "log.txt");
  const Table h = read_csv(dir / "results" / "history.csv");
  ASSERT_EQ(h.rows(), 95u);
  const double peak = max_abs(h["normal_force"]);
  EXPECT_GT(peak, 0.0);
  EXPECT_LE(h["normal_force"][0], 1e-9 * peak);  // touching, without force
  for (std::size_t i = 1; i < h.rows(); ++i) {
    EXPECT_GT(h["normal_force"][i], 0.0) << "step " << i + 1;
    EXPECT_EQ(h["n_open"][i], 0.0) << "step " << i + 1;
  }
  fs::remove_all(dir);
}

TEST(SolverEdgesCli, ANormalPointingAwayFromThePunchIsAnInputError) {
  const fs::path dir = fresh_directory("bipo_punch_upside_down");
  const std::string text =
      punch_a_with_plane(dir / "results", "plane: {point: [0, 0, 0], normal: [0, 0, -1]}");
  const fs::path case_file = dir / "punch_A_upside_down.yaml";
  std::ofstream(case_file) << text;
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"check", case_file.string()},
        std::vector<std::string>{"run", case_file.string(), "-q"}}) {
    SCOPED_TRACE(command[0]);
    const int status = run_bipo(command, (dir / "log.txt").string());
    const std::string log = read_text(dir / "log.txt");
    EXPECT_EQ(exit_code(status), 2) << log;
    EXPECT_NE(log.find(case_file.string() + ": contact[0].plane.normal: the normal (0, 0, -1) of "
                                            "contact plane 'plane' points away from the body"),
              std::string::npos)
        << log;
  }
  EXPECT_FALSE(fs::exists(dir / "results" / "summary.json"));
  fs::remove_all(dir);
}

}  // namespace
