// Owns one quasi-static analysis (docs/physics.md sections 1-3): the partitioned
// stiffness factorized once, the contact module with its Delassus operator,
// and the converged state. The set-up validates and partitions, finds the
// contact nodes, assembles, factorizes and condenses (or shares another
// analysis' set-up) and solves the load patterns' free motions once.
// advance_to() solves one increment: the loads and free motion, the contact
// law on the condensed problem (solve_contact), a recovery solve,
// independent checks of equilibrium and of the law certificate G on the
// recovered displacements, and the commit. What belongs to the application
// (set-up sharing between cases, the BLAS threads) comes in SetupChoices.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cassert>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "contact/node_to_plane.hpp"
#include "contact/solvers.hpp"
#include "contact/wear.hpp"
#include "fem/elasticity.hpp"
#include "mesh/mesh.hpp"
#include "model/case.hpp"
#include "solver/contact_path.hpp"
#include "solver/krylov_rows.hpp"
#include "solver/linear_solver.hpp"

namespace bipo {

/// Summary of one converged increment (or cut sub-increment).
struct StepResult {
  double position = 0.0;  ///< position in the load program (fractional when cut)
  double factor = 0.0;    ///< main load factor at the end of the step
  int cycle = 0;
  int newton_iterations = 0;  ///< contact semi-smooth Newton steps
  int sweeps = 0;             ///< contact Gauss-Seidel sweeps (fallback)
  /// Sparse contact path only: factorizations of its Newton-step
  /// preconditioner and GMRES iterations in this step.
  long contact_factorizations = 0, contact_linear_iterations = 0;
  /// Sparse path, second preconditioner under an iterative backend: the
  /// Krylov iterations of its solves in this step.
  long contact_preconditioner_krylov_iterations = 0;
  /// ... and the steps solved again with it solved (Work::preconditioner_fallbacks).
  long contact_preconditioner_fallbacks = 0;
  /// Sparse path: steps solved by the long-restart GMRES, and K_ff solves
  /// that made a step's motion W dr (Work::long_restart_steps, ::motion_corrections).
  long contact_long_restart_steps = 0, contact_motion_corrections = 0;
  /// ... and the steps that needed the long restart where it did not fit in memory.
  long contact_long_restart_refused_steps = 0;
  /// ... and the steps solved with P's factor in single precision
  /// (Work::single_precision_steps).
  long contact_single_precision_steps = 0;
  /// Dense path only: how this step's Newton steps were solved (fresh LUs,
  /// reused ones, GMRES on the kept LU, bordered or not), over every pass
  /// of the contact iteration's cascade.
  ContactWorkspace::Counts contact_dense_steps;
  double equilibrium_residual = 0.0;  ///< |K u - f - C^T r|_inf / reference force
  double scaled_certificate = 0.0;    ///< max_i |G_i|, scaled (physics.md 3.1), on the recovered u
  double scaled_penetration = 0.0;
  std::vector<Eigen::Vector3d> dirichlet_reactions;         ///< total force per boundary condition
  Eigen::Vector3d contact_force = Eigen::Vector3d::Zero();  ///< sum of r_i, global components
  double contact_normal_force = 0.0;                        ///< sum of r_n
  Eigen::Vector2d contact_tangential_force = Eigen::Vector2d::Zero();  ///< sum of r_t (local)
  int n_open = 0, n_stick = 0, n_slip = 0;
  double dissipation = 0.0;              ///< of the step
  double accumulated_dissipation = 0.0;  ///< since the start
  double seconds_linear = 0.0, seconds_contact = 0.0;
  /// Wear (docs/case-file.md, `wear`), at the last step of a cycle: the
  /// volume the cycle wore (times cycle_jump), applied to the gaps.
  double wear_volume = 0.0;
};

/// Where an increment's contact solve stands, after each of its Newton steps
/// or Gauss-Seidel sweeps (Analysis::set_increment_progress): for progress
/// lines on increments that take minutes.
struct IncrementProgress {
  double position = 0.0;  ///< the increment's end in the load program (fractional when cut)
  int newton_iterations = 0, sweeps = 0;  ///< of this attempt at the increment so far
  double scaled_residual = 0.0;           ///< of the last iterate (ContactSolveReport)
  double scaled_certificate = 0.0;
  double seconds = 0.0;  ///< since the attempt's contact solve started
  /// Sparse path: the Newton steps' GMRES iterations and preconditioner
  /// set-ups of this attempt so far (StepResult's counts); 0 on the dense path.
  long contact_linear_iterations = 0, contact_factorizations = 0;
  /// ... and of those steps, the ones solved by the long-restart GMRES.
  long contact_long_restart_steps = 0;
  /// The last Newton step ended its pass without being taken, and why
  /// (ContactIterationProgress::pass_ended); nullptr otherwise.
  const char* pass_ended = nullptr;
};

/// The contact iterations stop when the scaled certificate, penetration and
/// fixed-point residual of their own kinematics (v = q + W r) are all below
/// solver.law_tolerance. The step is accepted if the scaled certificate and
/// penetration recomputed on the recovered displacements are below this
/// factor times law_tolerance: W and the recovery solve differ by round-off
/// amplified by K's conditioning and, through |omega^2 du_t|_mu*, by mu (a
/// bonded run, mu = 1e6, measured 1.1e-9 against 1e-10). docs/case-file.md,
/// `solver.law_tolerance`.
inline constexpr double recovered_certificate_factor = 100.0;

/// True if case `c` solves K_ff with PETSc: solver.linear is petsc, or
/// auto under mpirun with several ranks (docs/case-file.md, solver.linear).
[[nodiscard]] bool solves_with_petsc(const Case& c);

/// The PETSc settings of case `c`'s analysis: the case's, except that a
/// Krylov method's relative_tolerance, when the case does not give it, is
/// 1e-15 for a case with a friction or sliding coefficient above 100 (in
/// any plane's law or friction_program), else 1e-12. The law's scaling
/// multiplies a solve's error by about mu: at 1e-12 the recovered
/// displacements' certificate failed at mu = 1e4 and 1e6 on every contact
/// path, and passed at 1e-15.
[[nodiscard]] PetscSolverSettings effective_petsc_settings(const Case& c);

/// Wall-clock seconds of the set-up phases.
struct SetupTimings {
  double assembly = 0.0, factorization = 0.0, delassus = 0.0;
  double load_patterns = 0.0;  ///< the free motions of the load patterns (one multi-column solve)
};

class Analysis;
class SparseDelassusOperator;

/// What the application decides for an analysis (app/run.cpp). The
/// constructor asks once the case is checked against the mesh, the dofs are
/// partitioned and the contact nodes are known (what a donor must match; the
/// number of unknowns), before any assembly or factorization.
struct SetupChoices {
  /// An analysis whose set-up (stiffness, factorization, condensed
  /// operators) to share: one for which `being_set_up.can_share_setup_with`
  /// is true, or nullptr to set up anew. It must outlive this one's set-up
  /// (the factorization is shared, so it may be destroyed after), and it may
  /// be running meanwhile (only its set-up is read). Empty: set up anew.
  std::function<const Analysis*(const Analysis& being_set_up)> setup_donor;
  /// Sets the BLAS/LAPACK threads for `n_free` unknowns (solver.blas_threads,
  /// solver/blas_threads.hpp) and says what is in effect, for the summary.
  /// Empty: the threads are left as they are.
  std::function<std::string(int n_free)> blas_threads;
  /// The memory this analysis may count on, in bytes, for the automatic
  /// choice of the contact path (solver/contact_path.hpp) at set-up and of
  /// the sparse path's preconditioner at the first contact step (so it is
  /// kept: it must not refer to the caller's frame). Under mpirun every rank
  /// must get the same value at both points (a collective may give it: the
  /// ranks reach them together). Empty: the machine's MemAvailable.
  std::function<double()> available_memory;
  /// Called as each phase of the set-up starts, with what it does (e.g.
  /// "factorizing the stiffness (248880 unknowns) ..."), for progress lines
  /// on long set-ups; not called once the constructor has returned. Empty:
  /// silent.
  std::function<void(const std::string& phase)> progress;
};

class Analysis {
 public:
  /// Validates the case against the mesh (sets, conflicting conditions,
  /// contact nodes not prescribed), then assembles, factorizes and condenses,
  /// or shares the set-up that `choices.setup_donor` names (only the friction
  /// laws, loads and programs differ then).
  Analysis(const Case& c, const Mesh& mesh, std::unique_ptr<LinearSolver> solver = nullptr,
           const SetupChoices& choices = {});

