// Owns the solvers of the condensed contact problem (docs/physics.md section 3.3), as
// free functions over a CondensedContactProblem in the manner of the fc3d
// solvers of the frictional-contact literature: semi-smooth Newton on the
// per-node fixed-point equations (physics.md 3.2), block Gauss-Seidel sweeps of the
// one-node law, the continuation in the sliding coefficients, and the cascade
// that chains them (solve_contact). None holds state between calls except
// what the caller passes in a ContactWorkspace. docs/architecture.md, "The
// contact iteration", says why the cascade is what it is.
#pragma once

#include <Eigen/Core>
#include <functional>
#include <memory>
#include <vector>

#include "contact/condensed_problem.hpp"
#include "contact/dense_lu.hpp"

namespace bipo {

/// One iteration of the contact solve just done, as ContactWorkspace's
/// on_iteration sees it: a Newton step or a sweep, and the measures of the
/// iterate it reached (ContactSolveReport's, before the convergence test's
/// final recomputation of v).
struct ContactIterationProgress {
  bool sweep = false;  ///< a Gauss-Seidel sweep, else a semi-smooth Newton step
  double scaled_residual = 0.0;
  double scaled_certificate = 0.0;
  /// A Newton step that ended its pass without being taken (counted in
  /// ContactSolveReport::newton_iterations all the same), and why; the
  /// measures are then those of the iterate it started from. nullptr for
  /// a step taken.
  const char* pass_ended = nullptr;
};

/// Scratch storage of the Newton step's dense system, kept between solves by
/// its owner: a fresh allocation per step of that size costs page faults
/// comparable to the LU. It also keeps the last LU factorization and what it
/// was made for, so that a step whose system is the same reuses it (see
/// solve_semismooth_newton). One workspace per solve running at a time.
struct ContactWorkspace {
  /// The dense Newton system and its kept LU, in single precision refined
  /// in double unless options.mixed_precision_lu is off (dense_lu.hpp).
  DenseLu newton_lu;
  /// What the factorization in newton_lu was made for: the operators,
  /// the formulation (unknowns dv or dr) and every node's state. Valid for
  /// reuse only when no node was sliding (then the system depends on these
  /// alone, physics.md 3.2).
  std::weak_ptr<const DelassusOperator> factored_operators;
  std::vector<ContactState> factored_states;
  /// The unknowns of each non-sticking node in a factorization in dv: the
  /// node, its first row and column in the system, their number (2 or 3 for
  /// a slip node, 3 for an open one) and bases, E (the equations kept) in
  /// the top rows of `rows` and N (the motions) in the left columns of
  /// `columns`. A step with the same states and sizes but moved slip rows
  /// is solved by GMRES preconditioned by the LU, which maps the step's own
  /// bases onto these; one where a few nodes changed state, by GMRES
  /// preconditioned by the LU bordered with those nodes' rows and columns.
  struct FactoredUnknowns {
    int node = 0, offset = 0, size = 3;
    Eigen::Matrix3d rows, columns;
  };
  std::vector<FactoredUnknowns> factored_unknowns;
  bool factored_in_reactions = false;
  /// A motion v = q + W r that the caller knows for one r without applying
  /// W (the sparse path's starting reactions: from the recovered motions of
  /// the last two steps, where W r is a K_ff solve): the Newton iteration
  /// takes it for that r, bit for bit, to accept a start that needs no
  /// step, and applies W otherwise (a start that needs a step takes it
  /// from a product, and drops the known motion). Empty r: none. Valid for
  /// the one problem (q) it was made for.
  struct KnownMotion {
    Eigen::VectorXd r, v;
    [[nodiscard]] bool of(const Eigen::VectorXd& x) const { return r.size() == x.size() && r == x; }
  } known_motion;
  /// Set by the caller for one solve in which the load turned back (the
  /// increment's step has the sign opposite to the load's last change;
  /// the analysis's `Analysis::turns_back`): the
  /// bonded start (every node stuck where it is, solve_contact) is then
  /// weighed against the caller's start, and Newton takes the one of
  /// smaller |F|. Dense operators and associated laws only (solve_contact
  /// says why).
  bool load_turned_back = false;
  bool factorization_reusable = false;
  bool factorization_valid = false;  ///< newton_lu holds an LU
  /// Choices of the dense Newton step; all on by default, off only to
  /// compare against the plain step (benchmarks, tests).
  struct Options {
    bool choose_formulation = true;   ///< unknowns dr when smaller than dv
    bool reuse_factorization = true;  ///< reuse the LU of an unchanged system
    /// Solve a step whose system differs from the factorized one only in its
    /// slip rows by GMRES preconditioned by the kept LU (a fresh LU when
    /// it does not converge fast).
    bool gmres_on_kept_factorization_enabled = true;
    /// Also when a few nodes changed state since the LU was made: the LU
    /// with the changed nodes' unknowns taken out and the new ones bordered
    /// on preconditions GMRES (solvers.cpp, `KeptLuBorder`).
    bool gmres_with_changed_states_enabled = true;
    /// Factorize the Newton system in single precision, its solves refined
    /// in double to a double LU's residual (DenseLu).
    bool mixed_precision_lu = true;
    /// The scaled residual (and certificate and penetration) at which the
    /// continuation (solve_by_continuation) ends a stage before the last;
    /// the last ends at the law tolerance. At the law tolerance every stage
    /// is solved, which follows the branch of solutions from the
    /// associated law more closely where an increment has several.
    double continuation_stage_tolerance = 1e-3;
  } options;
  /// Dense Newton steps since construction: all, those solved for dr, the
  /// fresh LUs (of which `single_precision_lus` were made in single
  /// precision, their converged solves refined in `refinement_steps` in
  /// all, and `single_precision_fallbacks` ended as double LUs, at the
  /// factorization or at a solve whose refinement failed), those that
  /// reused a factorization, those solved by GMRES on a kept one (of which
  /// `bordered_solves` with nodes whose state changed), GMRES's iterations,
  /// and its attempts that fell back to a fresh LU.
  struct Counts {
    long steps = 0, in_reactions = 0, factorizations = 0, single_precision_lus = 0,
         single_precision_fallbacks = 0, refinement_steps = 0, reused = 0, gmres_solves = 0,
         bordered_solves = 0, gmres_iterations = 0, gmres_failures = 0;
    /// Each count minus `earlier`'s: what happened since those counts.
    [[nodiscard]] Counts since(const Counts& earlier) const {
      Counts difference = *this;
      pairwise(difference, earlier, [](long& count, long other) { count -= other; });
      return difference;
    }
    Counts& operator+=(const Counts& more) {
      pairwise(*this, more, [](long& count, long other) { count += other; });
      return *this;
    }

