#include "solver/linear_solver.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/errors.hpp"

namespace bipo {

SparseMatrix lower_triangle(const SparseMatrix& a) {
  Eigen::Index entries = 0;
  for (int col = 0; col < a.outerSize(); ++col)
    for (SparseMatrix::InnerIterator it(a, col); it; ++it)
      if (it.row() >= col) ++entries;
  SparseMatrix lower(a.rows(), a.cols());
  lower.reserve(entries);
  for (int col = 0; col < a.outerSize(); ++col) {
    lower.startVec(col);
    for (SparseMatrix::InnerIterator it(a, col); it; ++it)
      if (it.row() >= col) lower.insertBackByOuterInner(col, it.row()) = it.value();
  }
  lower.finalize();
  return lower;
}

double symmetric_infinity_norm(const SparseMatrix& lower, const std::vector<char>* rows) {
  Eigen::VectorXd row_sums = Eigen::VectorXd::Zero(lower.rows());
  for (int col = 0; col < lower.outerSize(); ++col)
    for (SparseMatrix::InnerIterator it(lower, col); it; ++it) {
      row_sums(it.row()) += std::abs(it.value());
      if (it.row() != col) row_sums(col) += std::abs(it.value());
    }
  if (rows != nullptr)
    for (Eigen::Index row = 0; row < row_sums.size(); ++row)
      if ((*rows)[row] == 0) row_sums(row) = 0.0;
  return row_sums.size() > 0 ? row_sums.maxCoeff() : 0.0;
}

void LinearSolver::LowerChanges::check_within(const SparseMatrix& lower) const {
  if (values.size() != positions.size())
    throw std::logic_error("LowerChanges: " + std::to_string(positions.size()) + " positions but " +
                           std::to_string(values.size()) + " values");
  for (const int position : positions)
    if (position < 0 || position >= lower.nonZeros())
      throw std::logic_error("LowerChanges: position " + std::to_string(position) +
                             " is not one of the matrix's " + std::to_string(lower.nonZeros()) +
                             " entries");
}

void LinearSolver::LowerChanges::add_to(SparseMatrix& matrix) const {
  for (std::size_t k = 0; k < positions.size(); ++k) matrix.valuePtr()[positions[k]] += values[k];
}

void LinearSolver::factorize_lower_changed(const SparseMatrix& lower, const LowerChanges& changes,
                                           bool reuse_analysis) {
  changes.check_within(lower);
  SparseMatrix changed = lower;
  changes.add_to(changed);
  factorize_lower(changed, reuse_analysis);
}

void LinearSolver::solve_in_place(Eigen::Ref<Eigen::VectorXd> x) const {
  const Eigen::MatrixXd b = x;
  Eigen::MatrixXd solution;
  solve(b, solution);
  x = solution.col(0);
}

CondensedMatrices LinearSolver::factorize_lower_and_condense(const SparseMatrix& lower,
                                                             const std::vector<int>& condensed) {
  factorize_lower(lower, false);
  const int n_c = static_cast<int>(condensed.size());
  Eigen::MatrixXd compliance(n_c, n_c), rhs, x;
  const int block = 96;  // right-hand sides per solve: bounded memory, BLAS-3 speed
  for (int first = 0; first < n_c; first += block) {
    const int n_cols = std::min(block, n_c - first);
    rhs.setZero(lower.rows(), n_cols);
    for (int col = 0; col < n_cols; ++col) rhs(condensed[first + col], col) = 1.0;
    solve(rhs, x);
    for (int row = 0; row < n_c; ++row)
      compliance.block(row, first, 1, n_cols) = x.row(condensed[row]);
  }
  compliance = 0.5 * (compliance + compliance.transpose()).eval();
  const Eigen::LLT<Eigen::MatrixXd> llt(compliance);
  if (llt.info() != Eigen::Success)
    throw NumericalError("the condensed compliance is not positive definite");
  const Eigen::MatrixXd stiffness = llt.solve(Eigen::MatrixXd::Identity(n_c, n_c));
  CondensedMatrices pair(n_c);
  for (int j = 0; j < n_c; ++j) {
    for (int i = 0; i <= j; ++i) pair.delassus_upper(i, j) = compliance(i, j);
    for (int i = j; i < n_c; ++i) pair.stiffness_lower(i, j) = stiffness(i, j);
  }
  return pair;
}

std::vector<int> LinearSolver::rank_of_each_row(const RowShare& share) {
  const auto n = static_cast<int>(share.rows.size());
  std::vector<int> rank(static_cast<std::size_t>(n), -1);
  int k = 0;
  for (std::size_t r = 0; r < share.counts.size(); ++r)
    for (int i = 0; i < share.counts[r]; ++i, ++k) {
      const int row = k < n ? share.rows[k] : -1;
      if (row < 0 || row >= n || rank[row] >= 0)
        throw std::logic_error("row share: its rows are not every row once");
      rank[row] = static_cast<int>(r);
    }
  if (k != n) throw std::logic_error("row share: its counts do not add up to its rows");
  return rank;
}

}  // namespace bipo