  /// True if this analysis may share `other`'s set-up: the same mesh object,
  /// material, prescribed dofs, contact nodes and contact frames.
  [[nodiscard]] bool can_share_setup_with(const Analysis& other) const;

  /// Calls `progress` after every Newton step and Gauss-Seidel sweep of the
  /// contact solves of advance_to, on the thread that runs it. Empty:
  /// nothing is called (the default).
  void set_increment_progress(std::function<void(const IncrementProgress&)> progress) {
    increment_progress_ = std::move(progress);
  }

  /// Solves from the converged state to `position` of the load program.
  /// Throws NumericalError (state unchanged) when the increment does not
  /// converge or produces non-finite values.
  StepResult advance_to(double position);
  /// Whether an increment from the converged state to `position` turns the
  /// loading back: the load program's factor, or a contact surface's
  /// motion, changes with the sign opposite to its last change (held steps
  /// between them do not count). The contact solve then also weighs the
  /// bonded start (ContactWorkspace::load_turned_back).
  [[nodiscard]] bool turns_back(double position) const;

  [[nodiscard]] const Mesh& mesh() const { return mesh_; }
  [[nodiscard]] const Case& case_description() const { return case_; }
  /// The largest scaled certificate (and penetration) a converged step may
  /// have on its recovered displacements: recovered_certificate_factor x
  /// solver.law_tolerance.
  [[nodiscard]] double certificate_acceptance() const {
    return recovered_certificate_factor * case_.solver.law_tolerance;
  }
  [[nodiscard]] double position() const { return position_; }
  [[nodiscard]] int n_dofs() const { return partition_->n_dofs(); }
  [[nodiscard]] int n_free() const { return partition_->n_free(); }
  [[nodiscard]] const SetupTimings& timings() const { return timings_; }
  [[nodiscard]] double factor_nonzeros() const { return solver_->factor_nonzeros(); }
  /// The backend of K_ff (solver.linear) and its counters, for reports.
  [[nodiscard]] const LinearSolver& linear_solver() const { return *solver_; }
  /// True if the set-up came from another analysis (see the constructor),
  /// whose case file is setup_donor_case().
  [[nodiscard]] bool shares_setup() const { return shares_setup_; }
  [[nodiscard]] const std::filesystem::path& setup_donor_case() const { return setup_donor_case_; }
  /// The BLAS/LAPACK threads in effect (solver.blas_threads), as text (what
  /// SetupChoices::blas_threads said; "not set" without it).
  [[nodiscard]] const std::string& blas_threads() const { return blas_threads_; }

