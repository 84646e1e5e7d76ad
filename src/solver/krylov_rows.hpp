// Owns the division of vectors of the whole mesh among the MPI ranks
// (issue 14, item 2), for the sparse contact path's Krylov vectors and the
// analysis's displacements: which rows of such a vector this rank keeps,
// the collectives on them (the whole vector gathered from every rank's
// rows, to every rank or to rank 0 alone; a sum over the ranks), the other
// ranks' rows that a rank reads brought from their ranks alone
// (BorderRows), and the product of K_ff with a vector kept by rank, which
// exchanges only the rows on the borders between neighbouring ranks
// (OwnRowsProduct). Restarted GMRES runs on the rows kept here (gmres.hpp),
// so that each rank holds its share of its vectors, as PETSc holds its
// share of the matrices, and an iteration gathers no vector of the whole
// mesh.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <optional>
#include <vector>

#include "solver/linear_solver.hpp"

namespace bipo {

/// Rank r's `send_counts[r]` values from `send + send_displacements[r]` to
/// rank r, and rank r's to this one into `receive +
/// receive_displacements[r]`: a collective that every rank calls at the
/// same point (parallel_all_to_all; a test's stand-in).
using AllToAll = std::function<void(const double* send, const std::vector<int>& send_counts,
                                    const std::vector<int>& send_displacements, double* receive,
                                    const std::vector<int>& receive_counts,
                                    const std::vector<int>& receive_displacements)>;

class KrylovRows {
 public:
  /// Every rank's values (rank r's `counts[r]` of them) into `all`, rank r's
  /// from `displacements[r]` on, on every rank: a collective that every
  /// rank calls at the same point (parallel_all_gather; a test's stand-in).
  using AllGather =
      std::function<void(const double* mine, int count, double* all, const std::vector<int>& counts,
                         const std::vector<int>& displacements)>;

  /// The rows of `share` (a backend's rows of K_ff, the caller's numbering)
  /// and extra rows after them: row n + k of the vectors (n the share's
  /// rows) is kept by the rank that keeps the share's row
  /// `extra_rows_beside[k]` (a held component's slot goes with its node's
  /// rows); this is rank `rank`.
  KrylovRows(const LinearSolver::RowShare& share, const std::vector<int>& extra_rows_beside,
             int rank, AllGather all_gather);

  /// The rows kept here, and the most that any rank keeps.
  [[nodiscard]] int kept() const { return counts_[rank_]; }
  /// The share's rows kept here: the first of the rows kept, in the order
  /// of the backend's own rows (LinearSolver::row_share); the extra rows
  /// kept here follow them.
  [[nodiscard]] int share_kept() const { return share_kept_; }
  /// This is rank rank(); the ranks are counts().size().
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int largest_kept() const;
  /// The rows every rank keeps, in rank order.
  [[nodiscard]] const std::vector<int>& counts() const { return counts_; }
  /// The rank that keeps each row of the vectors.
  [[nodiscard]] std::vector<int> rank_of_each_row() const;
  /// Each row's position among the rows kept here (kept_rows()' order), -1
  /// for a row that another rank keeps.
  [[nodiscard]] std::vector<int> position_of_each_row() const;
  /// The rows of the whole vector kept here, ascending.
  [[nodiscard]] const int* kept_rows() const { return all_rows_.data() + displacements_[rank_]; }

