// What each MPI rank assembles (distributed_assembly.hpp).
#include "solver/distributed_assembly.hpp"

#include <algorithm>
#include <stdexcept>

namespace bipo {

namespace {

bool has_free_dof(const DofPartition& partition, int node) {
  for (int c = 0; c < 3; ++c)
    if (partition.free_index(3 * node + c) >= 0) return true;
  return false;
}

}  // namespace

std::pair<int, int> vertex_slice(int n, int rank, int ranks) {
  if (ranks < 1 || rank < 0 || rank >= ranks || n < 0)
    throw std::logic_error("vertex_slice: no such slice");
  const int base = n / ranks, extra = n % ranks;
  const int first = rank * base + std::min(rank, extra);
  return {first, first + base + (rank < extra ? 1 : 0)};
}

LinearSolver::RowGraph free_row_graph(const Mesh& mesh, const DofPartition& partition, int rank,
                                      int ranks) {
  const int n_nodes = mesh.n_nodes();
  std::vector<int> vertex(static_cast<std::size_t>(n_nodes), -1);
  LinearSolver::RowGraph graph;
  for (int node = 0; node < n_nodes; ++node) {
    if (!has_free_dof(partition, node)) continue;
    vertex[node] = static_cast<int>(graph.first_row.size());
    int first = -1;
    for (int c = 0; c < 3 && first < 0; ++c) first = partition.free_index(3 * node + c);
    graph.first_row.push_back(first);
  }
  graph.first_row.push_back(partition.n_free());
  const auto n_vertices = static_cast<int>(graph.first_row.size()) - 1;
  const auto [first_vertex, end_vertex] = vertex_slice(n_vertices, rank, ranks);
  graph.first_vertex = first_vertex;
  const int n_local = end_vertex - first_vertex;
  // Only this slice's lists: every element is visited (the mesh is whole
  // on every rank), the lists of the others' vertices are never made.
  std::vector<std::vector<int>> adjacent(static_cast<std::size_t>(n_local));
  for (int e = 0; e < mesh.n_elements(); ++e) {
    const auto nodes = mesh.element_nodes(e);
    for (const int a : nodes)
      if (const int local = vertex[a] - first_vertex;
          vertex[a] >= 0 && local >= 0 && local < n_local)
        for (const int b : nodes)
          if (vertex[b] >= 0 && b != a) adjacent[local].push_back(vertex[b]);
  }
  graph.starts.assign(static_cast<std::size_t>(n_local) + 1, 0);
  for (int k = 0; k < n_local; ++k) {
    std::vector<int>& list = adjacent[k];
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    graph.starts[k + 1] = graph.starts[k] + static_cast<int>(list.size());
  }
  graph.neighbours.reserve(static_cast<std::size_t>(graph.starts.back()));
  for (std::vector<int>& list : adjacent) {
    graph.neighbours.insert(graph.neighbours.end(), list.begin(), list.end());
    std::vector<int>().swap(list);  // freed as it goes: the lists are the graph's size again
  }
  return graph;
}

AssemblyShare assembly_share(const Mesh& mesh, const DofPartition& partition,
                             const LinearSolver::RowShare& free_rows,
                             const std::vector<int>& contact_nodes, int rank) {
  const int n_nodes = mesh.n_nodes();
  const auto ranks = static_cast<int>(free_rows.counts.size());
  if (ranks < 1 || rank < 0 || rank >= ranks ||
      static_cast<int>(free_rows.rows.size()) != partition.n_free())
    throw std::logic_error("assembly_share: the share does not divide the free rows");
  const std::vector<int> rank_of_free = LinearSolver::rank_of_each_row(free_rows);
  // A node's rows must all be on one rank: each rank's rows of K u (and
  // the rows it assembles) are then those of its nodes.
  std::vector<int> node_rank(static_cast<std::size_t>(n_nodes), -1);
  for (int node = 0; node < n_nodes; ++node)
    for (int c = 0; c < 3; ++c)
      if (const int free = partition.free_index(3 * node + c); free >= 0) {
        if (node_rank[node] >= 0 && node_rank[node] != rank_of_free[free])
          throw std::logic_error("assembly_share: a node's rows are on two ranks");
        node_rank[node] = rank_of_free[free];
      }
  std::vector<int> prescribed_node_rank = node_rank;
  for (int e = 0; e < mesh.n_elements(); ++e) {
    const auto nodes = mesh.element_nodes(e);
    const auto with_free =
        std::find_if(nodes.begin(), nodes.end(), [&](int node) { return node_rank[node] >= 0; });
    if (with_free == nodes.end()) continue;
    for (const int node : nodes)
      if (prescribed_node_rank[node] < 0) prescribed_node_rank[node] = node_rank[*with_free];
  }
  node_rank = std::move(prescribed_node_rank);
  for (int& r : node_rank) r = std::max(r, 0);

  AssemblyShare share;
  std::vector<char> contact(static_cast<std::size_t>(n_nodes), 0);
  for (const int node : contact_nodes) contact[node] = 1;
  share.elements.assign(static_cast<std::size_t>(mesh.n_elements()), 0);
  for (int e = 0; e < mesh.n_elements(); ++e)
    for (const int node : mesh.element_nodes(e))
      if (node_rank[node] == rank || contact[node] != 0) share.elements[e] = 1;
  share.own_dofs.assign(static_cast<std::size_t>(3 * n_nodes), 0);
  share.dofs.counts.assign(static_cast<std::size_t>(ranks), 0);
  for (int node = 0; node < n_nodes; ++node) {
    share.dofs.counts[node_rank[node]] += 3;
    if (node_rank[node] == rank)
      for (int c = 0; c < 3; ++c) share.own_dofs[3 * node + c] = 1;
  }
  share.dofs.rows.reserve(static_cast<std::size_t>(3 * n_nodes));
  for (int r = 0; r < ranks; ++r)
    for (int node = 0; node < n_nodes; ++node)
      if (node_rank[node] == r)
        for (int c = 0; c < 3; ++c) share.dofs.rows.push_back(3 * node + c);
  return share;
}

}  // namespace bipo