  /// Full displacement vector (3 per node) of the last converged state, in
  /// one process. Under MPI each rank holds only its dofs' rows of it:
  /// displacement_on_first_rank() gathers them.
  [[nodiscard]] const Eigen::VectorXd& displacement() const {
    assert(!dof_rows_);
    return u_;
  }
  /// True under MPI, where each rank holds its dofs' rows of the
  /// displacements alone.
  [[nodiscard]] bool displacement_divided() const { return dof_rows_.has_value(); }
  /// The values of the displacements held here: every dof in one process,
  /// this rank's under MPI (for tests of what the run keeps).
  [[nodiscard]] Eigen::Index displacement_values_held() const { return u_.size(); }
  /// The displacements whole on rank 0 (the results' rank), every rank's
  /// rows gathered there, and empty on the other ranks (collective: every
  /// rank calls it at the same point; no other rank holds a vector of the
  /// whole mesh for it); in one process a copy of displacement().
  [[nodiscard]] Eigen::VectorXd displacement_on_first_rank() const;
  /// Under MPI, the other ranks' free rows that each rank receives at each
  /// equilibrium check, rank 0 first, found at the set-up; empty in one
  /// process.
  [[nodiscard]] const std::vector<int>& equilibrium_check_received_rows_per_rank() const {
    return check_received_rows_per_rank_;
  }
  /// The elasticity matrix (for stresses and tests).
  [[nodiscard]] const Matrix6d& elasticity() const { return d_; }
  /// The entries allocated for the stiffness matrices this analysis holds
  /// once set up: K_ff's lower triangle (shared with the sparse contact path
  /// and with analyses that share the set-up), K_fp and K_pp; neither K nor
  /// K_ff whole (for tests of what the run keeps).
  [[nodiscard]] long stiffness_entries_held() const;
  /// Every rank's stiffness_entries_held() at the end of its assembly,
  /// rank 0 first (one process: its own; the donor's for an analysis that
  /// shares another's set-up).
  [[nodiscard]] const std::vector<long>& stiffness_entries_per_rank() const {
    return stiffness_entries_per_rank_;
  }
  [[nodiscard]] const DofPartition& partition() const { return *partition_; }

