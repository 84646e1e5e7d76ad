// The Newton step's GMRES with its vectors kept by rank (solver/gmres.hpp,
// solver/krylov_rows.hpp): two threads stand for two MPI ranks, exchanging
// through an all-gather of their own. Against the truth of the same GMRES
// on one process (whose arithmetic is the one it always had) and the
// system's residual: each rank keeps only its rows of every vector, and
// the ranks' rows put together are one solution, the same bits wherever
// they are gathered. And the product of a symmetric matrix with a vector
// kept by rank (OwnRowsProduct), each rank holding its own rows of the
// matrix complete and others partial: its rows bit for bit those of the
// whole matrix's product, with only the border rows exchanged.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <algorithm>
#include <atomic>
#include <barrier>
#include <thread>
#include <vector>

#include "solver/gmres.hpp"
#include "solver/krylov_rows.hpp"

namespace bipo {
namespace {

/// MPI_Allgatherv between `ranks` threads: each writes its values into a
/// shared buffer at its displacement; everyone copies the whole buffer.
class ThreadAllGather {
 public:
  explicit ThreadAllGather(int ranks) : sync_(ranks) {}
  void operator()(const double* mine, int count, double* all, const std::vector<int>& counts,
                  const std::vector<int>& displacements, int rank) {
    int total = 0;
    for (int c : counts) total += c;
    sync_.arrive_and_wait();  // the buffer is free (every earlier read ended)
    if (rank == 0) buffer_.assign(static_cast<std::size_t>(total), 0.0);
    sync_.arrive_and_wait();
    for (int k = 0; k < count; ++k) buffer_[displacements[rank] + k] = mine[k];
    sync_.arrive_and_wait();
    std::copy(buffer_.begin(), buffer_.end(), all);
  }

