// Unit tests of the hex8 kernel and the assembly (src/fem): exact properties
// that any correct implementation has.
#include <gtest/gtest.h>
#include <omp.h>

#include <Eigen/Eigenvalues>
#include <set>

#include "fem/elasticity.hpp"
#include "fem/solid_elements.hpp"
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

TetCoordinates skewed_tet() {
  TetCoordinates x;
  x << 0.1, 0.0, 0.2, 1.3, 0.1, 0.0, 0.2, 0.9, 0.1, 0.3, 0.2, 1.1;
  return x;
}

WedgeCoordinates skewed_wedge() {
  WedgeCoordinates x;
  x << 0, 0, 0, 1.2, 0.1, 0.05, 0.1, 0.9, -0.05,  //
      0.1, 0.05, 1.0, 1.3, 0.2, 1.2, 0.15, 1.0, 0.9;
  return x;
}

/// Affine strain field u = A x: its element strain and D eps are exact for any
/// element that passes the patch test.
template <int N>
Eigen::Matrix<double, 3 * N, 1> affine_field(const Eigen::Matrix<double, N, 3>& x,
                                             const Eigen::Matrix3d& a) {
  Eigen::Matrix<double, 3 * N, 1> u;
  for (int n = 0; n < N; ++n) u.template segment<3>(3 * n) = a * x.row(n).transpose();
  return u;
}

Vector6d voigt_strain(const Eigen::Matrix3d& a) {
  Vector6d eps;
  eps << a(0, 0), a(1, 1), a(2, 2), a(1, 2) + a(2, 1), a(0, 2) + a(2, 0), a(0, 1) + a(1, 0);
  return eps;
}

TEST(Tet4, StiffnessHasSixRigidModesVolumeAndExactStress) {
  const Matrix6d d = isotropic_elasticity(1000.0, 0.25);
  const TetCoordinates x = skewed_tet();
  const Matrix12d k = tet4_stiffness(x, d);
  EXPECT_LT((k - k.transpose()).norm(), 1e-12 * k.norm());
  const Eigen::SelfAdjointEigenSolver<Matrix12d> eigen(k);
  for (int i = 0; i < 6; ++i) EXPECT_LT(std::abs(eigen.eigenvalues()(i)), 1e-10 * k.norm()) << i;
  EXPECT_GT(eigen.eigenvalues()(6), 1e-4 * eigen.eigenvalues()(11));
  Eigen::Matrix<double, 6, 12> b;
  double det_j = 0.0;
  tet4_strain_displacement(x, b, det_j);
  // det J = (x1 - x0) . ((x2 - x0) x (x3 - x0)), six times the volume.
  const Eigen::Vector3d e1 = (x.row(1) - x.row(0)).transpose(),
                        e2 = (x.row(2) - x.row(0)).transpose(),
                        e3 = (x.row(3) - x.row(0)).transpose();
  EXPECT_NEAR(det_j, e1.dot(e2.cross(e3)), 1e-14);
  Eigen::Matrix3d a;
  a << 1e-3, 2e-4, -3e-4, 5e-4, -2e-3, 1e-4, -4e-4, 3e-4, 1.5e-3;
  const Vector6d sigma = d * voigt_strain(a);
  EXPECT_LT((tet4_stress(x, d, affine_field<4>(x, a)) - sigma).norm(), 1e-12 * sigma.norm());
  // Energy of the affine field: u^T K u = V eps^T D eps.
  const Vector12d u = affine_field<4>(x, a);
  EXPECT_NEAR(u.dot(k * u), det_j / 6.0 * voigt_strain(a).dot(sigma), 1e-12 * u.dot(k * u));
}

