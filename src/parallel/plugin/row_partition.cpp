// The rows of K_ff over the ranks (row_partition.hpp).
#include "parallel/plugin/row_partition.hpp"

#include <petscmat.h>

#include <algorithm>
#include <exception>
#include <numeric>

#include "parallel/plugin/petsc_call.hpp"

namespace bipo::petsc {

namespace {

// Below this many rows per rank a partitioner costs more than it saves.
constexpr int kRowsPerRankToPartition = 1000;

/// PETSc's own split of the blocks: n / size each, one more for the first
/// n % size.
std::vector<int> contiguous_parts(int n_blocks, int size) {
  std::vector<int> parts(static_cast<std::size_t>(n_blocks));
  const int base = n_blocks / size, extra = n_blocks % size;
  for (int r = 0, block = 0; r < size; ++r)
    for (int k = 0; k < base + (r < extra ? 1 : 0); ++k) parts[block++] = r;
  return parts;
}

#if defined(PETSC_HAVE_PTSCOTCH)
/// The graph of the blocks (rows block b * k ... b * k + b - 1 are block
/// k): compressed neighbour lists without self-loops or duplicates, in
/// PETSc's memory (MatCreateMPIAdj takes them over).
void block_graph(const SparseMatrix& lower, int block, PetscInt** starts, PetscInt** neighbours) {
  const int n_blocks = static_cast<int>(lower.rows()) / block;
  std::vector<std::vector<PetscInt>> adjacent(static_cast<std::size_t>(n_blocks));
  for (int j = 0; j < lower.outerSize(); ++j)
    for (SparseMatrix::InnerIterator it(lower, j); it; ++it)
      if (const int bi = static_cast<int>(it.row()) / block, bj = j / block; bi != bj) {
        adjacent[bi].push_back(bj);
        adjacent[bj].push_back(bi);
      }
  check(PetscMalloc1(n_blocks + 1, starts), "PetscMalloc1");
  (*starts)[0] = 0;
  for (int k = 0; k < n_blocks; ++k) {
    std::sort(adjacent[k].begin(), adjacent[k].end());
    adjacent[k].erase(std::unique(adjacent[k].begin(), adjacent[k].end()), adjacent[k].end());
    (*starts)[k + 1] = (*starts)[k] + static_cast<PetscInt>(adjacent[k].size());
  }
  check(PetscMalloc1((*starts)[n_blocks], neighbours), "PetscMalloc1");
  for (int k = 0; k < n_blocks; ++k)
    std::copy(adjacent[k].begin(), adjacent[k].end(), *neighbours + (*starts)[k]);
}

/// The part of each block by PT-Scotch on the block graph (on one process:
/// rank 0 calls it on PETSC_COMM_SELF).
std::vector<int> graph_parts(const SparseMatrix& lower, int block, int size) {
  const int n_blocks = static_cast<int>(lower.rows()) / block;
  PetscInt *starts = nullptr, *neighbours = nullptr;
  block_graph(lower, block, &starts, &neighbours);
  Mat graph = nullptr;
  check(MatCreateMPIAdj(PETSC_COMM_SELF, n_blocks, n_blocks, starts, neighbours, nullptr, &graph),
        "MatCreateMPIAdj");
  MatPartitioning partitioning = nullptr;
  check(MatPartitioningCreate(PETSC_COMM_SELF, &partitioning), "MatPartitioningCreate");
  check(MatPartitioningSetAdjacency(partitioning, graph), "MatPartitioningSetAdjacency");
  check(MatPartitioningSetNParts(partitioning, size), "MatPartitioningSetNParts");
  check(MatPartitioningSetType(partitioning, MATPARTITIONINGPTSCOTCH), "MatPartitioningSetType");
  IS part_of_block = nullptr;
  check(MatPartitioningApply(partitioning, &part_of_block), "MatPartitioningApply");
  const PetscInt* values = nullptr;
  check(ISGetIndices(part_of_block, &values), "ISGetIndices");
  std::vector<int> parts(values, values + n_blocks);
  check(ISRestoreIndices(part_of_block, &values), "ISRestoreIndices");
  ISDestroy(&part_of_block);
  MatPartitioningDestroy(&partitioning);
  MatDestroy(&graph);
  return parts;
}
#endif

}  // namespace

RowPartition partition_rows(const SparseMatrix& lower, int block, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int n = static_cast<int>(lower.rows());
  const int n_blocks = n / block;
  RowPartition partition;
  std::vector<int> parts;
#if defined(PETSC_HAVE_PTSCOTCH)
  if (size > 1 && n >= kRowsPerRankToPartition * size) {
    parts.resize(static_cast<std::size_t>(n_blocks));
    // A failure on rank 0 must not leave the others waiting in the
    // broadcast: it sends -1s, and every rank falls back to ranges.
    if (rank == 0) try {
        parts = graph_parts(lower, block, size);
      } catch (const std::exception&) {
        parts.assign(static_cast<std::size_t>(n_blocks), -1);
      }
    MPI_Bcast(parts.data(), n_blocks, MPI_INT, 0, comm);
    partition.method = "PT-Scotch";
    if (parts[0] < 0) parts.clear();
  }
#endif
  if (parts.empty()) parts = contiguous_parts(n_blocks, size);
  partition.counts.assign(static_cast<std::size_t>(size), 0);
  for (int part : parts) partition.counts[part] += block;
  partition.firsts.assign(static_cast<std::size_t>(size), 0);
  std::partial_sum(partition.counts.begin(), partition.counts.end() - 1,
                   partition.firsts.begin() + 1);
  // Rows keep their order within a part (the mesh's locality), and the
  // rows of a block stay together.
  std::vector<int> next = partition.firsts;
  partition.new_index.resize(static_cast<std::size_t>(n));
  for (int row = 0; row < n; ++row) partition.new_index[row] = next[parts[row / block]]++;
  return partition;
}

}  // namespace bipo::petsc
