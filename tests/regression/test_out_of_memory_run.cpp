// `bipo run` under a virtual-memory cap (ulimit -v 1 GB), through the
// executable: a punch whose dense contact path needs a 1.4 GiB factor (4241
// contact nodes, the condensed unknowns ordered last make a dense 12723 x
// 12723 trailing block) stops at its set-up with exit code 1 and one line
// "bipo: out of memory: ..." giving the factor's size and no results folder
// (a set-up failure writes none, as for a numerical one); the same case on a
// small mesh completes under the same cap (the cap alone is not what
// fails). The case asks for one BLAS thread (solver.blas_threads); the
// environment's OPENBLAS_* and OMP_* variables are left as they are.
#include <sys/wait.h>

#include <regex>

#include "../sanitized_build.hpp"
#include "punch_support.hpp"

namespace {

using namespace bipo_regression;

#ifndef BIPO_TEST_SANITIZED  // the tests below are skipped there
/// A one-increment punch on the generated cylinder `cylinder`, dense
/// contact path, results in `results`.
std::string capped_case(const std::string& cylinder, const fs::path& results) {
  return "mesh: {cylinder: " + cylinder +
         "}\n"
         "material: {young: 210000, poisson: 0.3}\n"
         "boundary_conditions:\n"
         "  - {set: top, displacement: {x: 0, y: 0, z: -0.1}}\n"
         "load_program:\n"
         "  - {to: 1.0, increments: 1}\n"
         "contact:\n"
         "  - {name: plane, set: bottom, plane: {point: [0, 0, 0], normal: [0, 0, 1]},\n"
         "     friction: {mu: 0.2}}\n"
         "solver: {contact_solver: dense, blas_threads: 1}\n"
         "output: {directory: \"" +
         results.string() + "\"}\n";
}

/// `bipo run -q case` under `ulimit -v` of 1 GB (killed after 60 s); its
/// exit code, stderr and stdout in `log`.
int run_capped(const fs::path& case_file, const fs::path& log) {
  const std::string command = "ulimit -v 1000000 && timeout 60 \"" + bipo_exe().string() +
                              "\" run -q \"" + case_file.string() + "\" > \"" + log.string() +
                              "\" 2>&1";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
#endif

TEST(OutOfMemoryRun, DenseContactPathBeyondTheCapStopsAtSetUpWithOneOutOfMemoryLine) {
#ifdef BIPO_TEST_SANITIZED
  GTEST_SKIP() << "sanitizers reserve terabytes of address space: ulimit -v cannot be set";
#else
  const fs::path dir = fs::temp_directory_path() / ("bipo_oom_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "small.yaml") << capped_case("{core: 8, ring: 4, layers: 4}", dir / "small");
  std::ofstream(dir / "large.yaml")
      << capped_case("{core: 40, ring: 16, layers: 2}", dir / "large");

  EXPECT_EQ(run_capped(dir / "small.yaml", dir / "small.log"), 0) << read_text(dir / "small.log");
  EXPECT_NE(read_text(dir / "small" / "summary.json").find("\"completed\""), std::string::npos);

  const int code = run_capped(dir / "large.yaml", dir / "large.log");
  const std::string log = read_text(dir / "large.log");
  EXPECT_EQ(code, 1) << log;
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
  EXPECT_EQ(log.rfind("bipo: out of memory: CHOLMOD's Cholesky factorization (", 0), 0u) << log;
  // The factor's size as CHOLMOD's analysis gave it holds at least the
  // dense lower triangle of the Schur complement on the n_c = 3 x 4241
  // contact unknowns ((core + 1)^2 + 4 core ring bottom nodes).
  std::smatch size;
  ASSERT_TRUE(std::regex_search(log, size, std::regex("nonzeros, ([0-9.]+) GiB\\)"))) << log;
  const double n_c = 3.0 * (41 * 41 + 4 * 40 * 16);
  EXPECT_GE(std::stod(size[1].str()), 8.0 * n_c * (n_c + 1) / 2 / (1 << 30)) << log;
  EXPECT_NE(log.find("solver.contact_solver: sparse"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir / "large")) << "a set-up failure writes no results folder";
  fs::remove_all(dir);
#endif
}

}  // namespace
