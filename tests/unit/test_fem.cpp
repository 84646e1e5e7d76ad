// Unit tests of the hex8 kernel and the assembly (src/fem): exact properties
// that any correct implementation has.
#include <gtest/gtest.h>
#include <omp.h>

#include <Eigen/Eigenvalues>
#include <set>

#include "fem/elasticity.hpp"
#include "mesh/generate.hpp"

namespace bipo {
namespace {

HexCoordinates skewed_hex() {
  HexCoordinates x = hex8_reference_nodes();
  x.col(0) *= 1.5;
  x(6, 0) += 0.3;
  x(6, 2) += 0.2;
  x(1, 1) -= 0.1;
  return x;
}

TEST(Hex8, StiffnessIsSymmetricWithSixRigidBodyModes) {
  const Matrix24d k = hex8_stiffness(skewed_hex(), isotropic_elasticity(1000.0, 0.25));
  EXPECT_LT((k - k.transpose()).norm(), 1e-12 * k.norm());
  const Eigen::SelfAdjointEigenSolver<Matrix24d> eigen(k);
  const auto& values = eigen.eigenvalues();
  for (int i = 0; i < 6; ++i) EXPECT_LT(std::abs(values(i)), 1e-10 * values(23)) << i;
  EXPECT_GT(values(6), 1e-4 * values(23));  // no spurious zero-energy mode (full 2x2x2 rule)
}

TEST(Hex8, VolumeFromJacobiansAndMeanStressOfUniformStrain) {
  const HexCoordinates x = skewed_hex();
  Eigen::Matrix<double, 6, 24> b;
  double det_j = 0.0, volume = 0.0;
  for (int g = 0; g < 8; ++g) {
    hex8_strain_displacement(x, hex8_gauss_points().row(g).transpose(), b, det_j);
    volume += det_j;
  }
  // The 2x2x2 rule integrates det J (a polynomial of degree <= 2 per
  // direction) exactly: compare with the divergence-theorem volume of the
  // trilinear element computed by a fine midpoint rule.
  double fine = 0.0;
  const int n = 40;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int l = 0; l < n; ++l) {
        const Eigen::Vector3d xi(-1 + (2 * i + 1.0) / n, -1 + (2 * j + 1.0) / n,
                                 -1 + (2 * l + 1.0) / n);
        hex8_strain_displacement(x, xi, b, det_j);
        fine += det_j * 8.0 / (n * n * n);
      }
  EXPECT_NEAR(volume, fine, 1e-3 * volume);
  // A uniform strain gives the stress D eps exactly.
  Vector24d u;
  Eigen::Matrix3d grad;
  grad << 1e-3, 2e-4, 0, 0, -5e-4, 3e-4, 1e-4, 0, 2e-3;
  for (int a = 0; a < 8; ++a) u.segment<3>(3 * a) = grad * x.row(a).transpose();
  Vector6d eps;
  eps << grad(0, 0), grad(1, 1), grad(2, 2), grad(1, 2) + grad(2, 1), grad(0, 2) + grad(2, 0),
      grad(0, 1) + grad(1, 0);
  const Matrix6d d = isotropic_elasticity(1000.0, 0.25);
  EXPECT_LT((hex8_mean_stress(x, d, u) - d * eps).norm(), 1e-12 * (d * eps).norm());
}

TEST(Hex8, VonMisesOfUniaxialAndShearStress) {
  Vector6d s = Vector6d::Zero();
  s(2) = -7.0;
  EXPECT_NEAR(von_mises(s), 7.0, 1e-14);
  s.setZero();
  s(5) = 2.0;
  EXPECT_NEAR(von_mises(s), 2.0 * std::sqrt(3.0), 1e-14);
}

TEST(Assembly, ColoursShareNoNode) {
  const Mesh mesh = generate_cylinder({});
  const auto colours = colour_elements(mesh);
  std::size_t total = 0;
  for (const auto& colour : colours) {
    std::set<int> seen;
    for (int e : colour)
      for (int node : mesh.hexes[e]) EXPECT_TRUE(seen.insert(node).second);
    total += colour.size();
  }
  EXPECT_EQ(total, mesh.hexes.size());
  EXPECT_LE(colours.size(), 16u);
}

TEST(Assembly, BitwiseDeterministicAcrossThreadCountsAndEqualToSerialSum) {
  Mesh mesh = generate_cylinder({10.0, 10.0, 4, 4, 2});
  const Matrix6d d = isotropic_elasticity(210000.0, 0.3);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const SparseMatrix one = assemble_stiffness(mesh, d);
  omp_set_num_threads(std::max(2, threads));
  const SparseMatrix many = assemble_stiffness(mesh, d);
  omp_set_num_threads(threads);
  ASSERT_EQ(one.nonZeros(), many.nonZeros());
  for (Eigen::Index k = 0; k < one.nonZeros(); ++k)
    ASSERT_EQ(one.valuePtr()[k], many.valuePtr()[k]);
  // Against a plain triplet assembly (different summation order: equal to round-off).
  std::vector<Eigen::Triplet<double, int>> triplets;
  for (const auto& hex : mesh.hexes) {
    HexCoordinates x;
    for (int a = 0; a < 8; ++a) x.row(a) = mesh.nodes[hex[a]].transpose();
    const Matrix24d ke = hex8_stiffness(x, d);
    for (int a = 0; a < 8; ++a)
      for (int b = 0; b < 8; ++b)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            triplets.emplace_back(3 * hex[a] + i, 3 * hex[b] + j, ke(3 * a + i, 3 * b + j));
  }
  SparseMatrix reference(one.rows(), one.cols());
  reference.setFromTriplets(triplets.begin(), triplets.end());
  EXPECT_LT((SparseMatrix(one - reference)).norm(), 1e-13 * reference.norm());
  // Symmetric, with the rigid translations in its null space.
  EXPECT_LT((SparseMatrix(one - SparseMatrix(one.transpose()))).norm(), 1e-12 * one.norm());
  Eigen::VectorXd translation = Eigen::VectorXd::Zero(one.rows());
  for (Eigen::Index i = 0; i < one.rows(); i += 3) translation(i) = 1.0;
  EXPECT_LT((one * translation).norm(), 1e-9 * one.norm());
}

}  // namespace
}  // namespace bipo
