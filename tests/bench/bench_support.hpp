// Helpers shared by the benchmark programs: wall-clock timing, medians,
// peak memory, the machine's load, and a LinearSolver wrapper that counts
// factorizations and solves (to prove that nothing is refactorized).
#pragma once

#include <sys/resource.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "solver/linear_solver.hpp"

namespace bench {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double peak_rss_gib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0);  // KiB on Linux
}

/// Median wall time of `reps` calls of f.
double time_median(int reps, const std::function<void()>& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto start = Clock::now();
    f();
    t.push_back(seconds_since(start));
  }
  return median(t);
}

std::string load_average() {
  double load[3] = {0.0, 0.0, 0.0};
  if (getloadavg(load, 3) != 3) return "unknown";
  char text[64];
  std::snprintf(text, sizeof text, "%.2f %.2f %.2f", load[0], load[1], load[2]);
  return text;
}

/// The value after option argv[a] (advancing a); prints the usage and exits
/// with status 2 if there is none.
inline const char* option_value(int argc, char** argv, int& a, void (*usage)()) {
  if (a + 1 >= argc) {
    usage();
    std::exit(2);
  }
  return argv[++a];
}

/// Forwards to CHOLMOD, counting factorizations and timing single-RHS solves.
struct SolverLog {
  int factorizations = 0;
  int solves = 0;
  long rhs_columns = 0;
  std::vector<double> single_solve_seconds;
};

class CountingSolver final : public bipo::LinearSolver {
 public:
  explicit CountingSolver(SolverLog* log) : inner_(bipo::make_cholmod_solver()), log_(log) {}
  void factorize(const bipo::SparseMatrix& a) override {
    inner_->factorize(a);
    ++log_->factorizations;
  }
  // Forwarded, so that the backend's own condensation (read off its factor)
  // is what is measured, not the generic one by solves.
  bipo::CondensedMatrices factorize_lower_and_condense(const bipo::SparseMatrix& lower,
                                                       const std::vector<int>& condensed) override {
    ++log_->factorizations;
    return inner_->factorize_lower_and_condense(lower, condensed);
  }
  void factorize_lower(const bipo::SparseMatrix& lower, bool reuse_analysis) override {
    inner_->factorize_lower(lower, reuse_analysis);
    ++log_->factorizations;
  }
  void solve(const Eigen::MatrixXd& b, Eigen::MatrixXd& x) const override {
    const auto start = Clock::now();
    inner_->solve(b, x);
    ++log_->solves;
    log_->rhs_columns += b.cols();
    if (b.cols() == 1) log_->single_solve_seconds.push_back(seconds_since(start));
  }
  [[nodiscard]] double factor_nonzeros() const override { return inner_->factor_nonzeros(); }
  [[nodiscard]] std::string name() const override { return inner_->name(); }
  // A second matrix's solver (the sparse path's P) is not counted.
  [[nodiscard]] std::unique_ptr<bipo::LinearSolver> new_solver_for_preconditioning()
      const override {
    return inner_->new_solver_for_preconditioning();
  }

 private:
  std::unique_ptr<bipo::LinearSolver> inner_;
  SolverLog* log_;
};

}  // namespace bench
