// Owns the in-memory mesh: node coordinates, trilinear hexahedra in Gmsh node
// ordering, and named node sets. Knows nothing of finite elements or physics.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace bipo {

/// Eight node indices of a trilinear hexahedron, Gmsh ordering: nodes 0-3 are
/// the face zeta = -1 counter-clockwise seen from zeta = +1 (reference
/// vertices (-1,-1,-1), (1,-1,-1), (1,1,-1), (-1,1,-1)), nodes 4-7 the face
/// zeta = +1 in the same order.
using Hex8 = std::array<int, 8>;

/// A hexahedral mesh with named node sets (SPEC.md section 1).
struct Mesh {
  std::vector<Eigen::Vector3d> nodes;  ///< reference positions X
  std::vector<Hex8> hexes;             ///< 0-based node indices
  std::vector<std::size_t> node_tags;  ///< file tag of each node (1-based for generated meshes)
  std::vector<std::size_t> hex_tags;   ///< file tag of each hexahedron (for messages)
  std::map<std::string, std::vector<int>> node_sets;  ///< sorted, unique node indices

  [[nodiscard]] int n_nodes() const { return static_cast<int>(nodes.size()); }
  [[nodiscard]] int n_hexes() const { return static_cast<int>(hexes.size()); }

  /// The named set, or throws InputError listing the available names.
  [[nodiscard]] const std::vector<int>& node_set(const std::string& name) const;
};

}  // namespace bipo
