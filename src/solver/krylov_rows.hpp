// Owns the division of the sparse contact path's Krylov vectors among the
// MPI ranks (issue 14, item 2): which rows of a vector of the whole mesh
// this rank keeps, and the two collectives a Krylov method needs on such
// vectors (the whole vector gathered from every rank's rows; a sum over the
// ranks). Restarted GMRES keeps its basis and its preconditioned vectors by
// rank (gmres.hpp), so that each rank holds its share of them, as PETSc
// holds its share of the matrices; until then every rank held all of them
// (81 vectors of the whole mesh: 1.3 GB at 2 million unknowns).
#pragma once

#include <Eigen/Core>
#include <functional>
#include <optional>
#include <vector>

#include "solver/linear_solver.hpp"

namespace bipo {

class KrylovRows {
 public:
  /// Every rank's values (rank r's `counts[r]` of them) into `all`, rank r's
  /// from `displacements[r]` on, on every rank: a collective that every
  /// rank calls at the same point (parallel_all_gather; a test's stand-in).
  using AllGather =
      std::function<void(const double* mine, int count, double* all, const std::vector<int>& counts,
                         const std::vector<int>& displacements)>;

  /// The rows of `share` (a backend's rows of K_ff, the caller's numbering)
  /// and `extra_rows` more after them (rows n ... n + extra_rows - 1 of the
  /// vectors, n the share's rows), which rank 0 keeps; this is rank `rank`.
  KrylovRows(const LinearSolver::RowShare& share, int extra_rows, int rank, AllGather all_gather);

  /// The rows kept here, and the most that any rank keeps.
  [[nodiscard]] int kept() const { return counts_[rank_]; }
  [[nodiscard]] int largest_kept() const;
  /// The rows every rank keeps, in rank order.
  [[nodiscard]] const std::vector<int>& counts() const { return counts_; }
  /// The rows of the whole vector kept here, ascending.
  [[nodiscard]] const int* kept_rows() const { return all_rows_.data() + displacements_[rank_]; }

  /// mine = the rows of `whole` kept here.
  void take(Eigen::Ref<const Eigen::VectorXd> whole, Eigen::Ref<Eigen::VectorXd> mine) const;
  /// whole = every rank's kept rows put together (collective; resizes
  /// `whole` to the vectors' size; allocates nothing after the first call).
  void gather(Eigen::Ref<const Eigen::VectorXd> mine, Eigen::VectorXd& whole);
  /// Every row of `vector` (the vectors' size) set to its value on the rank
  /// that keeps it (collective): a vector of which each rank computed only
  /// its own rows made whole on every rank. Allocates nothing.
  void take_rows_from_their_ranks(Eigen::Ref<Eigen::VectorXd> vector);
  /// Every rank's `part`, rank 0's first (collective).
  const std::vector<double>& parts_of_every_rank(double part);
  /// The sum of every rank's `part` (collective), added in rank order on
  /// every rank: the same bits everywhere, whatever the MPI library's
  /// reduction order (a rank whose GMRES decided otherwise would leave the
  /// others waiting in a collective).
  double sum(double part);

 private:
  std::vector<int> all_rows_;  // every rank's rows, rank by rank
  std::vector<int> counts_, displacements_;
  std::vector<int> ones_, rank_positions_;  // sum(): one value per rank
  int rank_ = 0;
  AllGather all_gather_;
  Eigen::VectorXd gathered_, mine_;  // every rank's rows; this rank's
  std::vector<double> parts_;
};

/// KrylovRows::AllGather over the MPI ranks (parallel_all_gather).
void gather_over_ranks(const double* mine, int count, double* all, const std::vector<int>& counts,
                       const std::vector<int>& displacements);

/// The Krylov rows of vectors whose first rows are K_ff's and whose
/// `extra_rows` last ones are rank 0's, over the MPI ranks of `backend`
/// (parallel_all_gather); empty where the backend is serial or runs on one
/// rank (every rank then keeps every row, and nothing is gathered).
[[nodiscard]] std::optional<KrylovRows> krylov_rows_of(const LinearSolver& backend, int extra_rows);

}  // namespace bipo
