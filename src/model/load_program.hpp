// Owns the load programs of an analysis (docs/physics.md section 4): piecewise linear
// factors of the increment number, with the cycles of `repeat` blocks. The
// case reader builds them; the solver evaluates them.
#pragma once

#include <vector>

namespace bipo {

/// One straight segment of a load program: the factor goes linearly from the
/// previous segment's target (0 at the start) to `target` in `n_increments`.
struct LoadSegment {
  double target = 0.0;
  int n_increments = 1;
  int cycle = 0;  ///< 0 outside a `repeat` block, k for its k-th repetition
};

/// A piecewise linear load program, starting from factor 0.
struct LoadProgram {
  std::vector<LoadSegment> segments;

  /// Total number of increments.
  [[nodiscard]] int n_increments() const;
  /// Factor at the end of increment k (k = 1..n_increments()); factor(0) = 0.
  /// Fractional k (cut increments) interpolates linearly within a segment.
  /// Throws std::out_of_range outside [0, n_increments()].
  [[nodiscard]] double factor(double k) const;
  /// Cycle of increment k (1-based): the `cycle` of the segment it belongs to;
  /// cycle(0) = 0. Throws std::out_of_range outside [0, n_increments()].
  [[nodiscard]] int cycle(int k) const;
  /// Number of cycles (largest segment cycle).
  [[nodiscard]] int n_cycles() const;
  /// The turning points of the factor, per increment k = 0..n_increments():
  /// +1 where k ends a rising segment and the next segment that is not a
  /// hold falls (a local maximum), -1 for the mirror case (a local minimum),
  /// 0 elsewhere. The end of the program is no turning point.
  [[nodiscard]] std::vector<int> extremes() const;
};

}  // namespace bipo
