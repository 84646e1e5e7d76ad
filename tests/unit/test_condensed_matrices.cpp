// CondensedMatrices (contact/condensed_matrices.hpp): S and W = S^-1 in one
// buffer, S's lower triangle and W's upper one. Against the whole matrices
// they stand for (a random SPD S, W its inverse by Eigen's Cholesky): every
// entry and 3 x 3 block read back bit for bit, the products (whole, a node's
// columns, a row of W) equal to the whole matrices' to round-off, the
// writes of blocks keeping both symmetric, and the pair no larger than one
// matrix of size n + 1 by n.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <random>
#include <stdexcept>

#include "contact/condensed_matrices.hpp"
#include "contact/condensed_problem.hpp"
#include "core/errors.hpp"

namespace bipo {
namespace {

constexpr int kNodes = 7;
constexpr int kSize = 3 * kNodes;

struct WholePair {
  Eigen::MatrixXd s, w;
};

/// A random SPD S (exactly symmetric) and W = S^-1, made exactly symmetric
/// from its lower triangle.
WholePair random_pair(unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Eigen::MatrixXd r(kSize, kSize);
  for (int j = 0; j < kSize; ++j)
    for (int i = 0; i < kSize; ++i) r(i, j) = uniform(generator);
  WholePair pair;
  pair.s = r * r.transpose() + kSize * Eigen::MatrixXd::Identity(kSize, kSize);
  pair.s.triangularView<Eigen::StrictlyUpper>() = pair.s.transpose();
  pair.w = pair.s.llt().solve(Eigen::MatrixXd::Identity(kSize, kSize));
  pair.w.triangularView<Eigen::StrictlyUpper>() = pair.w.transpose();
  return pair;
}

Eigen::VectorXd random_vector(unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  Eigen::VectorXd x(kSize);
  for (int k = 0; k < kSize; ++k) x(k) = uniform(generator);
  return x;
}

double relative_error(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return (a - b).lpNorm<Eigen::Infinity>() / b.lpNorm<Eigen::Infinity>();
}

TEST(CondensedMatrices, ReadsBackEveryEntryAndBlockOfTheWholeMatrices) {
  const WholePair whole = random_pair(3);
  const CondensedMatrices pair = CondensedMatrices::from_whole(whole.s, whole.w);
  ASSERT_EQ(pair.size(), kSize);
  EXPECT_EQ(pair.leading_dimension(), kSize + 1);
  EXPECT_TRUE(pair.whole_stiffness() == whole.s);
  EXPECT_TRUE(pair.whole_delassus() == whole.w);
  for (int j = 0; j < kSize; ++j)
    for (int i = 0; i < kSize; ++i) {
      EXPECT_EQ(pair.stiffness(i, j), whole.s(i, j));
      EXPECT_EQ(pair.delassus(i, j), whole.w(i, j));
    }
  for (int j = 0; j < kNodes; ++j)
    for (int i = 0; i < kNodes; ++i) {
      const Eigen::Matrix3d s_ij = whole.s.block<3, 3>(3 * i, 3 * j);
      const Eigen::Matrix3d w_ij = whole.w.block<3, 3>(3 * i, 3 * j);
      EXPECT_TRUE(pair.stiffness_block(i, j) == s_ij) << i << " " << j;
      EXPECT_TRUE(pair.delassus_block(i, j) == w_ij) << i << " " << j;
    }
}

TEST(CondensedMatrices, ProductsEqualTheWholeMatricesProducts) {
  const WholePair whole = random_pair(5);
  const CondensedMatrices pair = CondensedMatrices::from_whole(whole.s, whole.w);
  const Eigen::VectorXd x = random_vector(7), start = random_vector(11);
  Eigen::VectorXd y = start;
  pair.add_stiffness_product(x, y);
  EXPECT_LE(relative_error(y, start + whole.s * x), 1e-14);
  y = start;
  pair.add_delassus_product(x, y);
  EXPECT_LE(relative_error(y, start + whole.w * x), 1e-14);
  // A node's three columns: the first node, one inside, the last.
  for (const int node : {0, 3, kNodes - 1}) {
    const Eigen::Vector3d x_node = x.segment<3>(3 * node);
    y = start;
    pair.add_stiffness_columns(node, x_node, y);
    EXPECT_LE(relative_error(y, start + whole.s.middleCols<3>(3 * node) * x_node), 1e-14) << node;
    y = start;
    pair.add_delassus_columns(node, x_node, y);
    EXPECT_LE(relative_error(y, start + whole.w.middleCols<3>(3 * node) * x_node), 1e-14) << node;
  }
  for (const int row : {0, 1, 10, kSize - 1}) {
    const double expected = whole.w.row(row).dot(x);
    EXPECT_NEAR(pair.delassus_row_dot(row, x), expected, 1e-14 * x.lpNorm<1>()) << row;
  }
}

TEST(CondensedMatrices, BlockWritesKeepBothMatricesSymmetricAndApart) {
  CondensedMatrices pair(kSize);
  Eigen::Matrix3d a, b;
  a << 1, 2, 3, 4, 5, 6, 7, 8, 9;
  b = -a;
  pair.set_stiffness_block(4, 1, a);  // below the diagonal: held as given
  pair.set_delassus_block(1, 4, b);   // above it
  EXPECT_TRUE(pair.stiffness_block(4, 1) == a);
  EXPECT_TRUE(pair.stiffness_block(1, 4) == a.transpose());
  EXPECT_TRUE(pair.delassus_block(1, 4) == b);
  EXPECT_TRUE(pair.delassus_block(4, 1) == b.transpose());
  // A diagonal block keeps its own triangle: S the lower, W the upper.
  pair.set_stiffness_block(2, 2, a);
  pair.set_delassus_block(2, 2, b);
  Eigen::Matrix3d lower_of_a = a, upper_of_b = b;
  lower_of_a.triangularView<Eigen::StrictlyUpper>() = a.transpose();
  upper_of_b.triangularView<Eigen::StrictlyLower>() = b.transpose();
  EXPECT_TRUE(pair.stiffness_block(2, 2) == lower_of_a);
  EXPECT_TRUE(pair.delassus_block(2, 2) == upper_of_b);
  // Neither write reached the other matrix.
  const Eigen::MatrixXd s = pair.whole_stiffness(), w = pair.whole_delassus();
  EXPECT_EQ(s.cwiseAbs().sum(), 2 * a.cwiseAbs().sum() + lower_of_a.cwiseAbs().sum());
  EXPECT_EQ(w.cwiseAbs().sum(), 2 * b.cwiseAbs().sum() + upper_of_b.cwiseAbs().sum());
  EXPECT_THROW(CondensedMatrices(-1), std::invalid_argument);
}

// CondensedOperators::from_stiffness forms W in the pair's upper triangle
// from S's lower one (LAPACK's Cholesky inverse): W S = I, whatever S's
// upper triangle holds.
TEST(CondensedMatrices, OperatorsFromTheStiffnessHoldItsInverse) {
  const WholePair whole = random_pair(13);
  const auto operators = CondensedOperators::from_stiffness(whole.s);
  const Eigen::MatrixXd s = operators->matrices().whole_stiffness();
  const Eigen::MatrixXd w = operators->matrices().whole_delassus();
  EXPECT_TRUE(s == whole.s);
  EXPECT_LE((w - whole.w).lpNorm<Eigen::Infinity>(), 1e-12 * whole.w.lpNorm<Eigen::Infinity>());
  EXPECT_LE((w * s - Eigen::MatrixXd::Identity(kSize, kSize)).lpNorm<Eigen::Infinity>(), 1e-12);
  Eigen::MatrixXd skewed = whole.s;
  skewed.triangularView<Eigen::StrictlyUpper>().setConstant(1e9);
  const auto from_skewed = CondensedOperators::from_stiffness(skewed);
  EXPECT_TRUE(from_skewed->matrices().whole_stiffness() == s);
  EXPECT_TRUE(from_skewed->matrices().whole_delassus() == w);
  Eigen::MatrixXd indefinite = whole.s;
  indefinite(4, 4) = -1.0;
  EXPECT_THROW((void)CondensedOperators::from_stiffness(indefinite), NumericalError);
}

}  // namespace
}  // namespace bipo