 private:
  std::barrier<> sync_;
  std::vector<double> buffer_;
};

/// A nonsymmetric, diagonally dominant system of n rows and a Jacobi
/// preconditioner that is off by a varying factor (so that GMRES needs
/// several iterations and a restart).
struct TestSystem {
  Eigen::MatrixXd a;
  Eigen::VectorXd b;
  explicit TestSystem(int n) {
    std::srand(7);
    a = Eigen::MatrixXd::Random(n, n) * 0.6;
    a.diagonal().array() += 4.0 + Eigen::ArrayXd::LinSpaced(n, 0.0, 10.0);
    b = Eigen::VectorXd::Random(n);
  }
  void apply(const Eigen::VectorXd& x, Eigen::VectorXd& y) const { y = a * x; }
  void precondition(Eigen::Ref<const Eigen::VectorXd> v, Eigen::VectorXd& z) const {
    z = v.cwiseQuotient(a.diagonal()) * 0.7;
  }
};

/// Rows 0 .. n - 1 over two ranks, interleaved in runs (as a graph
/// partition's rows are: neither contiguous nor sorted by rank).
LinearSolver::RowShare two_rank_share(int n) {
  LinearSolver::RowShare share;
  std::vector<int> mine[2];
  for (int row = 0; row < n; ++row) mine[(row / 3) % 2].push_back(row);
  for (const auto& rows : mine) {
    share.rows.insert(share.rows.end(), rows.begin(), rows.end());
    share.counts.push_back(static_cast<int>(rows.size()));
  }
  return share;
}

/// The all-gather of rank `rank` among the threads of `exchange`.
KrylovRows::AllGather thread_gather(ThreadAllGather& exchange, int rank) {
  return [&exchange, rank](const double* mine, int count, double* all,
                           const std::vector<int>& counts, const std::vector<int>& displacements) {
    exchange(mine, count, all, counts, displacements, rank);
  };
}

template <class Z>
void expect_two_ranks_solve_as_one(int restart) {
  constexpr int n_shared = 61;
  // The extra rows (held slots) go with the ranks of these rows: two with
  // rank 0's, two with rank 1's ((row / 3) % 2, two_rank_share).
  const std::vector<int> beside = {1, 4, 10, 0};
  const int n = n_shared + static_cast<int>(beside.size());
  const TestSystem system(n);
  const auto apply = [&](const Eigen::VectorXd& x, Eigen::VectorXd& y) { system.apply(x, y); };
  const auto precondition = [&](Eigen::Ref<const Eigen::VectorXd> v, Eigen::VectorXd& z) {
    system.precondition(v, z);
  };
  const double tolerance = 1e-10;

  Gmres<Z> serial(restart);
  Eigen::VectorXd serial_x;
  const int serial_iterations =
      serial.solve(apply, precondition, system.b, tolerance, true, serial_x);
  ASSERT_GT(serial_iterations, restart);  // a restart happens
  EXPECT_EQ(serial.rows_held(), n);

  ThreadAllGather exchange(2);
  const LinearSolver::RowShare share = two_rank_share(n_shared);
  Eigen::VectorXd x[2];
  int iterations[2] = {0, 0};
  Eigen::Index held[2] = {0, 0};
  const auto rank_run = [&](int rank) {
    KrylovRows rows(share, beside, rank, thread_gather(exchange, rank));
    // The operator and the preconditioner on the rows kept here, as the
    // sparse Newton step's are (through the whole vector here: the test's
    // truth, not the exchange under test).
    Eigen::VectorXd whole, result;
    const auto kept_apply = [&](const Eigen::VectorXd& x_kept, Eigen::VectorXd& y_kept) {
      rows.gather(x_kept, whole);
      system.apply(whole, result);
      y_kept.resize(rows.kept());
      rows.take(result, y_kept);
    };
    const auto kept_precondition = [&](Eigen::Ref<const Eigen::VectorXd> v_kept,
                                       Eigen::VectorXd& z_kept) {
      rows.gather(v_kept, whole);
      system.precondition(whole, result);
      z_kept.resize(rows.kept());
      rows.take(result, z_kept);
    };
    Eigen::VectorXd b_kept(rows.kept()), x_kept;
    rows.take(system.b, b_kept);
    Gmres<Z> gmres(restart);
    gmres.distribute(&rows);
    iterations[rank] = gmres.solve(kept_apply, kept_precondition, b_kept, tolerance, true, x_kept);
    held[rank] = gmres.rows_held();
    rows.gather(x_kept, x[rank]);
  };
  std::thread other(rank_run, 1);
  rank_run(0);
  other.join();

  EXPECT_EQ(held[0], share.counts[0] + 2);
  EXPECT_EQ(held[1], share.counts[1] + 2);
  EXPECT_LT(held[0], n);
  EXPECT_LT(held[1], n);
  // The same bits on both ranks, and the one-process solve's answer to the
  // tolerance (the sums of the dot products are added in another order).
  EXPECT_EQ(iterations[0], iterations[1]);
  EXPECT_TRUE(x[0] == x[1]);
  EXPECT_NEAR(iterations[0], serial_iterations, 1);
  EXPECT_LE((system.b - system.a * x[0]).norm(), 1.01 * tolerance * system.b.norm());
  EXPECT_LE((x[0] - serial_x).norm(), 1e-8 * serial_x.norm());
}

TEST(KrylovRows, GmresOnTwoRanksKeepsEachRanksRowsAndSolvesAsOnOne) {
  expect_two_ranks_solve_as_one<double>(8);
}

TEST(KrylovRows, GmresWithSinglePrecisionVectorsOnTwoRanksSolvesAsOnOne) {
  expect_two_ranks_solve_as_one<float>(8);
}

TEST(KrylovRows, GatherPutsEveryRanksRowsInTheirPlaces) {
  // One "rank" of two whose all-gather hands back a fixed other half: the
  // whole vector has every row in its place, rank 1's rows from the other.
  const LinearSolver::RowShare share = two_rank_share(10);
  KrylovRows rows(share, {0, 2}, 0,
                  [&](const double* mine, int count, double* all, const std::vector<int>& counts,
                      const std::vector<int>& displacements) {
                    ASSERT_EQ(counts.size(), 2u);
                    std::copy(mine, mine + count, all + displacements[0]);
                    for (int k = 0; k < counts[1]; ++k)
                      all[displacements[1] + k] = 1000.0 + share.rows[share.counts[0] + k];
                  });
  ASSERT_EQ(rows.kept(), share.counts[0] + 2);
  Eigen::VectorXd whole = Eigen::VectorXd::LinSpaced(12, 0.0, 11.0), mine(rows.kept()), gathered;
  rows.take(whole, mine);
  rows.gather(mine, gathered);
  ASSERT_EQ(gathered.size(), 12);
  for (int row = 0; row < 12; ++row) {
    const bool here = row >= 10 || (row / 3) % 2 == 0;
    EXPECT_EQ(gathered(row), here ? row : 1000.0 + row) << row;
  }
  // A vector made whole in place: the same.
  rows.take_rows_from_their_ranks(whole);
  EXPECT_TRUE(whole == gathered);
  EXPECT_EQ(rows.largest_kept(), std::max(share.counts[0] + 2, share.counts[1]));
}

TEST(KrylovRows, RefusesAShareThatDoesNotCoverItsRows) {
  LinearSolver::RowShare share = two_rank_share(10);
  share.counts[1] -= 1;
  EXPECT_THROW(KrylovRows(share, {}, 0, {}), std::logic_error);
  EXPECT_THROW(KrylovRows(two_rank_share(10), {}, 2, {}), std::logic_error);
  EXPECT_THROW(KrylovRows(two_rank_share(10), {10}, 0, {}), std::logic_error);  // no row 10
  LinearSolver::RowShare twice = two_rank_share(10);
  twice.rows[1] = twice.rows[0];
  EXPECT_THROW(KrylovRows(twice, {}, 0, {}), std::logic_error);
}

TEST(KrylovRows, ExtraRowsGoWithTheRanksOfTheirRows) {
  // Rows 0-2 and 6-8 are rank 0's, 3-5 and 9 rank 1's; extra row 10 goes
  // with row 4 (rank 1), 11 with row 7 (rank 0), 12 with row 9 (rank 1).
  const LinearSolver::RowShare share = two_rank_share(10);
  const KrylovRows rank0(share, {4, 7, 9}, 0, {}), rank1(share, {4, 7, 9}, 1, {});
  EXPECT_EQ(rank0.share_kept(), share.counts[0]);
  EXPECT_EQ(rank1.share_kept(), share.counts[1]);
  const std::vector<int> rows0(rank0.kept_rows(), rank0.kept_rows() + rank0.kept());
  const std::vector<int> rows1(rank1.kept_rows(), rank1.kept_rows() + rank1.kept());
  EXPECT_EQ(rows0, (std::vector<int>{0, 1, 2, 6, 7, 8, 11}));
  EXPECT_EQ(rows1, (std::vector<int>{3, 4, 5, 9, 10, 12}));
  EXPECT_EQ(rank0.counts(), (std::vector<int>{7, 6}));
}

/// A symmetric positive definite matrix of n rows with the couplings of a
/// 3D grid of side `side` (n = side^3, rows in grid order), lower triangle.
SparseMatrix grid_lower(int side) {
  const int n = side * side * side;
  std::vector<Eigen::Triplet<double>> entries;
  std::srand(11);
  for (int i = 0; i < n; ++i) {
    const int x = i % side, y = (i / side) % side, z = i / (side * side);
    entries.emplace_back(i, i, 10.0 + std::rand() % 7);
    for (const int step : {1, side, side * side}) {
      const bool inside = step == 1 ? x > 0 : step == side ? y > 0 : z > 0;
      if (inside) entries.emplace_back(i, i - step, -1.0 + 0.01 * (std::rand() % 50));
    }
  }
  SparseMatrix lower(n, n);
  lower.setFromTriplets(entries.begin(), entries.end());
  return lower;
}

/// MPI_Alltoallv between `ranks` threads: each puts what it sends to rank
/// r in the box from it to r; everyone then reads the boxes addressed to
/// it. A box whose size is not what its receiver expects is remembered.
class ThreadAllToAll {
 public:
  explicit ThreadAllToAll(int ranks)
      : ranks_(ranks), sync_(ranks), boxes_(static_cast<std::size_t>(ranks * ranks)) {}
  void operator()(int rank, const double* send, const std::vector<int>& send_counts,
                  const std::vector<int>& send_displacements, double* receive,
                  const std::vector<int>& receive_counts,
                  const std::vector<int>& receive_displacements) {
    sync_.arrive_and_wait();  // every box is free (every earlier read ended)
    for (int r = 0; r < ranks_; ++r)
      boxes_[rank * ranks_ + r].assign(send + send_displacements[r],
                                       send + send_displacements[r] + send_counts[r]);
    sync_.arrive_and_wait();
    for (int r = 0; r < ranks_; ++r) {
      const std::vector<double>& box = boxes_[r * ranks_ + rank];
      if (static_cast<int>(box.size()) != receive_counts[r]) mismatched_ = true;
      std::copy(box.begin(),
                box.begin() + std::min<std::ptrdiff_t>(std::ssize(box), receive_counts[r]),
                receive + receive_displacements[r]);
    }
  }
  [[nodiscard]] bool mismatched() const { return mismatched_; }

