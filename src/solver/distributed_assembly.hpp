// Owns what each MPI rank assembles (issue 14, item 2; docs/parallel.md):
// the graph of K_ff's rows by node, from which the backend divides the rows
// among the ranks before the stiffness exists (LinearSolver::divide_rows);
// then each node's rank (its rows'), the elements a rank assembles, and the
// rank of every dof, whose rows of K u that rank computes. A rank assembles
// the elements with a node of its own, which gives it every entry of its
// rows, and those with a contact node, whose rows every rank reads (the
// contact nodes' stiffness blocks, springs and diagonal entries of the
// sparse contact path): about the elements of one layer more.
#pragma once

#include <utility>
#include <vector>

#include "fem/elasticity.hpp"
#include "mesh/mesh.hpp"
#include "solver/linear_solver.hpp"

namespace bipo {

/// The graph of the free rows by node (LinearSolver::RowGraph): the nodes
/// with a free dof, in node order, and the neighbours of each through the
/// elements among them, for slice `rank` of `ranks` of the vertices
/// (vertex_slice; the whole graph by default). For rows in node triples it
/// is the node graph of K_ff's pattern (assemble_stiffness couples every
/// two nodes of an element).
[[nodiscard]] LinearSolver::RowGraph free_row_graph(const Mesh& mesh, const DofPartition& partition,
                                                    int rank = 0, int ranks = 1);

/// Slice `rank` of `ranks` of n vertices, [first, end): n / ranks each, one
/// more for the first n % ranks (PETSc's own split of rows).
[[nodiscard]] std::pair<int, int> vertex_slice(int n, int rank, int ranks);

/// What rank `rank` assembles and which dofs are whose.
struct AssemblyShare {
  /// One flag per element: assembled here (assemble_stiffness's selection).
  std::vector<char> elements;
  /// One flag per dof (3 * node + component): its row of K u is computed
  /// here, complete.
  std::vector<char> own_dofs;
  /// Every dof's rank, in the layout of LinearSolver::RowShare (for
  /// gathering whole vectors from every rank's rows).
  LinearSolver::RowShare dofs;
};

/// The share of rank `rank` once the free rows are divided as `free_rows`
/// says (the backend's row_share()). A node is its free rows' rank's; a
/// node without free dofs is the rank of the first node with free dofs of
/// the first element it belongs to (rank 0 where there is none).
/// `contact_nodes`: the mesh nodes whose rows every rank needs complete.
[[nodiscard]] AssemblyShare assembly_share(const Mesh& mesh, const DofPartition& partition,
                                           const LinearSolver::RowShare& free_rows,
                                           const std::vector<int>& contact_nodes, int rank);

}  // namespace bipo