  /// mine = the rows of `whole` kept here.
  void take(Eigen::Ref<const Eigen::VectorXd> whole, Eigen::Ref<Eigen::VectorXd> mine) const;
  /// whole = every rank's kept rows put together (collective; resizes
  /// `whole` to the vectors' size; allocates nothing after the first call,
  /// which sizes a buffer of the vectors' size that this object keeps).
  void gather(Eigen::Ref<const Eigen::VectorXd> mine, Eigen::VectorXd& whole);
  /// whole = every rank's kept rows put together, on rank 0 alone
  /// (collective: an all-to-all in which every rank sends its rows to rank
  /// 0 and nothing else moves); left empty on the other ranks, which hold
  /// no vector of the whole mesh for it. Rank 0's buffer is freed on
  /// return. For rank 0's results between increments.
  void gather_on_first_rank(Eigen::Ref<const Eigen::VectorXd> mine, Eigen::VectorXd& whole,
                            const AllToAll& all_to_all) const;
  /// Every row of `vector` (the vectors' size) set to its value on the rank
  /// that keeps it (collective): a vector of which each rank computed only
  /// its own rows made whole on every rank. Allocates nothing after the
  /// first call (or gather()'s).
  void take_rows_from_their_ranks(Eigen::Ref<Eigen::VectorXd> vector);
  /// Every rank's `part`, rank 0's first (collective).
  const std::vector<double>& parts_of_every_rank(double part);
  /// The sum of every rank's `part` (collective), added in rank order on
  /// every rank: the same bits everywhere, whatever the MPI library's
  /// reduction order (a rank whose GMRES decided otherwise would leave the
  /// others waiting in a collective).
  double sum(double part);
  /// The all-gather itself (AllGather), for other divisions of the ranks'
  /// values (collective).
  void all_gather(const double* mine, int count, double* all, const std::vector<int>& counts,
                  const std::vector<int>& displacements) const {
    all_gather_(mine, count, all, counts, displacements);
  }
  /// Every rank's `count` values (its `mine`) into `all`, rank by rank
  /// (collective): `all` is resized to their total; `counts`, if given,
  /// receives every rank's count.
  void gather_parts(const double* mine, int count, std::vector<double>& all,
                    std::vector<int>* counts = nullptr);

 private:
  std::vector<int> all_rows_;  // every rank's rows, rank by rank
  std::vector<int> counts_, displacements_;
  std::vector<int> ones_, rank_positions_;  // sum(): one value per rank
  int rank_ = 0, share_kept_ = 0;
  AllGather all_gather_;
  void size_buffers();
  // Every rank's kept rows into `received` (rank by rank, the vectors'
  // size), then each into its place in `whole`.
  void gather_into(Eigen::Ref<const Eigen::VectorXd> mine, Eigen::VectorXd& received,
                   Eigen::Ref<Eigen::VectorXd> whole) const;
  // Every rank's rows, received rank by rank, each into its place.
  void put_in_place(const Eigen::VectorXd& received, Eigen::Ref<Eigen::VectorXd> whole) const;
  Eigen::VectorXd gathered_, mine_;  // every rank's rows; this rank's (sized on first use)
  std::vector<double> parts_;
};

/// The rows of other ranks that this rank reads, and the exchange that
/// brings them: each rank receives from each other the rows it asked for
/// at set-up, and sends it those that the other asked for (one all-to-all,
/// with nothing between ranks that read nothing of each other), instead of
/// the whole vector: the Newton step's product K_ff x (OwnRowsProduct) and
/// the analysis's equilibrium check.
class BorderRows {
 public:
  /// `asked[r]`: the rows of rank r that this rank reads (ascending; none
  /// of its own), among the `n` rows of the vectors of `rows`. Collective
  /// (the ranks tell each other once what they read). Throws
  /// std::logic_error on every rank if a rank asks another for a row that
  /// it does not keep.
  BorderRows(KrylovRows& rows, const std::vector<std::vector<int>>& asked, int n,
             AllToAll all_to_all);
  /// Each received row of `whole` (a vector of the n rows) set to its value
  /// on the rank that keeps it, from every rank's `mine` (its kept rows, in
  /// their order); the other rows of `whole` are left as they are.
  /// Collective; allocates nothing.
  void receive(Eigen::Ref<const Eigen::VectorXd> mine, Eigen::Ref<Eigen::VectorXd> whole);
  /// The other ranks' rows received, and the rows sent; by rank.
  [[nodiscard]] int received_rows() const { return static_cast<int>(received_rows_.size()); }
  [[nodiscard]] const std::vector<int>& receive_counts() const { return receive_counts_; }
  [[nodiscard]] const std::vector<int>& send_counts() const { return send_counts_; }

