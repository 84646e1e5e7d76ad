// The rows of K_ff over the ranks (row_partition.hpp).
#include "parallel/plugin/row_partition.hpp"

#include <petscmat.h>

#include <algorithm>
#include <exception>
#include <numeric>
#include <stdexcept>

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

#if defined(PETSC_HAVE_PTSCOTCH)
/// The part of each vertex of this process's slice (`n_local` vertices of
/// `n_vertices`, the slices in rank order) by PT-Scotch on the graph whose
/// compressed neighbour lists of the slice (PETSc's memory, taken over by
/// MatCreateMPIAdj; neighbours numbered among all vertices) are `starts`
/// and `neighbours` (collective on `comm`: rank 0 alone calls it on
/// PETSC_COMM_SELF with every vertex for partition_rows; every rank on
/// PETSC_COMM_WORLD with its slice for partition_row_graph).
std::vector<int> graph_parts(MPI_Comm comm, int n_local, int n_vertices, PetscInt* starts,
                             PetscInt* neighbours, int size) {
  Mat graph = nullptr;
  check(MatCreateMPIAdj(comm, n_local, n_vertices, starts, neighbours, nullptr, &graph),
        "MatCreateMPIAdj");
  MatPartitioning partitioning = nullptr;
  check(MatPartitioningCreate(comm, &partitioning), "MatPartitioningCreate");
  check(MatPartitioningSetAdjacency(partitioning, graph), "MatPartitioningSetAdjacency");
  check(MatPartitioningSetNParts(partitioning, size), "MatPartitioningSetNParts");
  check(MatPartitioningSetType(partitioning, MATPARTITIONINGPTSCOTCH), "MatPartitioningSetType");
  IS part_of_vertex = nullptr;
  check(MatPartitioningApply(partitioning, &part_of_vertex), "MatPartitioningApply");
  const PetscInt* values = nullptr;
  check(ISGetIndices(part_of_vertex, &values), "ISGetIndices");
  std::vector<int> parts(values, values + n_local);
  check(ISRestoreIndices(part_of_vertex, &values), "ISRestoreIndices");
  ISDestroy(&part_of_vertex);
  MatPartitioningDestroy(&partitioning);
  MatDestroy(&graph);
  return parts;
}
#endif

}  // namespace

namespace {

/// The partition of vertices whose rows are first_row[k] ... first_row[k +
/// 1] - 1, vertex k in part parts[k] (every vertex's).
RowPartition partition_from_parts(const std::vector<int>& first_row, const std::vector<int>& parts,
                                  int size, const char* method) {
  const int n_vertices = static_cast<int>(first_row.size()) - 1;
  const int n = first_row.back();
  RowPartition partition;
  partition.method = method;
  partition.counts.assign(static_cast<std::size_t>(size), 0);
  for (int k = 0; k < n_vertices; ++k)
    partition.counts[parts[k]] += first_row[k + 1] - first_row[k];
  partition.firsts.assign(static_cast<std::size_t>(size), 0);
  std::partial_sum(partition.counts.begin(), partition.counts.end() - 1,
                   partition.firsts.begin() + 1);
  // Rows keep their order within a part (the mesh's locality), and the
  // rows of a vertex stay together.
  std::vector<int> next = partition.firsts;
  partition.new_index.resize(static_cast<std::size_t>(n));
  for (int k = 0; k < n_vertices; ++k)
    for (int row = first_row[k]; row < first_row[k + 1]; ++row)
      partition.new_index[row] = next[parts[k]]++;
  return partition;
}

/// Whether a partitioner is worth it for n rows on `size` ranks.
bool worth_partitioning(int n, int size) {
  return size > 1 && n >= kRowsPerRankToPartition * size;
}

}  // namespace

