// The Krylov vectors' rows by rank (krylov_rows.hpp).
#include "solver/krylov_rows.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "parallel/parallel_runtime.hpp"

namespace bipo {

KrylovRows::KrylovRows(const LinearSolver::RowShare& share, int extra_rows, int rank,
                       AllGather all_gather)
    : all_rows_(share.rows),
      counts_(share.counts),
      rank_(rank),
      all_gather_(std::move(all_gather)) {
  const int ranks = static_cast<int>(counts_.size());
  if (ranks == 0 || rank < 0 || rank >= ranks || extra_rows < 0 ||
      std::accumulate(counts_.begin(), counts_.end(), 0) != static_cast<int>(all_rows_.size()))
    throw std::logic_error("KrylovRows: the share does not divide its rows among the ranks");
  // The extra rows (the held components' slots) at the end of rank 0's.
  const int n = static_cast<int>(all_rows_.size());
  std::vector<int> extra(static_cast<std::size_t>(extra_rows));
  std::iota(extra.begin(), extra.end(), n);
  all_rows_.insert(all_rows_.begin() + counts_[0], extra.begin(), extra.end());
  counts_[0] += extra_rows;
  displacements_.assign(static_cast<std::size_t>(ranks), 0);
  std::partial_sum(counts_.begin(), counts_.end() - 1, displacements_.begin() + 1);
  ones_.assign(static_cast<std::size_t>(ranks), 1);
  rank_positions_.resize(static_cast<std::size_t>(ranks));
  std::iota(rank_positions_.begin(), rank_positions_.end(), 0);
  parts_.resize(static_cast<std::size_t>(ranks));
  gathered_.resize(n + extra_rows);
  mine_.resize(counts_[rank_]);
}

int KrylovRows::largest_kept() const {
  return *std::max_element(counts_.begin(), counts_.end());
}

void KrylovRows::take(Eigen::Ref<const Eigen::VectorXd> whole,
                      Eigen::Ref<Eigen::VectorXd> mine) const {
  const int* rows = kept_rows();
  for (int k = 0; k < kept(); ++k) mine(k) = whole(rows[k]);
}

void KrylovRows::gather(Eigen::Ref<const Eigen::VectorXd> mine, Eigen::VectorXd& whole) {
  all_gather_(mine.data(), kept(), gathered_.data(), counts_, displacements_);
  whole.resize(gathered_.size());
  for (Eigen::Index k = 0; k < gathered_.size(); ++k) whole(all_rows_[k]) = gathered_(k);
}

void KrylovRows::take_rows_from_their_ranks(Eigen::Ref<Eigen::VectorXd> vector) {
  take(vector, mine_);
  all_gather_(mine_.data(), kept(), gathered_.data(), counts_, displacements_);
  for (Eigen::Index k = 0; k < gathered_.size(); ++k) vector(all_rows_[k]) = gathered_(k);
}

const std::vector<double>& KrylovRows::parts_of_every_rank(double part) {
  all_gather_(&part, 1, parts_.data(), ones_, rank_positions_);
  return parts_;
}

double KrylovRows::sum(double part) {
  double total = 0.0;
  for (const double p : parts_of_every_rank(part)) total += p;
  return total;
}

std::optional<KrylovRows> krylov_rows_of(const LinearSolver& backend, int extra_rows) {
  LinearSolver::RowShare share = backend.row_share();
  if (share.counts.size() < 2) return std::nullopt;
  return KrylovRows(share, extra_rows, parallel_rank(), gather_over_ranks);
}

void gather_over_ranks(const double* mine, int count, double* all, const std::vector<int>& counts,
                       const std::vector<int>& displacements) {
  parallel_all_gather(mine, count, all, counts, displacements);
}

}  // namespace bipo
