// The solvers of the condensed contact problem (docs/physics.md sections 3.2, 3.3):
// semi-smooth Newton, block Gauss-Seidel, the continuation and the cascade.
// See solvers.hpp, and docs/architecture.md "The contact iteration".
#include "contact/solvers.hpp"

#include <Eigen/Geometry>
#include <Eigen/LU>
#include <Eigen/SVD>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "contact/bordered_factorization.hpp"
#include "contact/dense_lu.hpp"
#include "contact/law/law.hpp"
#include "core/errors.hpp"

namespace bipo {

namespace {

/// Relative residual of the sparse Newton step's linear solve near the
/// solution: the step is then exact to far below any law tolerance, and
/// Newton keeps its quadratic convergence. Far from it, the looser bound.
constexpr double sparse_step_tolerance = 1e-13;
constexpr double loosest_sparse_step_tolerance = 1e-3;
/// The dense path's steps solved by GMRES on a kept LU are held tighter:
/// at the sparse path's 1e-3 they cost Newton steps (seed punch case A: 276
/// -> 307), at 1e-6 none, and GMRES gains one to two digits an iteration.
constexpr double loosest_dense_step_tolerance = 1e-6;

/// The kept LU's own counts (DenseLu) into the workspace's.
void record_dense_lu_counts(ContactWorkspace& workspace) {
  workspace.counts.single_precision_lus = workspace.newton_lu.single_precision_lus;
  workspace.counts.single_precision_fallbacks = workspace.newton_lu.fallbacks;
  workspace.counts.refinement_steps = workspace.newton_lu.refinement_steps;
}

/// The dense Newton system of a step, solved in place (its right-hand side
/// becomes the solution): by a fresh LU of the matrix assembled in the
/// workspace, which is kept there with what it was made for, or with the
/// kept LU when `reuse`. The LU is made in single precision and the solve
/// refined in double to a double LU's residual (DenseLu) unless
/// options.mixed_precision_lu is off. False if the matrix is singular.
bool solve_step_system(const CondensedContactProblem& problem,
                       const std::vector<ContactState>& states, bool in_reactions, bool reuse,
                       double* rhs, ContactWorkspace& workspace) {
  ++workspace.counts.steps;
  if (in_reactions) ++workspace.counts.in_reactions;
  DenseLu& lu = workspace.newton_lu;
  if (reuse) {
    ++workspace.counts.reused;
  } else {
    ++workspace.counts.factorizations;
    const bool factorized = lu.factorize(workspace.options.mixed_precision_lu);
    record_dense_lu_counts(workspace);
    if (!factorized) return false;
    workspace.factorization_valid = true;
    workspace.factored_operators = problem.operators;
    workspace.factored_states = states;
    workspace.factored_in_reactions = in_reactions;
    workspace.factorization_reusable = std::none_of(
        states.begin(), states.end(), [](ContactState s) { return s == ContactState::slip; });
  }
  const bool solved = lu.solve(rhs);
  record_dense_lu_counts(workspace);
  return solved;
}

/// The `count` columns of M's size from `x` <- M^-1 times them, for the
/// kept LU M as it is (single or double precision): GMRES's
/// preconditioner, which the flexible GMRES does not need exact.
void solve_with_kept_lu(ContactWorkspace& workspace, double* x, int count) {
  workspace.newton_lu.apply_lu(x, count);
  record_dense_lu_counts(workspace);
}

/// The storage of a dense system of size n in the workspace; invalidates
/// the kept factorization, which it overwrites.
Eigen::Map<Eigen::MatrixXd> step_matrix(int n, ContactWorkspace& workspace) {
  workspace.factorization_reusable = false;
  workspace.factorization_valid = false;
  return {workspace.newton_lu.matrix(n), n, n};
}

/// The unknowns of one node that does not stick in the Newton step of
/// solve_semismooth_newton: its motion increment is
/// dv_i = dv0_i + N theta_i with theta of size 2 or 3, and its rows of the
/// step's equations are E (B_i dr_i + C_i dv_i) = -E F_i with G = E B_i,
/// H = E C_i.
struct NewtonNodeUnknowns {
  int node = 0;
  int offset = 0;  // first row and column of theta in the dense system
  int size = 3;
  Eigen::Matrix<double, Eigen::Dynamic, 3, 0, 3, 3> g, h;
  Eigen::Matrix<double, 3, Eigen::Dynamic, 0, 3, 3> basis;  // N
  Eigen::Matrix<double, Eigen::Dynamic, 3, 0, 3, 3> rows;   // E
  Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 3, 1> rhs;    // -E F_i
};

/// A 3 x 3 block of S times a node's basis N (3 x 2 or 3 x 3).
using NodeColumns = Eigen::Matrix<double, 3, Eigen::Dynamic, 0, 3, 3>;

/// For a slip node the projection derivative P fixes the generator of the
/// cone through proj_K(tau) (the cone is homogeneous), so B = I - P is
/// singular: along its left null vector u the step's equation reads
/// u^T C dv_i = -u^T F_i, which involves the node's own motion only. That
/// equation is solved locally (dv0 on the line of C^T u, theta in the plane
/// orthogonal to it), and the node keeps 2 unknowns instead of 3; the dense
/// system of a slip-dominated increment shrinks by a third and its LU by
/// 70 %. Returns false (keep 3 unknowns) when B is not numerically singular.
bool reduce_slip_node(const Eigen::Matrix3d& b, const Eigen::Matrix3d& c, const Eigen::Vector3d& f,
                      NewtonNodeUnknowns& unknowns, Eigen::Vector3d& dv0) {
  const Eigen::JacobiSVD<Eigen::Matrix3d> svd(b, Eigen::ComputeFullU);
  const Eigen::Vector3d sigma = svd.singularValues();
  // The finite-difference P is exact to about 1e-10; dropping u^T B dr_i
  // below 1e-8 |B| changes the Newton step by as little.
  if (!(sigma(2) <= 1e-8 * sigma(0))) return false;
  const Eigen::Vector3d u = svd.matrixU().col(2);
  const Eigen::Vector3d line = c.transpose() * u;
  const double length = line.norm();
  if (!(length > 1e-12 * c.norm())) return false;
  const Eigen::Vector3d axis = line / length;
  dv0 = axis * (-u.dot(f) / length);
  // An orthonormal basis of the plane orthogonal to the axis.
  Eigen::Vector3d t = std::abs(axis(0)) < 0.9 ? Eigen::Vector3d::UnitX() : Eigen::Vector3d::UnitY();
  t = (t - t.dot(axis) * axis).normalized();
  unknowns.size = 2;
  unknowns.basis.resize(3, 2);
  unknowns.basis.col(0) = t;
  unknowns.basis.col(1) = axis.cross(t);
  const Eigen::Matrix<double, 2, 3> e = svd.matrixU().leftCols<2>().transpose();
  unknowns.rows = e;
  unknowns.g = e * b;
  unknowns.h = e * c;
  unknowns.rhs = -(e * f);
  return true;
}

/// The round-off floor of the scaled certificate (physics.md 3.1): v = q + W r
/// carries an absolute error of a few eps times the motion scale, which the
/// slip term r_n |omega^2 du_t|_mu* of G multiplies by mu omega^2. Above
/// mu omega^2 ~ 1e4 this exceeds a tolerance of 1e-10 (seen: 1.4e-10 at
/// mu = 1e6, bonded, with a slip error of 4e-18 mm); no iteration can get
/// below it, so the test asks for the larger of the two.
double certificate_floor(const CondensedContactProblem& problem) {
  constexpr double round_off = 16.0 * std::numeric_limits<double>::epsilon();
  double amplification = 0.0;
  for (const FrictionLaw& law : problem.laws)
    amplification =
        std::max(amplification, std::max(law.mu1(), law.mu2()) * law.omega_squared().maxCoeff());
  return round_off * amplification;
}

/// The stopping test of both iterations: scaled certificate, penetration
/// and fixed-point residual F (of v, r) all below the tolerance.
bool has_converged(const CondensedContactProblem& problem, const Eigen::VectorXd& v,
                   const Eigen::VectorXd& r, const Eigen::VectorXd& f, double law_tolerance,
                   ContactSolveReport& report) {
  measure_law(problem.laws, v, r, problem.motion_scale, report);
  const double max_r = r.lpNorm<Eigen::Infinity>();
  const double max_f = f.lpNorm<Eigen::Infinity>();
  report.scaled_residual = max_r > 0.0 ? max_f / max_r : (max_f > 0.0 ? 1.0 : 0.0);
  report.converged =
      report.scaled_certificate <= std::max(law_tolerance, certificate_floor(problem)) &&
      report.scaled_penetration <= law_tolerance && report.scaled_residual <= law_tolerance;
  return report.converged;
}

/// Residual F_i = r_i - proj_K(r_i - rho_i A(v_i)) of every node (physics.md
/// 3.2), and optionally its derivatives B_i = dF_i/dr_i, C_i = dF_i/dv_i.
void fixed_point_residual(const CondensedContactProblem& problem, const Eigen::VectorXd& v,
                          const Eigen::VectorXd& r, Eigen::VectorXd& f,
                          std::vector<ContactState>* states, std::vector<Eigen::Matrix3d>* b,
                          std::vector<Eigen::Matrix3d>* c) {
  for (int i = 0; i < problem.n_nodes(); ++i) {
    const Eigen::Vector3d vi = v.segment<3>(3 * i);
    const Eigen::Vector3d ri = r.segment<3>(3 * i);
    Eigen::Vector3d fi;
    const bool derivatives = b && c;
    const ContactState state =
        node_residual(ri, vi, problem.rho[i], problem.laws[i], fi, derivatives ? &(*b)[i] : nullptr,
                      derivatives ? &(*c)[i] : nullptr);
    f.segment<3>(3 * i) = fi;
    if (states) (*states)[i] = state;
  }
}

/// The bonded start: every node stuck to its plane (v = 0, r = -S q), each
/// reaction projected onto its cone (admissible_reaction). Dense operators
/// give S q directly. A sparse one, where S is not formed, takes the Newton
/// step from r = 0 with every node stuck (B_i = 0, C_i = I, F_i = q_i: dv =
/// -q, so v = 0 and dr = -S q) from the operator's step solver; rho_i = 1 /
/// |W_ii| keeps the node rows commensurate with the stiffness. False, and r
/// = 0, if that solve failed.
bool bonded_start(const CondensedContactProblem& problem, ContactWorkspace& workspace,
                  Eigen::VectorXd& r) {
  if (problem.dense()) {
    r.setZero(problem.q.size());
    problem.dense()->matrices().add_stiffness_product(problem.q, r);
    r = -r;  // -(S q) = S (-q) bit for bit: negation is exact
  } else {
    const auto m = static_cast<std::size_t>(problem.n_nodes());
    const std::vector<ContactState> states(m, ContactState::stick);
    const std::vector<Eigen::Matrix3d> b(m, Eigen::Matrix3d::Zero());
    const std::vector<Eigen::Matrix3d> c(m, Eigen::Matrix3d::Identity());
    std::vector<double> rho(m);
    for (std::size_t i = 0; i < m; ++i)
      rho[i] = 1.0 / problem.operators->diagonal_block(static_cast<int>(i)).norm();
    Eigen::VectorXd dv;
    const NewtonStepEquations equations{states, b, c, problem.q, rho};
    if (!workspace.sparse_step) workspace.sparse_step = problem.operators->make_newton_step();
    if (!workspace.sparse_step->solve(equations, sparse_step_tolerance, r, dv) || !r.allFinite()) {
      r.setZero(problem.q.size());
      return false;
    }
  }
  for (int i = 0; i < problem.n_nodes(); ++i)
    r.segment<3>(3 * i) = admissible_reaction(r.segment<3>(3 * i), problem.laws[i]);
  return true;
}

/// Where the load turns back, the caller's start (the last converged
/// reactions) holds the slip of the loading, all of which reverses: Newton
/// from there needed 7 steps at the seed punch's first unloading (case A),
/// from the bonded start 3; the unloading is elastic at first, so every
/// node stuck where it is is near the solution. r becomes the bonded start
/// when its residual |F| is the smaller (a sphere's disc of contact among
/// open candidates: bonding them all is farther, and is not taken). Dense
/// operators only: on the sparse path the bonded start and each v = q + W r
/// cost a step solve or a K_ff solve, and the N = 16 cylinder's case A
/// gained 1 Newton step of 70 (0.5 s of 21.8, one run each). Not for
/// non-associated laws, whose increments may have several solutions: the
/// start chooses among them, and in the robustness matrix (mu = 0.2, plane
/// moving) the bonded start led a later increment to 62 Newton steps
/// (docs/performance.md, "The bonded start where the load turns back").
void take_bonded_start_if_nearer(const CondensedContactProblem& problem,
                                 ContactWorkspace& workspace, Eigen::VectorXd& r) {
  if (!problem.dense() || problem.has_non_associated_law()) return;
  const CondensedMatrices& dense = problem.dense()->matrices();
  const auto residual_norm = [&](const Eigen::VectorXd& x) {
    Eigen::VectorXd v = problem.q, f(x.size());
    dense.add_delassus_product(x, v);
    fixed_point_residual(problem, v, x, f, nullptr, nullptr, nullptr);
    return f.norm();
  };
  Eigen::VectorXd bonded;
  bonded_start(problem, workspace, bonded);
  if (residual_norm(bonded) < residual_norm(r)) r = bonded;
}

}  // namespace

ContactSolveReport solve_contact(const CondensedContactProblem& problem, Eigen::VectorXd& r,
                                 double law_tolerance, int max_iterations,
                                 ContactWorkspace& workspace) {
  // physics.md 3.3, in order of cost:
  // 1. Semi-smooth Newton on the fixed-point equations from the caller's
  //    start (fast and exact to round-off once the states settle); it gives
  //    up when its line search fails or crawls. A start of r = 0 where the
  //    free motion penetrates the plane (no reactions yet: the first
  //    increment in contact) is replaced by the bonded start (bonded_start):
  //    every node stuck, r = -S q made admissible, is much nearer the
  //    solution's pressure and stick zone than r = 0, from where under a
  //    tangential plane motion every node looks like sliding; where every
  //    node sticks it is the solution (docs/performance.md, "The cold
  //    start").
  // 2. If that start was the bonded one, Newton again from r = 0.
  // 3. For a non-associated law, continuation from the associated law
  //    (solve_by_continuation), from where the first pass stopped.
  // 4. Short batches of Gauss-Seidel sweeps alternating with Newton, then
  //    sweeps to the end of the budget (slow but robust). The friction
  //    robustness matrix (docs/performance.md) never gets here.
  constexpr int newton_limit = 60;
  constexpr int sweeps_per_round = 20;
  constexpr int max_rounds = 5;
  // For a non-associated law, a first step from the caller's start that the
  // line search cuts below 1/16 ends the first pass at once: Newton's system
  // is nearly singular there (seen on the seed punch at the first unloading,
  // with every node sliding the loading's way: a step of 15 |F| cut to
  // 1/128, then ten steps crawling to a stall), and the continuation, whose
  // associated stage takes the same start in full steps, is the way on.
  constexpr double min_first_non_associated_step = 1.0 / 16.0;
  ContactSolveReport total;
  const auto spent = [&] { return total.newton_iterations + total.sweeps; };
  const auto take = [&](const ContactSolveReport& part) {
    total.newton_iterations += part.newton_iterations;
    total.sweeps += part.sweeps;
    total.converged = part.converged;
    total.scaled_certificate = part.scaled_certificate;
    total.scaled_penetration = part.scaled_penetration;
    total.scaled_residual = part.scaled_residual;
  };
  const auto newton_from = [&](Eigen::VectorXd& start, double min_first_step = 0.0) {
    take(solve_semismooth_newton(problem, start, law_tolerance,
                                 std::min(max_iterations - spent(), newton_limit), workspace,
                                 min_first_step));
    return total.converged;
  };
  // A cold start where no node penetrates in q (g = q_n >= 0 everywhere) is
  // kept: r = 0 is then the solution, which Newton confirms without a step,
  // and the sparse path's step solve for the bonded start would be wasted.
  bool penetrates = false;
  for (int i = 0; i < problem.n_nodes() && !penetrates; ++i) penetrates = problem.q(3 * i) < 0.0;
  const bool bonded_first = r.isZero(0.0) && penetrates && bonded_start(problem, workspace, r);
  if (workspace.load_turned_back && !bonded_first && penetrates)
    take_bonded_start_if_nearer(problem, workspace, r);
  const Eigen::VectorXd r_start = r;
  if (newton_from(r, problem.has_non_associated_law() ? min_first_non_associated_step : 0.0))
    return total;
  if (!r.allFinite()) r = r_start;
  if (spent() < max_iterations && bonded_first) {
    Eigen::VectorXd r_zero = Eigen::VectorXd::Zero(r.size());
    if (newton_from(r_zero)) {
      r = r_zero;
      return total;
    }
  }
  if (problem.has_non_associated_law() && spent() < max_iterations) {
    // From where the first pass stopped (finite, and no worse than the
    // start: the line search only accepts decreases of |F|): its
    // associated stage then takes 5 Newton steps instead of 9 on the seed
    // punch's fragile increment (docs/performance.md, "Friction robustness").
    Eigen::VectorXd r_path = r;
    const ContactSolveReport path =
        solve_by_continuation(problem, r_path, law_tolerance, max_iterations - spent(), workspace);
    take(path);
    if (path.converged) {
      r = r_path;
      return total;
    }
  }
  if (!problem.dense()) return total;  // the sweeps need W's blocks
  for (int round = 1; round <= max_rounds && spent() < max_iterations; ++round) {
    take(solve_gauss_seidel(problem, r, law_tolerance,
                            std::min(max_iterations - spent(), sweeps_per_round),
                            workspace.on_iteration));
    if (total.converged || spent() >= max_iterations) return total;
    if (newton_from(r)) return total;
    if (!r.allFinite()) r = r_start;
  }
  if (spent() < max_iterations)
    take(solve_gauss_seidel(problem, r, law_tolerance, max_iterations - spent(),
                            workspace.on_iteration));
  return total;
}

ContactSolveReport solve_by_continuation(const CondensedContactProblem& problem, Eigen::VectorXd& r,
                                         double law_tolerance, int max_iterations,
                                         ContactWorkspace& workspace) {
  // The sliding coefficients go from the friction coefficients (t = 0, the
  // associated law) to their values (t = 1): p_k(t) = mu_k + t (p_k - mu_k),
  // the cone itself unchanged. Each stage starts Newton from the previous
  // stage's solution. The first step in t goes straight to 1; a stage that
  // fails is retried with half its step, one that succeeds doubles it. A
  // stage after the first starts next to its solution and is given few
  // Newton steps: failing fast and halving is cheaper than crawling. On the
  // seed punch with case C's ratios and a moving plane the associated
  // problem takes 5-9 steps and the law itself 5-10 more from there.
  // A stage before the last (t < 1) only gives the next one its start, so
  // it stops at the options' continuation_stage_tolerance (inexact path
  // following): its rest is below the next stage's change of law (about
  // 1e-2 in scaled residual on the punch), and Newton on the intermediate
  // laws of case C at N = 24 stalled near 1e-5, which failed the stage and
  // halved the step in t (docs/performance.md, "Intermediate stages of the
  // continuation").
  constexpr double min_step = 1.0 / 1024.0;
  constexpr int first_stage_limit = 60;
  constexpr int stage_limit = 12;
  const double stage_tolerance =
      std::max(law_tolerance, workspace.options.continuation_stage_tolerance);
  ContactSolveReport report;
  // Each stage solves a copy of the problem with its own laws (the operators
  // are shared, not copied).
  CondensedContactProblem stage_problem = problem;
  const auto laws_at = [&](double t) {
    for (int i = 0; i < problem.n_nodes(); ++i) {
      const FrictionLaw& law = problem.laws[i];
      stage_problem.laws[i] =
          FrictionLaw::orthotropic(law.mu1(), law.mu2(), law.mu1() + t * (law.p1() - law.mu1()),
                                   law.mu2() + t * (law.p2() - law.mu2()));
    }
  };
  Eigen::VectorXd r_stage = r;
  double t = 0.0, step = 1.0;
  bool first = true;
  while (report.newton_iterations < max_iterations) {
    const double t_next = first ? 0.0 : std::min(1.0, t + step);
    laws_at(t_next);
    Eigen::VectorXd r_try = r_stage;
    const ContactSolveReport stage = solve_semismooth_newton(
        stage_problem, r_try, t_next < 1.0 ? stage_tolerance : law_tolerance,
        std::min(first ? first_stage_limit : stage_limit,
                 max_iterations - report.newton_iterations),
        workspace);
    report.newton_iterations += stage.newton_iterations;
    if (stage.converged) {
      r_stage = r_try;
      if (t_next == 1.0) {
        const int steps = report.newton_iterations;
        report = stage;
        report.newton_iterations = steps;
        r = r_stage;
        return report;
      }
      if (!first) step *= 2.0;
      t = t_next;
      step = std::min(step, 1.0 - t);
      first = false;
    } else {
      if (first || step <= min_step) break;  // the associated problem or a tiny step failed
      step = 0.5 * (t_next - t);
    }
  }
  report.converged = false;
  return report;
}

namespace {

/// The kept LU M of a step in dv, bordered for a step where some nodes
/// changed state since M was made. The step's system A, over its own
/// unknowns, shares with M the blocks of the nodes that are unknowns in
/// both, in the same state and with as many unknowns (C), up to the slip
/// rows' drift; M also holds nodes that left (R: now sticking, or open <->
/// slip), A nodes that came (D). GMRES is preconditioned on the right by
/// P = [M_CC, A_CD; A_DC, A_DD], solved through M's LU by a
/// BorderedFactorization (solves with M for |R| + |D| columns to set up,
/// one a step), and then needs as few iterations as when no state changed:
/// A P^-1 differs from the identity by the slip rows' drift alone.
///
/// P is held in frozen bases, as M is: M's own for the C nodes, those of
/// the step that set P up for the D nodes. An application maps a step's
/// residual onto them and the solution back, so the next steps with the
/// same nodes in C, R and D reuse P. With no node changed (R and D empty),
/// P is M itself, in M's bases: GMRES on the kept LU.
struct KeptLuBorder {
  bool valid = false;  // set up on the kept LU, which has not changed since
  /// Indices into the step's unknowns and the kept ones (ContactWorkspace::
  /// factored_unknowns) of the nodes in C, pairwise; of the nodes in R (kept
  /// ones) and D (the step's).
  std::vector<int> common_step, common_kept, removed, added;
  /// The D nodes' frozen bases: E in the top rows of `rows`, N in the left
  /// columns of `columns`; their unknowns from `first` in the border.
  struct Node {
    int first = 0, size = 0;
    Eigen::Matrix3d rows, columns;
  };
  std::vector<Node> added_bases;
  BorderedFactorization factorization;
  BorderedFactorization::SolveWithM solve_with_kept_lu;
  Eigen::VectorXd border;  // an application's D part
};

/// The iterate and scratch of one semi-smooth Newton solve, sized once.
struct NewtonState {
  explicit NewtonState(int m)
      : states(static_cast<std::size_t>(m)),
        b(static_cast<std::size_t>(m)),
        c(static_cast<std::size_t>(m)),
        f(3 * m),
        dv(3 * m),
        dr(3 * m),
        trial_f(3 * m),
        rhs(3 * m),
        gmres_w(3 * m),
        system_forces(3 * m),
        gmres_old(3 * m),
        scattered(3 * m) {
    unknowns.reserve(static_cast<std::size_t>(m));
    active.reserve(static_cast<std::size_t>(m));
  }

