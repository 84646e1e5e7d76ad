// Owns restarted, flexible GMRES on vectors of the whole mesh, for the
// sparse contact path's Newton step (sparse_contact.cpp): kept whole on one
// process, or each rank its rows under MPI (krylov_rows.hpp).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <type_traits>

#include "solver/krylov_rows.hpp"

namespace bipo {

/// The default limit on a Gmres solve's iterations.
inline constexpr int gmres_max_iterations = 240;

/// Restarted GMRES with right preconditioning (Saad, Iterative Methods for
/// Sparse Linear Systems, 9.3.2), modified Gram-Schmidt and Givens
/// rotations. Its storage is kept from one solve to the next (an iteration
/// allocates nothing) until release_storage(). apply(x, y): y = A x;
/// precondition(b, z): z ~ A^-1 b.
///
/// With Z = float, the preconditioned vectors z_j are kept in single
/// precision and A is applied to z_j as rounded: the flexible variant's
/// relation A Z_j = V_{j+1} H_j then holds for the Z that forms x, so the
/// rounding only changes the preconditioner (by a relative 6e-8 in each
/// component), not the solve's accuracy, and the z_j take half the memory
/// (the long restart's: 160 x 105k at N = 24). The short restart keeps them
/// in double: its rounding, and its Newton paths, stay as they were.
///
/// Distributed (distribute()): every vector is the rows kept here
/// (KrylovRows): b, x, the basis v_j and the z_j, and apply and
/// precondition take and give those rows (collectives: every rank applies
/// them at the same point); the dot products and norms are sums over the
/// ranks, added in rank order, so that every rank takes the same decisions
/// on the same bits. Nothing else differs from one process, whose
/// arithmetic is the same as it always was.
template <class Z>
class Gmres {
 public:
  /// The relative residual accepted when the residual stagnates above the
  /// tolerance (see solve()).
  static constexpr double acceptable_stagnation = 1e-2;
  explicit Gmres(int restart, int iteration_limit = gmres_max_iterations)
      : restart_(restart), limit_(iteration_limit) {}

  /// The iterations, or -1 if the relative residual `tolerance` was not met.
  /// A restart cycle that does not halve the residual has met the round-off
  /// floor of its evaluation (b - A x of a tiny rho's rows shares the
  /// cancellation of the rows of K): the solve stops there, and succeeds
  /// if the residual is below acceptable_stagnation, unless `strict` (for a
  /// weak preconditioner, whose cycles may fail to halve it long before).
  /// Such a success is marked (stagnated()): the caller judges the answer
  /// in its own norm (step_is_a_descent_direction).
  template <class Apply, class Precondition>
  int solve(const Apply& apply, const Precondition& precondition, const Eigen::VectorXd& b,
            double tolerance, bool strict, Eigen::VectorXd& x) {
    const double accepted_stagnation = strict ? 0.0 : acceptable_stagnation;
    const Eigen::Index n = b.size();
    basis_.resize(n, restart_ + 1);
    preconditioned_.resize(n, restart_);
    h_.resize(restart_ + 1, restart_);
    g_.resize(restart_ + 1);
    cs_.resize(restart_);
    sn_.resize(restart_);
    const double b_norm = norm(b);
    const double target = tolerance * b_norm;
    x.setZero(n);
    int& total = spent_;  // also after a failure, for the counts
    total = 0;
    stagnated_ = false;
    if (b_norm == 0.0) return 0;
    residual_ = b;
    double previous = std::numeric_limits<double>::infinity();
    while (total < limit_) {
      const double beta = norm(residual_);
      if (beta <= target) return total;
      if (beta > 0.5 * previous) {
        stagnated_ = beta <= accepted_stagnation * b_norm;
        return stagnated_ ? total : -1;
      }
      previous = beta;
      basis_.col(0) = residual_ / beta;
      g_.setZero();
      g_(0) = beta;
      h_.setZero();
      const int j = cycle(apply, precondition, target, total);
      y_ = h_.topLeftCorner(j, j).triangularView<Eigen::Upper>().solve(g_.head(j));
      add_update(x);
      apply(x, product_);
      residual_ = b - product_;
      if (!all_finite(residual_)) return -1;
    }
    const double beta = norm(residual_);
    if (beta <= target) return total;
    stagnated_ = beta > 0.5 * previous && beta <= accepted_stagnation * b_norm;
    return stagnated_ ? total : -1;
  }
  /// True if the last solve succeeded at a stagnation above its tolerance.
  [[nodiscard]] bool stagnated() const { return stagnated_; }
  /// The iterations of the last solve, also when it failed.
  [[nodiscard]] int spent() const { return spent_; }
  /// Frees the vectors (the next solve allocates them again): between two
  /// solves they hold nothing that is needed.
  void release_storage() {
    basis_ = Eigen::MatrixXd();
    preconditioned_.resize(0, 0);
    work_ = next_ = product_ = residual_ = Eigen::VectorXd();
  }
  /// The rows of each basis vector held (the whole vector's, or the rank's
  /// share; 0 before the first solve and after release_storage()).
  [[nodiscard]] Eigen::Index rows_held() const { return basis_.rows(); }
  /// Solves on the rows kept here from the next solve on (`rows` must
  /// outlive this object; collectives: every rank solves the same systems).
  void distribute(KrylovRows* rows) { rows_ = rows; }