 private:
  AllToAll all_to_all_;
  std::vector<int> send_positions_;  // among the rows kept here, rank by rank
  std::vector<int> send_counts_, send_displacements_;
  std::vector<int> received_rows_;  // rank by rank, ascending in each
  std::vector<int> receive_counts_, receive_displacements_;
  Eigen::VectorXd sent_, received_;
};

/// The rows kept here of y = A x, A a symmetric matrix of the share's rows
/// of which this rank holds the lower triangle with its own rows complete
/// (solver/distributed_assembly.hpp: the others partial), x kept by rank
/// as well. Rows are exchanged only where an own row of one rank couples to
/// another's, and only between those two ranks: each rank receives from
/// each neighbour the rows of the neighbour's that its own rows' entries
/// reach, and sends it those that the neighbour asked for at set-up (one
/// all-to-all a product, with nothing between ranks that share no entry),
/// instead of the whole vector or every rank's borders. The rows kept here
/// of the result are those of the product with the whole matrix, bit for
/// bit (the entries of an own row, and their order in the column-wise
/// product, are the whole matrix's).
class OwnRowsProduct {
 public:
  /// Collective (the ranks tell each other once which rows they need);
  /// `rows` and `lower` must outlive this object. Throws std::logic_error
  /// on every rank if a rank asks another for a row that it does not keep.
  OwnRowsProduct(KrylovRows& rows, const SparseMatrix& lower, AllToAll all_to_all);
  /// y.head(share_kept) = the rows kept here of A x, from x.head(share_kept)
  /// (the extra rows of x and y are the caller's). Collective; allocates
  /// nothing.
  void multiply(Eigen::Ref<const Eigen::VectorXd> x, Eigen::Ref<Eigen::VectorXd> y);
  /// The other ranks' rows that this rank receives in a product, and the
  /// rows it sends; by rank (0 where the two ranks share no entry).
  [[nodiscard]] int received_rows() const { return border_.received_rows(); }
  [[nodiscard]] const std::vector<int>& receive_counts() const { return border_.receive_counts(); }
  [[nodiscard]] const std::vector<int>& send_counts() const { return border_.send_counts(); }

 private:
  KrylovRows& rows_;
  const SparseMatrix& lower_;
  BorderRows border_;
  // x and A x over the matrix's rows: own rows and the received rows of x
  // are set; its other rows stay 0 (they reach only rows of A x that
  // another rank keeps).
  Eigen::VectorXd x_whole_, y_whole_;
};

/// The rows of other ranks that the entries of this rank's own rows of
/// `lower` reach (what OwnRowsProduct receives), by rank, ascending; none
/// from this rank. No collective: rows_by_rank of
/// rows_reached_from_own_rows.
[[nodiscard]] std::vector<std::vector<int>> rows_needed_from_each_rank(const KrylovRows& rows,
                                                                       const SparseMatrix& lower);
/// Those rows flagged, one flag a row of `lower`.
[[nodiscard]] std::vector<char> rows_reached_from_own_rows(const KrylovRows& rows,
                                                           const SparseMatrix& lower);
/// The rows flagged in `flagged` (one flag a row of the vectors) that
/// other ranks keep, by the rank that keeps them, ascending; flagged rows
/// kept here are left out. Throws std::logic_error for a flagged row that
/// no rank keeps.
[[nodiscard]] std::vector<std::vector<int>> rows_by_rank(const KrylovRows& rows,
                                                         const std::vector<char>& flagged);

/// KrylovRows::AllGather over the MPI ranks (parallel_all_gather).
void gather_over_ranks(const double* mine, int count, double* all, const std::vector<int>& counts,
                       const std::vector<int>& displacements);
/// AllToAll over the MPI ranks (parallel_all_to_all).
void exchange_over_ranks(const double* send, const std::vector<int>& send_counts,
                         const std::vector<int>& send_displacements, double* receive,
                         const std::vector<int>& receive_counts,
                         const std::vector<int>& receive_displacements);

/// The Krylov rows of vectors whose first rows are K_ff's and whose last
/// ones go with the rows `extra_rows_beside` (KrylovRows), over the MPI
/// ranks of `backend` (parallel_all_gather); empty where the backend is
/// serial or runs on one rank (every rank then keeps every row, and nothing
/// is gathered).
[[nodiscard]] std::optional<KrylovRows> krylov_rows_of(const LinearSolver& backend,
                                                       const std::vector<int>& extra_rows_beside);

}  // namespace bipo
