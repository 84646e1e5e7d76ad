// Owns geometric checks and queries on meshes of hexahedra, wedges and
// tetrahedra: Jacobian determinants of the element maps, element volumes,
// boundary faces.
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

/// Smallest Jacobian determinant of wedge w (index into mesh.wedges) over its
/// six integration points (fem/solid_elements.hpp); NaN if one of them is NaN.
[[nodiscard]] double wedge_min_gauss_jacobian(const Mesh& mesh, int w);

/// Six times the signed volume of tetrahedron t (index into mesh.tets), the
/// (constant) Jacobian determinant of its map.
[[nodiscard]] double tet_jacobian_det(const Mesh& mesh, int t);

/// check_hex_jacobians, then the same for the wedges (at their six
/// integration points) and the tetrahedra. A tetrahedron is also refused as
/// degenerate when its volume is below 1e-12 times the cube of its longest
/// edge (a flat sliver whose stiffness would be singular to rounding).
/// The message names `source`, the element's kind and file tag, and how many
/// elements are bad. Throws InputError for a mesh without elements.
void check_element_jacobians(const Mesh& mesh, const std::string& source);

/// The boundary quadrilateral faces (faces of exactly one hexahedron) whose
/// four nodes all belong to `set` (node indices, any order). Each face is
/// listed once, its nodes counter-clockwise seen from outside the body (the
/// right-hand normal points out of the hexahedron). Faces come in hexahedron
/// order, then in the local order zeta = -1, zeta = +1, eta = -1, xi = +1,
/// eta = +1, xi = -1.
[[nodiscard]] std::vector<std::array<int, 4>> faces_on_node_set(const Mesh& mesh,
                                                                const std::vector<int>& set);

/// The boundary faces of every element kind on a node set: quadrilaterals
/// (of hexahedra and wedges) and triangles (of wedges and tetrahedra), each
/// listed once, nodes counter-clockwise seen from outside. A face shared by
/// two elements (of any kinds) is interior. `quads` is faces_on_node_set.
struct BoundaryFaces {
  std::vector<std::array<int, 4>> quads;
  std::vector<std::array<int, 3>> triangles;
};
[[nodiscard]] BoundaryFaces boundary_faces_on_node_set(const Mesh& mesh,
                                                       const std::vector<int>& set);

}  // namespace bipo
