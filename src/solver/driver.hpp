// Owns the increment loop of an analysis: every increment of the load
// program in turn, a failing increment cut in halves (bisected) up to a
// limit, and the report of each converged step to an observer (output).
#pragma once

#include <functional>

#include "solver/analysis.hpp"

namespace bipo {

using StepObserver = std::function<void(const Analysis&, const StepResult&)>;

/// The deepest bisection of an increment, whatever `solver.max_cuts` says:
/// no piece of an increment is shorter than 2^-30 of it (about 1e-9).
inline constexpr int max_cut_depth = 30;

/// Runs the load program of the analysis' case, to its end or until the
/// analysis gives a stop_reason() (a wear criterion). A step that throws
/// NumericalError is bisected, its halves solved in order, up to
/// min(`case.solver.max_cuts`, max_cut_depth) levels (and never below the
/// resolution of the program position's floating-point numbers); if a piece
/// still fails, NumericalError names the increment, the piece's positions and
/// load factors, the number of cuts, why cutting stopped and the last
/// failure. Steps converged before the failure have been reported to
/// `observer`, so their output stays valid. Iterative: the work per
/// increment is bounded by the depth, not by the call stack.
void run_load_program(Analysis& analysis, const StepObserver& observer);

}  // namespace bipo
