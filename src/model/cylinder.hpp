// Owns the parameters of the built-in punch cylinder generator and their
// bounds, shared by the case file (mesh.cylinder) and `bipo mesh cylinder`.
// The generator itself is mesh/generate.hpp.
#pragma once

namespace bipo {

/// Parameters of the punch cylinder generator (O-grid, see src/mesh/generate.hpp).
struct CylinderParams {
  double radius = 10.0;
  double height = 10.0;
  int core = 8;    ///< elements along each side of the central square block
  int ring = 8;    ///< radial elements of each ring block
  int layers = 4;  ///< elements along the axis
  /// Grading toward the rim r = radius in the ring blocks: the radial fraction
  /// s in [0, 1] becomes 1 - (1 - s)^rim_grading (>= 1; 1 = uniform).
  double rim_grading = 1.0;
  /// Grading toward the bottom face z = 0: layer coordinate zeta in [0, 1]
  /// gives z = height zeta^bottom_grading (>= 1; 1 = uniform).
  double bottom_grading = 1.0;
  /// The whole cylinder, or its quarter x >= 0, y >= 0 (for models that use
  /// the mirror symmetries of a case; needs an even `core`).
  enum class Sector { full, quarter };
  Sector sector = Sector::full;
  bool operator==(const CylinderParams&) const = default;
};

/// Bounds of the cylinder generator's parameters, the same for the case file
/// (mesh.cylinder, docs/case-file.md) and `bipo mesh cylinder`: lengths in
/// [1e-9, 1e9], at most 10 000 divisions along each of core, ring and layers,
/// gradings in [1, 10] (q = 10 already makes the outermost of 8 rings 1e-9 of
/// the block's width), and at most 10^7 nodes, checked before anything is
/// allocated (a node costs about 1 KB through the solve).
inline constexpr double kMinCylinderLength = 1e-9;
inline constexpr double kMaxCylinderLength = 1e9;
inline constexpr int kMaxCylinderDivisions = 10'000;
inline constexpr double kMaxCylinderGrading = 10.0;
inline constexpr long long kMaxGeneratedNodes = 10'000'000;

/// The node count of generate_cylinder(p): (layers + 1) ((core + 1)^2 +
/// 4 core ring), in 64 bits (no overflow for divisions up to 10^6).
[[nodiscard]] inline long long cylinder_node_count(const CylinderParams& p) {
  const long long c = p.core, r = p.ring, l = p.layers;
  return (l + 1) * ((c + 1) * (c + 1) + 4 * c * r);
}

}  // namespace bipo
