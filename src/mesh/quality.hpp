// Owns geometric checks and queries on hexahedral meshes: Jacobian
// determinants of the trilinear map, element volumes, boundary faces.
#pragma once

#include <Eigen/Core>
#include <array>
#include <string>
#include <vector>

#include "mesh/mesh.hpp"

namespace bipo {

/// Determinant of the Jacobian of hexahedron e's trilinear map at the
/// reference point (xi, eta, zeta) in [-1, 1]^3 (Gmsh hex8 ordering).
[[nodiscard]] double hex_jacobian_det(const Mesh& mesh, int e, const Eigen::Vector3d& xi);

/// Smallest Jacobian determinant of hexahedron e over its 2x2x2 Gauss points
/// (+-1/sqrt(3)); NaN if one of them is NaN.
[[nodiscard]] double hex_min_gauss_jacobian(const Mesh& mesh, int e);

/// Volume of hexahedron e (2x2x2 Gauss rule, exact for the trilinear map).
[[nodiscard]] double hex_volume(const Mesh& mesh, int e);

/// Throws InputError if any hexahedron has a Jacobian determinant <= 0, NaN
/// or infinite at one of its 2x2x2 Gauss points. The message names `source` (e.g. the mesh
/// file), the tag of the first bad hexahedron, its minimum determinant and how
/// many hexahedra are bad. Also checks that node indices are in range.
void check_hex_jacobians(const Mesh& mesh, const std::string& source);

/// The boundary quadrilateral faces (faces of exactly one hexahedron) whose
/// four nodes all belong to `set` (node indices, any order). Each face is
/// listed once, its nodes counter-clockwise seen from outside the body (the
/// right-hand normal points out of the hexahedron). Faces come in hexahedron
/// order, then in the local order zeta = -1, zeta = +1, eta = -1, xi = +1,
/// eta = +1, xi = -1.
[[nodiscard]] std::vector<std::array<int, 4>> faces_on_node_set(const Mesh& mesh,
                                                                const std::vector<int>& set);

}  // namespace bipo
