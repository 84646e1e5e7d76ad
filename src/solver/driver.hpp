// Owns the increment loop of an analysis: every increment of the load
// program in turn, a failing increment cut in halves (bisected) up to a
// limit, and the report of each converged step to an observer (output).
#pragma once

#include <functional>

#include "solver/analysis.hpp"

namespace bipo {

using StepObserver = std::function<void(const Analysis&, const StepResult&)>;

/// Runs the whole load program of the analysis' case. A step that throws
/// NumericalError is bisected up to `case.solver.max_cuts` levels; if it still
/// fails, NumericalError names the increment, its load factors, the number of
/// cuts and the last failure. Steps converged before the failure have been
/// reported to `observer`, so their output stays valid.
void run_load_program(Analysis& analysis, const StepObserver& observer);

}  // namespace bipo