  /// Contact: mesh node of contact node i, per-node results of the last
  /// converged state, accumulated slip (global vector) and dissipation.
  [[nodiscard]] const NodeToPlaneContact& contact() const { return *contact_; }
  /// "dense" or "sparse": how the contact problem's operator is held.
  /// The contact path chosen at set-up and why (the donor's when shared).
  [[nodiscard]] const ContactPathChoice& contact_path() const { return contact_path_; }
  /// The sparse path's Newton-step preconditioner, chosen at the end of the
  /// set-up: "stiffness_factor" or "own_factor"; "" on the dense path.
  [[nodiscard]] std::string_view contact_preconditioner() const;
  /// Why, with the memory weighed (SparseDelassusOperator::preconditioner_reason);
  /// "" on the dense path.
  [[nodiscard]] std::string contact_preconditioner_reason() const;
  /// SparseDelassusOperator::newton_step_rows_per_rank; empty on the dense path.
  [[nodiscard]] std::vector<int> contact_newton_step_rows_per_rank() const;
  /// SparseDelassusOperator::newton_step_received_rows_per_rank, found at
  /// the set-up; empty where contact_newton_step_rows_per_rank() is.
  [[nodiscard]] const std::vector<int>& contact_newton_step_received_rows_per_rank() const {
    return newton_step_received_rows_per_rank_;
  }
  [[nodiscard]] std::string contact_solver() const {
    return contact_->condensed_operators() && !contact_->condensed_operators()->dense() ? "sparse"
                                                                                        : "dense";
  }

  [[nodiscard]] const std::vector<int>& contact_mesh_nodes() const { return contact_mesh_nodes_; }
  /// Tangential components of contact nodes held at zero by a symmetry
  /// condition (docs/case-file.md, boundary_conditions).
  [[nodiscard]] int n_held_contact_components() const {
    return static_cast<int>(std::count(contact_free_dofs_.begin(), contact_free_dofs_.end(), -1));
  }
  [[nodiscard]] const std::vector<ContactNodeState>& contact_states() const { return states_; }
  [[nodiscard]] const std::vector<Eigen::Vector3d>& accumulated_slip() const { return slip_sum_; }
  /// Path length of the slip (sum of |du_t| over the steps).
  [[nodiscard]] const std::vector<double>& accumulated_slip_length() const { return slip_length_; }
  [[nodiscard]] const std::vector<double>& accumulated_dissipation() const {
    return dissipation_sum_;
  }
  /// Global components of the reaction of node i.
  [[nodiscard]] Eigen::Vector3d contact_reaction(int i) const;

  /// The wear of the contact nodes (case `wear`), or nullptr without it.
  [[nodiscard]] const NodalWear* wear() const { return wear_ ? &*wear_ : nullptr; }
  /// Cycles the wear stands for: the simulated ones, each cycle_jump times.
  [[nodiscard]] long long represented_cycles() const { return represented_cycles_; }
  /// Why the run ends before its program does (a wear stop criterion), or
  /// empty: run_load_program stops after the step that sets it.
  [[nodiscard]] const std::string& stop_reason() const { return stop_reason_; }

 private:
  /// The contact operator if it is the sparse path's, else nullptr.
  [[nodiscard]] const SparseDelassusOperator* sparse_operator() const;
  // The set-up, in the constructor's order (analysis.cpp says what each
  // does), and the per-increment steps of advance_to over their Increment.
  struct PrescribedDofs;
  struct Increment;
  PrescribedDofs validate_and_partition();
  [[nodiscard]] PrescribedDofs prescribed_by_conditions() const;
  void check_load_sets() const;
  void record_condition_dofs(const PrescribedDofs& dofs);
  void set_up_contact_nodes(const PrescribedDofs& dofs);
  void check_contact_node_supports(int pi, int node, const Eigen::Matrix3d& frame,
                                   const PrescribedDofs& dofs) const;
  void share_setup_from(const Analysis& donor, const std::vector<double>& rho_override);
  void assemble_and_split_stiffness();
  void condense_contact_operators(const std::vector<double>& rho_override);
  [[nodiscard]] ContactPathChoice choose_contact_path_for_setup(const SetupChoices& choices);
  void report_setup_phase(const std::string& phase) const;
  void set_up_sparse_contact_operator(const std::vector<double>& rho_override,
                                      const std::function<double()>& available_memory);
  [[nodiscard]] Eigen::VectorXd stiffness_times(const Eigen::VectorXd& u) const;
  void set_up_load_patterns();
  void start_at_rest();

