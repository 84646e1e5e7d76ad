#include "io/mesh_cells.hpp"

namespace bipo {

namespace {

template <std::size_t N>
void append(MixedCells& cells, VtkCellType type, const std::array<int, N>& nodes,
            const std::array<int, N>& vtk_order) {
  cells.types.push_back(type);
  for (const int a : vtk_order) cells.connectivity.push_back(nodes[static_cast<std::size_t>(a)]);
  cells.offsets.push_back(static_cast<int>(cells.connectivity.size()));
}

}  // namespace

MixedCells volume_cells(const Mesh& mesh) {
  MixedCells cells;
  const auto n = static_cast<std::size_t>(mesh.n_elements());
  cells.types.reserve(n);
  cells.offsets.reserve(n + 1);
  cells.connectivity.reserve(8 * mesh.hexes.size() + 6 * mesh.wedges.size() + 4 * mesh.tets.size());
  for (const Hex8& hex : mesh.hexes)
    append(cells, VtkCellType::hexahedron, hex, {0, 1, 2, 3, 4, 5, 6, 7});
  for (const Wedge6& wedge : mesh.wedges)
    append(cells, VtkCellType::wedge, wedge, {0, 2, 1, 3, 5, 4});
  for (const Tet4& tet : mesh.tets) append(cells, VtkCellType::tetra, tet, {0, 1, 2, 3});
  return cells;
}

MixedCells face_cells(const std::vector<std::array<int, 4>>& quads,
                      const std::vector<std::array<int, 3>>& triangles) {
  MixedCells cells;
  for (const auto& quad : quads) append(cells, VtkCellType::quad, quad, {0, 1, 2, 3});
  for (const auto& triangle : triangles) append(cells, VtkCellType::triangle, triangle, {0, 1, 2});
  return cells;
}

}  // namespace bipo
