#include "solver/driver.hpp"

#include <sstream>

#include "io/errors.hpp"

namespace bipo {

namespace {

void advance_with_cuts(Analysis& analysis, int increment, double from, double to, int cuts_left,
                       const StepObserver& observer) {
  StepResult result;
  try {
    result = analysis.advance_to(to);
  } catch (const NumericalError& error) {
    if (cuts_left == 0) {
      const LoadProgram& program = analysis.case_description().program;
      std::ostringstream msg;
      msg << "increment " << increment << " did not converge (program position " << from << " -> "
          << to << ", load factor " << program.factor(from) << " -> " << program.factor(to)
          << ", after " << analysis.case_description().solver.max_cuts
          << " cuts): " << error.what();
      throw NumericalError(msg.str());
    }
    const double middle = 0.5 * (from + to);
    advance_with_cuts(analysis, increment, from, middle, cuts_left - 1, observer);
    advance_with_cuts(analysis, increment, middle, to, cuts_left - 1, observer);
    return;
  }
  observer(analysis, result);
}

}  // namespace

void run_load_program(Analysis& analysis, const StepObserver& observer) {
  const Case& c = analysis.case_description();
  const int n = c.program.n_increments();
  for (int k = 1; k <= n; ++k)
    advance_with_cuts(analysis, k, k - 1.0, static_cast<double>(k), c.solver.max_cuts, observer);
}

}  // namespace bipo
