// Owns the sparse Delassus operator (issue 13): W of the contact nodes
// applied through the factorization of K_ff and never formed, so that memory
// grows like the mesh and not like the square of the contact zone; and the
// semi-smooth Newton steps of the contact problem (docs/physics.md 3.2) solved on the
// sparse stiffness. docs/architecture.md, "The sparse contact path", says
// why the step is solved the way it is.
#pragma once

#include <Eigen/Core>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "contact/condensed_problem.hpp"
#include "fem/elasticity.hpp"
#include "model/case.hpp"
#include "solver/krylov_rows.hpp"
#include "solver/linear_solver.hpp"

namespace bipo {

/// Where the contact nodes sit among the free dofs: 3 per node (global
/// components x, y, z), -1 for a tangential component held at zero by a
/// symmetry condition, the nodes' local frames (rows n, t1, t2) and their
/// reference positions (they group nodes into patches for the one-factor
/// preconditioner; empty: patches of consecutive nodes).
struct ContactDofs {
  std::vector<int> free_dofs;
  std::vector<Eigen::Matrix3d> frames;
  std::vector<Eigen::Vector3d> positions;
  [[nodiscard]] int n_nodes() const { return static_cast<int>(frames.size()); }
  /// Node i's first free dof (never -1: the normal is never held); an MPI
  /// rank keeps a node, and its held slots, where it keeps this row.
  [[nodiscard]] int first_free_dof(int i) const {
    int dof = -1;
    for (int c = 0; c < 3 && dof < 0; ++c) dof = free_dofs[3 * i + c];
    return dof;
  }
  /// Node i's part of a vector on the free dofs (the first rows of
  /// `free_vector`), in the node's local frame; a held global component
  /// counts as 0.
  [[nodiscard]] Eigen::Vector3d local_part(Eigen::Ref<const Eigen::VectorXd> free_vector,
                                           int i) const;
};

/// The contact nodes of `dofs` divided among the MPI ranks as the rows of
/// K_ff are (KrylovRows): a rank keeps a node where it keeps the node's
/// first free row (ContactDofs::first_free_dof; the rows are divided by
/// node, so the node's other rows and its held slots are there too). Says
/// where each node's components are among the rows kept here, and gathers
/// a vector of 3 values a node from the ranks that keep them. On one
/// process (no KrylovRows) every node and row is here and nothing is
/// gathered. For the products and Newton steps of the sparse path, which
/// under MPI solve on each rank's rows and gather only the contact nodes'
/// answer.
class ContactNodesByRank {
 public:
  /// `held_slot`: for each node's local components (3 a node), its row in
  /// the vectors after K_ff's, or -1 (empty: none held). `rows`: the
  /// vectors' rows by rank, or null on one process; it and `dofs` must
  /// outlive this object. Collective under MPI (the ranks' nodes).
  ContactNodesByRank(const ContactDofs& dofs, const std::vector<int>& held_slot, KrylovRows* rows);
  /// Where each node's global components (3 a node) are among the rows kept
  /// here, and its held local components' slots: -1 where the component
  /// has none, or another rank keeps the node.
  [[nodiscard]] const std::vector<int>& free_positions() const { return free_position_; }
  [[nodiscard]] const std::vector<int>& held_positions() const { return held_position_; }
  /// The nodes kept here, ascending.
  [[nodiscard]] const std::vector<int>& kept_nodes() const { return kept_nodes_; }
  /// Node i's part of `x` (the rows kept here) on its free components, in
  /// its local frame (a held component 0; 0 for a node kept elsewhere).
  [[nodiscard]] Eigen::Vector3d local_part(Eigen::Ref<const Eigen::VectorXd> x, int i) const;
  /// `all` (3 values a node, every node) from `kept` (3 values a node kept
  /// here, in kept_nodes()' order) of every rank (collective). Not to be
  /// called on one process (distributed() is false: `kept` is all).
  void gather(const Eigen::VectorXd& kept, Eigen::VectorXd& all);
  [[nodiscard]] bool distributed() const { return node_rows_.has_value(); }

