// Owns the small numerical helpers that the files of the per-node law share
// (machine epsilon, an overflow-safe 2-norm). Internal to src/contact/law
// (friction_law.hpp includes it for its inline norms): not part of the law's
// interface.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace bipo::law_detail {

constexpr double kEps = std::numeric_limits<double>::epsilon();

/// sqrt(a^2 + b^2) without overflow or underflow for any finite a, b (cheaper
/// than std::hypot on the common path: magnitudes within 1e+-150).
inline double norm2(double a, double b) {
  const double m = std::max(std::abs(a), std::abs(b));
  if (m > 1e-150 && m < 1e150) return std::sqrt(a * a + b * b);
  if (m == 0.0 || !std::isfinite(m)) return m;
  const int e = std::ilogb(m);
  const double sa = std::ldexp(a, -e);
  const double sb = std::ldexp(b, -e);
  return std::ldexp(std::sqrt(sa * sa + sb * sb), e);
}

}  // namespace bipo::law_detail
