// Owns the parameters of the built-in block generator (a graded hexahedral
// box for half-space contact tests: sphere-, cylinder- or punch-on-flat) and
// their bounds, read by the case file (mesh.block). The generator itself is
// mesh/generate.hpp.
#pragma once

#include <array>

#include "model/cylinder.hpp"

namespace bipo {

/// Parameters of the block generator (see generate_block in src/mesh/generate.hpp).
struct BlockParams {
  std::array<double, 3> size{10.0, 10.0, 10.0};  ///< Lx, Ly, Lz [length]
  std::array<int, 3> elements{10, 10, 10};       ///< nx, ny, nz
  /// Per direction, the ratio of the largest to the smallest element of a
  /// graded span (geometric progression, smallest at the contact point or
  /// face); 1 = uniform.
  std::array<double, 3> grading{1.0, 1.0, 1.0};
  /// none: x and y centred on 0; half: x in [0, Lx] (x = 0 a symmetry plane),
  /// y centred; quarter: x in [0, Lx], y in [0, Ly]. Always z in [0, Lz].
  enum class Symmetry { none, half, quarter };
  Symmetry symmetry = Symmetry::none;
  bool operator==(const BlockParams&) const = default;
};

/// Bounds: lengths as the cylinder's, at most 10 000 elements per direction,
/// gradings in [1, 1e4] (the ratio of the largest to the smallest element
/// of a span), at most kMaxGeneratedNodes nodes.
inline constexpr double kMaxBlockGrading = 1e4;

/// The node count of generate_block(p), in 64 bits.
[[nodiscard]] inline long long block_node_count(const BlockParams& p) {
  return (static_cast<long long>(p.elements[0]) + 1) * (p.elements[1] + 1) * (p.elements[2] + 1);
}

/// Whether direction d (0 = x, 1 = y) is centred on 0 (else it starts at 0);
/// z never is.
[[nodiscard]] inline bool block_is_centred(const BlockParams& p, int d) {
  if (d == 2) return false;
  if (d == 0) return p.symmetry == BlockParams::Symmetry::none;
  return p.symmetry != BlockParams::Symmetry::quarter;
}

}  // namespace bipo
