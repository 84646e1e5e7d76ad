// Owns one quasi-static analysis (SPEC.md sections 1-3): the partitioned
// stiffness factorized once, the contact module with its Delassus operator,
// and the converged state. advance_to() solves one increment: the free motion
// (a combination of the load patterns' motions, solved once), the contact law
// on the condensed problem (solve_contact), a recovery solve, and
// independent checks of equilibrium and of the law certificate G on the
// recovered displacements.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "contact/node_to_plane.hpp"
#include "contact/solvers.hpp"
#include "fem/elasticity.hpp"
#include "mesh/mesh.hpp"
#include "model/case.hpp"
#include "solver/linear_solver.hpp"

namespace bipo {

/// Summary of one converged increment (or cut sub-increment).
struct StepResult {
  double position = 0.0;  ///< position in the load program (fractional when cut)
  double factor = 0.0;    ///< main load factor at the end of the step
  int cycle = 0;
  int newton_iterations = 0;          ///< contact semi-smooth Newton steps
  int sweeps = 0;                     ///< contact Gauss-Seidel sweeps (fallback)
  double equilibrium_residual = 0.0;  ///< |K u - f - C^T r|_inf / reference force
  double scaled_certificate = 0.0;    ///< max_i |G_i|, scaled (SPEC 3.1), on the recovered u
  double scaled_penetration = 0.0;
  std::vector<Eigen::Vector3d> dirichlet_reactions;         ///< total force per boundary condition
  Eigen::Vector3d contact_force = Eigen::Vector3d::Zero();  ///< sum of r_i, global components
  double contact_normal_force = 0.0;                        ///< sum of r_n
  Eigen::Vector2d contact_tangential_force = Eigen::Vector2d::Zero();  ///< sum of r_t (local)
  int n_open = 0, n_stick = 0, n_slip = 0;
  double dissipation = 0.0;              ///< of the step
  double accumulated_dissipation = 0.0;  ///< since the start
  double seconds_linear = 0.0, seconds_contact = 0.0;
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

/// Wall-clock seconds of the set-up phases.
struct SetupTimings {
  double assembly = 0.0, factorization = 0.0, delassus = 0.0;
};

class Analysis {
 public:
  /// Validates the case against the mesh (sets, conflicting conditions,
  /// contact nodes not prescribed), assembles, factorizes and condenses.
  /// If one of `same_body` (the first such) has the same mesh object,
  /// material, prescribed dofs, contact nodes and contact frames, its
  /// stiffness, factorization and condensed operators are shared instead
  /// (only the friction laws, loads and programs differ); it must outlive
  /// this one's set-up (the factorization is shared, so it may be destroyed
  /// after), and it may be running meanwhile (only its set-up is read).
  /// `blas_threads_set_by_caller`: the caller has set the BLAS threads for
  /// several analyses at once and says what is in effect; this one then
  /// leaves them alone (otherwise it applies solver.blas_threads).
  Analysis(const Case& c, const Mesh& mesh, std::unique_ptr<LinearSolver> solver = nullptr,
           const std::vector<const Analysis*>& same_body = {},
           std::optional<std::string> blas_threads_set_by_caller = std::nullopt);

  /// Solves from the converged state to `position` of the load program.
  /// Throws NumericalError (state unchanged) when the increment does not
  /// converge or produces non-finite values.
  StepResult advance_to(double position);

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
  /// True if the set-up came from another analysis (see the constructor),
  /// whose case file is setup_donor_case().
  [[nodiscard]] bool shares_setup() const { return shares_setup_; }
  [[nodiscard]] const std::filesystem::path& setup_donor_case() const { return setup_donor_case_; }
  /// The BLAS/LAPACK threads in effect (solver.blas_threads), as text.
  [[nodiscard]] const std::string& blas_threads() const { return blas_threads_; }

  /// Full displacement vector (3 per node) of the last converged state.
  [[nodiscard]] const Eigen::VectorXd& displacement() const { return u_; }
  /// The full stiffness and the elasticity matrix (for energies and tests).
  [[nodiscard]] const SparseMatrix& stiffness() const { return k_; }
  [[nodiscard]] const Matrix6d& elasticity() const { return d_; }
  /// External nodal forces at the last converged state.
  [[nodiscard]] const Eigen::VectorXd& external_forces() const { return f_ext_; }
  [[nodiscard]] const DofPartition& partition() const { return *partition_; }

  /// Contact: mesh node of contact node i, per-node results of the last
  /// converged state, accumulated slip (global vector) and dissipation.
  [[nodiscard]] const NodeToPlaneContact& contact() const { return *contact_; }
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

 private:
  [[nodiscard]] bool can_share_setup_with(const Analysis& other) const;
  void prescribed_values(double position, Eigen::VectorXd& u_prescribed) const;
  void external_forces_at(double position, Eigen::VectorXd& f) const;

  Case case_;
  const Mesh& mesh_;
  Matrix6d d_;
  SparseMatrix k_, k_ff_, k_fp_;
  std::unique_ptr<DofPartition> partition_;
  std::shared_ptr<LinearSolver> solver_;  // shared by analyses of the same body
  std::unique_ptr<NodeToPlaneContact> contact_;
  ContactWorkspace contact_workspace_;  // scratch of the contact solves, kept between increments
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
  // solved once in the constructor.
  std::vector<const LoadProgram*> pattern_programs_;
  Eigen::MatrixXd pattern_loads_, pattern_motions_;
  double stiffness_norm_ = 0.0;  // max_i sum_j |K_ij|
  SetupTimings timings_;
  std::string blas_threads_;
  bool shares_setup_ = false;
  std::filesystem::path setup_donor_case_;

  double position_ = 0.0;
  Eigen::VectorXd u_, f_ext_, r_;
  Eigen::VectorXd r_previous_;         // reactions one step before r_
  double previous_step_factor_ = 0.0;  // load factor change of the last step
  std::vector<ContactNodeState> states_;
  std::vector<Eigen::Vector3d> slip_sum_;
  std::vector<double> slip_length_;
  std::vector<double> dissipation_sum_;
  double dissipation_total_ = 0.0;
};

}  // namespace bipo
