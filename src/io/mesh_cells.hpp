// Owns the translation of bipo's mesh and contact faces into VTK cells: the
// cell type of each element kind and VTK's node order (Gmsh's hexahedron,
// tetrahedron, quadrilateral and triangle orders are VTK's; Gmsh's prism is
// VTK's wedge with both triangles reversed, VTK wanting the normal of its
// first triangle to point out of the cell).
#pragma once

#include <array>
#include <vector>

#include "io/vtk_output.hpp"
#include "mesh/mesh.hpp"

namespace bipo {

/// The volume elements in the mesh's element numbering (mesh.hpp).
[[nodiscard]] MixedCells volume_cells(const Mesh& mesh);

/// Quadrilaterals, then triangles (e.g. the contact face).
[[nodiscard]] MixedCells face_cells(const std::vector<std::array<int, 4>>& quads,
                                    const std::vector<std::array<int, 3>>& triangles);

}  // namespace bipo