 private:
  /// update += Z y_ over the cycle's j = y_.size() columns.
  void add_update(Eigen::VectorXd& update) {
    const auto j = static_cast<int>(y_.size());
    if constexpr (std::is_same_v<Z, double>)
      update.noalias() += preconditioned_.leftCols(j) * y_;
    else
      for (int c = 0; c < j; ++c) update += y_(c) * preconditioned_.col(c).template cast<double>();
  }

  /// One Arnoldi cycle from basis_.col(0); returns its iterations.
  template <class Apply, class Precondition>
  int cycle(const Apply& apply, const Precondition& precondition, double target, int& total) {
    int j = 0;
    for (; j < restart_ && total < limit_; ++j, ++total) {
      precondition(basis_.col(j), work_);
      preconditioned_.col(j) = work_.template cast<Z>();
      if constexpr (!std::is_same_v<Z, double>)
        work_ = preconditioned_.col(j).template cast<double>();
      apply(work_, next_);
      for (int i = 0; i <= j; ++i) {
        h_(i, j) = dot(next_, basis_.col(i));
        next_ -= h_(i, j) * basis_.col(i);
      }
      h_(j + 1, j) = norm(next_);
      if (h_(j + 1, j) > 0.0) basis_.col(j + 1) = next_ / h_(j + 1, j);
      for (int i = 0; i < j; ++i) {
        const double t = cs_(i) * h_(i, j) + sn_(i) * h_(i + 1, j);
        h_(i + 1, j) = -sn_(i) * h_(i, j) + cs_(i) * h_(i + 1, j);
        h_(i, j) = t;
      }
      const double d = std::hypot(h_(j, j), h_(j + 1, j));
      cs_(j) = d > 0.0 ? h_(j, j) / d : 1.0;
      sn_(j) = d > 0.0 ? h_(j + 1, j) / d : 0.0;
      h_(j, j) = d;
      h_(j + 1, j) = 0.0;
      g_(j + 1) = -sn_(j) * g_(j);
      g_(j) = cs_(j) * g_(j);
      if (std::abs(g_(j + 1)) <= target) {
        ++total;
        return j + 1;
      }
    }
    return j;
  }

  /// a . b over the ranks (distributed) or here.
  template <class A, class B>
  double dot(const A& a, const B& b) {
    const double here = a.dot(b);
    return rows_ != nullptr ? rows_->sum(here) : here;
  }
  /// |v| over the ranks (distributed) or here.
  double norm(const Eigen::VectorXd& v) {
    return rows_ != nullptr ? std::sqrt(rows_->sum(v.squaredNorm())) : v.norm();
  }
  /// Whether v is finite on every rank (distributed: the ranks agree).
  bool all_finite(const Eigen::VectorXd& v) {
    const bool here = v.allFinite();
    return rows_ != nullptr ? rows_->sum(here ? 0.0 : 1.0) == 0.0 : here;
  }

  int restart_, limit_;
  int spent_ = 0;
  bool stagnated_ = false;
  KrylovRows* rows_ = nullptr;
  Eigen::MatrixXd basis_, h_;
  Eigen::Matrix<Z, Eigen::Dynamic, Eigen::Dynamic> preconditioned_;
  Eigen::VectorXd g_, cs_, sn_, y_, work_, next_, product_, residual_;
};

}  // namespace bipo
