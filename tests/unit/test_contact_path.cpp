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
// rollers (the roller run, scripts/scale_study.py), case A, 20 increments;
// docs/performance.md, "The automatic choice of the contact path", where
// each figure's run is described. N = 16 to 32 were measured before S was
// rotated into the nodes' frames in place, which lowered the peak by about
// half a matrix: the model keeps the larger figures.
struct MeasuredExcess {
  int m;
  double bytes;
};
constexpr double gib = 1024.0 * 1024.0 * 1024.0;

TEST(ContactPath, MemoryModelCoversTheMeasuredDensePeaks) {
  const MeasuredExcess measured[] = {
      {1313, (0.839 - 0.284) * gib},  // N = 16
      {2929, (4.000 - 1.174) * gib},  // N = 24
      {3977, (7.34 - 2.13) * gib},    // N = 28
      {5185, (12.14 - 3.42) * gib},   // N = 32
      {5849, (14.39 - 4.31) * gib},   // N = 34, after the in-place rotation
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
