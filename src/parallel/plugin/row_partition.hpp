// Owns which rank holds which rows of K_ff in the PETSc backend: a graph
// partition of the rows' adjacency by PT-Scotch (through PETSc's
// MatPartitioning), so that each rank's rows couple to few rows of other
// ranks. From the mesh's node graph, given by the caller before the
// assembly, each rank holding a slice of it, PT-Scotch runs on every rank;
// from a matrix every rank holds, on rank 0 alone. Every rank then gets
// every vertex's part and numbers the rows identically. Contiguous ranges
// where no partitioner is available or the matrix is too small to be
// worth it.
#pragma once

#include <mpi.h>

#include <vector>

#include "fem/elasticity.hpp"
#include "solver/linear_solver.hpp"

namespace bipo::petsc {

struct RowPartition {
  /// The PETSc (global) row of each row of the caller's matrix: the rows of
  /// rank r are numbered contiguously, before those of rank r + 1.
  std::vector<int> new_index;
  std::vector<int> counts, firsts;  // every rank's row count and first PETSc row
  const char* method = "contiguous";
};

/// A partition of the rows of the symmetric matrix whose lower triangle is
/// `lower` over the ranks of `comm` (collective; the same on every rank),
/// keeping each block of `block` consecutive rows (a node's x, y, z: the
/// size must divide the rows) on one rank.
[[nodiscard]] RowPartition partition_rows(const SparseMatrix& lower, int block, MPI_Comm comm);

/// The same from the graph of the rows by node (LinearSolver::RowGraph),
/// every vertex's rows on one rank; each rank of `comm` gives its slice of
/// the graph, the slices in rank order (collective; throws
/// std::logic_error on every rank if they do not tile the vertices). For
/// K_ff's rows in node triples it partitions the graph that
/// partition_rows does from the assembled matrix (the same graph, in the
/// same order; PT-Scotch's parallel partition of it, not its serial one).
[[nodiscard]] RowPartition partition_row_graph(const LinearSolver::RowGraph& graph, MPI_Comm comm);

}  // namespace bipo::petsc
