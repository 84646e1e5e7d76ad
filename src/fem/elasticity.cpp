#include "fem/elasticity.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>

#include "core/errors.hpp"

namespace bipo {

namespace {

/// Below this many elements a loop runs on one thread: waking the team costs
/// more than the work (and much more on a busy machine).
constexpr int parallel_threshold = 4096;

HexCoordinates element_coordinates(const Mesh& mesh, const Hex8& hex) {
  HexCoordinates x;
  for (int a = 0; a < 8; ++a) x.row(a) = mesh.nodes[hex[a]].transpose();
  return x;
}

/// Sorted neighbours (including itself) of every node through the elements.
std::vector<std::vector<int>> node_neighbours(const Mesh& mesh) {
  std::vector<std::vector<int>> adjacency(mesh.nodes.size());
  for (const auto& hex : mesh.hexes)
    for (int a : hex)
      for (int b : hex) adjacency[a].push_back(b);
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
  for (int e = 0; e < mesh.n_hexes(); ++e) {
    std::uint64_t taken = 0;
    for (int a : mesh.hexes[e]) taken |= used[a];
    if (taken == ~std::uint64_t{0})
      throw NumericalError("element colouring needs more than 64 colours");
    const int colour = std::countr_one(taken);
    for (int a : mesh.hexes[e]) used[a] |= std::uint64_t{1} << colour;
    if (colour >= static_cast<int>(colours.size())) colours.resize(colour + 1);
    colours[colour].push_back(e);
  }
  return colours;
}

SparseMatrix assemble_stiffness(const Mesh& mesh, const Matrix6d& d) {
  const auto adjacency = node_neighbours(mesh);
  const int n_dofs = 3 * mesh.n_nodes();

  // Pattern: column 3a+c holds the rows 3b+c' for every neighbour b of a.
  SparseMatrix k(n_dofs, n_dofs);
  std::vector<int> outer(n_dofs + 1, 0);
  for (int a = 0; a < mesh.n_nodes(); ++a)
    for (int c = 0; c < 3; ++c)
      outer[3 * a + c + 1] = outer[3 * a + c] + 3 * static_cast<int>(adjacency[a].size());
  k.resizeNonZeros(outer.back());
  std::copy(outer.begin(), outer.end(), k.outerIndexPtr());
  int* inner = k.innerIndexPtr();
  for (int a = 0; a < mesh.n_nodes(); ++a)
    for (int c = 0; c < 3; ++c) {
      int pos = outer[3 * a + c];
      for (int b : adjacency[a])
        for (int r = 0; r < 3; ++r) inner[pos++] = 3 * b + r;
    }
  double* values = k.valuePtr();
  std::fill(values, values + outer.back(), 0.0);

  for (const auto& colour : colour_elements(mesh)) {
    const int n_in_colour = static_cast<int>(colour.size());
#pragma omp parallel for schedule(static) if (n_in_colour > parallel_threshold / 8)
    for (int i = 0; i < n_in_colour; ++i) {
      const Hex8& hex = mesh.hexes[colour[i]];
      const Matrix24d ke = hex8_stiffness(element_coordinates(mesh, hex), d);
      for (int a = 0; a < 8; ++a) {  // column node
        const auto& neighbours = adjacency[hex[a]];
        for (int b = 0; b < 8; ++b) {  // row node
          const int rank = static_cast<int>(
              std::lower_bound(neighbours.begin(), neighbours.end(), hex[b]) - neighbours.begin());
          for (int ca = 0; ca < 3; ++ca) {
            double* column = values + outer[3 * hex[a] + ca] + 3 * rank;
            for (int cb = 0; cb < 3; ++cb) column[cb] += ke(3 * b + cb, 3 * a + ca);
          }
        }
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

void DofPartition::split(const SparseMatrix& k, SparseMatrix& k_ff, SparseMatrix& k_fp) const {
  std::vector<Eigen::Triplet<double, int>> ff, fp;
  ff.reserve(static_cast<std::size_t>(k.nonZeros()));
  for (int col = 0; col < k.outerSize(); ++col)
    for (SparseMatrix::InnerIterator it(k, col); it; ++it) {
      const int row_free = free_index_[it.row()];
      if (row_free < 0) continue;
      if (free_index_[col] >= 0)
        ff.emplace_back(row_free, free_index_[col], it.value());
      else
        fp.emplace_back(row_free, prescribed_index_[col], it.value());
    }
  k_ff.resize(n_free(), n_free());
  k_ff.setFromTriplets(ff.begin(), ff.end());
  k_fp.resize(n_free(), n_prescribed());
  k_fp.setFromTriplets(fp.begin(), fp.end());
}

std::vector<Vector6d> element_stresses(const Mesh& mesh, const Matrix6d& d,
                                       const Eigen::VectorXd& u) {
  std::vector<Vector6d> stresses(mesh.hexes.size());
#pragma omp parallel for schedule(static) if (mesh.n_hexes() > parallel_threshold)
  for (int e = 0; e < mesh.n_hexes(); ++e) {
    const Hex8& hex = mesh.hexes[e];
    Vector24d u_e;
    for (int a = 0; a < 8; ++a) u_e.segment<3>(3 * a) = u.segment<3>(3 * hex[a]);
    stresses[e] = hex8_mean_stress(element_coordinates(mesh, hex), d, u_e);
  }
  return stresses;
}

}  // namespace bipo