 private:
  const ContactDofs& dofs_;
  std::vector<int> free_position_, held_position_, kept_nodes_;
  std::optional<KrylovRows> node_rows_;  // the nodes' vectors (3 a node) by rank
};

/// What the analysis decides for a SparseDelassusOperator.
struct SparseOperatorChoices {
  SparsePreconditionerChoice preconditioner = SparsePreconditionerChoice::automatic;
  /// Told how far the estimate of W's diagonal blocks has got (minutes at
  /// 10^6 unknowns with an iterative solver), in words, during create().
  std::function<void(const std::string&)> progress;
  /// The memory `automatic` may count on, in bytes, asked once, when the
  /// analysis asks for the choice at the end of its set-up (kept: it must
  /// not refer to the caller's frame). Under mpirun every rank must get
  /// the same value (the ranks must take the same preconditioner), so it
  /// may be a collective: every rank reaches that point together. Empty:
  /// the machine's MemAvailable.
  std::function<double()> available_memory;
  /// The entries of K_ff's lower triangle over the whole mesh, where
  /// `k_lower` holds only an MPI rank's rows complete (the same number on
  /// every rank: the memory rules must decide alike); negative: k_lower's
  /// own count.
  double stiffness_lower_entries = -1.0;
};

/// W = F E^T K_ff^-1 E F^T (E: the contact nodes' free dofs, F: their frames)
/// applied by one solve with K_ff's factorization. A held component gets a
/// decoupled spring (the mean of the node's other diagonal stiffness
/// entries), as in the dense path: v = r / k there, and the law gives r = 0.
///
/// Its Newton steps (make_newton_step) are preconditioned by a second
/// factorization, of K plus the nodes' springs (`stiffness_factor`), or by
/// K_ff's own factor only (`own_factor`: GMRES on the contact unknowns, no
/// second factor in memory); `automatic` takes the second factorization
/// when it fits in half of the memory available at the end of the set-up.
class SparseDelassusOperator final : public DelassusOperator,
                                     public std::enable_shared_from_this<SparseDelassusOperator> {
 public:
  /// `k_lower`: the lower triangle of K_ff (compressed; under MPI the rows
  /// of the rank and of the contact nodes complete: the Newton step's
  /// products with it give each rank its own rows, OwnRowsProduct);
  /// `k_factor`: K_ff's
  /// factorization, shared with the analysis (with a second factorization
  /// for the Newton steps, make_newton_step keeps it in single precision:
  /// LinearSolver::keep_factor_in_single_precision).
  static std::shared_ptr<const SparseDelassusOperator> create(
      std::shared_ptr<const SparseMatrix> k_lower, std::shared_ptr<LinearSolver> k_factor,
      ContactDofs dofs, SparseOperatorChoices choices = {});

  [[nodiscard]] int size() const override { return 3 * dofs_.n_nodes(); }
  /// v += W r, K_ff solved in full. The last such product is remembered (one
  /// per thread): asked again for the same r, bit for bit, the operator adds
  /// it without a solve. An increment asks twice for its reactions' motion
  /// (the contact solver's last exact v, then settle_reactions' gaps), and
  /// each is a whole Krylov solve under an iterative backend. Under MPI the
  /// solve is on each rank's rows of K_ff and only the contact nodes' motion
  /// (3 values a node) is gathered, never the motion of the whole mesh; a
  /// collective (every rank asks for every product, the contact iteration
  /// being the same on every rank).
  void add_product(const Eigen::VectorXd& r, Eigen::VectorXd& v) const override;
  /// v += W r with K_ff's solve stopped at the relative residual
  /// `relative_tolerance` where the backend is iterative
  /// (LinearSolver::solve_in_place_to_tolerance); exact with a direct one.
  /// A tolerance of 0 (or less) asks for the backend's full solve, as
  /// add_product.
  void add_inexact_product(const Eigen::VectorXd& r, Eigen::VectorXd& v,
                           double relative_tolerance) const;
  /// V = W R for several columns at once (multi-column solves, a few
  /// columns at a time to bound the transient memory), each solve to
  /// `relative_tolerance` as in add_inexact_product. Under MPI with an
  /// iterative backend, a column at a time on each rank's rows, as
  /// add_inexact_product (the backend solves a column at a time anyway);
  /// with a direct one (MUMPS) its block solves still gather the motion of
  /// the whole mesh, a few columns at a time. A collective under MPI.
  void product_columns(const Eigen::MatrixXd& r, Eigen::MatrixXd& v,
                       double relative_tolerance) const;
  /// An estimate of W_ii: the inverse of the node's own stiffness block,
  /// scaled by the ratio of the exact W_jj to that inverse measured on a
  /// sample of nodes (by solves); it only sets rho.
  [[nodiscard]] Eigen::Matrix3d diagonal_block(int i) const override {
    return diagonal_estimates_[i];
  }
  /// Whether that sample is solved for in one solve per local direction,
  /// all its nodes loaded at once (an iterative backend, where each column
  /// is a Krylov solve, and a contact zone large enough for the samples'
  /// couplings to be small), instead of a column per node and direction.
  [[nodiscard]] bool probes_samples_together() const;
  [[nodiscard]] std::unique_ptr<SparseNewtonStep> make_newton_step() const override;

  [[nodiscard]] const SparseMatrix& stiffness_lower() const { return *k_lower_; }
  /// K_ff's solver (its factorization, or an iterative backend's set-up).
  [[nodiscard]] const LinearSolver& stiffness_solver() const { return *k_factor_; }
  [[nodiscard]] const ContactDofs& dofs() const { return dofs_; }
  /// The decoupled spring of each held component (3 per node, 0 if free).
  [[nodiscard]] const std::vector<double>& held_springs() const { return held_springs_; }
  [[nodiscard]] int n_free() const { return static_cast<int>(k_lower_->rows()); }
  /// The preconditioner the Newton steps use (never `automatic`): decided
  /// at the first call, from the memory available then (SparseOperatorChoices;
  /// the analysis calls it at the end of its set-up, on every rank).
  [[nodiscard]] SparsePreconditionerChoice preconditioner() const;
  /// The preconditioner once chosen, `automatic` before (no decision taken
  /// here: it may be a collective, see SparseOperatorChoices::available_memory).
  [[nodiscard]] SparsePreconditionerChoice preconditioner_chosen() const { return preconditioner_; }
  /// Why preconditioner() chose as it did, in words, with the memory it
  /// weighed (decides first, as preconditioner()).
  [[nodiscard]] const std::string& preconditioner_reason() const;
  /// The rows of the Newton step's GMRES vectors that each MPI rank keeps
  /// (krylov_rows.hpp) with the `stiffness_factor` preconditioner, whose
  /// GMRES runs on vectors of the whole mesh; empty on one process or with
  /// `own_factor` (vectors of the contact nodes, kept whole).
  [[nodiscard]] std::vector<int> newton_step_rows_per_rank() const;
  /// The rows of K_ff that each MPI rank receives from its neighbours in
  /// each product K_ff x of the Newton step (OwnRowsProduct), rank 0
  /// first; empty where newton_step_rows_per_rank() is. A collective under
  /// MPI (every rank calls it at the same point).
  [[nodiscard]] std::vector<int> newton_step_received_rows_per_rank() const;
  /// For each held component with a slot in the Newton step's vectors (in
  /// the order of held_springs()), the free row of its node, with which an
  /// MPI rank keeps the slot (KrylovRows).
  [[nodiscard]] std::vector<int> held_slots_beside() const;
  /// The memory available now, as SparseOperatorChoices::available_memory
  /// says (a collective under MPI: every rank must ask at the same point).
  [[nodiscard]] double available_memory() const;

 private:
  SparseDelassusOperator(std::shared_ptr<const SparseMatrix> k_lower,
                         std::shared_ptr<LinearSolver> k_factor, ContactDofs dofs);
  /// Under MPI, what a product's solve on each rank's rows needs: K_ff's
  /// rows by rank, the contact nodes by rank, and the product's buffers.
  struct ProductRows {
    KrylovRows rows;
    std::optional<ContactNodesByRank> nodes;
    Eigen::VectorXd motion, kept_local, local;  // own rows; kept nodes'; every node's
  };
  /// Made at the first product (a collective under MPI); null on one
  /// process.
  [[nodiscard]] ProductRows* product_rows() const;
  /// own.local = the contact nodes' local motion F E^T K_ff^-1 E F^T r
  /// (3 a node, every node), solved on this rank's rows (collective), from
  /// `start` (this rank's rows of a guess of K_ff^-1 E F^T r; an exact
  /// solve) if given.
  void solve_product_on_own_rows(ProductRows& own, Eigen::Ref<const Eigen::VectorXd> r,
                                 double relative_tolerance,
                                 const Eigen::VectorXd* start = nullptr) const;
  /// The node's stiffness block in its local frame (held components: their spring).
  [[nodiscard]] Eigen::Matrix3d local_stiffness_block(int i) const;
  void estimate_diagonal_blocks(const std::function<void(const std::string&)>& progress);
  /// The nodes whose W_jj the estimate solves for (fewer under an iterative
  /// backend, where each column is a Krylov solve).
  [[nodiscard]] int sample_count() const;
  /// The ratios of exact to estimated W_ii of sample nodes [first, last):
  /// a column per node and local direction, or (`together`) one per local
  /// direction with all of them loaded at once.
  void sample_compliance_ratios(int first, int last, bool together,
                                std::vector<double>& ratios) const;
  // Two digits are plenty for a ratio that only sets rho, whose median over
  // the sample spreads over a factor of two (at N = 64 with PETSc's CG the
  // 72 solves took 18 minutes at 1e-6, 13.5 at 1e-3). A direct solver
  // ignores it.
  static constexpr double estimate_tolerance = 1e-2;
  // Sample nodes per multi-column solve: 12 right-hand sides keep the
  // solve's transient memory (its right-hand sides, solution and CHOLMOD's
  // workspace, each n x 12) a few percent of the factor's on large meshes.
  static constexpr int sample_nodes_per_solve = 4;

  std::shared_ptr<const SparseMatrix> k_lower_;
  // Not const: make_newton_step may keep its factor in single precision.
  std::shared_ptr<LinearSolver> k_factor_;
  ContactDofs dofs_;
  std::vector<double> held_springs_;
  std::vector<Eigen::Matrix3d> diagonal_estimates_;
  mutable SparsePreconditionerChoice preconditioner_ = SparsePreconditionerChoice::automatic;
  mutable std::string preconditioner_reason_;
  std::function<double()> available_memory_;
  double stiffness_lower_entries_ = 0.0;  // SparseOperatorChoices::stiffness_lower_entries
  mutable std::once_flag preconditioner_decided_;
  mutable std::once_flag stiffness_factor_rounded_;
  mutable std::once_flag product_rows_made_;
  mutable std::unique_ptr<ProductRows> product_rows_;  // one thread a rank under MPI
  // Names this operator's exact products with its present factor: a new key
  // when make_newton_step rounds the factor to single precision, so that a
  // product remembered from before is not taken for one solved after.
  mutable std::atomic<std::uint64_t> product_key_;
};

/// Whether a second factorization as large as `factor_nonzeros` (plus a copy
/// of K's lower triangle, `stiffness_nonzeros`) fits in half of
/// `available_bytes`; this is how `automatic` chooses. Counted is what it
/// adds at its peak: P's factor in double while it is computed (8 bytes an
/// entry, plus a tenth for CHOLMOD's workspace) less the 4 bytes an entry
/// that K_ff's factor gives back when it goes to single precision just
/// before (make_newton_step), and 12 bytes per stiffness entry.
[[nodiscard]] bool second_factor_fits(double factor_nonzeros, double stiffness_nonzeros,
                                      double available_bytes);
/// The bytes second_factor_fits counts.
[[nodiscard]] double second_factor_bytes(double factor_nonzeros, double stiffness_nonzeros);

/// What a second multigrid solver on P (an iterative backend's
/// `stiffness_factor`) adds to each of `processes` ranks: its matrix and
/// hierarchy, three copies of the full matrix of K_ff's
/// `stiffness_lower_nonzeros` at most (12 bytes a nonzero), divided among
/// the ranks as K_ff's own is. `automatic` takes it when it fits in half
/// of a rank's share of the memory available.
[[nodiscard]] double second_multigrid_bytes_per_process(double stiffness_lower_nonzeros,
                                                        int processes);

/// The restart of the long GMRES that a Newton step falls back to on
/// `unknowns` (SparseNewtonStepSolver): `wanted`, or less where its vectors
/// (per unit of restart one of `unknowns` doubles and one of floats, plus
/// one of doubles) would take more than half of `available_bytes`; 0 where
/// that leaves no more than `short_restart`, which has already failed.
[[nodiscard]] int long_restart_that_fits(int wanted, int short_restart, double unknowns,
                                         double available_bytes);

}  // namespace bipo
