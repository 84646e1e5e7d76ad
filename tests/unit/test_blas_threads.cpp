// The BLAS thread policy (solver/blas_threads.hpp): what auto chooses, and
// that the choice reaches OpenBLAS when OpenBLAS is the process's BLAS, and
// OpenMP on the calling thread.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdlib>
#include <thread>

#include "solver/blas_threads.hpp"

namespace {

/// auto's answer depends on two environment variables; the tests that need
/// them unset skip when the environment sets them (it is left alone).
bool thread_variables_set() {
  for (const char* name : {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return true;
  }
  return false;
}

TEST(BlasThreads, ExplicitRequestWins) {
  EXPECT_EQ(bipo::blas_threads_for(3, 10), 3);
  EXPECT_EQ(bipo::blas_threads_for(1, 10'000'000), 1);
}

TEST(BlasThreads, AutoUsesOneThreadOnSmallProblemsOnly) {
  if (thread_variables_set()) GTEST_SKIP() << "OPENBLAS_NUM_THREADS or OMP_NUM_THREADS is set";
  EXPECT_EQ(bipo::blas_threads_for(std::nullopt, 4044), 1);
  EXPECT_EQ(bipo::blas_threads_for(std::nullopt, bipo::small_problem_unknowns - 1), 1);
  EXPECT_FALSE(bipo::blas_threads_for(std::nullopt, bipo::small_problem_unknowns).has_value());
}

TEST(BlasThreads, AppliedCountReachesOpenBlas) {
  const int before = bipo::openblas_threads();
  if (before == 0) GTEST_SKIP() << "the BLAS is not OpenBLAS";
  EXPECT_EQ(bipo::apply_blas_threads(1), "1 (OpenBLAS)");
  EXPECT_EQ(bipo::openblas_threads(), 1);
  bipo::apply_blas_threads(before);
  EXPECT_EQ(bipo::openblas_threads(), before);
}

// "library default" is the count before the first call, whatever a case
// set since: a large case after a small one in one process gets it back.
TEST(BlasThreads, LibraryDefaultPutsBackTheCountsAfterACaseSetOne) {
  if (bipo::openblas_threads() == 0) GTEST_SKIP() << "the BLAS is not OpenBLAS";
  const int before = bipo::openblas_threads(), before_omp = omp_get_max_threads();
  EXPECT_EQ(bipo::apply_blas_threads(std::nullopt), "library default");
  const int library = bipo::openblas_threads(), library_omp = omp_get_max_threads();
  const int other = library == 1 ? 2 : 1;
  (void)bipo::apply_blas_threads(other);
  EXPECT_EQ(bipo::openblas_threads(), other);
  EXPECT_EQ(omp_get_max_threads(), other);
  EXPECT_EQ(bipo::apply_blas_threads(std::nullopt), "library default");
  EXPECT_EQ(bipo::openblas_threads(), library);
  EXPECT_EQ(omp_get_max_threads(), library_omp);
  (void)bipo::apply_blas_threads(before);
  omp_set_num_threads(before_omp);
}

// OpenMP's count is the calling thread's: a parallel region it starts
// afterwards has that many threads (so none is left spinning after it),
// and another thread's count is its own.
TEST(BlasThreads, AppliedCountReachesOpenMpOnTheCallingThread) {
  const int before = omp_get_max_threads();
  const auto a_new_threads_count = [] {
    int count = 0;
    std::thread([&] { count = omp_get_max_threads(); }).join();
    return count;
  };
  const int new_thread_before = a_new_threads_count();
  (void)bipo::apply_blas_threads(1);
  EXPECT_EQ(omp_get_max_threads(), 1);
  int team = 0;
#pragma omp parallel
  {
#pragma omp single
    team = omp_get_num_threads();
  }
  EXPECT_EQ(team, 1);
  EXPECT_EQ(a_new_threads_count(), new_thread_before);
  (void)bipo::apply_blas_threads(before);
  EXPECT_EQ(omp_get_max_threads(), before);
}

// A region whose num_threads clause asks for more threads (CHOLMOD's
// supernodal factorization asks for 4, compiled in) gets one thread after a
// count of 1, and what it asks for again after a larger count.
TEST(BlasThreads, CountOfOneAlsoHoldsRegionsThatAskForTheirOwnThreads) {
  const int before = omp_get_max_threads(), levels_before = omp_get_max_active_levels();
  const auto team_asking_for_four = [] {
    int team = 0;
#pragma omp parallel num_threads(4)
    {
#pragma omp single
      team = omp_get_num_threads();
    }
    return team;
  };
  const int unlimited = team_asking_for_four();
  if (unlimited == 1) GTEST_SKIP() << "OpenMP gives this process one thread (OMP_THREAD_LIMIT?)";
  (void)bipo::apply_blas_threads(1);
  EXPECT_EQ(team_asking_for_four(), 1);
  (void)bipo::apply_blas_threads(2);
  EXPECT_EQ(team_asking_for_four(), unlimited);
  (void)bipo::apply_blas_threads(before);
  if (before > 1) {
    EXPECT_EQ(team_asking_for_four(), unlimited);
  }
  // The thread's state as it was, whatever the environment set (a count of
  // 1 from OMP_NUM_THREADS would otherwise leave the levels at 0).
  omp_set_num_threads(before);
  omp_set_max_active_levels(levels_before);
}

}  // namespace