RowPartition partition_rows(const SparseMatrix& lower, int block, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int n_blocks = static_cast<int>(lower.rows()) / block;
  std::vector<int> first_row(static_cast<std::size_t>(n_blocks) + 1);
  for (int k = 0; k <= n_blocks; ++k) first_row[k] = k * block;
#if defined(PETSC_HAVE_PTSCOTCH)
  // Every rank holds the matrix here: rank 0 partitions its block graph
  // alone and broadcasts the parts.
  if (worth_partitioning(first_row.back(), size)) {
    std::vector<int> parts(static_cast<std::size_t>(n_blocks));
    // A failure on rank 0 must not leave the others waiting in the
    // broadcast: it sends -1s, and every rank falls back to ranges.
    if (rank == 0) try {
        PetscInt *starts = nullptr, *neighbours = nullptr;
        block_graph(lower, block, &starts, &neighbours);
        parts = graph_parts(PETSC_COMM_SELF, n_blocks, n_blocks, starts, neighbours, size);
      } catch (const std::exception&) {
        parts.assign(static_cast<std::size_t>(n_blocks), -1);
      }
    MPI_Bcast(parts.data(), n_blocks, MPI_INT, 0, comm);
    if (n_blocks > 0 && parts[0] >= 0)
      return partition_from_parts(first_row, parts, size, "PT-Scotch");
  }
#else
  static_cast<void>(rank);
#endif
  return partition_from_parts(first_row, contiguous_parts(n_blocks, size), size, "contiguous");
}

RowPartition partition_row_graph(const LinearSolver::RowGraph& graph, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const auto n_vertices = static_cast<int>(graph.first_row.size()) - 1;
  const int n_local = std::max(static_cast<int>(graph.starts.size()) - 1, 0);
  const bool lists_match = n_vertices >= 0 && !graph.starts.empty() &&
                           graph.starts.back() == static_cast<int>(graph.neighbours.size());
  // The slices must follow each other in rank order and cover every
  // vertex. Checked together, so that every rank throws or none does (one
  // rank alone would leave the others waiting in the next collective).
  std::vector<int> local_counts(static_cast<std::size_t>(size));
  MPI_Allgather(&n_local, 1, MPI_INT, local_counts.data(), 1, MPI_INT, comm);
  std::vector<int> slice_firsts(static_cast<std::size_t>(size) + 1, 0);
  std::partial_sum(local_counts.begin(), local_counts.end(), slice_firsts.begin() + 1);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int slices_tile =
      lists_match && slice_firsts.back() == n_vertices && graph.first_vertex == slice_firsts[rank]
          ? 1
          : 0;
  MPI_Allreduce(MPI_IN_PLACE, &slices_tile, 1, MPI_INT, MPI_MIN, comm);
  if (slices_tile == 0)
    throw std::logic_error(
        "partition_row_graph: the ranks' slices of the graph do not tile its vertices in rank "
        "order, or a slice's lists do not match");
#if defined(PETSC_HAVE_PTSCOTCH)
  // PT-Scotch on every rank, each with its slice: no rank holds the whole
  // graph. The parts of every slice are then gathered to every rank, which
  // numbers the rows from them.
  if (worth_partitioning(graph.first_row.back(), size)) {
    std::vector<int> local_parts;
    int ok = 1;
    try {
      PetscInt *starts = nullptr, *neighbours = nullptr;
      check(PetscMalloc1(n_local + 1, &starts), "PetscMalloc1");
      std::copy(graph.starts.begin(), graph.starts.end(), starts);
      check(PetscMalloc1(graph.neighbours.size(), &neighbours), "PetscMalloc1");
      std::copy(graph.neighbours.begin(), graph.neighbours.end(), neighbours);
      local_parts = graph_parts(comm, n_local, n_vertices, starts, neighbours, size);
    } catch (const std::exception&) {
      ok = 0;  // PETSc's errors here are the same on every rank (collective calls)
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (ok == 1) {
      std::vector<int> parts(static_cast<std::size_t>(n_vertices));
      MPI_Allgatherv(local_parts.data(), n_local, MPI_INT, parts.data(), local_counts.data(),
                     slice_firsts.data(), MPI_INT, comm);
      return partition_from_parts(graph.first_row, parts, size, "PT-Scotch");
    }
  }
#endif
  return partition_from_parts(graph.first_row, contiguous_parts(n_vertices, size), size,
                              "contiguous");
}

}  // namespace bipo::petsc
