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
}

void KrylovRows::size_buffers() {
  // On first use: an instance that never gathers whole (the analysis's
  // rows of the free dofs, the Newton step's) holds no vector of the
  // whole mesh.
  gathered_.resize(static_cast<Eigen::Index>(all_rows_.size()));
  mine_.resize(counts_[rank_]);
}

int KrylovRows::largest_kept() const {
  return *std::max_element(counts_.begin(), counts_.end());
}

std::vector<int> KrylovRows::rank_of_each_row() const {
  std::vector<int> rank(all_rows_.size(), -1);
  for (std::size_t r = 0; r < counts_.size(); ++r)
    for (int k = displacements_[r]; k < displacements_[r] + counts_[r]; ++k)
      rank[all_rows_[k]] = static_cast<int>(r);
  return rank;
}

std::vector<int> KrylovRows::position_of_each_row() const {
  std::vector<int> position(all_rows_.size(), -1);
  for (int k = 0; k < kept(); ++k) position[kept_rows()[k]] = k;
  return position;
}

void KrylovRows::take(Eigen::Ref<const Eigen::VectorXd> whole,
                      Eigen::Ref<Eigen::VectorXd> mine) const {
  const int* rows = kept_rows();
  for (int k = 0; k < kept(); ++k) mine(k) = whole(rows[k]);
}

void KrylovRows::gather(Eigen::Ref<const Eigen::VectorXd> mine, Eigen::VectorXd& whole) {
  if (gathered_.size() != static_cast<Eigen::Index>(all_rows_.size())) size_buffers();
  whole.resize(gathered_.size());
  gather_into(mine, gathered_, whole);
}

void KrylovRows::gather_on_first_rank(Eigen::Ref<const Eigen::VectorXd> mine,
                                      Eigen::VectorXd& whole, const AllToAll& all_to_all) const {
  const std::vector<int> nothing(counts_.size(), 0);
  std::vector<int> to_first = nothing;
  to_first[0] = kept();
  if (rank_ != 0) {
    whole.resize(0);
    all_to_all(mine.data(), to_first, nothing, nullptr, nothing, nothing);
    return;
  }
  Eigen::VectorXd received(static_cast<Eigen::Index>(all_rows_.size()));
  all_to_all(mine.data(), to_first, nothing, received.data(), counts_, displacements_);
  whole.resize(received.size());
  put_in_place(received, whole);
}

void KrylovRows::take_rows_from_their_ranks(Eigen::Ref<Eigen::VectorXd> vector) {
  if (gathered_.size() != static_cast<Eigen::Index>(all_rows_.size())) size_buffers();
  take(vector, mine_);
  gather_into(mine_, gathered_, vector);
}

void KrylovRows::gather_into(Eigen::Ref<const Eigen::VectorXd> mine, Eigen::VectorXd& received,
                             Eigen::Ref<Eigen::VectorXd> whole) const {
  all_gather_(mine.data(), kept(), received.data(), counts_, displacements_);
  put_in_place(received, whole);
}

