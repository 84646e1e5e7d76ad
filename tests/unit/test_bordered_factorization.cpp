// BorderedFactorization: solves with P = [M_CC, A_CD; A_DC, A_DD] through
// M's factorization, checked against a dense LU of P assembled explicitly.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <random>
#include <vector>

#include "contact/bordered_factorization.hpp"

namespace bipo {
namespace {

/// A nonsymmetric n x n matrix with a dominant diagonal (well conditioned,
/// as the Newton systems it stands for are), reproducible.
Eigen::MatrixXd random_matrix(int rows, int cols, unsigned seed, double diagonal = 0.0) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  Eigen::MatrixXd a(rows, cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) a(i, j) = value(generator);
  for (int i = 0; i < std::min(rows, cols); ++i) a(i, i) += diagonal;
  return a;
}

struct Bordering {
  int n = 0;
  std::vector<int> removed;
  int added = 0;
};

/// Sets up P for M (n x n) with `removed` taken out and `added` unknowns
/// bordered on, solves P x = b for a random b, and returns the largest
/// difference from the solution of P assembled and factorized densely,
/// relative to that solution's largest entry; -1 if the set-up refused.
double largest_relative_error(const Bordering& case_, unsigned seed) {
  const int n = case_.n, p_d = case_.added;
  const Eigen::MatrixXd m = random_matrix(n, n, seed, 2.0 * n);
  const Eigen::PartialPivLU<Eigen::MatrixXd> m_lu(m);
  const BorderedFactorization::SolveWithM solve_with_m = [&](double* columns, int count) {
    Eigen::Map<Eigen::MatrixXd> x(columns, n, count);
    x = m_lu.solve(Eigen::MatrixXd(x));
  };
  const Eigen::MatrixXd a_cd = random_matrix(n, p_d, seed + 1);
  const Eigen::MatrixXd a_dc = random_matrix(p_d, n, seed + 2);
  const Eigen::MatrixXd a_dd = random_matrix(p_d, p_d, seed + 3, 2.0 * n);
  BorderedFactorization bordered;
  if (!bordered.set_up(solve_with_m, n, case_.removed, a_cd, a_dc, a_dd)) return -1.0;

  std::vector<int> kept;
  for (int i = 0; i < n; ++i)
    if (std::find(case_.removed.begin(), case_.removed.end(), i) == case_.removed.end())
      kept.push_back(i);
  const auto n_c = static_cast<Eigen::Index>(kept.size());
  Eigen::MatrixXd p(n_c + p_d, n_c + p_d);
  p.topLeftCorner(n_c, n_c) = m(kept, kept);
  p.topRightCorner(n_c, p_d) = a_cd(kept, Eigen::all);
  p.bottomLeftCorner(p_d, n_c) = a_dc(Eigen::all, kept);
  p.bottomRightCorner(p_d, p_d) = a_dd;
  const Eigen::VectorXd b = random_matrix(static_cast<int>(n_c + p_d), 1, seed + 4);
  const Eigen::VectorXd expected = p.partialPivLu().solve(b);

  // b_C in M's rows, with values in R that the solve must not read.
  Eigen::VectorXd c = Eigen::VectorXd::Constant(n, 1e6);
  c(kept) = b.head(n_c);
  Eigen::VectorXd d = b.tail(p_d);
  bordered.solve(solve_with_m, c, d);
  for (const int r : case_.removed) EXPECT_EQ(c(r), 0.0) << "row " << r << " of R";
  Eigen::VectorXd x(n_c + p_d);
  x << c(kept), d;
  return (x - expected).lpNorm<Eigen::Infinity>() / expected.lpNorm<Eigen::Infinity>();
}

TEST(BorderedFactorization, SolvesThePTakenOutAndBorderedMatrixAsItsOwnLuDoes) {
  const std::vector<Bordering> cases = {
      {40, {3, 7, 8, 21, 39}, 6},  // taken out and added
      {40, {0, 1, 2}, 0},          // taken out only: M_CC
      {40, {}, 5},                 // added only: M bordered
      {40, {12}, 1},
      {1, {}, 3},
  };
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const double error = largest_relative_error(cases[k], 17u + static_cast<unsigned>(k));
    EXPECT_GE(error, 0.0) << "case " << k << ": the set-up refused";
    EXPECT_LE(error, 1e-12) << "case " << k;
  }
}

// A border whose Schur complement is singular (A_DD = A_DC M^-1 A_CD with
// nothing taken out) is refused, not factorized into garbage.
TEST(BorderedFactorization, RefusesASingularSchurComplement) {
  const int n = 12, p_d = 2;
  const Eigen::MatrixXd m = random_matrix(n, n, 5u, 2.0 * n);
  const Eigen::PartialPivLU<Eigen::MatrixXd> m_lu(m);
  const BorderedFactorization::SolveWithM solve_with_m = [&](double* columns, int count) {
    Eigen::Map<Eigen::MatrixXd> x(columns, n, count);
    x = m_lu.solve(Eigen::MatrixXd(x));
  };
  const Eigen::MatrixXd a_cd = random_matrix(n, p_d, 6u);
  const Eigen::MatrixXd a_dc = random_matrix(p_d, n, 7u);
  const Eigen::MatrixXd a_dd = a_dc * m_lu.solve(a_cd);
  BorderedFactorization bordered;
  EXPECT_FALSE(bordered.set_up(solve_with_m, n, {}, a_cd, a_dc, a_dd));
  EXPECT_TRUE(
      bordered.set_up(solve_with_m, n, {}, a_cd, a_dc, a_dd + Eigen::MatrixXd::Identity(p_d, p_d)));
}

}  // namespace
}  // namespace bipo
