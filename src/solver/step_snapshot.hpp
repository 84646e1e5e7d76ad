// Owns what an analysis hands to the result writers: a plain description of
// the run, taken once after set-up (RunDescription), and a snapshot of each
// converged step (StepSnapshot). The writers (io/result_writer) read only
// these, never the Analysis; this file is the one place that reads the
// analysis for them, including the rotation of local contact vectors to
// global axes.
#pragma once

#include <Eigen/Core>
#include <array>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fem/elasticity.hpp"
#include "mesh/mesh.hpp"
#include "model/case.hpp"
#include "solver/analysis.hpp"

namespace bipo {

/// A probe of the case placed on the contact face: the contact node nearest
/// its point on the planes of its set, and the unit in-plane direction from
/// the plane's point to that node (the plane's t1 at the point itself).
struct ProbeSite {
  std::string name;
  int contact_index = -1;  ///< -1: its set is not the node set of any contact plane
  Eigen::Vector3d radial = Eigen::Vector3d::UnitX();
};

/// What the result writers need to know of a run before its first step.
/// Holds references to the analysis' case and mesh: valid while the
/// analysis lives.
struct RunDescription {
  const Case& case_description;
  const Mesh& mesh;
  Matrix6d elasticity;                  ///< for the stresses of the VTK output
  std::vector<int> contact_mesh_nodes;  ///< mesh node of each contact node
  std::vector<ProbeSite> probes;        ///< one per probe of the case, in its order
  int n_held_contact_components = 0;    ///< held at zero by a symmetry condition
  int n_dofs = 0, n_free = 0;
  double factor_nonzeros = 0.0;
  std::string blas_threads;           ///< the BLAS threads in effect, as text
  std::string contact_solver;         ///< "dense" or "sparse" (Analysis::contact_solver)
  std::string contact_solver_reason;  ///< why (ContactPathChoice::reason)
  /// The sparse path's Newton-step preconditioner and why (empty on the
  /// dense path: Analysis::contact_preconditioner).
  std::string contact_preconditioner, contact_preconditioner_reason;
  bool setup_shared = false;            ///< set-up taken from another case's analysis
  double certificate_acceptance = 0.0;  ///< see Analysis::certificate_acceptance
  double start_position = 0.0;          ///< program position before the first step
  SetupTimings timings;
  std::vector<int> contact_of_node;  ///< the case's contact of each contact node
  /// Per contact of the case, the axes (n, t1, t2) of its history.csv
  /// columns normal_force_<name>, tangential_force_<name>_t1/_t2: a plane's
  /// own frame; an indenter's frame at its first-touch node (its axis of
  /// approach, docs/outputs.md), since its nodes' own frames all differ.
  std::vector<std::array<Eigen::Vector3d, 3>> contact_axes;
  std::string linear_solver;  ///< LinearSolver::name() of K_ff's solver
  int parallel_ranks = 1;     ///< MPI ranks of the run (set by the app; 1 serial)
  /// K_ff's solver's solve_count and krylov_iterations after the set-up.
  std::pair<long, long> linear_counts{0, 0};
  /// Analysis::contact_newton_step_rows_per_rank (empty: kept whole).
  std::vector<int> contact_newton_step_rows_per_rank;
  /// Analysis::stiffness_entries_per_rank.
  std::vector<long> stiffness_entries_per_rank;
  /// Analysis::contact_newton_step_received_rows_per_rank (empty: kept whole).
  std::vector<int> contact_newton_step_received_rows_per_rank;
  /// Analysis::equilibrium_check_received_rows_per_rank (empty: one process).
  std::vector<int> equilibrium_check_received_rows_per_rank;
};

/// What one converged step gives the result writers. The views point into
/// the analysis (and `step`) it was taken from: valid until the analysis
/// advances again, that is for the step observer's call.
struct StepSnapshot {
  const StepResult& step;
  const Eigen::VectorXd& displacement;  ///< 3 per mesh node
  /// Per contact node, in the order of RunDescription::contact_mesh_nodes.
  std::span<const ContactNodeState> contact_states;   ///< local frame (n, t1, t2)
  std::span<const Eigen::Vector3d> accumulated_slip;  ///< global components
  std::span<const double> accumulated_slip_length;
  std::span<const double> accumulated_dissipation;
  /// The tangential reaction r_t and the slip increment du_t of each contact
  /// node in global components (owned by the snapshot).
  std::vector<Eigen::Vector3d> friction_force, slip_increment;
  /// The whole reaction r of each contact node on the body, global components.
  std::vector<Eigen::Vector3d> reaction;
  /// Per contact of the case: its rigid displacement w and the total
  /// reaction it exerts on the body (sum of its nodes' r), global components.
  std::vector<Eigen::Vector3d> contact_motion, contact_reaction;
  /// Wear (case `wear`): the analysis' wear module (nullptr without it),
  /// the cycles it stands for, and why the run stops early (or empty).
  const NodalWear* wear = nullptr;
  long long represented_cycles = 0;
  std::string_view stop_reason;
  /// K_ff's solver's counters so far (LinearSolver::solve_count,
  /// krylov_iterations): right-hand sides solved, Krylov iterations.
  long linear_solves = 0, krylov_iterations = 0;
};

/// The description of `analysis`'s run, taken after its set-up.
[[nodiscard]] RunDescription describe_run(const Analysis& analysis);

/// The snapshot of the step `analysis` has just converged, `step`, in one
/// process.
[[nodiscard]] StepSnapshot snapshot_of(const Analysis& analysis, const StepResult& step);
/// The same with the step's whole displacements given (under MPI, where
/// each rank holds its rows: Analysis::displacement_on_first_rank); they must
/// outlive the snapshot.
[[nodiscard]] StepSnapshot snapshot_of(const Analysis& analysis, const StepResult& step,
                                       const Eigen::VectorXd& displacement);

}  // namespace bipo
