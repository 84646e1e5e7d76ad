// Owns the built-in mesh generators: the punch cylinder (an O-grid) and the
// structured box used by the patch tests. Pure geometry: no finite elements.
#pragma once

#include <Eigen/Core>

#include "mesh/mesh.hpp"
#include "model/block.hpp"
#include "model/cylinder.hpp"

namespace bipo {

/// The punch cylinder of docs/physics.md section 4 as an O-grid, axis z, from z = 0 to
/// z = height.
///
/// Cross-section: a central square block of core x core elements with
/// half-side a = radius / (2 sqrt 2) (its corners on the circle r = radius/2),
/// and four ring blocks of `ring` radial x `core` circumferential elements
/// (4 core elements around). In a ring block the node at radial fraction s
/// (uniform unless graded, 0 on the square, 1 on the circle) is the linear
/// (transfinite) blend (1 - s) S + s C of the point S equally spaced along the
/// square's edge and the point C equally spaced in angle on the circle, so the
/// block's radial lines are straight and its diagonal lines run from the
/// square's corners to the circle at 45 degrees. The cross-section is extruded
/// in `layers` layers (equal unless graded).
///
/// Optional grading toward the rim edge (r = radius, z = 0), where the stress
/// under a bonded flat punch is singular: with q = rim_grading the ring k of
/// m gets the radial fraction s = 1 - ((m - k) / m)^q instead of k / m, so the
/// distance to the circle along each radial line follows the power law
/// ((m - k) / m)^q; with q = bottom_grading the layer l of L is at
/// z = height (l / L)^q. Both are smooth maps of a uniform parameter, so the
/// meshes with the same q and more elements are a mapped refinement. q = 1
/// (the default) gives the uniform mesh bit for bit.
///
/// One quadrant block is computed and the others are its exact rotations by
/// 90 degrees (the grading depends only on the ring and layer indices), so the
/// node positions are invariant (to the last bit) under rotations by 90
/// degrees about z and the reflections x -> -x, y -> -y.
/// Counts: layers * (core^2 + 4 core ring) hexahedra and
/// (layers + 1) * ((core + 1)^2 + 4 core ring) nodes; node and hexahedron tags
/// are 1..n. Node sets: `bottom` (z = 0), `top` (z = height), `lateral`
/// (r = radius), `all`. Throws InputError naming the parameter for values
/// outside the bounds above (non-finite ones included).
///
/// With sector = quarter: the hexahedra of the whole mesh that lie in
/// x >= 0, y >= 0 (a quarter of the counts, for an even `core`, which puts
/// grid lines on both axes), the same node positions, renumbered in the
/// whole mesh's order, and two more node sets, `symmetry_x0` (x = 0) and
/// `symmetry_y0` (y = 0), where a model of a mirror-symmetric case holds ux,
/// resp. uy, at zero. Throws InputError for an odd `core`.
[[nodiscard]] Mesh generate_cylinder(const CylinderParams& p);

/// The block of docs/case-file.md `mesh.block`: a structured box of
/// nx x ny x nz hexahedra for half-space contact tests, the contact face
/// z = 0 and the body in z >= 0. Along z, [0, Lz]; along x and y, [0, L]
/// where the direction ends on a symmetry plane (x for `half`, x and y for
/// `quarter`), else [-L/2, L/2]. Grading g (ratio of the largest to the
/// smallest element) makes the spans a geometric progression of ratio
/// g^(1 / (m - 1)) over the m elements from the contact point (x = 0,
/// y = 0, z = 0) outward: in a centred direction each half has n / 2 of them
/// and is the other's exact mirror image (n must be even unless g = 1); a
/// node then lies at 0 exactly. g = 1 gives the uniform i L / n.
/// Node (i, j, k) has index i + (nx + 1) (j + (ny + 1) k). Node sets: `bottom`
/// (z = 0), `top` (z = Lz), `xmin`, `xmax`, `ymin`, `ymax`, `zmin`, `zmax`,
/// `lateral` (the side faces that are not symmetry planes), `symmetry_x0`
/// (x = 0, half and quarter) and `symmetry_y0` (y = 0, quarter), `all`.
/// Throws InputError naming the parameter for values outside the bounds of
/// model/block.hpp.
[[nodiscard]] Mesh generate_block(const BlockParams& p);

/// A structured box [lo, hi] of nx x ny x nz hexahedra. Node (i, j, k) has
/// index i + (nx + 1) (j + (ny + 1) k). Node sets `xmin`, `xmax`, `ymin`,
/// `ymax`, `zmin`, `zmax` (boundary coordinates exactly lo / hi) and `all`.
/// Throws InputError unless lo < hi componentwise and nx, ny, nz >= 1.
[[nodiscard]] Mesh generate_box(Eigen::Vector3d lo, Eigen::Vector3d hi, int nx, int ny, int nz);

/// Moves every node that is not on the boundary of the mesh (the nodes of the
/// faces that belong to a single hexahedron) by a pseudo-random offset, for
/// patch tests. Each component of the offset is uniform in [-amplitude h,
/// amplitude h], h being the shortest hexahedron edge at the node (amplitude
/// is a fraction, e.g. 0.2). The sequence depends only on `seed` (std::mt19937
/// raw output). Offsets of the nodes of any hexahedron whose Jacobian
/// determinant would not be positive at its corners and Gauss points are
/// halved until every hexahedron is valid. Boundary nodes are untouched.
/// Throws InputError if amplitude is negative or not finite.
void distort_interior_nodes(Mesh& mesh, double amplitude, unsigned seed);

/// The hexahedral mesh `hexes` cut into 4-node tetrahedra, for tests and
/// studies of the tetrahedron: every hexahedron gets a node at its centroid
/// (appended after the mesh's nodes, in hexahedron order), each of its six
/// faces is cut into two triangles along the diagonal through the face's
/// smallest node index (so that the two hexahedra sharing a face cut it the
/// same way: the mesh is conforming), and each triangle is joined to the
/// centroid: 12 tetrahedra per hexahedron, in hexahedron order. The node
/// sets are kept (the centroids join only `all`); tags are 1..n. Throws
/// InputError if the mesh has elements other than hexahedra.
[[nodiscard]] Mesh split_into_tetrahedra(const Mesh& hexes);

/// The hexahedral mesh cut into 6-node wedges: hexahedron (0, ..., 7) gives
/// the wedges (0, 1, 2, 4, 5, 6) and (0, 2, 3, 4, 6, 7), cutting its faces
/// (0, 1, 2, 3) and (4, 5, 6, 7) along their diagonals 0-2 and 4-6. The
/// result is conforming for meshes where these faces are shared only as a
/// face 0123 of one hexahedron and 4567 of the other with the same node
/// correspondence, as in the extruded meshes of generate_cylinder and
/// generate_box (z layers). Same nodes and node sets; tags 1..n. Throws
/// InputError if the mesh has elements other than hexahedra.
[[nodiscard]] Mesh split_into_wedges(const Mesh& hexes);

}  // namespace bipo
