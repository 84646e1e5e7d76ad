// What an increment of a proportional load costs an iterative backend of
// K_ff when the recovery solve starts from the extrapolated displacements
// (Analysis::recovery_guess): shared by the unit tests under PETSc and the
// sparse contact path's verification tests.
#pragma once

#include <gtest/gtest.h>

#include "solver/analysis.hpp"
#include "solver/linear_solver.hpp"

namespace bipo {

/// The K_ff solves and Krylov iterations of `backend` since this was made.
class SolvesSince {
 public:
  explicit SolvesSince(const LinearSolver& backend)
      : backend_(backend),
        solves_(backend.solve_count()),
        iterations_(backend.krylov_iterations()) {}
  [[nodiscard]] long solves() const { return backend_.solve_count() - solves_; }
  [[nodiscard]] long iterations() const { return backend_.krylov_iterations() - iterations_; }

 private:
  const LinearSolver& backend_;
  long solves_, iterations_;
};

/// Increment 1 starts from zero: more than 10 Krylov iterations a solve. A
/// later increment of a proportional load needs no Newton step, and its one
/// K_ff solve (the recovery) starts at the solution to round-off: at most
/// 2 iterations.
inline void expect_recovery_from_the_extrapolation(int increment, const StepResult& step,
                                                   const SolvesSince& counted) {
  if (increment == 1) {
    EXPECT_GT(counted.iterations(), 10 * counted.solves());
    return;
  }
  EXPECT_EQ(step.newton_iterations, 0);
  EXPECT_EQ(counted.solves(), 1);
  EXPECT_LE(counted.iterations(), 2);
}

}  // namespace bipo
