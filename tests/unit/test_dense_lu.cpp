// DenseLu: an LU in single precision whose solves are refined in double to a
// double LU's residual (LAPACK dsgesv's stopping test, checked here
// independently), kept for later solves and as a preconditioner, and a
// double LU where single precision cannot resolve the matrix.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "contact/dense_lu.hpp"

namespace bipo {
namespace {

/// U diag(sigma) V^T with U, V random orthogonal and sigma log-spaced from
/// 1 to 1 / condition: a nonsymmetric matrix of that 2-norm condition.
Eigen::MatrixXd matrix_of_condition(int n, double condition, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<double> value;
  const auto random = [&] {
    Eigen::MatrixXd a(n, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) a(i, j) = value(generator);
    return a;
  };
  const Eigen::MatrixXd u = Eigen::HouseholderQR<Eigen::MatrixXd>(random()).householderQ();
  const Eigen::MatrixXd v = Eigen::HouseholderQR<Eigen::MatrixXd>(random()).householderQ();
  Eigen::VectorXd sigma(n);
  for (int i = 0; i < n; ++i) sigma(i) = std::pow(condition, -static_cast<double>(i) / (n - 1));
  return u * sigma.asDiagonal() * v.transpose();
}

Eigen::VectorXd random_vector(int n, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  Eigen::VectorXd b(n);
  for (int i = 0; i < n; ++i) b(i) = value(generator);
  return b;
}

/// max |b - A x| / (|A|_inf max |x|): a double LU's is below sqrt(n) eps.
double scaled_residual(const Eigen::MatrixXd& a, const Eigen::VectorXd& x,
                       const Eigen::VectorXd& b) {
  const double a_norm = a.cwiseAbs().rowwise().sum().maxCoeff();
  return (b - a * x).lpNorm<Eigen::Infinity>() / (a_norm * x.lpNorm<Eigen::Infinity>());
}

double double_lu_bound(int n) {
  return std::sqrt(static_cast<double>(n)) * std::numeric_limits<double>::epsilon();
}

/// Copies A into the DenseLu's storage.
void fill(DenseLu& lu, const Eigen::MatrixXd& a) {
  const auto n = static_cast<int>(a.rows());
  std::copy(a.data(), a.data() + a.size(), lu.matrix(n));
}

// Condition 1e3, as the punch's Newton systems: refined, the single LU's
// solves reach a double LU's residual (its own answer is 1e-7-accurate at
// best), twice on the kept LU, and agree with a double LU's answer to the
// condition's digits; no fallback.
TEST(DenseLu, RefinesASingleLuToADoubleLusResidual) {
  DenseLu lu;
  for (const int n : {300, 40}) {  // the second reuses the first's storage
    const Eigen::MatrixXd a = matrix_of_condition(n, 1e3, 7);
    fill(lu, a);
    ASSERT_TRUE(lu.factorize(true));
    EXPECT_TRUE(lu.single_precision());
    for (const unsigned seed : {8u, 9u}) {
      const Eigen::VectorXd b = random_vector(n, seed);
      Eigen::VectorXd x = b;
      const long steps_before = lu.refinement_steps;
      ASSERT_TRUE(lu.solve(x.data()));
      EXPECT_GE(lu.refinement_steps, steps_before + 1);
      EXPECT_LT(scaled_residual(a, x, b), double_lu_bound(n));
      const Eigen::VectorXd reference = a.partialPivLu().solve(b);
      EXPECT_LT(
          (x - reference).lpNorm<Eigen::Infinity>(),
          1e3 * 1e3 * std::numeric_limits<double>::epsilon() * reference.lpNorm<Eigen::Infinity>());
      const Eigen::MatrixXf single = a.cast<float>();
      const Eigen::VectorXd single_answer =
          single.partialPivLu().solve(b.cast<float>()).cast<double>();
      EXPECT_GT(scaled_residual(a, single_answer, b), 100.0 * double_lu_bound(n));
    }
  }
  EXPECT_EQ(lu.single_precision_lus, 2);
  EXPECT_EQ(lu.fallbacks, 0);
}

// Without refinement (a preconditioner), the single LU is M^-1 to single
// precision's digits; the double LU to double's.
TEST(DenseLu, AppliesItsLuAsItIsToSeveralColumns) {
  const int n = 80, count = 3;
  const Eigen::MatrixXd a = matrix_of_condition(n, 1e2, 5);
  Eigen::MatrixXd columns(n, count);
  for (int k = 0; k < count; ++k) columns.col(k) = random_vector(n, 20 + k);
  const Eigen::MatrixXd exact = a.partialPivLu().solve(columns);
  for (const bool single : {true, false}) {
    DenseLu lu;
    fill(lu, a);
    ASSERT_TRUE(lu.factorize(single));
    Eigen::MatrixXd x = columns;
    lu.apply_lu(x.data(), count);
    const double error = (x - exact).cwiseAbs().maxCoeff() / exact.cwiseAbs().maxCoeff();
    if (single) {
      EXPECT_LT(error, 1e-4);
      EXPECT_GT(error, 1e-10);  // it is the single LU that was applied
    } else {
      EXPECT_LT(error, 1e-12);
    }
  }
}

// Condition 1e12: single precision (about 7 digits) cannot resolve it, the
// refinement does not converge, and the solve falls back to a double LU of
// A, whose residual it then has and which is kept.
TEST(DenseLu, FallsBackToADoubleLuWhereSinglePrecisionCannotResolveTheMatrix) {
  const int n = 120;
  const Eigen::MatrixXd a = matrix_of_condition(n, 1e12, 11);
  DenseLu lu;
  fill(lu, a);
  ASSERT_TRUE(lu.factorize(true));
  for (const unsigned seed : {12u, 13u}) {
    const Eigen::VectorXd b = random_vector(n, seed);
    Eigen::VectorXd x = b;
    ASSERT_TRUE(lu.solve(x.data()));
    EXPECT_LT(scaled_residual(a, x, b), double_lu_bound(n));
  }
  EXPECT_EQ(lu.fallbacks, 1);
  EXPECT_FALSE(lu.single_precision());
}

// A value beyond single precision's range is not rounded: a double LU.
TEST(DenseLu, FactorizesInDoubleWhatSinglePrecisionCannotHold) {
  const int n = 20;
  Eigen::MatrixXd a = matrix_of_condition(n, 10.0, 2) * 1e40;
  DenseLu lu;
  fill(lu, a);
  ASSERT_TRUE(lu.factorize(true));
  EXPECT_FALSE(lu.single_precision());
  EXPECT_EQ(lu.fallbacks, 0);
  const Eigen::VectorXd b = random_vector(n, 3);
  Eigen::VectorXd x = b;
  ASSERT_TRUE(lu.solve(x.data()));
  EXPECT_LT(scaled_residual(a, x, b), double_lu_bound(n));
}

TEST(DenseLu, ReportsASingularMatrix) {
  const int n = 30;
  Eigen::MatrixXd a = matrix_of_condition(n, 10.0, 3);
  a.col(17).setZero();
  for (const bool single : {true, false}) {
    DenseLu lu;
    fill(lu, a);
    EXPECT_FALSE(lu.factorize(single));
    EXPECT_FALSE(lu.factorized());
  }
}

}  // namespace
}  // namespace bipo
