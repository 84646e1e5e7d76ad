// Owns the in-memory mesh: node coordinates, the volume elements (trilinear
// hexahedra, linear wedges and linear tetrahedra, Gmsh node ordering), and
// named node sets. Knows nothing of finite elements or physics.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace bipo {

/// Eight node indices of a trilinear hexahedron, Gmsh ordering: nodes 0-3 are
/// the face zeta = -1 counter-clockwise seen from zeta = +1 (reference
/// vertices (-1,-1,-1), (1,-1,-1), (1,1,-1), (-1,1,-1)), nodes 4-7 the face
/// zeta = +1 in the same order.
using Hex8 = std::array<int, 8>;

/// Six node indices of a linear wedge (Gmsh "Prism 6"): nodes 0-2 the
/// triangle zeta = -1 (reference (0,0), (1,0), (0,1)), counter-clockwise seen
/// from zeta = +1, nodes 3-5 the triangle zeta = +1 in the same order.
using Wedge6 = std::array<int, 6>;

/// Four node indices of a linear tetrahedron (Gmsh "Tetrahedron 4"):
/// reference vertices (0,0,0), (1,0,0), (0,1,0), (0,0,1), so that a valid
/// element has (x1 - x0) x (x2 - x0) . (x3 - x0) > 0.
using Tet4 = std::array<int, 4>;

/// The kinds of volume element, in the order the mesh numbers them.
enum class ElementKind { hexahedron, wedge, tetrahedron };

/// A mesh of volume elements with named node sets (docs/physics.md section 1).
///
/// Elements are numbered hexahedra first, then wedges, then tetrahedra:
/// element e < n_hexes() is hexes[e], and so on. Every per-element result
/// (stresses, VTK cells) follows this numbering. A mesh may mix the kinds.
struct Mesh {
  std::vector<Eigen::Vector3d> nodes;  ///< reference positions X
  std::vector<Hex8> hexes;             ///< 0-based node indices
  std::vector<std::size_t> node_tags;  ///< file tag of each node (1-based for generated meshes)
  std::vector<std::size_t> hex_tags;   ///< file tag of each hexahedron (for messages)
  std::map<std::string, std::vector<int>> node_sets;  ///< sorted, unique node indices
  std::vector<Wedge6> wedges;                         ///< 0-based node indices
  std::vector<std::size_t> wedge_tags;                ///< file tag of each wedge
  std::vector<Tet4> tets;                             ///< 0-based node indices
  std::vector<std::size_t> tet_tags;                  ///< file tag of each tetrahedron

  [[nodiscard]] int n_nodes() const { return static_cast<int>(nodes.size()); }
  [[nodiscard]] int n_hexes() const { return static_cast<int>(hexes.size()); }
  [[nodiscard]] int n_wedges() const { return static_cast<int>(wedges.size()); }
  [[nodiscard]] int n_tets() const { return static_cast<int>(tets.size()); }
  [[nodiscard]] int n_elements() const { return n_hexes() + n_wedges() + n_tets(); }

  /// Kind of element e (numbering above).
  [[nodiscard]] ElementKind element_kind(int e) const;
  /// Node indices of element e (8, 6 or 4 of them).
  [[nodiscard]] std::span<const int> element_nodes(int e) const;
  /// File tag of element e (e + 1 when the mesh has no tags of that kind).
  [[nodiscard]] std::size_t element_tag(int e) const;

  /// The named set, or throws InputError listing the available names.
  [[nodiscard]] const std::vector<int>& node_set(const std::string& name) const;
};

/// The element counts for messages: "1280 hexahedra", or for other and mixed
/// meshes e.g. "40 hexahedra, 12 wedges, 310 tetrahedra" (kinds with none
/// left out).
[[nodiscard]] std::string describe_elements(const Mesh& mesh);

/// "hexahedron", "wedge" or "tetrahedron".
[[nodiscard]] const char* element_kind_name(ElementKind kind);

}  // namespace bipo