TEST(Wedge6, StiffnessHasSixRigidModesVolumeAndExactStress) {
  const Matrix6d d = isotropic_elasticity(1000.0, 0.25);
  const WedgeCoordinates x = skewed_wedge();
  const Matrix18d k = wedge6_stiffness(x, d);
  EXPECT_LT((k - k.transpose()).norm(), 1e-12 * k.norm());
  const Eigen::SelfAdjointEigenSolver<Matrix18d> eigen(k);
  for (int i = 0; i < 6; ++i) EXPECT_LT(std::abs(eigen.eigenvalues()(i)), 1e-10 * k.norm()) << i;
  EXPECT_GT(eigen.eigenvalues()(6), 1e-4 * eigen.eigenvalues()(17));  // no hourglass mode
  // The volume of the unit right prism (triangle area 1/2, height 1) is the
  // sum of w_g det J.
  WedgeCoordinates unit;
  unit << 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1, 1;
  Eigen::Matrix<double, 6, 18> b;
  double det_j = 0.0, volume = 0.0;
  for (int g = 0; g < 6; ++g) {
    wedge6_strain_displacement(unit, wedge6_gauss_points().row(g).transpose(), b, det_j);
    volume += det_j / 6.0;
  }
  EXPECT_NEAR(volume, 0.5, 1e-15);
  Eigen::Matrix3d a;
  a << 1e-3, 2e-4, -3e-4, 5e-4, -2e-3, 1e-4, -4e-4, 3e-4, 1.5e-3;
  const Vector6d sigma = d * voigt_strain(a);
  EXPECT_LT((wedge6_mean_stress(x, d, affine_field<6>(x, a)) - sigma).norm(), 1e-12 * sigma.norm());
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

// The lower triangle assembled alone is the whole matrix's, bit for bit (the
// same contributions in the same order), on one thread and several.
TEST(Assembly, LowerTriangleIsTheWholeMatrixsLowerTriangleBitForBit) {
  const Mesh mesh = generate_cylinder({10.0, 10.0, 4, 4, 2});
  const Matrix6d d = isotropic_elasticity(210000.0, 0.3);
  const SparseMatrix whole = assemble_stiffness(mesh, d);
  const int threads = omp_get_max_threads();
  for (const int n_threads : {1, std::max(2, threads)}) {
    omp_set_num_threads(n_threads);
    const SparseMatrix lower = assemble_stiffness(mesh, d, StoredTriangle::lower);
    ASSERT_TRUE(lower.isCompressed());
    ASSERT_EQ(lower.rows(), whole.rows());
    Eigen::Index expected_entries = 0;
    for (int col = 0; col < whole.outerSize(); ++col) {
      SparseMatrix::InnerIterator kept(lower, col);
      for (SparseMatrix::InnerIterator it(whole, col); it; ++it) {
        if (it.row() < col) continue;
        ++expected_entries;
        ASSERT_TRUE(kept) << "column " << col;
        ASSERT_EQ(kept.row(), it.row());
        ASSERT_EQ(kept.value(), it.value());
        ++kept;
      }
      ASSERT_FALSE(kept) << "an extra entry in column " << col;
    }
    EXPECT_EQ(lower.nonZeros(), expected_entries);
  }
  omp_set_num_threads(threads);
}

// The blocks split from the lower triangle are the blocks of the symmetric
// matrix that it stands for, exactly: free and prescribed dofs interleaved
// (whole nodes and single components), K_fp and K_pp from entries on either
// side of the diagonal. (The whole assembled K is symmetric to round-off
// only, as its elements' matrices are: its upper triangle is not read.)
TEST(DofPartition, SplitOfTheLowerTriangleGivesTheBlocksOfTheWholeMatrix) {
  const Mesh mesh = generate_cylinder({10.0, 10.0, 4, 4, 2});
  const Matrix6d d = isotropic_elasticity(210000.0, 0.3);
  const SparseMatrix whole = assemble_stiffness(mesh, d);
  Eigen::MatrixXd k = Eigen::MatrixXd(whole).triangularView<Eigen::Lower>();
  k.triangularView<Eigen::StrictlyUpper>() = k.transpose();
  std::vector<bool> prescribed(static_cast<std::size_t>(k.rows()), false);
  for (int node : mesh.node_set("top"))
    for (int c = 0; c < 3; ++c) prescribed[3 * node + c] = true;
  for (std::size_t dof = 5; dof < prescribed.size(); dof += 7) prescribed[dof] = true;
  const DofPartition partition(prescribed);
  SparseMatrix k_ff_lower, k_fp, k_pp;
  partition.split_lower_triangle(assemble_stiffness(mesh, d, StoredTriangle::lower), k_ff_lower,
                                 k_fp, &k_pp);
  const std::vector<int>& free = partition.free_dofs();
  const std::vector<int>& held = partition.prescribed_dofs();
  const Eigen::MatrixXd k_ff = k(free, free);
  EXPECT_EQ(Eigen::MatrixXd(k_ff_lower), Eigen::MatrixXd(k_ff.triangularView<Eigen::Lower>()));
  EXPECT_EQ(Eigen::MatrixXd(k_fp), Eigen::MatrixXd(k(free, held)));
  EXPECT_EQ(Eigen::MatrixXd(k_pp), Eigen::MatrixXd(k(held, held)));
  // Stored in exactly the entries of the pattern's free-free lower part (no
  // spare room; entries that happen to be zero kept, as in K).
  Eigen::Index pattern_entries = 0;
  for (int col = 0; col < whole.outerSize(); ++col)
    for (SparseMatrix::InnerIterator it(whole, col); it; ++it)
      if (it.row() >= col && !prescribed[it.row()] && !prescribed[col]) ++pattern_entries;
  EXPECT_TRUE(k_ff_lower.isCompressed());
  EXPECT_EQ(k_ff_lower.nonZeros(), pattern_entries);
  EXPECT_EQ(k_ff_lower.nonZeros(), static_cast<Eigen::Index>(k_ff_lower.data().allocatedSize()));
}

TEST(DofPartition, SplitOfTheLowerTriangleRefusesAMatrixWithEntriesAboveTheDiagonal) {
  const Mesh mesh = generate_cylinder({10.0, 10.0, 2, 2, 1});
  const SparseMatrix whole = assemble_stiffness(mesh, isotropic_elasticity(210000.0, 0.3));
  const DofPartition partition(std::vector<bool>(static_cast<std::size_t>(whole.rows()), false));
  SparseMatrix k_ff_lower, k_fp;
  EXPECT_THROW(partition.split_lower_triangle(whole, k_ff_lower, k_fp), std::logic_error);
}

}  // namespace
}  // namespace bipo
