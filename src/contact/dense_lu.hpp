// The dense Newton system of the contact path and its kept LU, in double or
// in mixed precision (an LU in single precision refined in double): the
// contact solver's hot spot (solvers.cpp; docs/performance.md "Mixed
// precision LUs of the Newton system"). Plain linear algebra; knows nothing
// of contact.
#pragma once

#include <vector>

namespace bipo {

/// A dense n x n system A (column-major) with an LU of it, kept between
/// solves. In double precision the LU overwrites A (LAPACK dgetrf). In
/// mixed precision A stays in double and its LU is made in single precision
/// (sgetrf: half the time of dgetrf on this machine, 1.97x at n = 4500,
/// 2.2x at n = 1000); solve() refines in double (the scheme of LAPACK's
/// dsgesv, which cannot keep its LU for later solves) until the residual is
/// a double LU's, and falls back to a double LU of A where it does not get
/// there.
class DenseLu {
 public:
  /// Storage for A, n x n, which the caller fills before factorize(); drops
  /// the LU. Its allocation is kept between systems (no page faults a step).
  double* matrix(int n);
  /// The system's storage as it is: A, or its double LU once factorized in
  /// double (see single_precision()).
  [[nodiscard]] double* data() { return matrix_.data(); }
  /// Factorizes A, in single precision when `single_precision` (falling
  /// back to double where A overflows single precision or its single LU
  /// is singular). False if A is singular.
  bool factorize(bool single_precision);
  /// rhs <- A^-1 rhs, to a double LU's residual: max |b - A x| <= sqrt(n)
  /// eps |A|_inf max |x| (dsgesv's test) after at most 30 refinement steps
  /// in mixed precision, else through a double LU of A, which is then kept.
  /// False if that LU is singular.
  bool solve(double* rhs);
  /// `count` columns of n values <- M^-1 times them, M the LU as it is
  /// (single or double), without refinement: a preconditioner.
  void apply_lu(double* columns, int count);
  [[nodiscard]] bool factorized() const { return factorized_; }
  [[nodiscard]] int size() const { return n_; }
  [[nodiscard]] bool single_precision() const { return single_; }

  /// Since construction: factorizations made in single precision, those
  /// that fell back to double (at the factorization or a solve), and
  /// the refinement steps of all solves.
  long single_precision_lus = 0, fallbacks = 0, refinement_steps = 0;

 private:
  bool factorize_in_double();
  int n_ = 0;
  bool factorized_ = false, single_ = false;
  double a_norm_ = 0.0;  // |A|_inf, for the refinement's test
  std::vector<double> matrix_, rhs_, residual_;
  std::vector<float> single_lu_, single_columns_;
  std::vector<int> pivots_;
};

}  // namespace bipo
