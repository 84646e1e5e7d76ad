// What each MPI rank assembles (solver/distributed_assembly.hpp), checked
// in one process against the whole assembly: the node graph against K_ff's
// own pattern, a rank's rows against the whole matrix's, bit for bit.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <algorithm>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "fem/elasticity.hpp"
#include "mesh/generate.hpp"
#include "solver/distributed_assembly.hpp"
#include "solver/linear_solver.hpp"

namespace bipo {
namespace {

/// The cylinder's top held, and a few single components (rows not in node
/// triples) and its axis nodes held too.
DofPartition partition_of(const Mesh& mesh) {
  std::vector<bool> prescribed(static_cast<std::size_t>(3 * mesh.n_nodes()), false);
  for (int node : mesh.node_set("top"))
    for (int c = 0; c < 3; ++c) prescribed[3 * node + c] = true;
  for (std::size_t dof = 4; dof < prescribed.size(); dof += 29) prescribed[dof] = true;
  return DofPartition(prescribed);
}

/// Two ranks: the nodes with free rows split at `cut` (rank 0 below it), a
/// node's rows together, in the layout of LinearSolver::row_share().
LinearSolver::RowShare two_ranks(const DofPartition& partition, int cut) {
  LinearSolver::RowShare share;
  share.counts = {0, 0};
  for (int rank = 0; rank < 2; ++rank)
    for (int free = 0; free < partition.n_free(); ++free)
      if ((partition.free_dofs()[free] / 3 < cut) == (rank == 0)) {
        share.rows.push_back(free);
        ++share.counts[rank];
      }
  return share;
}

TEST(FreeRowGraph, IsTheNodeGraphOfTheAssembledKff) {
  const Mesh mesh = generate_cylinder({10.0, 10.0, 4, 4, 2});
  const DofPartition partition = partition_of(mesh);
  const LinearSolver::RowGraph graph = free_row_graph(mesh, partition);
  const auto n_vertices = static_cast<int>(graph.first_row.size()) - 1;
  ASSERT_EQ(graph.first_row.back(), partition.n_free());
  ASSERT_EQ(graph.starts.size(), graph.first_row.size());
  // The independent truth: which vertices K_ff's assembled pattern couples.
  std::vector<int> vertex_of_row(static_cast<std::size_t>(partition.n_free()));
  for (int k = 0; k < n_vertices; ++k) {
    ASSERT_LT(graph.first_row[k], graph.first_row[k + 1]);
    ASSERT_LE(graph.first_row[k + 1] - graph.first_row[k], 3);
    for (int row = graph.first_row[k]; row < graph.first_row[k + 1]; ++row) {
      vertex_of_row[row] = k;
      ASSERT_EQ(partition.free_dofs()[row] / 3, partition.free_dofs()[graph.first_row[k]] / 3)
          << "a vertex's rows are one node's";
    }
  }
  SparseMatrix k_ff_lower, k_fp;
  partition.split_lower_triangle(
      assemble_stiffness(mesh, isotropic_elasticity(1.0, 0.3), StoredTriangle::lower), k_ff_lower,
      k_fp);
  std::vector<std::set<int>> coupled(static_cast<std::size_t>(n_vertices));
  for (int j = 0; j < k_ff_lower.outerSize(); ++j)
    for (SparseMatrix::InnerIterator it(k_ff_lower, j); it; ++it)
      if (const int a = vertex_of_row[it.row()], b = vertex_of_row[j]; a != b) {
        coupled[a].insert(b);
        coupled[b].insert(a);
      }
  for (int k = 0; k < n_vertices; ++k) {
    const std::vector<int> listed(graph.neighbours.begin() + graph.starts[k],
                                  graph.neighbours.begin() + graph.starts[k + 1]);
    EXPECT_EQ(listed, std::vector<int>(coupled[k].begin(), coupled[k].end())) << "vertex " << k;
  }
}

// Under MPI each rank makes its slice of the graph only (the partitioner
// runs on every rank): three slices, in rank order, are the whole graph.
TEST(FreeRowGraph, RanksSlicesInRankOrderAreTheWholeGraph) {
  const Mesh mesh = generate_cylinder({10.0, 10.0, 4, 4, 2});
  const DofPartition partition = partition_of(mesh);
  const LinearSolver::RowGraph whole = free_row_graph(mesh, partition);
  const auto n_vertices = static_cast<int>(whole.first_row.size()) - 1;
  LinearSolver::RowGraph joined;
  joined.starts = {0};
  for (int rank = 0; rank < 3; ++rank) {
    const LinearSolver::RowGraph slice = free_row_graph(mesh, partition, rank, 3);
    EXPECT_EQ(slice.first_row, whole.first_row);
    const auto [first, end] = vertex_slice(n_vertices, rank, 3);
    EXPECT_EQ(slice.first_vertex, first);
    EXPECT_EQ(static_cast<int>(joined.starts.size()) - 1, first) << "slices follow each other";
    ASSERT_EQ(static_cast<int>(slice.starts.size()) - 1, end - first);
    EXPECT_LT(slice.neighbours.size(), whole.neighbours.size()) << "rank " << rank;
    for (std::size_t j = 1; j < slice.starts.size(); ++j)
      joined.starts.push_back(joined.starts.back() + slice.starts[j] - slice.starts[j - 1]);
    joined.neighbours.insert(joined.neighbours.end(), slice.neighbours.begin(),
                             slice.neighbours.end());
  }
  EXPECT_EQ(joined.starts, whole.starts);
  EXPECT_EQ(joined.neighbours, whole.neighbours);
  // PETSc's split: n / ranks each, the first n % ranks one more.
  EXPECT_EQ(vertex_slice(10, 0, 3), std::make_pair(0, 4));
  EXPECT_EQ(vertex_slice(10, 1, 3), std::make_pair(4, 7));
  EXPECT_EQ(vertex_slice(10, 2, 3), std::make_pair(7, 10));
  EXPECT_THROW(static_cast<void>(vertex_slice(10, 3, 3)), std::logic_error);
}

TEST(AssemblyShare, EachRanksRowsOfKuAreThoseOfTheWholeMatrixBitForBit) {
  const Mesh mesh = generate_cylinder({10.0, 10.0, 4, 4, 8});
  const Matrix6d d = isotropic_elasticity(210000.0, 0.3);
  const DofPartition partition = partition_of(mesh);
  const std::vector<int> contact = mesh.node_set("bottom");
  const SparseMatrix whole = assemble_stiffness(mesh, d, StoredTriangle::lower);
  const Eigen::VectorXd u = Eigen::VectorXd::Random(3 * mesh.n_nodes());
  const Eigen::VectorXd whole_ku = whole.selfadjointView<Eigen::Lower>() * u;
  const LinearSolver::RowShare free_rows = two_ranks(partition, mesh.n_nodes() / 2);
  std::vector<int> owners(static_cast<std::size_t>(3 * mesh.n_nodes()), 0);
  double largest_row_sum = 0.0;
  for (int rank = 0; rank < 2; ++rank) {
    const AssemblyShare share = assembly_share(mesh, partition, free_rows, contact, rank);
    const auto assembled = std::count(share.elements.begin(), share.elements.end(), 1);
    EXPECT_GT(assembled, 0);
    EXPECT_LT(assembled, mesh.n_elements()) << "rank " << rank << " assembles every element";
    const SparseMatrix mine = assemble_stiffness(mesh, d, StoredTriangle::lower, &share.elements);
    EXPECT_LT(mine.nonZeros(), whole.nonZeros());
    const Eigen::VectorXd ku = mine.selfadjointView<Eigen::Lower>() * u;
    for (int dof = 0; dof < 3 * mesh.n_nodes(); ++dof)
      if (share.own_dofs[dof] != 0) {
        ++owners[dof];
        ASSERT_EQ(ku(dof), whole_ku(dof)) << "rank " << rank << ", dof " << dof;
      }
    // The contact nodes' rows are complete on every rank.
    for (const int node : contact)
      for (int c = 0; c < 3; ++c) ASSERT_EQ(ku(3 * node + c), whole_ku(3 * node + c));
    // The free rows are their backend rank's.
    for (int k = 0, r = 0; r < 2; ++r)
      for (int i = 0; i < free_rows.counts[r]; ++i, ++k)
        EXPECT_EQ(share.own_dofs[partition.free_dofs()[free_rows.rows[k]]] != 0, r == rank);
    // The dof share lists each rank's own dofs.
    ASSERT_EQ(share.dofs.counts.size(), 2U);
    const int first = rank == 0 ? 0 : share.dofs.counts[0];
    for (int i = 0; i < share.dofs.counts[rank]; ++i)
      EXPECT_NE(share.own_dofs[share.dofs.rows[first + i]], 0);
    largest_row_sum = std::max(largest_row_sum, symmetric_infinity_norm(mine, &share.own_dofs));
  }
  for (int dof = 0; dof < 3 * mesh.n_nodes(); ++dof) ASSERT_EQ(owners[dof], 1) << "dof " << dof;
  EXPECT_EQ(largest_row_sum, symmetric_infinity_norm(whole));
}

TEST(AssemblyShare, ANodeWithoutFreeRowsGoesWithAnElementsNodeAndRowsSplitAreRefused) {
  const Mesh mesh = generate_cylinder({10.0, 10.0, 4, 4, 2});
  const DofPartition partition = partition_of(mesh);
  const LinearSolver::RowShare free_rows = two_ranks(partition, mesh.n_nodes() / 3);
  const AssemblyShare zero = assembly_share(mesh, partition, free_rows, {}, 0);
  const AssemblyShare one = assembly_share(mesh, partition, free_rows, {}, 1);
  // Every dof, the top's held ones included, is exactly one rank's.
  ASSERT_EQ(zero.dofs.counts, one.dofs.counts);
  EXPECT_EQ(zero.dofs.counts[0] + zero.dofs.counts[1], 3 * mesh.n_nodes());
  for (int dof = 0; dof < 3 * mesh.n_nodes(); ++dof)
    EXPECT_EQ(zero.own_dofs[dof] + one.own_dofs[dof], 1) << "dof " << dof;
  // A top node (no free rows) is on the rank of a node it shares an element with.
  for (const int node : mesh.node_set("top")) {
    bool with_a_neighbour = false;
    for (int e = 0; e < mesh.n_elements() && !with_a_neighbour; ++e) {
      const auto nodes = mesh.element_nodes(e);
      if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) continue;
      for (const int other : nodes)
        if (other != node && zero.own_dofs[3 * other] == zero.own_dofs[3 * node] &&
            (partition.free_index(3 * other) >= 0 || partition.free_index(3 * other + 1) >= 0 ||
             partition.free_index(3 * other + 2) >= 0))
          with_a_neighbour = true;
    }
    EXPECT_TRUE(with_a_neighbour) << "node " << node;
  }
  // A node's rows on two ranks cannot be assembled by one.
  LinearSolver::RowShare split = free_rows;
  std::swap(split.rows[0], split.rows[split.counts[0]]);
  const int node_a = partition.free_dofs()[split.rows[0]] / 3;
  const int node_b = partition.free_dofs()[split.rows[split.counts[0]]] / 3;
  ASSERT_NE(node_a, node_b);
  EXPECT_THROW(static_cast<void>(assembly_share(mesh, partition, split, {}, 0)), std::logic_error);
  EXPECT_THROW(static_cast<void>(assemble_stiffness(mesh, isotropic_elasticity(1.0, 0.3),
                                                    StoredTriangle::lower, &zero.own_dofs)),
               std::logic_error);
}

}  // namespace
}  // namespace bipo
