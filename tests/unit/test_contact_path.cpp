// The automatic choice of the contact path (solver/contact_path.hpp): the
// memory model against the peaks measured on the whole punch cylinder, and
// the rule (forced paths, no contact, the memory budget's edge).
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "solver/contact_path.hpp"

namespace bipo {
namespace {

// Peak resident memory of the dense path minus that of the same mesh on
// rollers (the roller run, scripts/scale_study.py's case files), case A, 20
// increments, each `bipo run -q` under /usr/bin/time (its %M, in KiB), with
// S and W in one buffer; docs/performance.md, "The automatic choice of the
// contact path".
struct MeasuredExcess {
  int m;
  double bytes;
};
constexpr double gib = 1024.0 * 1024.0 * 1024.0;
constexpr double kib = 1024.0;

TEST(ContactPath, MemoryModelCoversTheMeasuredDensePeaks) {
  const MeasuredExcess measured[] = {
      {1313, (711540 - 223040) * kib},     // N = 16
      {2929, (3151776 - 1035968) * kib},   // N = 24
      {5185, (10077896 - 3097856) * kib},  // N = 32
      {6553, (15860620 - 5054568) * kib},  // N = 36
  };
  for (const auto& [m, bytes] : measured) {
    SCOPED_TRACE("m = " + std::to_string(m));
    EXPECT_GE(dense_contact_path_bytes(m), bytes);
    EXPECT_LE(dense_contact_path_bytes(m), 1.5 * bytes);  // not so cautious it gives speed away
  }
}

TEST(ContactPath, ForcedPathsIgnoreTheMemory) {
  EXPECT_FALSE(choose_contact_path(ContactSolverChoice::dense, 100000, 1.0).sparse);
  EXPECT_TRUE(choose_contact_path(ContactSolverChoice::sparse, 10, 1e15).sparse);
  // Nothing to hold sparsely without contact nodes.
  EXPECT_FALSE(choose_contact_path(ContactSolverChoice::sparse, 0, 1e15).sparse);
  EXPECT_FALSE(choose_contact_path(ContactSolverChoice::automatic, 0, 0.0).sparse);
}

TEST(ContactPath, AutomaticChoiceKeepsTheDenseMatricesWithinHalfTheMemory) {
  for (const int m : {1, 337, 5185, 20000}) {
    SCOPED_TRACE("m = " + std::to_string(m));
    const double needed = dense_contact_path_bytes(m);
    const ContactPathChoice fits =
        choose_contact_path(ContactSolverChoice::automatic, m, needed / dense_path_memory_share);
    const ContactPathChoice too_big = choose_contact_path(ContactSolverChoice::automatic, m,
                                                          0.999 * needed / dense_path_memory_share);
    EXPECT_FALSE(fits.sparse) << fits.reason;
    EXPECT_TRUE(too_big.sparse) << too_big.reason;
    EXPECT_NE(fits.reason.find(std::to_string(m) + " contact nodes"), std::string::npos)
        << fits.reason;
  }
}

// Peak resident memory of the roller runs (scripts/scale_study.py's case
// files, `bipo run` under /usr/bin/time, 2026-12-04) with the factor's
// entries (summary.json, linear_solver.factor_nonzeros) and unknowns;
// docs/performance.md, "The automatic choice of the contact path".
struct MeasuredRollerRun {
  int n;
  double factor_entries;
  int unknowns;
  double peak_kib;
};

TEST(ContactPath, StiffnessRunModelCoversTheMeasuredRollerPeaks) {
  const MeasuredRollerRun measured[] = {
      {16, 17440586, 30199, 297048},    {24, 97837482, 102515, 1228924},
      {28, 185684483, 163057, 2231364}, {32, 324054055, 243695, 3576492},
      {34, 416661124, 292450, 4513148}, {36, 532053540, 347309, 5707868},
  };
  for (const auto& [n, entries, unknowns, peak_kib] : measured) {
    SCOPED_TRACE("N = " + std::to_string(n));
    // The analysis' bytes are at least 8 an entry (the row indices add to it).
    const double model = stiffness_run_bytes(8.0 * entries, unknowns);
    EXPECT_GE(model, 1024.0 * peak_kib);
    EXPECT_LE(model, 1.25 * 1024.0 * peak_kib);
  }
}

TEST(ContactPath, PastHalfTheMemoryTheStiffnessFactorDecides) {
  const int m = 6553;  // N = 36: 12.96 GiB of dense matrices by the model, 22.4 GiB available
  const double dense = dense_contact_path_bytes(m), available = 22.4 * gib;
  ASSERT_GT(dense, dense_path_memory_share * available);
  int analyses = 0;
  const auto stiffness_of = [&analyses](double bytes) {
    return [&analyses, bytes]() {
      ++analyses;
      return bytes;
    };
  };
  // The measured N = 36 stiffness: dense path, with the figures in the reason.
  const double measured = stiffness_run_bytes(8.0 * 532053540, 347309);
  const ContactPathChoice fits =
      choose_contact_path(ContactSolverChoice::automatic, m, available, stiffness_of(measured));
  EXPECT_FALSE(fits.sparse) << fits.reason;
  EXPECT_EQ(analyses, 1);
  EXPECT_NE(fits.reason.find("stiffness with its factor"), std::string::npos) << fits.reason;
  // The edge: all of 90 % of the memory, and a byte more.
  const double edge = dense_path_total_share * available - dense;
  EXPECT_FALSE(
      choose_contact_path(ContactSolverChoice::automatic, m, available, stiffness_of(edge)).sparse);
  EXPECT_TRUE(
      choose_contact_path(ContactSolverChoice::automatic, m, available, stiffness_of(edge + 1.0))
          .sparse);
  // A backend that cannot size its factor: the sparse path.
  EXPECT_TRUE(
      choose_contact_path(ContactSolverChoice::automatic, m, available, stiffness_of(-1.0)).sparse);
  EXPECT_EQ(analyses, 4);
  // No analysis where the dense matrices alone decide: within half, or
  // beyond all of the memory.
  EXPECT_FALSE(
      choose_contact_path(ContactSolverChoice::automatic, m, 2.0 * dense + 1.0, stiffness_of(1e30))
          .sparse);
  EXPECT_TRUE(
      choose_contact_path(ContactSolverChoice::automatic, m, 0.999 * dense, stiffness_of(0.0))
          .sparse);
  EXPECT_FALSE(choose_contact_path(ContactSolverChoice::dense, m, 1.0, stiffness_of(1e30)).sparse);
  EXPECT_EQ(analyses, 4);
}

// A batch job's or a container's limit (docs/case-file.md,
// solver.contact_solver): the texts of the control group's files, as the
// kernel writes them.
TEST(ContactPath, ReadsWhatAControlGroupsMemoryLimitLeaves) {
  // v2, no limit.
  EXPECT_LT(cgroup_available_bytes("max\n", "2147483648\n", "anon 1\n"), 0.0);
  // v1, no limit: 2^63 rounded down to a page.
  EXPECT_LT(cgroup_available_bytes("9223372036854771712\n", "1142542336\n", ""), 0.0);
  // v2, 8 GiB, 2 GiB used of which 1 GiB inactive file cache: 7 GiB left.
  EXPECT_EQ(cgroup_available_bytes("8589934592\n", "2147483648\n",
                                   "anon 1073741824\nfile 1073741824\ninactive_file 1073741824\n"),
            7.0 * gib);
  // v1: the hierarchical total_inactive_file (usage_in_bytes is hierarchical).
  EXPECT_EQ(cgroup_available_bytes("4294967296\n", "3221225472\n",
                                   "inactive_file 0\ntotal_inactive_file 2147483648\n"),
            3.0 * gib);  // 4 GiB - (3 GiB - 2 GiB)
  // Over the limit: nothing left; unreadable files: no limit known.
  EXPECT_EQ(cgroup_available_bytes("1073741824\n", "2147483648\n", ""), 0.0);
  EXPECT_LT(cgroup_available_bytes("", "", ""), 0.0);
}

TEST(ContactPath, AvailableMemoryIsPositiveAndAtMostThePhysicalMemory) {
  const double physical =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  const double available = available_memory_bytes();
  EXPECT_GT(available, 0.0);
  EXPECT_LE(available, physical);
}

}  // namespace
}  // namespace bipo
