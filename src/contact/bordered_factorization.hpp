// Solves with a matrix that differs from a factorized one by unknowns taken
// out and others added, through that factorization: the dense contact path's
// Newton step after a few nodes changed state (solvers.cpp, docs/performance.md
// "The kept LU bordered for changed states"). Plain linear algebra; knows
// nothing of contact.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <vector>

namespace bipo {

/// P = [M_CC, A_CD; A_DC, A_DD], for a factorized n x n matrix M whose
/// unknowns are split into C (kept) and R (taken out, any subset), and D the
/// unknowns added, solved with M's factorization and no new one:
///
///   M_CC y = b_C:  y = M^-1 [b_C; 0] + Z lambda, with Z = M^-1 E_R,
///                  T = E_R^T Z and lambda = -T^-1 (M^-1 [b_C; 0])_R, so that
///                  M [y_C; 0] = [b_C; M_RC y_C] (E_R: R's unit columns);
///   P x = b:       x_D = Sigma^-1 (b_D - A_DC M_CC^-1 b_C) and
///                  x_C = M_CC^-1 b_C - Y x_D, with Y = M_CC^-1 A_CD and the
///                  Schur complement Sigma = A_DD - A_DC Y.
///
/// The set-up solves with M for |R| + |D| columns (2 n^2 p flops against a
/// fresh LU's 2/3 n^3) and factorizes T and Sigma; a solve costs one solve
/// with M and products with the n x p matrices Z and Y and A_DC.
class BorderedFactorization {
 public:
  /// Overwrites `count` columns of n values each, stored one after the
  /// other from `columns`, with M^-1 times them.
  using SolveWithM = std::function<void(double* columns, int count)>;

  /// Sets up P for M of size n: `removed`, R's rows in M (distinct, in
  /// [0, n)); `a_cd`, A_CD in M's rows (n x |D|; rows in R are not read);
  /// `a_dc`, A_DC in M's columns (|D| x n; columns in R are not read);
  /// `a_dd` (|D| x |D|). False, and P unusable, when T or Sigma is singular
  /// (LU's reciprocal condition estimate below 1e-13) or a product is not
  /// finite.
  bool set_up(const SolveWithM& solve_with_m, int n, std::vector<int> removed, Eigen::MatrixXd a_cd,
              Eigen::MatrixXd a_dc, const Eigen::MatrixXd& a_dd);

  /// Solves P x = b in place: `c` (n values, M's rows) holds b_C and gets
  /// x_C, its rows in R set to zero (their values in b are not read); `d`
  /// (|D| values) holds b_D and gets x_D.
  void solve(const SolveWithM& solve_with_m, Eigen::Ref<Eigen::VectorXd> c,
             Eigen::Ref<Eigen::VectorXd> d);

  [[nodiscard]] int size() const { return n_; }
  [[nodiscard]] int removed_count() const { return static_cast<int>(removed_.size()); }
  [[nodiscard]] int added_count() const { return static_cast<int>(y_.cols()); }

 private:
  /// X <- X + Z lambda with lambda = -T^-1 X_R: M^-1 of right-hand sides
  /// that are zero in R become M_CC^-1 of their C rows (R rows zero). The
  /// set-up's columns and each solve's one vector; no allocation once a
  /// solve's scratch is sized.
  void hold_removed_at_zero(Eigen::Ref<Eigen::MatrixXd> x);

  int n_ = 0;
  std::vector<int> removed_;
  Eigen::MatrixXd z_;  // M^-1 E_R
  Eigen::PartialPivLU<Eigen::MatrixXd> t_;
  Eigen::MatrixXd a_dc_;  // with zero columns in R
  Eigen::MatrixXd y_;     // M_CC^-1 A_CD, zero rows in R
  Eigen::PartialPivLU<Eigen::MatrixXd> sigma_;
  Eigen::MatrixXd removed_values_, lambda_;  // hold_removed_at_zero's scratch
  Eigen::VectorXd border_;                   // a solve's scratch
};

}  // namespace bipo
