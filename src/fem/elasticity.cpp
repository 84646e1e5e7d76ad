#include "fem/elasticity.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <tuple>
#include <type_traits>

#include "core/errors.hpp"
#include "fem/solid_elements.hpp"

namespace bipo {

namespace {

/// Below this many elements a loop runs on one thread: waking the team costs
/// more than the work (and much more on a busy machine).
constexpr int parallel_threshold = 4096;

/// Node coordinates of an element with N nodes, one row per node.
template <std::size_t N>
Eigen::Matrix<double, static_cast<int>(N), 3> element_coordinates(const Mesh& mesh,
                                                                  const std::array<int, N>& nodes) {
  Eigen::Matrix<double, static_cast<int>(N), 3> x;
  for (std::size_t a = 0; a < N; ++a) x.row(static_cast<int>(a)) = mesh.nodes[nodes[a]].transpose();
  return x;
}

/// Sorted neighbours (including itself) of every node through the elements
/// (those of `elements` only, if given).
std::vector<std::vector<int>> node_neighbours(const Mesh& mesh,
                                              const std::vector<char>* elements = nullptr) {
  std::vector<std::vector<int>> adjacency(mesh.nodes.size());
  for (int e = 0; e < mesh.n_elements(); ++e) {
    if (elements != nullptr && (*elements)[e] == 0) continue;
    const auto nodes = mesh.element_nodes(e);
    for (int a : nodes)
      for (int b : nodes) adjacency[a].push_back(b);
  }
  for (auto& list : adjacency) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return adjacency;
}

}  // namespace

std::vector<std::vector<int>> colour_elements(const Mesh& mesh) {
  // Greedy colouring with one 64-bit mask of used colours per node; structured
  // hexahedral meshes need 8 colours, unstructured ones rarely more than ~20.
  std::vector<std::uint64_t> used(mesh.nodes.size(), 0);
  std::vector<std::vector<int>> colours;
  for (int e = 0; e < mesh.n_elements(); ++e) {
    const auto nodes = mesh.element_nodes(e);
    std::uint64_t taken = 0;
    for (int a : nodes) taken |= used[a];
    if (taken == ~std::uint64_t{0})
      throw NumericalError("element colouring needs more than 64 colours");
    const int colour = std::countr_one(taken);
    for (int a : nodes) used[a] |= std::uint64_t{1} << colour;
    if (colour >= static_cast<int>(colours.size())) colours.resize(colour + 1);
    colours[colour].push_back(e);
  }
  return colours;
}

SparseMatrix assemble_stiffness(const Mesh& mesh, const Matrix6d& d, StoredTriangle stored,
                                const std::vector<char>* elements) {
  if (elements != nullptr && static_cast<int>(elements->size()) != mesh.n_elements())
    throw std::logic_error("assemble_stiffness: the element selection is not one per element");
  const auto adjacency = node_neighbours(mesh, elements);
  const int n_dofs = 3 * mesh.n_nodes();
  const bool lower = stored == StoredTriangle::lower;
  // first[a]: where column node a's row nodes start in its sorted neighbours:
  // at a itself for the lower triangle (rows >= columns), else at the first.
  std::vector<int> first(mesh.n_nodes(), 0);
  if (lower)
    for (int a = 0; a < mesh.n_nodes(); ++a)
      first[a] = static_cast<int>(std::lower_bound(adjacency[a].begin(), adjacency[a].end(), a) -
                                  adjacency[a].begin());

  // Pattern: column 3a+c holds the rows 3b+c' for every neighbour b of a
  // (from row 3a+c on, for the lower triangle).
  SparseMatrix k(n_dofs, n_dofs);
  std::vector<int> outer(n_dofs + 1, 0);
  for (int a = 0; a < mesh.n_nodes(); ++a) {
    // A node of no element assembled (a selection's) has no entries at all.
    const int block_rows = 3 * static_cast<int>(adjacency[a].size() - first[a]);
    for (int c = 0; c < 3; ++c)
      outer[3 * a + c + 1] =
          outer[3 * a + c] + (block_rows == 0 ? 0 : block_rows - (lower ? c : 0));
  }
  k.resizeNonZeros(outer.back());
  std::copy(outer.begin(), outer.end(), k.outerIndexPtr());
  int* inner = k.innerIndexPtr();
  for (int a = 0; a < mesh.n_nodes(); ++a)
    for (int c = 0; c < 3; ++c) {
      int pos = outer[3 * a + c];
      for (std::size_t i = first[a]; i < adjacency[a].size(); ++i)
        for (int r = 0; r < 3; ++r)
          if (!lower || 3 * adjacency[a][i] + r >= 3 * a + c)
            inner[pos++] = 3 * adjacency[a][i] + r;
    }
  double* values = k.valuePtr();
  std::fill(values, values + outer.back(), 0.0);

  const auto add = [&](const auto& element, const auto& ke) {
    constexpr int n = static_cast<int>(std::tuple_size_v<std::decay_t<decltype(element)>>);
    for (int a = 0; a < n; ++a) {  // column node
      const auto& neighbours = adjacency[element[a]];
      for (int b = 0; b < n; ++b) {  // row node
        if (lower && element[b] < element[a]) continue;
        const int rank =
            static_cast<int>(std::lower_bound(neighbours.begin(), neighbours.end(), element[b]) -
                             neighbours.begin()) -
            first[element[a]];
        for (int ca = 0; ca < 3; ++ca) {
          const int column_dof = 3 * element[a] + ca;
          // Row 3 b + cb's place in the column: its node block's, less the
          // rows above the diagonal that the lower triangle leaves out of
          // node a's own block.
          const int block_start = outer[column_dof] + 3 * rank - (lower ? ca : 0);
          for (int cb = 0; cb < 3; ++cb)
            if (!lower || 3 * element[b] + cb >= column_dof)
              values[block_start + cb] += ke(3 * b + cb, 3 * a + ca);
        }
      }
    }
  };
  const int n_hexes = mesh.n_hexes(), n_wedges = mesh.n_wedges();
  for (const auto& colour : colour_elements(mesh)) {
    const int n_in_colour = static_cast<int>(colour.size());
#pragma omp parallel for schedule(static) if (n_in_colour > parallel_threshold / 8)
    for (int i = 0; i < n_in_colour; ++i) {
      const int e = colour[i];
      if (elements != nullptr && (*elements)[e] == 0) continue;
      if (e < n_hexes) {
        const Hex8& hex = mesh.hexes[e];
        add(hex, hex8_stiffness(element_coordinates(mesh, hex), d));
      } else if (e < n_hexes + n_wedges) {
        const Wedge6& wedge = mesh.wedges[e - n_hexes];
        add(wedge, wedge6_stiffness(element_coordinates(mesh, wedge), d));
      } else {
        const Tet4& tet = mesh.tets[e - n_hexes - n_wedges];
        add(tet, tet4_stiffness(element_coordinates(mesh, tet), d));
      }
    }
  }
  return k;
}

DofPartition::DofPartition(const std::vector<bool>& prescribed)
    : free_index_(prescribed.size(), -1), prescribed_index_(prescribed.size(), -1) {
  for (int dof = 0; dof < static_cast<int>(prescribed.size()); ++dof) {
    if (prescribed[dof]) {
      prescribed_index_[dof] = static_cast<int>(prescribed_dofs_.size());
      prescribed_dofs_.push_back(dof);
    } else {
      free_index_[dof] = static_cast<int>(free_dofs_.size());
      free_dofs_.push_back(dof);
    }
  }
}

void DofPartition::split_lower_triangle(const SparseMatrix& k_lower, SparseMatrix& k_ff_lower,
                                        SparseMatrix& k_fp, SparseMatrix* k_pp) const {
  if (k_lower.rows() != n_dofs() || k_lower.cols() != n_dofs() || !k_lower.isCompressed())
    throw std::logic_error("split_lower_triangle: not a compressed matrix of the partition's size");
  Eigen::Index ff_entries = 0;
  for (int col = 0; col < k_lower.outerSize(); ++col)
    for (SparseMatrix::InnerIterator it(k_lower, col); it; ++it) {
      if (it.row() < col)
        throw std::logic_error("split_lower_triangle: an entry above the diagonal");
      if (free_index_[col] >= 0 && free_index_[it.row()] >= 0) ++ff_entries;
    }
  SparseMatrix ff(n_free(), n_free());
  ff.reserve(ff_entries);
  // K_fp and K_pp are small (the prescribed dofs' couplings): triplets. An
  // entry (i, j) of the triangle is K_ij = K_ji of both blocks it may touch.
  std::vector<Eigen::Triplet<double, int>> fp, pp;
  for (int col = 0; col < k_lower.outerSize(); ++col) {
    const int col_free = free_index_[col];
    if (col_free >= 0) ff.startVec(col_free);  // free columns come in order
    for (SparseMatrix::InnerIterator it(k_lower, col); it; ++it) {
      const int row = static_cast<int>(it.row());
      const int row_free = free_index_[row];
      if (row_free >= 0 && col_free >= 0)
        ff.insertBackByOuterInner(col_free, row_free) = it.value();
      else if (row_free >= 0)
        fp.emplace_back(row_free, prescribed_index_[col], it.value());
      else if (col_free >= 0)
        fp.emplace_back(col_free, prescribed_index_[row], it.value());
      else if (k_pp != nullptr) {
        pp.emplace_back(prescribed_index_[row], prescribed_index_[col], it.value());
        if (row != col) pp.emplace_back(prescribed_index_[col], prescribed_index_[row], it.value());
      }
    }
  }
  ff.finalize();
  k_ff_lower.swap(ff);
  SparseMatrix fp_block(n_free(), n_prescribed());
  fp_block.setFromTriplets(fp.begin(), fp.end());
  k_fp.swap(fp_block);
  if (k_pp != nullptr) {
    SparseMatrix pp_block(n_prescribed(), n_prescribed());
    pp_block.setFromTriplets(pp.begin(), pp.end());
    k_pp->swap(pp_block);
  }
}

std::vector<Vector6d> element_stresses(const Mesh& mesh, const Matrix6d& d,
                                       const Eigen::VectorXd& u) {
  std::vector<Vector6d> stresses(static_cast<std::size_t>(mesh.n_elements()));
  const auto displacements = [&u](const auto& element) {
    constexpr int n = static_cast<int>(std::tuple_size_v<std::decay_t<decltype(element)>>);
    Eigen::Matrix<double, 3 * n, 1> u_e;
    for (int a = 0; a < n; ++a) u_e.template segment<3>(3 * a) = u.segment<3>(3 * element[a]);
    return u_e;
  };
  const int n_hexes = mesh.n_hexes(), n_wedges = mesh.n_wedges();
#pragma omp parallel for schedule(static) if (mesh.n_elements() > parallel_threshold)
  for (int e = 0; e < mesh.n_elements(); ++e) {
    if (e < n_hexes) {
      const Hex8& hex = mesh.hexes[e];
      stresses[e] = hex8_mean_stress(element_coordinates(mesh, hex), d, displacements(hex));
    } else if (e < n_hexes + n_wedges) {
      const Wedge6& wedge = mesh.wedges[e - n_hexes];
      stresses[e] = wedge6_mean_stress(element_coordinates(mesh, wedge), d, displacements(wedge));
    } else {
      const Tet4& tet = mesh.tets[e - n_hexes - n_wedges];
      stresses[e] = tet4_stress(element_coordinates(mesh, tet), d, displacements(tet));
    }
  }
  return stresses;
}

}  // namespace bipo
