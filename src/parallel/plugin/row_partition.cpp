// The rows of K_ff over the ranks (row_partition.hpp).
#include "parallel/plugin/row_partition.hpp"

#include <petscmat.h>

#include <exception>
#include <numeric>

#include "parallel/plugin/petsc_call.hpp"

namespace bipo::petsc {

namespace {

// Below this many rows per rank a partitioner costs more than it saves.
constexpr int kRowsPerRankToPartition = 1000;

/// PETSc's own split: n / size rows each, one more for the first n % size.
std::vector<int> contiguous_parts(int n, int size) {
  std::vector<int> parts(static_cast<std::size_t>(n));
  const int base = n / size, extra = n % size;
  for (int r = 0, row = 0; r < size; ++r)
    for (int k = 0; k < base + (r < extra ? 1 : 0); ++k) parts[row++] = r;
  return parts;
}

#if defined(PETSC_HAVE_PTSCOTCH)
/// The part of each row by PT-Scotch on the matrix's graph (on one process:
/// rank 0 calls it on PETSC_COMM_SELF). The adjacency arrays are PETSc's
/// (MatCreateMPIAdj takes them over).
std::vector<int> graph_parts(const SparseMatrix& lower, int size) {
  const int n = static_cast<int>(lower.rows());
  std::vector<PetscInt> degree(static_cast<std::size_t>(n), 0);
  for (int j = 0; j < n; ++j)
    for (SparseMatrix::InnerIterator it(lower, j); it; ++it)
      if (it.row() != j) {
        ++degree[it.row()];
        ++degree[j];
      }
  PetscInt *starts = nullptr, *neighbours = nullptr;
  check(PetscMalloc1(n + 1, &starts), "PetscMalloc1");
  starts[0] = 0;
  for (int i = 0; i < n; ++i) starts[i + 1] = starts[i] + degree[i];
  check(PetscMalloc1(starts[n], &neighbours), "PetscMalloc1");
  std::vector<PetscInt> next(starts, starts + n);
  for (int j = 0; j < n; ++j)
    for (SparseMatrix::InnerIterator it(lower, j); it; ++it)
      if (const int i = static_cast<int>(it.row()); i != j) {
        neighbours[next[i]++] = j;
        neighbours[next[j]++] = i;
      }
  Mat graph = nullptr;
  check(MatCreateMPIAdj(PETSC_COMM_SELF, n, n, starts, neighbours, nullptr, &graph),
        "MatCreateMPIAdj");
  MatPartitioning partitioning = nullptr;
  check(MatPartitioningCreate(PETSC_COMM_SELF, &partitioning), "MatPartitioningCreate");
  check(MatPartitioningSetAdjacency(partitioning, graph), "MatPartitioningSetAdjacency");
  check(MatPartitioningSetNParts(partitioning, size), "MatPartitioningSetNParts");
  check(MatPartitioningSetType(partitioning, MATPARTITIONINGPTSCOTCH), "MatPartitioningSetType");
  IS part_of_row = nullptr;
  check(MatPartitioningApply(partitioning, &part_of_row), "MatPartitioningApply");
  const PetscInt* values = nullptr;
  check(ISGetIndices(part_of_row, &values), "ISGetIndices");
  std::vector<int> parts(values, values + n);
  check(ISRestoreIndices(part_of_row, &values), "ISRestoreIndices");
  ISDestroy(&part_of_row);
  MatPartitioningDestroy(&partitioning);
  MatDestroy(&graph);
  return parts;
}
#endif

}  // namespace

RowPartition partition_rows(const SparseMatrix& lower, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int n = static_cast<int>(lower.rows());
  RowPartition partition;
  std::vector<int> parts;
#if defined(PETSC_HAVE_PTSCOTCH)
  if (size > 1 && n >= kRowsPerRankToPartition * size) {
    parts.resize(static_cast<std::size_t>(n));
    // A failure on rank 0 must not leave the others waiting in the
    // broadcast: it sends -1s, and every rank falls back to ranges.
    if (rank == 0) try {
        parts = graph_parts(lower, size);
      } catch (const std::exception&) {
        parts.assign(static_cast<std::size_t>(n), -1);
      }
    MPI_Bcast(parts.data(), n, MPI_INT, 0, comm);
    partition.method = "PT-Scotch";
    if (parts[0] < 0) parts.clear();
  }
#endif
  if (parts.empty()) parts = contiguous_parts(n, size);
  partition.counts.assign(static_cast<std::size_t>(size), 0);
  for (int part : parts) ++partition.counts[part];
  partition.firsts.assign(static_cast<std::size_t>(size), 0);
  std::partial_sum(partition.counts.begin(), partition.counts.end() - 1,
                   partition.firsts.begin() + 1);
  // Rows keep their order within a part (the mesh's locality).
  std::vector<int> next = partition.firsts;
  partition.new_index.resize(static_cast<std::size_t>(n));
  for (int row = 0; row < n; ++row) partition.new_index[row] = next[parts[row]]++;
  return partition;
}

}  // namespace bipo::petsc
