// Owns which rank holds which rows of K_ff in the PETSc backend: a graph
// partition of the rows' adjacency (the mesh's node graph given by the
// caller before the assembly, or the matrix's own) by PT-Scotch (through
// PETSc's MatPartitioning), so that each rank's rows couple to few rows of
// other ranks, computed once on rank 0 and broadcast (every rank then
// numbers the rows identically). Contiguous ranges where no partitioner is
// available or the matrix is too small to be worth it.
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
/// every vertex's rows on one rank. For K_ff's rows in node triples it is
/// the partition that partition_rows gives from the assembled matrix (the
/// same graph, in the same order).
[[nodiscard]] RowPartition partition_row_graph(const LinearSolver::RowGraph& graph, MPI_Comm comm);

}  // namespace bipo::petsc
