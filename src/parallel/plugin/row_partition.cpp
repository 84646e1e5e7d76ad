// The rows of K_ff over the ranks (row_partition.hpp).
#include "parallel/plugin/row_partition.hpp"

#include <petscmat.h>

#include <algorithm>
#include <exception>
#include <functional>
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
/// The part of each vertex by PT-Scotch on the graph whose compressed
/// neighbour lists (PETSc's memory, taken over by MatCreateMPIAdj) are
/// `starts` and `neighbours` (on one process: rank 0 calls it on
/// PETSC_COMM_SELF).
std::vector<int> graph_parts(int n_vertices, PetscInt* starts, PetscInt* neighbours, int size) {
  Mat graph = nullptr;
  check(
      MatCreateMPIAdj(PETSC_COMM_SELF, n_vertices, n_vertices, starts, neighbours, nullptr, &graph),
      "MatCreateMPIAdj");
  MatPartitioning partitioning = nullptr;
  check(MatPartitioningCreate(PETSC_COMM_SELF, &partitioning), "MatPartitioningCreate");
  check(MatPartitioningSetAdjacency(partitioning, graph), "MatPartitioningSetAdjacency");
  check(MatPartitioningSetNParts(partitioning, size), "MatPartitioningSetNParts");
  check(MatPartitioningSetType(partitioning, MATPARTITIONINGPTSCOTCH), "MatPartitioningSetType");
  IS part_of_vertex = nullptr;
  check(MatPartitioningApply(partitioning, &part_of_vertex), "MatPartitioningApply");
  const PetscInt* values = nullptr;
  check(ISGetIndices(part_of_vertex, &values), "ISGetIndices");
  std::vector<int> parts(values, values + n_vertices);
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
/// 1] - 1, by PT-Scotch on the graph that `make_graph` gives (called on
/// rank 0 only; compressed neighbour lists in PETSc's memory) where it is
/// worth it, else in contiguous ranges of vertices.
RowPartition partition_vertices(
    const std::vector<int>& first_row,
    const std::function<void(PetscInt** starts, PetscInt** neighbours)>& make_graph,
    MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int n_vertices = static_cast<int>(first_row.size()) - 1;
  const int n = first_row.back();
  RowPartition partition;
  std::vector<int> parts;
#if defined(PETSC_HAVE_PTSCOTCH)
  if (size > 1 && n >= kRowsPerRankToPartition * size) {
    parts.resize(static_cast<std::size_t>(n_vertices));
    // A failure on rank 0 must not leave the others waiting in the
    // broadcast: it sends -1s, and every rank falls back to ranges.
    if (rank == 0) try {
        PetscInt *starts = nullptr, *neighbours = nullptr;
        make_graph(&starts, &neighbours);
        parts = graph_parts(n_vertices, starts, neighbours, size);
      } catch (const std::exception&) {
        parts.assign(static_cast<std::size_t>(n_vertices), -1);
      }
    MPI_Bcast(parts.data(), n_vertices, MPI_INT, 0, comm);
    partition.method = "PT-Scotch";
    if (parts[0] < 0) parts.clear();
  }
#else
  static_cast<void>(make_graph);
#endif
  if (parts.empty()) parts = contiguous_parts(n_vertices, size);
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

}  // namespace

RowPartition partition_rows(const SparseMatrix& lower, int block, MPI_Comm comm) {
  const int n_blocks = static_cast<int>(lower.rows()) / block;
  std::vector<int> first_row(static_cast<std::size_t>(n_blocks) + 1);
  for (int k = 0; k <= n_blocks; ++k) first_row[k] = k * block;
  return partition_vertices(
      first_row,
      [&](PetscInt** starts, PetscInt** neighbours) {
        block_graph(lower, block, starts, neighbours);
      },
      comm);
}

RowPartition partition_row_graph(const LinearSolver::RowGraph& graph, MPI_Comm comm) {
  const auto n_vertices = static_cast<PetscInt>(graph.first_row.size()) - 1;
  if (n_vertices < 0 || graph.starts.size() != graph.first_row.size() ||
      graph.starts.back() != static_cast<int>(graph.neighbours.size()))
    throw std::logic_error("partition_row_graph: the graph's lists do not match");
  return partition_vertices(
      graph.first_row,
      [&](PetscInt** starts, PetscInt** neighbours) {
        check(PetscMalloc1(n_vertices + 1, starts), "PetscMalloc1");
        std::copy(graph.starts.begin(), graph.starts.end(), *starts);
        check(PetscMalloc1(graph.neighbours.size(), neighbours), "PetscMalloc1");
        std::copy(graph.neighbours.begin(), graph.neighbours.end(), *neighbours);
      },
      comm);
}

}  // namespace bipo::petsc