  void begin_increment(Increment& inc) const;
  void apply_loads(Increment& inc);
  void solve_contact_problem(Increment& inc);
  [[nodiscard]] SparseNewtonStep::Work contact_work() const;
  [[noreturn]] void throw_contact_not_converged(const ContactSolveReport& report,
                                                const Increment& inc) const;
  void recover_displacements(Increment& inc);
  /// Each contact surface's motion factor change from the last converged
  /// state to `position` (0 for a surface that does not move).
  [[nodiscard]] std::vector<double> motion_steps(double position) const;
  [[nodiscard]] Eigen::VectorXd recovery_guess(const Increment& inc) const;
  void keep_free_displacement();
  [[nodiscard]] bool recover_from_contact_responses(Increment& inc);
  void check_equilibrium(Increment& inc) const;
  void check_equilibrium_by_rank(Increment& inc) const;
  void accept_equilibrium(StepResult& result, double max_free, double reference,
                          const std::function<double(int dof)>& prescribed_residual) const;
  void check_law_on_recovered(Increment& inc);
  /// On the sparse path, W r of the increment's reactions from its
  /// recovered motion v: W r = v - q (plus the held springs' r / k).
  void record_reactions_motion(Increment& inc, const Eigen::VectorXd& v) const;
  void commit_step(Increment& inc);
  void set_up_wear();  // analysis_wear.cpp
  void wear_step(StepResult& result);

  void set_up_rank_maps();
  [[nodiscard]] Eigen::VectorXd contact_rows_of(
      Eigen::Ref<const Eigen::VectorXd> free_vector) const;
  void prescribed_values(double position, Eigen::VectorXd& u_prescribed) const;
  void external_forces_at(double position, Eigen::VectorXd& f) const;
  void free_motion_at_contact(const Increment& inc, Eigen::VectorXd& out) const;
  void free_motion(const Increment& inc, Eigen::VectorXd& out) const;

