// The automatic choice of the contact path (solver/contact_path.hpp): the
// memory model against the peaks measured on the whole punch cylinder, and
// the rule (forced paths, no contact, the memory budget's edge).
#include <gtest/gtest.h>

#include "solver/contact_path.hpp"

namespace bipo {
namespace {

// Peak resident memory of the dense path minus that of the same mesh on
// rollers (the roller run, scripts/scale_study.py), case A, 20 increments;
// docs/performance.md, "The automatic choice of the contact path", where
// each figure's run is described. Measured before S was rotated into the
// nodes' frames in place, which lowered the peak by one such matrix: the
// model keeps the larger figures.
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

}  // namespace
}  // namespace bipo