 private:
  int ranks_;
  std::barrier<> sync_;
  std::vector<std::vector<double>> boxes_;
  std::atomic<bool> mismatched_{false};
};

/// A rank's MPI_Alltoallv through `exchange`, as AllToAll.
AllToAll thread_exchange(ThreadAllToAll& exchange, int rank) {
  return [&exchange, rank](const double* send, const std::vector<int>& send_counts,
                           const std::vector<int>& send_displacements, double* receive,
                           const std::vector<int>& receive_counts,
                           const std::vector<int>& receive_displacements) {
    exchange(rank, send, send_counts, send_displacements, receive, receive_counts,
             receive_displacements);
  };
}

/// Three ranks' rows of 12 (row % 3 is the rank), listed backwards (a
/// partition's rows are in no order).
LinearSolver::RowShare three_rank_share() {
  LinearSolver::RowShare share;
  for (int r = 0; r < 3; ++r) {
    for (int row = 11; row >= 0; --row)
      if (row % 3 == r) share.rows.push_back(row);
    share.counts.push_back(4);
  }
  return share;
}

// Rank 0's results between increments: on three ranks, every rank's rows
// (the share's, and extra rows beside them) reach their places on rank 0,
// and the other ranks get nothing.
TEST(KrylovRows, GatherOnTheFirstRankPutsEveryRanksRowsInTheirPlacesThereAlone) {
  constexpr int ranks = 3, n = 12;
  const LinearSolver::RowShare share = three_rank_share();
  const std::vector<int> beside{4, 0, 7};  // extra rows 12, 13, 14: ranks 1, 0, 1
  const Eigen::VectorXd truth = Eigen::VectorXd::LinSpaced(n + 3, 1.0, 15.0).array().exp();
  ThreadAllGather gather(ranks);
  ThreadAllToAll exchange(ranks);
  std::vector<Eigen::VectorXd> gathered(ranks);
  std::vector<int> kept(ranks);
  const auto rank_run = [&](int rank) {
    const KrylovRows rows(share, beside, rank, thread_gather(gather, rank));
    Eigen::VectorXd mine(rows.kept());
    rows.take(truth, mine);
    kept[rank] = rows.kept();
    rows.gather_on_first_rank(mine, gathered[rank], thread_exchange(exchange, rank));
  };
  std::vector<std::thread> others;
  for (int r = 1; r < ranks; ++r) others.emplace_back(rank_run, r);
  rank_run(0);
  for (std::thread& t : others) t.join();
  EXPECT_FALSE(exchange.mismatched());
  EXPECT_EQ(kept, (std::vector<int>{5, 6, 4}));
  EXPECT_TRUE(gathered[0] == truth) << gathered[0].transpose();
  EXPECT_EQ(gathered[1].size(), 0);
  EXPECT_EQ(gathered[2].size(), 0);
}

// The equilibrium check's exchange (any rows a rank reads, not only a
// matrix's borders): each rank's asked rows arrive with their owners'
// values, its own rows and the rest of the vector are left alone, and
// ranks that read nothing of each other exchange nothing.
TEST(BorderRows, EachRankReceivesTheRowsItAskedForAndNothingElseChanges) {
  constexpr int ranks = 3, n = 12;
  const LinearSolver::RowShare share = three_rank_share();
  // Rank 0 reads rows 1 and 10 of rank 1; rank 1 reads 2 and 8 of rank 2
  // and 0 of rank 0; rank 2 reads nothing.
  const std::vector<std::vector<std::vector<int>>> asked{
      {{}, {1, 10}, {}}, {{0}, {}, {2, 8}}, {{}, {}, {}}};
  const Eigen::VectorXd truth = Eigen::VectorXd::LinSpaced(n, 1.0, 12.0).array().sqrt();
  ThreadAllGather gather(ranks);
  ThreadAllToAll exchange(ranks);
  std::vector<Eigen::VectorXd> whole(ranks);
  std::vector<std::vector<int>> received(ranks), sent(ranks);
  const auto rank_run = [&](int rank) {
    KrylovRows rows(share, {}, rank, thread_gather(gather, rank));
    BorderRows border(rows, asked[rank], n, thread_exchange(exchange, rank));
    Eigen::VectorXd mine(rows.kept());
    rows.take(truth, mine);
    whole[rank] = Eigen::VectorXd::Constant(n, -1.0);
    border.receive(mine, whole[rank]);
    border.receive(mine, whole[rank]);  // twice: the same
    received[rank] = border.receive_counts();
    sent[rank] = border.send_counts();
  };
  std::vector<std::thread> others;
  for (int r = 1; r < ranks; ++r) others.emplace_back(rank_run, r);
  rank_run(0);
  for (std::thread& t : others) t.join();
  EXPECT_FALSE(exchange.mismatched());
  for (int rank = 0; rank < ranks; ++rank)
    for (int row = 0; row < n; ++row) {
      bool asked_for = false;
      for (const std::vector<int>& rows : asked[rank])
        asked_for = asked_for || std::find(rows.begin(), rows.end(), row) != rows.end();
      EXPECT_EQ(whole[rank](row), asked_for ? truth(row) : -1.0) << rank << " " << row;
    }
  EXPECT_EQ(received[0], (std::vector<int>{0, 2, 0}));
  EXPECT_EQ(received[1], (std::vector<int>{1, 0, 2}));
  EXPECT_EQ(received[2], (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(sent[0], (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(sent[1], (std::vector<int>{2, 0, 0}));
  EXPECT_EQ(sent[2], (std::vector<int>{0, 2, 0}));
}

// A rank that asks another for a row the other does not keep would read
// garbage, or leave the others waiting: every rank refuses at set-up.
TEST(BorderRows, EveryRankRefusesWhenOneAsksForARowThatItsRankDoesNotKeep) {
  constexpr int ranks = 3, n = 12;
  const LinearSolver::RowShare share = three_rank_share();
  const std::vector<std::vector<std::vector<int>>> asked{
      {{}, {1}, {}}, {{}, {}, {3}}, {{}, {}, {}}};  // rank 1 asks rank 2 for rank 0's row 3
  ThreadAllGather gather(ranks);
  ThreadAllToAll exchange(ranks);
  std::vector<int> refused(ranks, 0);
  const auto rank_run = [&](int rank) {
    KrylovRows rows(share, {}, rank, thread_gather(gather, rank));
    try {
      BorderRows border(rows, asked[rank], n, thread_exchange(exchange, rank));
    } catch (const std::logic_error&) {
      refused[rank] = 1;
    }
  };
  std::vector<std::thread> others;
  for (int r = 1; r < ranks; ++r) others.emplace_back(rank_run, r);
  rank_run(0);
  for (std::thread& t : others) t.join();
  EXPECT_EQ(refused, (std::vector<int>{1, 1, 1}));
}

/// The product of a 3D grid's matrix (side 6) with a vector kept by
/// `ranks` ranks (1, 2 or 3), each rank 6 / ranks layers of the grid in z
/// (slabs, as a graph partition divides it), its rows listed backwards
/// (a partition's rows are in no particular order). Each rank's matrix
/// holds its own rows complete (every entry touching them) and more
/// entries between other ranks' rows, with other values (a rank's partial
/// rows: distributed_assembly.hpp), which must not count. Returns each
/// rank's product gathered whole and its OwnRowsProduct's counts.
struct ProductByRank {
  std::vector<Eigen::VectorXd> y;
  std::vector<int> received;
  std::vector<std::vector<int>> receive_counts, send_counts;
  bool mismatched = false;
};

constexpr int grid_side = 6, layer = grid_side * grid_side;

ProductByRank product_by_rank(int ranks, const SparseMatrix& whole, const Eigen::VectorXd& x) {
  const int n = grid_side * layer;
  const auto rank_of = [&](int row) { return row / (n / ranks); };
  LinearSolver::RowShare share;
  for (int r = 0; r < ranks; ++r) {
    for (int row = n - 1; row >= 0; --row)
      if (rank_of(row) == r) share.rows.push_back(row);
    share.counts.push_back(n / ranks);
  }
  const auto rank_matrix = [&](int rank) {
    std::vector<Eigen::Triplet<double>> entries;
    for (int j = 0; j < n; ++j)
      for (SparseMatrix::InnerIterator it(whole, j); it; ++it) {
        const bool own = rank_of(static_cast<int>(it.row())) == rank || rank_of(j) == rank;
        const bool partial = !own && it.row() - j == layer;
        if (own) entries.emplace_back(it.row(), j, it.value());
        if (partial) entries.emplace_back(it.row(), j, 1e3 * it.value());
      }
    SparseMatrix lower(n, n);
    lower.setFromTriplets(entries.begin(), entries.end());
    return lower;
  };
  ThreadAllGather gather(ranks);
  ThreadAllToAll exchange(ranks);
  ProductByRank result;
  result.y.resize(static_cast<std::size_t>(ranks));
  result.received.resize(static_cast<std::size_t>(ranks));
  result.receive_counts.resize(static_cast<std::size_t>(ranks));
  result.send_counts.resize(static_cast<std::size_t>(ranks));
  const auto rank_run = [&](int rank) {
    const SparseMatrix lower = rank_matrix(rank);
    KrylovRows rows(share, {}, rank, thread_gather(gather, rank));
    OwnRowsProduct product(rows, lower, thread_exchange(exchange, rank));
    Eigen::VectorXd x_kept(rows.kept()), y_kept(rows.kept());
    rows.take(x, x_kept);
    product.multiply(x_kept, y_kept);
    product.multiply(x_kept, y_kept);  // twice: nothing left over from the first
    rows.gather(y_kept, result.y[rank]);
    result.received[rank] = product.received_rows();
    result.receive_counts[rank] = product.receive_counts();
    result.send_counts[rank] = product.send_counts();
  };
  std::vector<std::thread> others;
  for (int r = 1; r < ranks; ++r) others.emplace_back(rank_run, r);
  rank_run(0);
  for (std::thread& t : others) t.join();
  result.mismatched = exchange.mismatched();
  return result;
}

TEST(OwnRowsProduct, EachRanksRowsAreThoseOfTheWholeProductBitForBitWithOnlyBordersExchanged) {
  const SparseMatrix whole = grid_lower(grid_side);
  const Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(whole.rows(), -1.0, 2.0).array().sin();
  const Eigen::VectorXd truth = whole.selfadjointView<Eigen::Lower>() * x;
  // Two ranks of three layers each would be the grid's halves; three ranks
  // of two layers: the middle rank has two neighbours, the outer ones one.
  const ProductByRank result = product_by_rank(3, whole, x);
  EXPECT_FALSE(result.mismatched);
  for (int r = 0; r < 3; ++r) EXPECT_TRUE(result.y[r] == truth) << "rank " << r;
  // A rank receives the layer next to its own from each neighbour, and
  // nothing passes between ranks 0 and 2, which share no entry.
  EXPECT_EQ(result.received, (std::vector<int>{layer, 2 * layer, layer}));
  EXPECT_EQ(result.receive_counts[0], (std::vector<int>{0, layer, 0}));
  EXPECT_EQ(result.receive_counts[1], (std::vector<int>{layer, 0, layer}));
  EXPECT_EQ(result.receive_counts[2], (std::vector<int>{0, layer, 0}));
  EXPECT_EQ(result.send_counts[0], (std::vector<int>{0, layer, 0}));
  EXPECT_EQ(result.send_counts[1], (std::vector<int>{layer, 0, layer}));
  EXPECT_EQ(result.send_counts[2], (std::vector<int>{0, layer, 0}));
}

TEST(OwnRowsProduct, OneRankKeepsEveryRowAndExchangesNothing) {
  const SparseMatrix whole = grid_lower(grid_side);
  const Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(whole.rows(), 0.5, 3.0).array().cos();
  const Eigen::VectorXd truth = whole.selfadjointView<Eigen::Lower>() * x;
  const ProductByRank result = product_by_rank(1, whole, x);
  EXPECT_FALSE(result.mismatched);
  EXPECT_TRUE(result.y[0] == truth);
  EXPECT_EQ(result.received[0], 0);
}

}  // namespace
}  // namespace bipo
