// What the analysis keeps of the stiffness once set up (solver/analysis.hpp):
// K_ff's lower triangle, K_fp and K_pp, on the dense and the sparse contact
// path and in an analysis that shares another's set-up; never K or K_ff
// whole (docs/performance.md, "Memory of the stiffness"). The count is an
// identity: the entries of those blocks of the assembled K, split here
// independently of the analysis. The results these blocks give (reactions,
// the equilibrium residual) are checked by every run's own equilibrium
// check and by ContactSolver.LoadUnloadCycleSatisfiesDiscreteEnergyIdentity
// against a K assembled by that test.
#include <gtest/gtest.h>

#include "fem/elasticity.hpp"
#include "mesh/generate.hpp"
#include "punch_case.hpp"
#include "solver/analysis.hpp"

namespace bipo {
namespace {

Case seed_punch_case(ContactSolverChoice kind) {
  return test::cylinder_case({0.2, 0.2, 0.2, 0.2}, kind);
}

/// Entries of K_ff's lower triangle, K_fp and K_pp, counted on a whole K
/// assembled here (not by the split the analysis uses), and of K.
struct BlockCounts {
  long kept = 0;
  long whole = 0;
};

BlockCounts block_counts(const Mesh& mesh, const Analysis& analysis) {
  const SparseMatrix k = assemble_stiffness(mesh, analysis.elasticity());
  const DofPartition& partition = analysis.partition();
  BlockCounts counts{0, static_cast<long>(k.nonZeros())};
  for (int col = 0; col < k.outerSize(); ++col)
    for (SparseMatrix::InnerIterator it(k, col); it; ++it) {
      const bool row_free = partition.free_index(static_cast<int>(it.row())) >= 0;
      const bool col_free = partition.free_index(col) >= 0;
      if (row_free && col_free)
        counts.kept += it.row() >= col ? 1 : 0;  // K_ff's lower triangle
      else if (row_free || !col_free)
        ++counts.kept;  // K_fp (free row, prescribed column) or K_pp
    }
  return counts;
}

TEST(StiffnessMemory, TheRunKeepsTheLowerTriangleOfKffAndTheSmallBlocksOnly) {
  const Mesh mesh = generate_cylinder({});
  for (const ContactSolverChoice kind : {ContactSolverChoice::dense, ContactSolverChoice::sparse}) {
    SCOPED_TRACE(kind == ContactSolverChoice::dense ? "dense path" : "sparse path");
    const Analysis analysis(seed_punch_case(kind), mesh);
    const BlockCounts counts = block_counts(mesh, analysis);
    EXPECT_EQ(analysis.stiffness_entries_held(), counts.kept);
    // About half of K: its lower triangle's share of the free rows.
    EXPECT_LT(analysis.stiffness_entries_held(), 0.6 * static_cast<double>(counts.whole));
  }
}

TEST(StiffnessMemory, AnAnalysisThatSharesTheSetUpHoldsTheSameBlocks) {
  const Mesh mesh = generate_cylinder({});
  const Case c = seed_punch_case(ContactSolverChoice::sparse);
  const Analysis donor(c, mesh);
  SetupChoices choices;
  choices.setup_donor = [&donor](const Analysis&) { return &donor; };
  Case other = c;
  other.contacts[0].friction = {0.5, 0.5, 0.5, 0.5};
  const Analysis sharing(other, mesh, nullptr, choices);
  EXPECT_TRUE(sharing.shares_setup());
  EXPECT_EQ(sharing.stiffness_entries_held(), block_counts(mesh, sharing).kept);
}

}  // namespace
}  // namespace bipo
