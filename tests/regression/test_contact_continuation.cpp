// The continuation fallback of the contact iteration inside a whole run
// (solve_contact, docs/architecture.md "The contact iteration"):
// case C on the uniform 16/8 O-grid (1313 contact nodes) through the first
// step of its first unloading. There Newton's line search stalls and
// Gauss-Seidel sweeps do not converge; before the continuation existed, bipo
// stopped at this increment. Newton from the start still stalls; the
// continuation, which the cascade now tries before any sweep, solves it. About 30 s in a Release
// build. The shipped punch_C_refined.yaml is graded toward the rim now, and on the graded mesh
// Newton solves this step by itself, so the test sets the uniform mesh.
#include "punch_support.hpp"

namespace {

using namespace bipo_regression;

TEST(ContactContinuation, FinestCaseCPassesItsFirstUnloadingStep) {
  const fs::path dir =
      fs::temp_directory_path() / ("bipo_continuation_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string text = case_copy_text("punch_C_refined", dir / "results");
  const auto mesh_begin = text.find("cylinder: {");
  ASSERT_NE(mesh_begin, std::string::npos);
  const auto mesh_end = text.find('}', mesh_begin);
  ASSERT_NE(mesh_end, std::string::npos);
  text.replace(mesh_begin, mesh_end + 1 - mesh_begin,
               "cylinder: {radius: 10, height: 10, core: 16, ring: 16, layers: 8}");
  const auto program = text.find("\nload_program:");
  const auto contact = text.find("\ncontact:");
  ASSERT_NE(program, std::string::npos);
  ASSERT_NE(contact, std::string::npos);
  // First loading, then one unloading step; no cuts and a bounded budget, so
  // that a regression fails in seconds instead of sweeping for minutes.
  text.replace(program, contact - program,
               "\nload_program:\n  - {to: 1.0, increments: 5}\n  - {to: 0.95, increments: 1}");
  text += "solver: {max_cuts: 0, max_iterations: 3000}\n";
  const fs::path case_file = dir / "punch_C_16_8_first_unloading.yaml";
  std::ofstream(case_file) << text;

  const int status = run_bipo({"run", case_file.string(), "-q"}, (dir / "log.txt").string());
  ASSERT_EQ(status, 0) << read_text(dir / "log.txt");
  const Table h = read_csv(dir / "results" / "history.csv");
  ASSERT_EQ(h.rows(), 6u);
  for (std::size_t i = 0; i < h.rows(); ++i)
    EXPECT_LE(h["scaled_certificate"][i], 1e-8) << "step " << i + 1;  // 100 x law_tolerance
  // The unloading step needs more than a Newton pass from the start (it
  // stalls after 16 steps): the continuation's stages follow (13 steps
  // more, 16 when the stages before the last were solved to the law
  // tolerance), and no Gauss-Seidel sweep is needed.
  EXPECT_GT(h["newton_iterations"][5], 20.0);
  EXPECT_EQ(h["sweeps"][5], 0.0);
  fs::remove_all(dir);
}

}  // namespace
