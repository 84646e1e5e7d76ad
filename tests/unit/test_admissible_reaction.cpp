// admissible_reaction (contact/law/cone.hpp): the reaction a converged
// increment reports is in K_mu exactly, as norm_mu computes it (issue 11,
// item 12), and it is the Euclidean projection of the solver's reaction.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cmath>
#include <random>

#include "contact/law/law.hpp"

namespace bipo {
namespace {

using Eigen::Vector3d;

// Reactions near the cone's surface (outside and inside by a few 1e-10 of
// their size, as a converged iteration leaves them), far inside, and in the
// polar cone, over twelve orders of magnitude.
TEST(AdmissibleReaction, IsInTheConeExactlyAndIsTheProjection) {
  std::mt19937 generator(2024);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const FrictionLaw laws[] = {FrictionLaw::isotropic(0.2),
                              FrictionLaw::orthotropic(0.3, 0.15, 0.3, 0.15),
                              FrictionLaw::orthotropic(0.3, 0.15, 0.05, 0.2),
                              FrictionLaw::isotropic(1e6), FrictionLaw::isotropic(0.0)};
  int moved = 0;
  for (const FrictionLaw& law : laws) {
    for (int k = 0; k < 20000; ++k) {
      const double size = std::pow(10.0, -6.0 + 12.0 * uniform(generator));
      const double angle = 2.0 * 3.14159265358979 * uniform(generator);
      const int kind = k % 4;
      // A point of the surface r_n = |r_t|_mu, then nudged along r_n.
      Vector3d r(1.0, law.frictionless() ? 0.0 : law.mu1() * std::cos(angle),
                 law.frictionless() ? 0.0 : law.mu2() * std::sin(angle));
      if (kind == 0) r(0) *= 1.0 - 3e-10 * uniform(generator);  // just outside
      if (kind == 1) r(0) *= 1.0 + 3e-10 * uniform(generator);  // just inside
      if (kind == 2) r(0) *= 2.0;                               // well inside
      if (kind == 3) r(0) = -0.1 - uniform(generator);          // polar cone or beyond
      r *= size;
      const Vector3d a = admissible_reaction(r, law);
      ASSERT_GE(a(0), 0.0) << r.transpose();
      ASSERT_LE(law.norm_mu(a.tail<2>()), a(0)) << r.transpose();
      const Vector3d projection = project_onto_friction_cone(r, law).r;
      EXPECT_LE((a - projection).norm(), 4e-16 * r.norm()) << r.transpose();
      if (law.norm_mu(r.tail<2>()) < r(0)) {
        EXPECT_EQ(a, r);  // strictly inside: unchanged
      }
      if (a != projection) ++moved;
    }
  }
  // The correction of the projection's rounding was needed somewhere (else
  // this test would not show that it works).
  EXPECT_GT(moved, 0);
}

}  // namespace
}  // namespace bipo
