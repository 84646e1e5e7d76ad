#include "solver/driver.hpp"

#include <algorithm>
#include <cassert>
#include <iomanip>
#include <sstream>
#include <vector>

#include "core/errors.hpp"

namespace bipo {

namespace {

/// A piece of an increment still to solve, `depth` bisections deep.
struct Piece {
  double from = 0.0, to = 0.0;
  int depth = 0;
};

void advance_increment(Analysis& analysis, int increment, const StepObserver& observer) {
  const Case& c = analysis.case_description();
  const int depth_limit = std::min(c.solver.max_cuts, max_cut_depth);
  // The pieces still to solve, the next one on top: a failing piece is
  // replaced by its two halves, first half on top, so the pieces are solved
  // in the order of the program (depth first, as a recursion would) with at
  // most depth_limit + 1 of them waiting.
  std::vector<Piece> pending{{increment - 1.0, static_cast<double>(increment), 0}};
  while (!pending.empty()) {
    const Piece piece = pending.back();
    pending.pop_back();
    // The pieces are solved in the order of the program: each starts where
    // the last converged one ended.
    assert(analysis.position() == piece.from);
    StepResult result;
    try {
      result = analysis.advance_to(piece.to);
    } catch (const NumericalError& error) {
      const double middle = 0.5 * (piece.from + piece.to);
      // The halves must be distinct floating-point positions (positions of a
      // long program have fewer bits below the increment).
      const bool representable = piece.from < middle && middle < piece.to;
      if (piece.depth < depth_limit && representable) {
        pending.push_back({middle, piece.to, piece.depth + 1});
        pending.push_back({piece.from, middle, piece.depth + 1});
        continue;
      }
      const LoadProgram& program = c.program;
      std::ostringstream msg;
      // Positions are dyadic: all their digits are exact and tell a deep
      // piece's ends apart.
      msg << "increment " << increment << " did not converge (program position "
          << std::setprecision(17) << piece.from << " -> " << piece.to << std::setprecision(6)
          << ", load factor " << program.factor(piece.from) << " -> " << program.factor(piece.to)
          << ", after " << piece.depth << " cuts";
      if (piece.depth >= c.solver.max_cuts)
        msg << ", solver.max_cuts";
      else if (piece.depth >= max_cut_depth)
        msg << ", the smallest piece: 2^-" << max_cut_depth << " of an increment";
      else
        msg << ", the smallest piece the program position resolves";
      msg << "): " << error.what();
      throw NumericalError(msg.str());
    }
    observer(analysis, result);
  }
}

}  // namespace

void run_load_program(Analysis& analysis, const StepObserver& observer) {
  const int n = analysis.case_description().program.n_increments();
  for (int k = 1; k <= n && analysis.stop_reason().empty(); ++k)
    advance_increment(analysis, k, observer);
}

}  // namespace bipo