  std::vector<ContactState> states;
  std::vector<Eigen::Matrix3d> b, c;  // B_i = dF_i/dr_i, C_i = dF_i/dv_i
  Eigen::VectorXd v, f, dv, dr, trial_r, trial_v, trial_f;
  std::vector<NewtonNodeUnknowns> unknowns;
  std::vector<int> active;  // the nodes whose dr is unknown (step_in_reactions)
  Eigen::VectorXd rhs;      // the dense system's right-hand side, then solution
  // GMRES on a kept LU (gmres_on_kept_factorization): A z_j (at most 3m
  // long), S N x (3m) and a vector of the kept LU's unknowns.
  Eigen::VectorXd gmres_w, system_forces, gmres_old;
  // A motion of the unknowns' nodes spread over all nodes (zero elsewhere),
  // for a product with the whole of S (add_stiffness_columns).
  Eigen::VectorXd scattered;
  // GMRES's basis V and its preconditioned vectors Z = P^-1 V (flexible
  // GMRES: the solution is Z y, so P, a single-precision LU, need not be
  // applied exactly or twice the same way); made on first use.
  Eigen::MatrixXd krylov, preconditioned_krylov;
  KeptLuBorder border;
  std::array<std::vector<int>, 4> border_lists;  // a step's C, R and D (set_up_kept_lu_border)
  double slip_shift = 0.0;  // regularize_non_associated_slip's, 0 where it shifted no row
};

/// Whether a product with the columns of `nodes` of the m nodes' S or W is
/// cheaper as the whole symmetric product (CondensedMatrices' products read
/// one triangle, half of the matrix, in the BLAS's kernels) than column by
/// column: from a quarter of the nodes on.
bool whole_product_pays(int nodes, int m) {
  return 4 * nodes > m;
}

/// Which of the two dense operators a product is with.
enum class DenseOperator { stiffness, delassus };

/// y += A x for A = S or W and x nonzero at some nodes only: the whole
/// product where that pays, else over the columns of the nodes where x is
/// nonzero (a sphere's disc of contact among many candidates: most r_j = 0);
/// the two differ by round-off only.
void add_product_of_moving_nodes(const CondensedMatrices& dense, DenseOperator a,
                                 const Eigen::VectorXd& x, Eigen::VectorXd& y) {
  const auto m = static_cast<int>(x.size() / 3);
  int moving = 0;
  for (int j = 0; j < m; ++j) moving += x.segment<3>(3 * j).isZero(0.0) ? 0 : 1;
  if (whole_product_pays(moving, m)) {
    if (a == DenseOperator::stiffness)
      dense.add_stiffness_product(x, y);
    else
      dense.add_delassus_product(x, y);
    return;
  }
  for (int j = 0; j < m; ++j) {
    const Eigen::Vector3d x_j = x.segment<3>(3 * j);
    if (x_j.isZero(0.0)) continue;
    if (a == DenseOperator::stiffness)
      dense.add_stiffness_columns(j, x_j, y);
    else
      dense.add_delassus_columns(j, x_j, y);
  }
}

/// forces += S x for x given at the unknowns' nodes (x_j = N_j theta_j):
/// scattered into n.scattered and multiplied by the whole of S where that
/// pays, else column by column.
template <typename NodeMotion>
void add_stiffness_columns(const CondensedMatrices& dense, NewtonState& n, NodeMotion motion_of,
                           Eigen::Ref<Eigen::VectorXd> forces) {
  const int m = static_cast<int>(n.states.size());
  if (whole_product_pays(static_cast<int>(n.unknowns.size()), m)) {
    n.scattered.setZero();
    for (const NewtonNodeUnknowns& node : n.unknowns)
      n.scattered.segment<3>(3 * node.node) = motion_of(node);
    dense.add_stiffness_product(n.scattered, forces);
    return;
  }
  for (const NewtonNodeUnknowns& node : n.unknowns)
    dense.add_stiffness_columns(node.node, motion_of(node), forces);
}

/// The first part of a Newton step: stick nodes get dv_i from their own
/// equation; slip nodes the part dv0_i fixed by their own equation
/// (reduce_slip_node); the rest becomes unknowns of the dense system. Then
/// dr = S dv for the known motion (stick dv and slip dv0), by
/// add_product_of_moving_nodes.
/// Returns the size of the dense system.
int known_part_of_step(const CondensedMatrices& dense, NewtonState& n) {
  const int m = static_cast<int>(n.states.size());
  n.dv.setZero();
  n.dr.setZero();
  n.unknowns.clear();
  int n_system = 0;
  for (int i = 0; i < m; ++i) {
    const Eigen::Vector3d f_i = n.f.segment<3>(3 * i);
    if (n.states[i] == ContactState::stick) {
      n.dv.segment<3>(3 * i) = -n.c[i].partialPivLu().solve(f_i);
      continue;
    }
    NewtonNodeUnknowns& node = n.unknowns.emplace_back();
    node.node = i;
    node.offset = n_system;
    Eigen::Vector3d dv0 = Eigen::Vector3d::Zero();
    if (n.states[i] == ContactState::open || !reduce_slip_node(n.b[i], n.c[i], f_i, node, dv0)) {
      node.size = 3;
      node.basis = Eigen::Matrix3d::Identity();
      node.rows = Eigen::Matrix3d::Identity();
      node.g = n.b[i];
      node.h = n.c[i];
      node.rhs = -f_i;
    }
    n.dv.segment<3>(3 * i) = dv0;
    n_system += node.size;
  }
  add_product_of_moving_nodes(dense, DenseOperator::stiffness, n.dv, n.dr);
  return n_system;
}

/// The largest shift of regularize_non_associated_slip, taken while the
/// scaled residual is above 1 %.
constexpr double largest_slip_shift = 0.1;

/// The border may hold at most this fraction of the step's unknowns: its
/// set-up's solves with M cost 2 n^2 p against the fresh LU's 2/3 n^3,
/// and GMRES's iterations come on top.
constexpr int border_fraction_denominator = 12;

/// Sets up n.border (KeptLuBorder) for the step's unknowns against the kept
/// LU's, or keeps the one set up for the same nodes: with no node changed
/// (the same states and unknowns, only the slip rows moved) the border is
/// empty and P is the kept LU itself. False, and the step takes a fresh LU,
/// when the kept LU is not one in dv on these operators, or a border is
/// not allowed or would be too large, or a block of it is singular.
bool set_up_kept_lu_border(const CondensedContactProblem& problem, const CondensedMatrices& dense,
                           int n_system, NewtonState& n, ContactWorkspace& workspace) {
  if (!workspace.options.gmres_on_kept_factorization_enabled || !workspace.factorization_valid ||
      workspace.factored_in_reactions || workspace.factored_operators.lock() != problem.operators ||
      workspace.factored_states.size() != n.states.size() || workspace.factored_unknowns.empty())
    return false;
  const std::vector<ContactWorkspace::FactoredUnknowns>& kept = workspace.factored_unknowns;
  const int kept_size = kept.back().offset + kept.back().size;
  if (workspace.newton_lu.size() != kept_size || !workspace.newton_lu.factorized()) return false;
  // C, R and D. Both lists are in increasing node order. A node in both
  // whose state or number of unknowns changed leaves and comes again.
  std::vector<int>& common_step = n.border_lists[0];
  std::vector<int>& common_kept = n.border_lists[1];
  std::vector<int>& removed = n.border_lists[2];
  std::vector<int>& added = n.border_lists[3];
  for (std::vector<int>& list : n.border_lists) list.clear();
  const int past_last = static_cast<int>(n.states.size());
  std::size_t a = 0, k = 0;
  while (a < n.unknowns.size() || k < kept.size()) {
    const int step_node = a < n.unknowns.size() ? n.unknowns[a].node : past_last;
    const int kept_node = k < kept.size() ? kept[k].node : past_last;
    if (step_node == kept_node) {
      if (n.unknowns[a].size == kept[k].size &&
          workspace.factored_states[static_cast<std::size_t>(step_node)] ==
              n.states[static_cast<std::size_t>(step_node)]) {
        common_step.push_back(static_cast<int>(a));
        common_kept.push_back(static_cast<int>(k));
      } else {
        removed.push_back(static_cast<int>(k));
        added.push_back(static_cast<int>(a));
      }
      ++a;
      ++k;
    } else if (step_node < kept_node) {
      added.push_back(static_cast<int>(a++));
    } else {
      removed.push_back(static_cast<int>(k++));
    }
  }
  KeptLuBorder& border = n.border;
  // The same nodes in C, R and D as the border's (the step's unknowns, and
  // their sizes, then follow): keep it.
  if (border.valid && border.common_step == common_step && border.common_kept == common_kept &&
      border.removed == removed && border.added == added)
    return true;
  border.valid = false;
  std::vector<int> removed_rows;
  for (const int r : removed)
    for (int i = 0; i < kept[r].size; ++i) removed_rows.push_back(kept[r].offset + i);
  int p_d = 0;
  for (const int d : added) p_d += n.unknowns[d].size;
  if (const auto p = static_cast<int>(removed_rows.size()) + p_d; p > 0) {
    if (!workspace.options.gmres_with_changed_states_enabled ||
        border_fraction_denominator * p > n_system)
      return false;
    // Non-associated laws: their slip rows, shifted by
    // regularize_non_associated_slip, move too much from one step to the
    // next for a kept LU to precondition a step with other states. Measured
    // on case C at N = 16: 9 of 44 bordered attempts converged at the
    // largest shift and 62 of 92 closer in, and the contact iteration took
    // 15-27 % longer than with a fresh LU for every such step.
    if (n.slip_shift > 0.0) return false;
  }

  // A's columns of D, their C rows mapped onto M's equations (E_old E^T, as
  // apply_bordered_kept_lu maps a residual): A_CD in M's rows; their D rows:
  // A_DD.
  border.added_bases.resize(added.size());
  Eigen::MatrixXd a_cd = Eigen::MatrixXd::Zero(kept_size, p_d);
  Eigen::MatrixXd a_dd(p_d, p_d);
  int first = 0;
  for (std::size_t e = 0; e < added.size(); ++e) {
    const NewtonNodeUnknowns& node = n.unknowns[added[e]];
    KeptLuBorder::Node& frozen = border.added_bases[e];
    frozen.first = first;
    frozen.size = node.size;
    frozen.rows.topRows(node.size) = node.rows;
    frozen.columns.leftCols(node.size) = node.basis;
    // S_rd N_d, block by block (S_rd: the row node's block of the column
    // node's columns).
    const auto s_times_basis = [&dense, &node](int row_node) {
      return NodeColumns(dense.stiffness_block(row_node, node.node).lazyProduct(node.basis));
    };
    for (std::size_t c = 0; c < common_step.size(); ++c) {
      const NewtonNodeUnknowns& row = n.unknowns[common_step[c]];
      const ContactWorkspace::FactoredUnknowns& old = kept[common_kept[c]];
      a_cd.block(old.offset, first, row.size, node.size).noalias() =
          old.rows.topRows(row.size) * (row.rows.transpose() * (row.g * s_times_basis(row.node)));
    }
    int row_first = 0;
    for (const int d : added) {
      const NewtonNodeUnknowns& row = n.unknowns[d];
      a_dd.block(row_first, first, row.size, node.size).noalias() =
          row.g.lazyProduct(s_times_basis(row.node));
      if (d == added[e])
        a_dd.block(row_first, first, row.size, node.size).noalias() +=
            row.h.lazyProduct(node.basis);
      row_first += row.size;
    }
    first += node.size;
  }
  // A's rows of D: A_DC on M's unknowns, G_d S_dc N_c (N_c^T N_old).
  Eigen::MatrixXd a_dc = Eigen::MatrixXd::Zero(p_d, kept_size);
  for (std::size_t e = 0; e < added.size(); ++e) {
    const NewtonNodeUnknowns& node = n.unknowns[added[e]];
    for (std::size_t c = 0; c < common_step.size(); ++c) {
      const NewtonNodeUnknowns& column = n.unknowns[common_step[c]];
      const ContactWorkspace::FactoredUnknowns& old = kept[common_kept[c]];
      const Eigen::Matrix3d s_dc = dense.stiffness_block(node.node, column.node);
      a_dc.block(border.added_bases[e].first, old.offset, node.size, column.size).noalias() =
          node.g * (s_dc * column.basis) *
          (column.basis.transpose() * old.columns.leftCols(column.size));
    }
  }
  border.solve_with_kept_lu = [&workspace](double* columns, int count) {
    solve_with_kept_lu(workspace, columns, count);
  };
  if (!border.factorization.set_up(border.solve_with_kept_lu, kept_size, std::move(removed_rows),
                                   std::move(a_cd), std::move(a_dc), a_dd))
    return false;
  border.border.resize(p_d);
  // The border's nodes (the lists' storage swapped, not copied).
  border.common_step.swap(common_step);
  border.common_kept.swap(common_kept);
  border.removed.swap(removed);
  border.added.swap(added);
  border.valid = true;
  return true;
}

/// x <- P^-1 x for the bordered kept LU P of n.border (KeptLuBorder), x over
/// the step's unknowns, mapped onto P's frozen bases and back.
void apply_bordered_kept_lu(NewtonState& n, Eigen::Ref<Eigen::VectorXd> x,
                            const ContactWorkspace& workspace) {
  KeptLuBorder& border = n.border;
  const std::vector<ContactWorkspace::FactoredUnknowns>& kept = workspace.factored_unknowns;
  auto old = n.gmres_old.head(border.factorization.size());
  old.setZero();
  for (std::size_t c = 0; c < border.common_step.size(); ++c) {
    const NewtonNodeUnknowns& node = n.unknowns[border.common_step[c]];
    const ContactWorkspace::FactoredUnknowns& kept_node = kept[border.common_kept[c]];
    old.segment(kept_node.offset, node.size).noalias() =
        kept_node.rows.topRows(node.size) *
        (node.rows.transpose() * x.segment(node.offset, node.size));
  }
  for (std::size_t e = 0; e < border.added.size(); ++e) {
    const NewtonNodeUnknowns& node = n.unknowns[border.added[e]];
    const KeptLuBorder::Node& frozen = border.added_bases[e];
    border.border.segment(frozen.first, node.size).noalias() =
        frozen.rows.topRows(node.size) *
        (node.rows.transpose() * x.segment(node.offset, node.size));
  }
  border.factorization.solve(border.solve_with_kept_lu, old, border.border);
  for (std::size_t c = 0; c < border.common_step.size(); ++c) {
    const NewtonNodeUnknowns& node = n.unknowns[border.common_step[c]];
    const ContactWorkspace::FactoredUnknowns& kept_node = kept[border.common_kept[c]];
    x.segment(node.offset, node.size).noalias() =
        node.basis.transpose() *
        (kept_node.columns.leftCols(node.size) * old.segment(kept_node.offset, node.size));
  }
  for (std::size_t e = 0; e < border.added.size(); ++e) {
    const NewtonNodeUnknowns& node = n.unknowns[border.added[e]];
    const KeptLuBorder::Node& frozen = border.added_bases[e];
    x.segment(node.offset, node.size).noalias() =
        node.basis.transpose() *
        (frozen.columns.leftCols(node.size) * border.border.segment(frozen.first, node.size));
  }
}

/// out = A x for the step's system, through its blocks:
/// (A x)_i = G_i (S N x)_i + H_i N_i x_i; A is never formed.
void apply_step_system(const CondensedMatrices& dense, NewtonState& n,
                       const Eigen::Ref<const Eigen::VectorXd>& x,
                       Eigen::Ref<Eigen::VectorXd> out) {
  n.system_forces.setZero();
  add_stiffness_columns(
      dense, n,
      [&x](const NewtonNodeUnknowns& node) -> Eigen::Vector3d {
        return node.basis * x.segment(node.offset, node.size);
      },
      n.system_forces);
  for (const NewtonNodeUnknowns& node : n.unknowns)
    out.segment(node.offset, node.size) = node.g * n.system_forces.segment<3>(3 * node.node) +
                                          node.h * (node.basis * x.segment(node.offset, node.size));
}

/// The step's system A x = b (b in n.rhs) solved by flexible GMRES
/// preconditioned on the right by the kept LU M, bordered for the nodes
/// whose state changed (n.border, apply_bordered_kept_lu; M itself when
/// none did). Within a
/// Newton solve the slip directions move little from one step to the next,
/// so A P^-1 is close to the identity and a few
/// iterations of O(m n) replace an LU of O(n^3). True (x in n.rhs) when
/// |b - A x| <= tolerance |b| within max_iterations; false (n.rhs
/// untouched) otherwise, and the caller factorizes afresh.
bool gmres_on_kept_factorization(const CondensedMatrices& dense, int n_system, double tolerance,
                                 NewtonState& n, ContactWorkspace& workspace) {
  constexpr int max_iterations = 10;
  const auto b = n.rhs.head(n_system);
  const double beta = b.norm();
  if (!(beta > 0.0)) return false;
  if (n.krylov.rows() < n_system) {
    n.krylov.resize(n.rhs.size(), max_iterations + 1);
    n.preconditioned_krylov.resize(n.rhs.size(), max_iterations);
  }
  auto basis = n.krylov.topRows(n_system);
  auto preconditioned = n.preconditioned_krylov.topRows(n_system);
  auto w = n.gmres_w.head(n_system);
  Eigen::Matrix<double, max_iterations + 1, max_iterations> h;
  Eigen::Matrix<double, max_iterations + 1, 1> g =
      Eigen::Matrix<double, max_iterations + 1, 1>::Zero();
  Eigen::Matrix<double, max_iterations, 1> cosines, sines;
  h.setZero();
  g(0) = beta;
  basis.col(0) = b / beta;
  for (int j = 0; j < max_iterations; ++j) {
    ++workspace.counts.gmres_iterations;
    auto z_j = preconditioned.col(j);
    z_j = basis.col(j);
    apply_bordered_kept_lu(n, z_j, workspace);
    apply_step_system(dense, n, z_j, w);
    for (int i = 0; i <= j; ++i) {  // modified Gram-Schmidt
      h(i, j) = w.dot(basis.col(i));
      w -= h(i, j) * basis.col(i);
    }
    h(j + 1, j) = w.norm();
    if (!std::isfinite(h(j + 1, j))) return false;
    const bool breakdown = h(j + 1, j) == 0.0;  // the exact solution is in the basis
    if (!breakdown) basis.col(j + 1) = w / h(j + 1, j);
    for (int i = 0; i < j; ++i) {  // the earlier Givens rotations
      const double upper = cosines(i) * h(i, j) + sines(i) * h(i + 1, j);
      h(i + 1, j) = -sines(i) * h(i, j) + cosines(i) * h(i + 1, j);
      h(i, j) = upper;
    }
    const double radius = std::hypot(h(j, j), h(j + 1, j));
    if (!(radius > 0.0)) return false;
    cosines(j) = h(j, j) / radius;
    sines(j) = h(j + 1, j) / radius;
    h(j, j) = radius;
    h(j + 1, j) = 0.0;
    g(j + 1) = -sines(j) * g(j);
    g(j) *= cosines(j);
    // Four iterations without two digits: the LU is too far from this
    // system, and a fresh one is cheaper than more iterations.
    if (j == 3 && std::abs(g(j + 1)) > 1e-2 * beta) return false;
    if (std::abs(g(j + 1)) <= tolerance * beta || breakdown) {
      const Eigen::Matrix<double, Eigen::Dynamic, 1, 0, max_iterations, 1> y =
          h.topLeftCorner(j + 1, j + 1).triangularView<Eigen::Upper>().solve(g.head(j + 1));
      n.rhs.head(n_system).noalias() = preconditioned.leftCols(j + 1) * y;
      return true;
    }
  }
  return false;
}

/// The rest of a Newton step: the dense system of the unknowns, blocks
/// G_i S_ij N_j (+ H_i N_i on the diagonal), solved by LU, by the kept LU
/// when `reuse` (the matrix is then not assembled), or by GMRES on the
/// kept LU, bordered for the nodes whose state changed
/// (set_up_kept_lu_border, gmres_on_kept_factorization, to `tolerance`
/// relative); their motion is added to dv and its forces to dr. False if
/// the system is singular.
bool unknown_part_of_step(const CondensedContactProblem& problem, const CondensedMatrices& dense,
                          int n_system, bool reuse, double tolerance, NewtonState& n,
                          ContactWorkspace& workspace) {
  auto rhs = n.rhs.head(n_system);
  for (const NewtonNodeUnknowns& node : n.unknowns)
    rhs.segment(node.offset, node.size) = node.rhs -
                                          node.g.lazyProduct(n.dr.segment<3>(3 * node.node)) -
                                          node.h.lazyProduct(n.dv.segment<3>(3 * node.node));
  bool solved = false;
  if (!reuse && set_up_kept_lu_border(problem, dense, n_system, n, workspace)) {
    solved = gmres_on_kept_factorization(dense, n_system, tolerance, n, workspace);
    ++(solved ? workspace.counts.gmres_solves : workspace.counts.gmres_failures);
    if (solved) ++workspace.counts.steps;
    if (solved && (!n.border.added.empty() || !n.border.removed.empty()))
      ++workspace.counts.bordered_solves;
  }
  if (!solved) {
    // The blocks are at most 3 x 3: coefficient-wise (lazy) products avoid
    // the general matrix-product machinery, which dominated this loop. Each
    // of S's held blocks (on and below the diagonal; the unknowns are in
    // node order) is read once, down the buffer's columns, and gives the
    // system's blocks (i, j) and (j, i): S_ji = S_ij^T.
    if (!reuse) {
      Eigen::Map<Eigen::MatrixXd> system = step_matrix(n_system, workspace);
      for (std::size_t b = 0; b < n.unknowns.size(); ++b) {
        const NewtonNodeUnknowns& col = n.unknowns[b];
        for (std::size_t a = b; a < n.unknowns.size(); ++a) {
          const NewtonNodeUnknowns& row = n.unknowns[a];
          const Eigen::Matrix3d s_rc = dense.stiffness_block(row.node, col.node);
          system.block(row.offset, col.offset, row.size, col.size).noalias() =
              row.g.lazyProduct(NodeColumns(s_rc.lazyProduct(col.basis)));
          if (a != b)
            system.block(col.offset, row.offset, col.size, row.size).noalias() =
                col.g.lazyProduct(NodeColumns(s_rc.transpose().lazyProduct(row.basis)));
        }
        system.block(col.offset, col.offset, col.size, col.size).noalias() +=
            col.h.lazyProduct(col.basis);
      }
    }
    if (!reuse) n.border.valid = false;
    if (!solve_step_system(problem, n.states, false, reuse, rhs.data(), workspace)) return false;
    if (!reuse) {
      workspace.factored_unknowns.resize(n.unknowns.size());
      for (std::size_t k = 0; k < n.unknowns.size(); ++k) {
        const NewtonNodeUnknowns& node = n.unknowns[k];
        ContactWorkspace::FactoredUnknowns& kept = workspace.factored_unknowns[k];
        kept.node = node.node;
        kept.offset = node.offset;
        kept.size = node.size;
        kept.rows.topRows(node.size) = node.rows;
        kept.columns.leftCols(node.size) = node.basis;
      }
    }
  }
  const auto delta_of = [&rhs](const NewtonNodeUnknowns& node) -> Eigen::Vector3d {
    return node.basis * rhs.segment(node.offset, node.size);
  };
  for (const NewtonNodeUnknowns& node : n.unknowns)
    n.dv.segment<3>(3 * node.node) += delta_of(node);
  add_stiffness_columns(dense, n, delta_of, n.dr);
  return true;
}

/// A Newton step with the reactions as unknowns, for states where most
/// nodes are open (a sphere's disc of contact among many candidates). Open
/// nodes (B_i = I, C_i = 0) give dr_i = -F_i; the others' rows
/// B_i dr_i + C_i (W dr)_i = -F_i, a stick row (B_i = 0) multiplied by
/// C_i^-1, form a dense system in their dr (3 unknowns each): blocks W_ij
/// in a stick row, C_i W_ij (+ B_i on the diagonal) in a slip row. The
/// same linear equations as the step in dv, solved for the other half of
/// (dr, dv); dv = W dr is summed over the nonzero columns only. False if the
/// system is singular.
bool step_in_reactions(const CondensedContactProblem& problem, const CondensedMatrices& dense,
                       bool reuse, NewtonState& n, ContactWorkspace& workspace) {
  const int m = static_cast<int>(n.states.size());
  n.dr.setZero();
  n.dv.setZero();
  n.active.clear();
  for (int i = 0; i < m; ++i) {
    if (n.states[i] != ContactState::open) {
      n.active.push_back(i);
      continue;
    }
    n.dr.segment<3>(3 * i) = -n.f.segment<3>(3 * i);
    if (!n.dr.segment<3>(3 * i).isZero(0.0))
      dense.add_delassus_columns(i, n.dr.segment<3>(3 * i), n.dv);
  }
  const int n_system = 3 * static_cast<int>(n.active.size());
  if (n_system == 0) return true;
  auto rhs = n.rhs.head(n_system);
  Eigen::Map<Eigen::MatrixXd> system =
      reuse ? Eigen::Map<Eigen::MatrixXd>(workspace.newton_lu.data(), n_system, n_system)
            : step_matrix(n_system, workspace);
  for (std::size_t a = 0; a < n.active.size(); ++a) {
    const int i = n.active[a];
    const Eigen::Index row = 3 * static_cast<Eigen::Index>(a);
    const Eigen::Vector3d f_i = n.f.segment<3>(3 * i);
    const Eigen::Vector3d dv_i = n.dv.segment<3>(3 * i);
    const bool stick = n.states[i] == ContactState::stick;
    if (stick)
      rhs.segment<3>(row) = -n.c[i].partialPivLu().solve(f_i) - dv_i;
    else
      rhs.segment<3>(row) = -f_i - n.c[i] * dv_i;
    if (reuse) continue;
    for (std::size_t b = 0; b < n.active.size(); ++b) {
      const Eigen::Index col = 3 * static_cast<Eigen::Index>(b);
      const Eigen::Matrix3d w_ij = dense.delassus_block(i, n.active[b]);
      if (stick)
        system.block<3, 3>(row, col) = w_ij;
      else
        system.block<3, 3>(row, col).noalias() = n.c[i].lazyProduct(w_ij);
    }
    if (!stick) system.block<3, 3>(row, row) += n.b[i];
  }
  if (!reuse) n.border.valid = false;
  if (!solve_step_system(problem, n.states, true, reuse, rhs.data(), workspace)) return false;
  for (std::size_t a = 0; a < n.active.size(); ++a) {
    const int j = n.active[a];
    const Eigen::Vector3d dr_j = rhs.segment<3>(3 * static_cast<Eigen::Index>(a));
    n.dr.segment<3>(3 * j) = dr_j;
    dense.add_delassus_columns(j, dr_j, n.dv);
  }
  return true;
}

/// Whether the step is cheaper with the reactions as unknowns (3 per stick
/// or slip node) than with the motion (3 per open node, 2 per slip node
/// that reduce_slip_node reduces, which is nearly all).
bool cheaper_in_reactions(const NewtonState& n) {
  int stick = 0, slip = 0, open = 0;
  for (const ContactState state : n.states)
    (state == ContactState::stick ? stick : state == ContactState::slip ? slip : open) += 1;
  return 3 * (stick + slip) < 3 * open + 2 * slip;
}

/// A Newton step on dense operators: (dr, dv) of the step's equations, in
/// the smaller formulation, with the kept factorization when the system is
/// the one it was made for (the same operators, formulation and states, no
/// node sliding: stick and open rows hold W or S only). False if singular.
bool dense_step(const CondensedContactProblem& problem, double tolerance, NewtonState& n,
                ContactWorkspace& workspace) {
  const bool in_reactions = workspace.options.choose_formulation && cheaper_in_reactions(n);
  const bool reuse = workspace.options.reuse_factorization && workspace.factorization_reusable &&
                     workspace.factored_in_reactions == in_reactions &&
                     workspace.factored_states == n.states &&
                     workspace.factored_operators.lock() == problem.operators;
  const CondensedMatrices& dense = problem.dense()->matrices();
  if (in_reactions) return step_in_reactions(problem, dense, reuse, n, workspace);
  const int n_system = known_part_of_step(dense, n);
  return n_system == 0 ||
         unknown_part_of_step(problem, dense, n_system, reuse, tolerance, n, workspace);
}

/// Backtracking on |F| along (dr, dv): semi-smooth Newton is only locally
/// convergent. Returns the step length accepted (the trial point is then in
/// (trial_r, trial_v)), or 0 when none of 12 halvings decreases |F|.
double line_search(const CondensedContactProblem& problem, const Eigen::VectorXd& r,
                   NewtonState& n) {
  const double norm_f = n.f.norm();
  double step = 1.0;
  for (int halving = 0; halving < 12; ++halving, step *= 0.5) {
    n.trial_r = r + step * n.dr;
    n.trial_v = n.v + step * n.dv;
    fixed_point_residual(problem, n.trial_v, n.trial_r, n.trial_f, nullptr, nullptr, nullptr);
    if (n.trial_f.norm() < (1.0 - 1e-4 * step) * norm_f) return step;
  }
  return 0.0;
}

/// The regularized (proximal) Newton step for the slip nodes of a
/// non-associated law: the step's equations B_i dr_i + C_i dv_i = -F_i get
/// the term eps dr_i, eps = min(0.1, 10 x the scaled residual). With a
/// sliding rule that is not normal to the cone the operator of the
/// increment is not monotone, and the Newton system of a slip-dominated
/// state can be nearly singular on the way to a regular solution (seen on
/// the seed punch with case C's ratios and a moving plane: steps of 1e3
/// times |F| that the line search cut to 2^-10, for ten steps and more).
/// The shift bounds such steps; it vanishes with the residual, so the
/// convergence near the solution stays superlinear. Along the left null
/// vector u of B_i (the cone's generator, reduce_slip_node) the term is
/// taken as eps u u^T W_ii^-1 dv_i (dr_i if the other nodes' reactions stood
/// still), so that this equation stays local and the node keeps 2 unknowns
/// in the dense system.
/// Associated laws keep the plain step.
void regularize_non_associated_slip(const CondensedContactProblem& problem, double scaled_residual,
                                    NewtonState& n) {
  const double shift = std::min(largest_slip_shift, 10.0 * scaled_residual);
  n.slip_shift = 0.0;
  for (int i = 0; i < problem.n_nodes(); ++i) {
    if (n.states[i] != ContactState::slip || problem.laws[i].associated()) continue;
    n.slip_shift = shift;
    const Eigen::JacobiSVD<Eigen::Matrix3d> svd(n.b[i], Eigen::ComputeFullU);
    const Eigen::Vector3d u = svd.matrixU().col(2);
    n.b[i] += shift * (Eigen::Matrix3d::Identity() - u * u.transpose());
    const Eigen::Matrix3d stiffness = problem.operators->diagonal_block(i).inverse();
    n.c[i] += shift * u * (u.transpose() * stiffness);
  }
}

}  // namespace

ContactSolveReport solve_semismooth_newton(const CondensedContactProblem& problem,
                                           Eigen::VectorXd& r, double law_tolerance,
                                           int max_iterations, ContactWorkspace& workspace,
                                           double min_first_step) {
  // Newton on F(r) = 0, F_i = r_i - proj_K(r_i - rho_i A(v_i)), v = q + W r.
  // The step solves B_i dr_i + C_i dv_i = -F_i with dv = W dr, i.e. dr = S dv.
  // Stick nodes (B_i = 0) give dv_i = -C_i^-1 F_i and open nodes (C_i = 0)
  // give dr_i = -F_i: only the slip and open nodes' dv remain unknown, in a
  // dense system of their size (small when most nodes stick). When most
  // nodes are open, the stick and slip nodes' dr are the unknowns instead
  // (step_in_reactions); the LU of a repeated system is reused (dense_step).
  //
  // The dense products with S and W are the costly part besides the LU, so a
  // step multiplies by each column of S once (the stick columns before the
  // solve, the unknown ones after it; each part by the whole symmetric
  // product, one triangle read, where a quarter of the nodes take part:
  // whole_product_pays), and trial points move v along dv instead of
  // recomputing q + W r. Before convergence is declared, v is recomputed as
  // q + W r, so the test is always on consistent (v, r).
  //
  // Without dense operators (a sparse DelassusOperator) the step's linear
  // system is solved by the operator's SparseNewtonStep, on the sparse
  // stiffness, to a relative residual far below the law tolerance.
  const Eigen::VectorXd& q = problem.q;
  const CondensedOperators* dense = problem.dense();
  if (!dense && !workspace.sparse_step)
    workspace.sparse_step = problem.operators->make_newton_step();
  ContactSolveReport report;
  NewtonState n(problem.n_nodes());
  // The caller's known motion of r (ContactWorkspace::known_motion) serves
  // to accept a start that needs no step. A start that does need one takes
  // it from a product: the known motion carries the rounding of the solves
  // it was combined from, and at 2 million unknowns (N = 64) that was
  // enough for a step that only corrected it, then another that undid it,
  // where the product's start had converged.
  bool v_is_known = false;
  const auto exact_motion = [&](bool known_allowed) {
    v_is_known = known_allowed && workspace.known_motion.of(r);
    if (v_is_known) {
      n.v = workspace.known_motion.v;
      return;
    }
    n.v = q;
    if (dense)
      add_product_of_moving_nodes(dense->matrices(), DenseOperator::delassus, r, n.v);
    else
      problem.operators->add_product(r, n.v);
  };
  exact_motion(true);
  bool v_is_exact = true;
  double first_f_norm = 0.0;
  int cut_steps = 0;
  // A step that ends the pass is counted but not taken: its own progress
  // event, so that a long increment's progress lines say why the Newton
  // pass stopped (the continuation or a cut increment follows).
  const auto end_pass = [&](const char* why) {
    if (workspace.on_iteration)
      workspace.on_iteration({false, report.scaled_residual, report.scaled_certificate, why});
    return report;
  };
  for (int iteration = 0;; ++iteration) {
    fixed_point_residual(problem, n.v, r, n.f, &n.states, &n.b, &n.c);
    const bool converged = has_converged(problem, n.v, r, n.f, law_tolerance, report);
    if (iteration > 0 && workspace.on_iteration)
      workspace.on_iteration({false, report.scaled_residual, report.scaled_certificate});
    if (converged && v_is_exact) return report;
    // Judged again on a product before any step: an iterate accepted on a
    // step's inexact motion, or a start that its known motion does not
    // accept (v_is_known holds at the start only).
    if (converged || v_is_known) {
      if (v_is_known)
        workspace.known_motion.r.resize(
            0);  // not for the settling either: the product is remembered
      exact_motion(false);
      v_is_exact = true;
      fixed_point_residual(problem, n.v, r, n.f, &n.states, &n.b, &n.c);
      if (has_converged(problem, n.v, r, n.f, law_tolerance, report)) return report;
    }
    if (iteration == max_iterations) return report;
    report.newton_iterations = iteration + 1;

    regularize_non_associated_slip(problem, report.scaled_residual, n);
    // Inexact Newton where the step is iterative (the sparse path, and the
    // dense one's GMRES on a kept LU): its linear solve is as accurate
    // as the residual's decrease needs (relative |F| / |F_0|), within bounds.
    const double f_norm = n.f.norm();
    if (iteration == 0) first_f_norm = f_norm;
    const double step_tolerance = std::clamp(first_f_norm > 0.0 ? f_norm / first_f_norm : 1.0,
                                             sparse_step_tolerance, loosest_sparse_step_tolerance);
    if (dense) {
      if (!dense_step(problem, std::min(step_tolerance, loosest_dense_step_tolerance), n,
                      workspace))
        return end_pass("the step's linear solve failed");
    } else {
      const NewtonStepEquations equations{n.states, n.b, n.c, n.f, problem.rho};
      if (!workspace.sparse_step ||
          !workspace.sparse_step->solve(equations, step_tolerance, n.dr, n.dv))
        return end_pass("the step's linear solve failed");
    }
    if (!n.dr.allFinite() || !n.dv.allFinite()) return end_pass("the step was not finite");
    const double step = line_search(problem, r, n);
    if (step == 0.0) return end_pass("the line search found no decrease");
    if (iteration == 0 && step < min_first_step)
      return end_pass("the line search cut the first step short");
    // Four steps in a row cut by the line search: Newton crawls (seen: 10
    // steps and more for a few percent of |F|), and the cascade
    // (solve_contact) does better from another start.
    cut_steps = step < 1.0 ? cut_steps + 1 : 0;
    if (cut_steps == 4) return end_pass("four steps in a row were cut by the line search");
    r.swap(n.trial_r);
    n.v.swap(n.trial_v);
    v_is_exact = false;
  }
}

ContactSolveReport solve_gauss_seidel(
    const CondensedContactProblem& problem, Eigen::VectorXd& r, double law_tolerance,
    int max_sweeps, const std::function<void(const ContactIterationProgress&)>& on_sweep) {
  // physics.md 3.3: block Gauss-Seidel sweeps on W. Node i sees the others frozen:
  // v_i = q_i + sum_j W_ij r_j = (q_i + sum_{j!=i} W_ij r_j) + W_ii r_i, and
  // its one-node law is solved by the bipotential predictor-corrector.
  const int m = problem.n_nodes();
  if (!problem.dense())
    throw NumericalError("Gauss-Seidel sweeps need the dense Delassus operator");
  const CondensedMatrices& dense = problem.dense()->matrices();
  ContactSolveReport report;
  Eigen::VectorXd v = problem.q, f(3 * m);
  dense.add_delassus_product(r, v);
  const double local_tolerance = 0.01 * law_tolerance;
  for (int sweep = 1; sweep <= max_sweeps; ++sweep) {
    for (int i = 0; i < m; ++i) {
      const Eigen::Matrix3d w_ii = dense.delassus_block(i, i);
      const Eigen::Vector3d r_i = r.segment<3>(3 * i);
      const Eigen::Vector3d q_i = v.segment<3>(3 * i) - w_ii * r_i;
      const LocalSolution local =
          solve_node_law(w_ii, q_i, problem.laws[i], problem.rho[i], r_i, local_tolerance, 200);
      const Eigen::Vector3d delta = local.r - r_i;
      if (delta.isZero(0.0)) continue;
      dense.add_delassus_columns(i, delta, v);
      r.segment<3>(3 * i) = local.r;
    }
    report.sweeps = sweep;
    if (!v.allFinite() || !r.allFinite())
      throw NumericalError("non-finite contact reactions in sweep " + std::to_string(sweep));
    fixed_point_residual(problem, v, r, f, nullptr, nullptr, nullptr);
    const bool converged = has_converged(problem, v, r, f, law_tolerance, report);
    if (on_sweep) on_sweep({true, report.scaled_residual, report.scaled_certificate});
    if (converged) return report;
  }
  return report;
}

}  // namespace bipo