   private:
    /// `combine` on each count of `a` with the same count of `b`: the one
    /// list of the fields for since() and +=.
    template <class Combine>
    static void pairwise(Counts& a, const Counts& b, Combine combine) {
      combine(a.steps, b.steps);
      combine(a.in_reactions, b.in_reactions);
      combine(a.factorizations, b.factorizations);
      combine(a.single_precision_lus, b.single_precision_lus);
      combine(a.single_precision_fallbacks, b.single_precision_fallbacks);
      combine(a.refinement_steps, b.refinement_steps);
      combine(a.reused, b.reused);
      combine(a.gmres_solves, b.gmres_solves);
      combine(a.bordered_solves, b.bordered_solves);
      combine(a.gmres_iterations, b.gmres_iterations);
      combine(a.gmres_failures, b.gmres_failures);
    }
  } counts;
  /// The Newton step solver of a sparse operator (made on first use).
  std::unique_ptr<SparseNewtonStep> sparse_step;
  /// Called after every Newton step and every Gauss-Seidel sweep with the
  /// iterate's measures, for progress lines on long solves (a Newton step
  /// on 10^4 contact nodes can take minutes). Empty: nothing is called.
  std::function<void(const ContactIterationProgress&)> on_iteration;
};

/// Solves the problem: finds r (3m) such that the law holds at every node
/// with v = q + W r. `r` is the starting point on entry (the last converged
/// reactions; r = 0 where q penetrates is replaced by the bonded start, every
/// node stuck). A semi-smooth Newton method runs first; when it stalls after
/// a bonded start, Newton again from r = 0; for a non-associated
/// law the continuation; then short batches of block Gauss-Seidel sweeps
/// alternating with Newton, and sweeps to the end of the budget (see the
/// definition for the limits). `max_iterations` bounds the Newton steps plus
/// the sweeps.
ContactSolveReport solve_contact(const CondensedContactProblem& problem, Eigen::VectorXd& r,
                                 double law_tolerance, int max_iterations,
                                 ContactWorkspace& workspace);

/// Semi-smooth Newton on F_i = r_i - proj_K(r_i - rho_i A(v_i)) = 0 (physics.md
/// 3.2, in the law's scaled variables: node_residual in contact/law), with a
/// backtracking line search on |F|; stops when the line search fails or
/// crawls, or after max_iterations steps, and after the first step if the
/// line search cut it below `min_first_step` (a start on which Newton's
/// linear model is far off: the caller has a better way on).
ContactSolveReport solve_semismooth_newton(const CondensedContactProblem& problem,
                                           Eigen::VectorXd& r, double law_tolerance,
                                           int max_iterations, ContactWorkspace& workspace,
                                           double min_first_step = 0.0);

/// Block Gauss-Seidel sweeps (physics.md 3.3): node by node, the one-node law
/// (solve_node_law) with the other nodes frozen. Throws NumericalError on a
/// non-finite iterate. `on_sweep`, if set, is called after every sweep.
ContactSolveReport solve_gauss_seidel(
    const CondensedContactProblem& problem, Eigen::VectorXd& r, double law_tolerance,
    int max_sweeps, const std::function<void(const ContactIterationProgress&)>& on_sweep = {});

/// Continuation in the sliding coefficients from the associated law to the
/// problem's laws, a semi-smooth Newton solve per stage on a copy of the
/// problem with the stage's laws. `r` is the starting point of the first
/// stage; it is changed only when the last stage converges, to
/// `law_tolerance`; the stages before it end at the looser of that and
/// `workspace.options.continuation_stage_tolerance`.
ContactSolveReport solve_by_continuation(const CondensedContactProblem& problem, Eigen::VectorXd& r,
                                         double law_tolerance, int max_iterations,
                                         ContactWorkspace& workspace);

}  // namespace bipo
