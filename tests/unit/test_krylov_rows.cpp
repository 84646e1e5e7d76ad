// The Newton step's GMRES with its vectors kept by rank (solver/gmres.hpp,
// solver/krylov_rows.hpp): two threads stand for two MPI ranks, exchanging
// through an all-gather of their own. Against the truth of the same GMRES
// on one process (whose arithmetic is the one it always had) and the
// system's residual: each rank keeps only its rows of the basis and of the
// preconditioned vectors, gets the whole solution, and both ranks get the
// same bits.
#include <gtest/gtest.h>

#include <Eigen/Dense>
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

template <class Z>
void expect_two_ranks_solve_as_one(int restart) {
  constexpr int n_shared = 61, extra = 4;  // the extra rows: rank 0's (held slots)
  constexpr int n = n_shared + extra;
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
    KrylovRows rows(
        share, extra, rank,
        [&exchange, rank](const double* mine, int count, double* all,
                          const std::vector<int>& counts, const std::vector<int>& displacements) {
          exchange(mine, count, all, counts, displacements, rank);
        });
    Gmres<Z> gmres(restart);
    gmres.distribute(&rows);
    iterations[rank] = gmres.solve(apply, precondition, system.b, tolerance, true, x[rank]);
    held[rank] = gmres.rows_held();
  };
  std::thread other(rank_run, 1);
  rank_run(0);
  other.join();

  EXPECT_EQ(held[0], share.counts[0] + extra);
  EXPECT_EQ(held[1], share.counts[1]);
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
  KrylovRows rows(share, 2, 0,
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
  EXPECT_EQ(rows.largest_kept(), std::max(share.counts[0] + 2, share.counts[1]));
}

TEST(KrylovRows, RefusesAShareThatDoesNotCoverItsRows) {
  LinearSolver::RowShare share = two_rank_share(10);
  share.counts[1] -= 1;
  EXPECT_THROW(KrylovRows(share, 0, 0, {}), std::logic_error);
  EXPECT_THROW(KrylovRows(two_rank_share(10), 0, 2, {}), std::logic_error);
}

}  // namespace
}  // namespace bipo
