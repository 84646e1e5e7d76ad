// The Krylov vectors' rows by rank (krylov_rows.hpp).
#include "solver/krylov_rows.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "parallel/parallel_runtime.hpp"

namespace bipo {

KrylovRows::KrylovRows(const LinearSolver::RowShare& share,
                       const std::vector<int>& extra_rows_beside, int rank, AllGather all_gather)
    : counts_(share.counts), rank_(rank), all_gather_(std::move(all_gather)) {
  const int ranks = static_cast<int>(counts_.size());
  const int n = static_cast<int>(share.rows.size());
  if (rank < 0 || rank >= ranks) throw std::logic_error("KrylovRows: no such rank");
  const std::vector<int> rank_of_row = LinearSolver::rank_of_each_row(share);
  share_kept_ = counts_[rank_];
  std::vector<int> extra_rank(extra_rows_beside.size());
  for (std::size_t k = 0; k < extra_rows_beside.size(); ++k) {
    const int beside = extra_rows_beside[k];
    if (beside < 0 || beside >= n)
      throw std::logic_error("KrylovRows: an extra row goes with a row that is not the share's");
    extra_rank[k] = rank_of_row[beside];
  }
  // Rank by rank: the share's rows, then the extra rows that go with them.
  all_rows_.reserve(static_cast<std::size_t>(n) + extra_rank.size());
  for (int r = 0, k = 0; r < ranks; ++r) {
    all_rows_.insert(all_rows_.end(), share.rows.begin() + k, share.rows.begin() + k + counts_[r]);
    k += counts_[r];
    for (std::size_t e = 0; e < extra_rank.size(); ++e)
      if (extra_rank[e] == r) {
        all_rows_.push_back(n + static_cast<int>(e));
        ++counts_[r];
      }
  }
  displacements_.assign(static_cast<std::size_t>(ranks), 0);
  std::partial_sum(counts_.begin(), counts_.end() - 1, displacements_.begin() + 1);
  ones_.assign(static_cast<std::size_t>(ranks), 1);
  rank_positions_.resize(static_cast<std::size_t>(ranks));
  std::iota(rank_positions_.begin(), rank_positions_.end(), 0);
  parts_.resize(static_cast<std::size_t>(ranks));
  gathered_.resize(static_cast<Eigen::Index>(all_rows_.size()));
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

void KrylovRows::gather_parts(const double* mine, int count, std::vector<double>& all,
                              std::vector<int>* counts) {
  const std::vector<double>& every = parts_of_every_rank(static_cast<double>(count));
  std::vector<int> each(every.begin(), every.end()), displacements(every.size(), 0);
  std::partial_sum(each.begin(), each.end() - 1, displacements.begin() + 1);
  all.resize(static_cast<std::size_t>(displacements.back() + each.back()));
  all_gather_(mine, count, all.data(), each, displacements);
  if (counts != nullptr) *counts = std::move(each);
}

OwnRowsProduct::OwnRowsProduct(KrylovRows& rows, const SparseMatrix& lower)
    : rows_(rows), lower_(lower) {
  const auto n = static_cast<int>(lower.rows());
  const int own = rows.share_kept();
  const int* kept = rows.kept_rows();
  std::vector<int> position(static_cast<std::size_t>(n), -1);  // among the rows kept here
  for (int k = 0; k < own; ++k) {
    if (kept[k] < 0 || kept[k] >= n)
      throw std::logic_error("OwnRowsProduct: a row kept here is not the matrix's");
    position[kept[k]] = k;
  }
  // An entry between an own row and another rank's: the own row is a
  // border row (the other rank's own rows are complete in its matrix, so
  // it finds the same coupling from its side).
  std::vector<char> border(static_cast<std::size_t>(own), 0);
  for (int j = 0; j < lower.outerSize(); ++j)
    for (SparseMatrix::InnerIterator it(lower, j); it; ++it) {
      const int pi = position[it.row()], pj = position[j];
      if ((pi >= 0) != (pj >= 0)) border[pi >= 0 ? pi : pj] = 1;
    }
  std::vector<double> mine;
  for (int k = 0; k < own; ++k)
    if (border[k] != 0) {
      own_border_positions_.push_back(k);
      mine.push_back(kept[k]);
    }
  const auto own_borders = static_cast<int>(own_border_positions_.size());
  std::vector<double> every;
  rows_.gather_parts(mine.data(), own_borders, every, &border_counts_);
  border_rows_.assign(every.begin(), every.end());
  border_displacements_.assign(border_counts_.size(), 0);
  std::partial_sum(border_counts_.begin(), border_counts_.end() - 1,
                   border_displacements_.begin() + 1);
  sent_.resize(own_borders);
  received_.resize(static_cast<Eigen::Index>(border_rows_.size()));
  x_whole_.setZero(n);
  y_whole_.resize(n);
}

void OwnRowsProduct::multiply(Eigen::Ref<const Eigen::VectorXd> x, Eigen::Ref<Eigen::VectorXd> y) {
  for (std::size_t k = 0; k < own_border_positions_.size(); ++k)
    sent_(static_cast<Eigen::Index>(k)) = x(own_border_positions_[k]);
  rows_.all_gather(sent_.data(), static_cast<int>(sent_.size()), received_.data(), border_counts_,
                   border_displacements_);
  for (std::size_t k = 0; k < border_rows_.size(); ++k)
    x_whole_(border_rows_[k]) = received_(static_cast<Eigen::Index>(k));
  const int* kept = rows_.kept_rows();
  for (int k = 0; k < rows_.share_kept(); ++k) x_whole_(kept[k]) = x(k);
  y_whole_.noalias() = lower_.selfadjointView<Eigen::Lower>() * x_whole_;
  for (int k = 0; k < rows_.share_kept(); ++k) y(k) = y_whole_(kept[k]);
}

std::optional<KrylovRows> krylov_rows_of(const LinearSolver& backend,
                                         const std::vector<int>& extra_rows_beside) {
  LinearSolver::RowShare share = backend.row_share();
  if (share.counts.size() < 2) return std::nullopt;
  return KrylovRows(share, extra_rows_beside, parallel_rank(), gather_over_ranks);
}

void gather_over_ranks(const double* mine, int count, double* all, const std::vector<int>& counts,
                       const std::vector<int>& displacements) {
  parallel_all_gather(mine, count, all, counts, displacements);
}

}  // namespace bipo