  Case case_;
  const Mesh& mesh_;
  Matrix6d d_;
  // The stiffness in blocks of free (f) and prescribed (p) dofs: K_ff's
  // lower triangle (shared with the sparse contact path and with analyses
  // that share this set-up) and K_fp, K_pp, which are small. Neither K nor
  // K_ff whole is ever made; K's lower triangle lives during the assembly
  // only (docs/performance.md, "Memory of the stiffness" and "The set-up's
  // copies of the stiffness").
  //
  // Under MPI each rank assembles only the elements of its rows and of the
  // contact nodes (distributed_assembly.hpp): its blocks hold those rows
  // complete and partial sums or nothing elsewhere, and what reads them
  // whole (K u, the load patterns) computes its own rows and gathers.
  std::shared_ptr<const SparseMatrix> k_ff_lower_;
  SparseMatrix k_fp_, k_pp_;
  // Under MPI: every rank's dofs and free rows, for those gathers (their
  // buffers change: mutable, and one Analysis runs on one thread under MPI).
  mutable std::optional<KrylovRows> dof_rows_, free_rows_;
  // The entries of K_ff's lower triangle over the whole mesh (the sum over
  // the ranks under MPI; the same on every rank), for the sparse path's
  // memory rules.
  double stiffness_lower_entries_ = 0.0;
  std::vector<long> stiffness_entries_per_rank_;
  std::vector<int> newton_step_received_rows_per_rank_;  // found at the set-up
  std::unique_ptr<DofPartition> partition_;
  std::shared_ptr<LinearSolver> solver_;  // shared by analyses of the same body
  std::unique_ptr<NodeToPlaneContact> contact_;
  ContactWorkspace contact_workspace_;  // scratch of the contact solves, kept between increments
  // K_ff^-1 E_i (n_free x 3) of each contact node that has carried a
  // reaction, solved on first use (recover_from_contact_responses); empty
  // matrices for the others.
  std::vector<Eigen::MatrixXd> contact_responses_;
  std::size_t contact_response_nodes_ = 0;
  std::vector<int> contact_mesh_nodes_;
  // 3 per contact node, indices into the free dofs; -1 for a tangential
  // component held at zero by a symmetry condition.
  std::vector<int> contact_free_dofs_;
  // Prescribed dofs: (condition index, component) that sets each one.
  std::vector<std::pair<int, int>> prescribed_source_;
  std::vector<std::vector<int>> condition_dofs_;  // prescribed dofs of each condition
  // The load is linear in its programs' factors: the free-dof load of an
  // increment is sum_k factor_k(position) b_k, one pattern b_k per boundary
  // condition and per nodal load (columns), with its free motion K_ff^-1 b_k
  // solved once in the constructor. The loads are kept sparse (a condition's
  // b_k = -K_fp u_p is nonzero next to its dofs only, a nodal load on its
  // set), on the free rows kept here (all of them in one process, a rank's
  // own under MPI); the motions at the contact nodes' rows (3 a node, 0 for
  // a held component), which is all the contact iteration reads, and whole
  // in one process only, for the responses' recovery.
  std::vector<const LoadProgram*> pattern_programs_;
  SparseMatrix pattern_loads_;
  Eigen::MatrixXd pattern_contact_motions_;
  Eigen::MatrixXd pattern_motions_;
  // Under MPI (dof_rows_ and free_rows_ set), what ties a rank's rows of
  // the dofs and of the free dofs to each other and to the contact nodes
  // (set_up_rank_maps); u_ then holds the rank's dofs alone.
  struct RankMaps {
    // Each dof kept here (dof_rows_' order): its position among the free
    // rows kept here, or -1 - p for prescribed dof p.
    std::vector<int> dof_source;
    // Each free row kept here (free_rows_' order): its dof's position
    // among the dofs kept here.
    std::vector<int> free_row_dof;
    // Each contact row j (3 a node): the position of its free dof among the
    // free rows kept here; -1 where another rank keeps it or it is held.
    std::vector<int> contact_position;
    // The contact rows kept here, ascending, and every rank's, rank by rank.
    std::vector<int> contact_rows_here, contact_rows_of_every_rank;
    // Each contact row j: the position of its mesh dof among the dofs kept
    // here (a held component's too), -1 where another rank keeps it.
    std::vector<int> contact_dof_position;
    // Every rank's prescribed indices (those of its dofs with dof_source
    // below 0, in its order), rank by rank.
    std::vector<int> prescribed_of_every_rank;
  };
  std::optional<RankMaps> rank_maps_;
  // Under MPI: the other ranks' free rows that the equilibrium check reads
  // (free_rows_read_by_the_check), received from their ranks at each check
  // (its buffers change: mutable, as dof_rows_).
  mutable std::optional<BorderRows> check_border_rows_;
  std::vector<int> check_received_rows_per_rank_;
  double stiffness_norm_ = 0.0;  // max_i sum_j |K_ij|
  SetupTimings timings_;
  std::string blas_threads_;
  ContactPathChoice contact_path_;
  std::function<void(const std::string&)> setup_progress_;  ///< during the constructor only
  std::function<void(const IncrementProgress&)> increment_progress_;
  bool shares_setup_ = false;
  std::filesystem::path setup_donor_case_;

  double position_ = 0.0;
  // The displacements of the last converged state: whole in one process,
  // this rank's dofs under MPI (dof_rows_' kept rows, in their order).
  Eigen::VectorXd u_;
  Eigen::VectorXd r_;
  Eigen::VectorXd r_previous_;  // reactions one step before r_
  // The free displacements one step before u_'s, for the start of an
  // iterative backend's recovery solve (recovery_guess); empty with a
  // direct one. Under MPI this rank's rows only (free_rows_' kept rows).
  Eigen::VectorXd free_displacement_previous_;
  // W r_ and W r_previous_ on the sparse path (from the recovered motions,
  // record_reactions_motion), which give the motion of the next increment's
  // extrapolated start without a K_ff solve; empty elsewhere.
  Eigen::VectorXd reactions_motion_, reactions_motion_previous_;
  double previous_step_factor_ = 0.0;  // load factor change of the last step
  // The last nonzero change of the load factor, and of each contact
  // surface's motion factor (0: none yet, or a surface that does not
  // move), whatever held steps came since: where the loading turns back
  // (turns_back).
  double last_load_step_ = 0.0;
  std::vector<double> last_motion_steps_;
  std::vector<ContactNodeState> states_;
  std::vector<Eigen::Vector3d> slip_sum_;
  std::vector<double> slip_length_;
  std::vector<double> dissipation_sum_;
  double dissipation_total_ = 0.0;
  std::optional<NodalWear> wear_;
  long long represented_cycles_ = 0;
  std::string stop_reason_;
};

}  // namespace bipo
