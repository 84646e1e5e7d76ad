// CHOLMOD running out of memory for real: a child process caps its own
// address space (RLIMIT_AS) a little above what it uses, factorizes a small
// matrix (which must still work: the cap is not so low that anything fails)
// and then a 3D Laplacian whose factor needs hundreds of MB. The parent
// checks that the child saw an OutOfMemoryError (reported "out of memory",
// exit code 1) whose message gives the unknowns, the factor's size and what
// needs less memory, not a numerical failure.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include "../sanitized_build.hpp"
#include "app/exit_status.hpp"
#include "core/errors.hpp"
#include "solver/linear_solver.hpp"

namespace bipo {
namespace {

#ifndef BIPO_TEST_SANITIZED  // the test below is skipped there
/// The 7-point Laplacian (Dirichlet) on an n x n x n grid: SPD; its
/// Cholesky factor grows like n^4 entries under nested dissection.
SparseMatrix laplacian_3d(int n) {
  std::vector<Eigen::Triplet<double, int>> entries;
  const auto index = [n](int i, int j, int k) { return (k * n + j) * n + i; };
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const int row = index(i, j, k);
        entries.emplace_back(row, row, 6.0);
        if (i > 0) entries.emplace_back(row, index(i - 1, j, k), -1.0);
        if (i + 1 < n) entries.emplace_back(row, index(i + 1, j, k), -1.0);
        if (j > 0) entries.emplace_back(row, index(i, j - 1, k), -1.0);
        if (j + 1 < n) entries.emplace_back(row, index(i, j + 1, k), -1.0);
        if (k > 0) entries.emplace_back(row, index(i, j, k - 1), -1.0);
        if (k + 1 < n) entries.emplace_back(row, index(i, j, k + 1), -1.0);
      }
  SparseMatrix a(n * n * n, n * n * n);
  a.setFromTriplets(entries.begin(), entries.end());
  return a;
}

/// This process's address space now, in bytes.
rlim_t address_space_in_use() {
  std::ifstream statm("/proc/self/statm");
  unsigned long pages = 0;
  statm >> pages;
  return static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
}

constexpr rlim_t margin = 64UL << 20;  // what the capped child may still allocate

/// In a child process (the death test's, started afresh): warms up
/// CHOLMOD, OpenMP and OpenBLAS on `small` (their threads and OpenBLAS's
/// 128 MB work buffer, which under the cap it would retry to allocate
/// forever), caps the address space, factorizes `small` again (the cap is
/// not so low that anything fails) then `large`, and writes the outcome to
/// `file` as "<exit code>|<report line>" ("0|" if both worked).
[[noreturn]] void factorize_capped(const SparseMatrix& small, const SparseMatrix& large,
                                   const std::string& file) {
  alarm(20);  // a stuck allocator must not hang the suite
  make_cholmod_solver()->factorize(small);
  const rlimit cap{address_space_in_use() + margin, RLIM_INFINITY};
  std::string outcome = "0|";
  if (setrlimit(RLIMIT_AS, &cap) != 0) outcome = "setrlimit failed";
  try {
    make_cholmod_solver()->factorize(small);
  } catch (...) {
    outcome = "small: " + report_error(std::current_exception()).line;
  }
  try {
    if (outcome == "0|") make_cholmod_solver()->factorize(large);
  } catch (...) {
    const ErrorReport report = report_error(std::current_exception());
    outcome = std::to_string(report.exit_code) + "|" + report.line;
  }
  std::FILE* out = std::fopen(file.c_str(), "w");
  const bool written = out != nullptr && std::fputs(outcome.c_str(), out) >= 0;
  _exit(out != nullptr && std::fclose(out) == 0 && written ? 0 : 1);
}
#endif

TEST(OutOfMemory, CholmodFactorizationBeyondTheAddressSpaceCapIsReportedAsSuch) {
#ifdef BIPO_TEST_SANITIZED
  GTEST_SKIP() << "sanitizers reserve terabytes of address space: RLIMIT_AS cannot be capped";
#else
  // A fresh process: a forked one would wait forever for the parent's
  // OpenMP threads, which are not in it.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const SparseMatrix small = laplacian_3d(8), large = laplacian_3d(44);
  const std::string file = ::testing::TempDir() + "bipo_out_of_memory_outcome.txt";
  std::remove(file.c_str());
  EXPECT_EXIT(factorize_capped(small, large, file), ::testing::ExitedWithCode(0), "");
  std::ifstream in(file);
  const std::string outcome((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(outcome.rfind("1|bipo: out of memory: CHOLMOD's Cholesky factorization (", 0), 0u)
      << outcome;
  EXPECT_NE(outcome.find("(85184 unknowns, "), std::string::npos) << outcome;
  // The factor's size, from CHOLMOD's analysis: more than the child could
  // allocate, which is why it failed.
  std::smatch size;
  ASSERT_TRUE(
      std::regex_search(outcome, size,
                        std::regex("its factor, by CHOLMOD's analysis: ([0-9.e+]+) nonzeros, "
                                   "([0-9.]+) GiB\\)")))
      << outcome;
  const double nonzeros = std::stod(size[1].str()), gib = std::stod(size[2].str());
  EXPECT_GT(8.0 * nonzeros, static_cast<double>(margin)) << outcome;
  EXPECT_NEAR(gib, 8.0 * nonzeros / (1 << 30), 0.05 * gib + 0.001) << outcome;
  for (const char* hint : {"solver.contact_solver: sparse", "solver.linear: petsc", "coarser mesh"})
    EXPECT_NE(outcome.find(hint), std::string::npos) << hint;
#endif
}

}  // namespace
}  // namespace bipo