void KrylovRows::put_in_place(const Eigen::VectorXd& received,
                              Eigen::Ref<Eigen::VectorXd> whole) const {
  for (Eigen::Index k = 0; k < received.size(); ++k) whole(all_rows_[k]) = received(k);
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

std::vector<char> rows_reached_from_own_rows(const KrylovRows& rows, const SparseMatrix& lower) {
  const auto n = static_cast<int>(lower.rows());
  const int own = rows.share_kept();
  const int* kept = rows.kept_rows();
  std::vector<char> is_own(static_cast<std::size_t>(n), 0);
  for (int k = 0; k < own; ++k) {
    if (kept[k] < 0 || kept[k] >= n)
      throw std::logic_error("KrylovRows: a row kept here is not the matrix's");
    is_own[kept[k]] = 1;
  }
  // The other ranks' rows that an own row's entries reach: what an own row
  // of the product needs (own rows are complete here; the entries between
  // other ranks' rows reach only their rows of the product).
  std::vector<char> needed(static_cast<std::size_t>(n), 0);
  for (int j = 0; j < lower.outerSize(); ++j)
    for (SparseMatrix::InnerIterator it(lower, j); it; ++it)
      if (is_own[it.row()] != is_own[j]) needed[is_own[j] != 0 ? it.row() : j] = 1;
  return needed;
}

std::vector<std::vector<int>> rows_by_rank(const KrylovRows& rows,
                                           const std::vector<char>& flagged) {
  const std::vector<int> rank_of_row = rows.rank_of_each_row();
  std::vector<std::vector<int>> asked(rows.counts().size());
  for (int row = 0; row < static_cast<int>(flagged.size()); ++row)
    if (flagged[row] != 0) {
      if (row >= static_cast<int>(rank_of_row.size()) || rank_of_row[row] < 0)
        throw std::logic_error("KrylovRows: a row read here is kept by no rank");
      if (rank_of_row[row] != rows.rank()) asked[rank_of_row[row]].push_back(row);
    }
  return asked;
}

std::vector<std::vector<int>> rows_needed_from_each_rank(const KrylovRows& rows,
                                                         const SparseMatrix& lower) {
  return rows_by_rank(rows, rows_reached_from_own_rows(rows, lower));
}

BorderRows::BorderRows(KrylovRows& rows, const std::vector<std::vector<int>>& asked, int n,
                       AllToAll all_to_all)
    : all_to_all_(std::move(all_to_all)) {
  const auto ranks = static_cast<int>(asked.size());
  receive_counts_.assign(static_cast<std::size_t>(ranks), 0);
  for (int r = 0; r < ranks; ++r) {
    receive_counts_[r] = static_cast<int>(asked[r].size());
    received_rows_.insert(received_rows_.end(), asked[r].begin(), asked[r].end());
  }
  receive_displacements_.assign(static_cast<std::size_t>(ranks), 0);
  std::partial_sum(receive_counts_.begin(), receive_counts_.end() - 1,
                   receive_displacements_.begin() + 1);
  // Each rank tells each other how many of its rows, and which, it needs.
  const std::vector<int> ones(static_cast<std::size_t>(ranks), 1);
  std::vector<int> each_rank(static_cast<std::size_t>(ranks));
  std::iota(each_rank.begin(), each_rank.end(), 0);
  const std::vector<double> wanted(receive_counts_.begin(), receive_counts_.end());
  std::vector<double> to_send(static_cast<std::size_t>(ranks));
  all_to_all_(wanted.data(), ones, each_rank, to_send.data(), ones, each_rank);
  send_counts_.assign(to_send.begin(), to_send.end());
  send_displacements_.assign(static_cast<std::size_t>(ranks), 0);
  std::partial_sum(send_counts_.begin(), send_counts_.end() - 1, send_displacements_.begin() + 1);
  const std::vector<double> asked_rows(received_rows_.begin(), received_rows_.end());
  std::vector<double> rows_to_send(
      static_cast<std::size_t>(send_displacements_.back() + send_counts_.back()));
  all_to_all_(asked_rows.data(), receive_counts_, receive_displacements_, rows_to_send.data(),
              send_counts_, send_displacements_);
  const std::vector<int> position = rows.position_of_each_row();
  bool all_kept_here = true;
  for (const double row : rows_to_send) {
    const int at = row >= 0 && row < n ? position[static_cast<int>(row)] : -1;
    all_kept_here = all_kept_here && at >= 0;
    send_positions_.push_back(at);
  }
  // Every rank learns it, so that none is left waiting in an exchange.
  if (rows.sum(all_kept_here ? 0.0 : 1.0) > 0.0)
    throw std::logic_error("BorderRows: a rank asked another for a row that it does not keep");
  sent_.resize(static_cast<Eigen::Index>(send_positions_.size()));
  received_.resize(static_cast<Eigen::Index>(received_rows_.size()));
}

void BorderRows::receive(Eigen::Ref<const Eigen::VectorXd> mine,
                         Eigen::Ref<Eigen::VectorXd> whole) {
  for (std::size_t k = 0; k < send_positions_.size(); ++k)
    sent_(static_cast<Eigen::Index>(k)) = mine(send_positions_[k]);
  all_to_all_(sent_.data(), send_counts_, send_displacements_, received_.data(), receive_counts_,
              receive_displacements_);
  for (std::size_t k = 0; k < received_rows_.size(); ++k)
    whole(received_rows_[k]) = received_(static_cast<Eigen::Index>(k));
}

OwnRowsProduct::OwnRowsProduct(KrylovRows& rows, const SparseMatrix& lower, AllToAll all_to_all)
    : rows_(rows),
      lower_(lower),
      border_(rows, rows_needed_from_each_rank(rows, lower), static_cast<int>(lower.rows()),
              std::move(all_to_all)) {
  const auto n = static_cast<Eigen::Index>(lower.rows());
  x_whole_.setZero(n);
  y_whole_.resize(n);
}

void OwnRowsProduct::multiply(Eigen::Ref<const Eigen::VectorXd> x, Eigen::Ref<Eigen::VectorXd> y) {
  border_.receive(x, x_whole_);
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

void exchange_over_ranks(const double* send, const std::vector<int>& send_counts,
                         const std::vector<int>& send_displacements, double* receive,
                         const std::vector<int>& receive_counts,
                         const std::vector<int>& receive_displacements) {
  parallel_all_to_all(send, send_counts, send_displacements, receive, receive_counts,
                      receive_displacements);
}

}  // namespace bipo
