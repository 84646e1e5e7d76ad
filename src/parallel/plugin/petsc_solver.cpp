// The PETSc backend of LinearSolver (petsc_solver.hpp): an MPIAIJ matrix of
// this rank's rows, one KSP configured for the chosen method, and a scatter
// that gathers each solution to every rank (kept between solves, so that a
// solve allocates nothing once the first has run).
#include "parallel/plugin/petsc_solver.hpp"

#include <petscksp.h>

#include <Eigen/QR>
#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <vector>

#include "core/errors.hpp"
#include "parallel/plugin/petsc_call.hpp"
#include "parallel/plugin/row_partition.hpp"

namespace bipo::petsc {

namespace {

// PETSc is not thread-safe: analyses running at once (bipo run --jobs),
// each with its own solver or sharing one, take turns in every PETSc call.
// (Under several MPI ranks the ranks' threads would also have to call the
// collectives in the same order: such runs use one analysis at a time.)
std::mutex petsc_mutex;

const char* method_name(PetscMethod method) {
  switch (method) {
    case PetscMethod::direct:
      return "direct";
    case PetscMethod::cg_gamg:
      return "cg_gamg";
    case PetscMethod::cg_hypre:
      return "cg_hypre";
  }
  return "?";
}

std::string short_number(double value) {
  std::array<char, 32> text{};
  std::snprintf(text.data(), text.size(), "%.3g", value);
  return text.data();
}

/// Which rows of the full symmetric matrix whose lower triangle is `lower`
/// this rank holds, in PETSc's numbering (row_partition.hpp), and how many
/// entries each has in the diagonal block and beside it (for PETSc's
/// preallocation). The entries themselves are PETSc's alone: no copy of
/// this rank's rows is kept beside its matrix (fill_matrix).
struct OwnedRows {
  RowPartition partition;
  PetscInt first = 0, end = 0;   // PETSc rows [first, end)
  std::vector<int> caller_rows;  // the caller's row of each owned row
  std::vector<PetscInt> diagonal_counts, off_diagonal_counts;

  void build(const SparseMatrix& lower, int rank);
  [[nodiscard]] bool owns(int petsc_row) const { return petsc_row >= first && petsc_row < end; }
};

void OwnedRows::build(const SparseMatrix& lower, int rank) {
  first = partition.firsts[rank];
  end = first + partition.counts[rank];
  const std::vector<int>& index = partition.new_index;
  const PetscInt n_owned = end - first;
  caller_rows.resize(static_cast<std::size_t>(n_owned));
  for (int row = 0; row < lower.rows(); ++row)
    if (owns(index[row])) caller_rows[index[row] - first] = row;
  diagonal_counts.assign(static_cast<std::size_t>(n_owned), 0);
  off_diagonal_counts.assign(static_cast<std::size_t>(n_owned), 0);
  // Entry (i, j), i >= j, of the lower triangle is A_ij of row i and, off
  // the diagonal, A_ji of row j.
  for (int j = 0; j < lower.outerSize(); ++j)
    for (SparseMatrix::InnerIterator it(lower, j); it; ++it) {
      const int i = static_cast<int>(it.row());
      if (owns(index[i]))
        ++(owns(index[j]) ? diagonal_counts : off_diagonal_counts)[index[i] - first];
      if (i != j && owns(index[j]))
        ++(owns(index[i]) ? diagonal_counts : off_diagonal_counts)[index[j] - first];
    }
}

/// Whether the rows come as consecutive x, y, z of one node each, read off
/// the rigid-body modes (translations give a row's component, rotations its
/// node's coordinates): then GAMG may aggregate nodes, not single dofs.
bool rows_in_node_triples(const Eigen::MatrixXd& modes) {
  if (modes.cols() != 6 || modes.rows() % 3 != 0) return false;
  for (Eigen::Index k = 0; k < modes.rows(); k += 3) {
    for (int c = 0; c < 3; ++c)
      if (modes(k + c, c) != 1.0) return false;
    // Rotation about e_a at node X moves component c by (e_a x X)_c: rows
    // (z, -y), (-z, x), (y, -x) off the diagonal; the same X in all three.
    if (modes(k, 4) != -modes(k + 1, 3) || modes(k, 5) != -modes(k + 2, 3) ||
        modes(k + 1, 5) != -modes(k + 2, 4))
      return false;
  }
  return true;
}

class PetscLinearSolver final : public LinearSolver {
 public:
  explicit PetscLinearSolver(const PetscSolverSettings& settings) : settings_(settings) {}
  ~PetscLinearSolver() override {
    const std::lock_guard<std::mutex> lock(petsc_mutex);
    destroy();
  }
  PetscLinearSolver(const PetscLinearSolver&) = delete;
  PetscLinearSolver& operator=(const PetscLinearSolver&) = delete;

  void set_rigid_body_modes(const Eigen::MatrixXd& modes) override {
    rigid_body_modes_ = modes;
    block_size_ = rows_in_node_triples(modes) ? 3 : 1;
  }
  // Every method: they say whether the rows come as nodes (the partition
  // then works on the node graph); GAMG also takes them as near-null space.
  [[nodiscard]] bool uses_rigid_body_modes() const override { return true; }

  void factorize(const SparseMatrix& a) override { factorize_lower(lower_triangle(a), false); }

  void factorize_lower(const SparseMatrix& lower, bool reuse_analysis) override {
    factorize_lower_changed(lower, {}, reuse_analysis);
  }

  // The changes go into PETSc's matrix as it is filled: the caller keeps
  // no copy of the changed matrix (LinearSolver::factorize_lower_changed).
  void factorize_lower_changed(const SparseMatrix& lower, const LowerChanges& changes,
                               bool reuse_analysis) override {
    if (!lower.isCompressed())
      throw NumericalError("factorize_lower: the matrix is not compressed");
    changes.check_within(lower);
    const std::lock_guard<std::mutex> lock(petsc_mutex);
    const bool same_pattern = reuse_analysis && matrix_ != nullptr && n_ == lower.rows();
    if (!same_pattern) {
      destroy();
      create_matrix(lower);
    }
    fill_matrix(lower, changes);
    set_up_solver();
  }
  [[nodiscard]] bool keeps_own_copy_of_matrix() const override { return true; }

  void solve(const Eigen::MatrixXd& b, Eigen::MatrixXd& x) const override {
    solve_columns(b, x, 0.0);
  }

  void solve_in_place(Eigen::Ref<Eigen::VectorXd> x) const override { solve_vector(x, 0.0); }
  void solve_from_guess(const Eigen::VectorXd& b, Eigen::Ref<Eigen::VectorXd> x) const override;
  void solve_own_rows_from_guess(const Eigen::VectorXd& b,
                                 Eigen::Ref<Eigen::VectorXd> x) const override;

  void solve_to_tolerance(const Eigen::MatrixXd& b, Eigen::MatrixXd& x,
                          double relative_tolerance) const override {
    solve_columns(b, x, relative_tolerance);
  }

  void solve_in_place_to_tolerance(Eigen::Ref<Eigen::VectorXd> x,
                                   double relative_tolerance) const override {
    solve_vector(x, relative_tolerance);
  }
  void apply_approximate_inverse(Eigen::Ref<Eigen::VectorXd> x) const override;
  void apply_approximate_inverse_to_own_rows(Eigen::Ref<Eigen::VectorXd> x) const override;
  void solve_own_rows_to_tolerance(Eigen::Ref<Eigen::VectorXd> x,
                                   double relative_tolerance) const override;

  [[nodiscard]] double factor_nonzeros() const override { return factor_nonzeros_; }
  [[nodiscard]] double factorization_flops() const override { return factorization_flops_; }
  [[nodiscard]] std::string name() const override {
    std::string name = std::string("PETSc ") + method_name(settings_.method);
    const std::size_t ranks = rows_.partition.counts.size();
    if (ranks > 1)
      name += " on " + std::to_string(ranks) + " ranks (rows by " + rows_.partition.method + ")";
    // Chosen from the friction when the case does not give it.
    if (settings_.method != PetscMethod::direct)
      name += ", relative tolerance " + short_number(settings_.relative_tolerance);
    return name;
  }
  [[nodiscard]] std::unique_ptr<LinearSolver> new_solver_for_preconditioning() const override {
    auto solver = std::make_unique<PetscLinearSolver>(settings_);
    solver->for_preconditioning_ = true;
    if (rigid_body_modes_.size() > 0) solver->set_rigid_body_modes(rigid_body_modes_);
    // A rank may hold only its rows of the matrix (divide_rows): the
    // division cannot be made again from it.
    solver->divided_rows_ = divided_rows_;
    return solver;
  }
  [[nodiscard]] bool is_iterative() const override {
    return settings_.method != PetscMethod::direct;
  }
  [[nodiscard]] int processes() const override {
    int size = 1;
    MPI_Comm_size(PETSC_COMM_WORLD, &size);
    return size;
  }
  [[nodiscard]] RowShare row_share() const override {
    RowShare share;
    const RowPartition& partition = divided_rows_ ? *divided_rows_ : rows_.partition;
    const std::vector<int>& index = partition.new_index;
    if (index.empty()) return share;
    share.rows.resize(index.size());
    for (std::size_t row = 0; row < index.size(); ++row)
      share.rows[static_cast<std::size_t>(index[row])] = static_cast<int>(row);
    share.counts = partition.counts;
    return share;
  }
  void divide_rows(const RowGraph& graph) override {
    const std::lock_guard<std::mutex> lock(petsc_mutex);
    divided_rows_ =
        std::make_shared<const RowPartition>(partition_row_graph(graph, PETSC_COMM_WORLD));
  }
  [[nodiscard]] long solve_count() const override { return solves_; }
  [[nodiscard]] long krylov_iterations() const override { return krylov_iterations_; }

 private:
  void create_matrix(const SparseMatrix& lower);
  void fill_matrix(const SparseMatrix& lower, const LowerChanges& changes);
  void set_up_solver();
  void configure_method();
  void enlarge_mumps_workspace();
  void attach_rigid_body_modes();
  void check_set_up();
  /// The solves of the public calls: a positive `relative_tolerance` raises
  /// a Krylov method's own for them (LooserTolerance); a direct one ignores it.
  void solve_columns(const Eigen::MatrixXd& b, Eigen::MatrixXd& x, double relative_tolerance) const;
  void solve_vector(Eigen::Ref<Eigen::VectorXd> x, double relative_tolerance) const;
  void solve_one(const double* b, double* x) const;
  /// The Krylov method's relative tolerance raised to `relative_tolerance`
  /// (never lowered below what is set, the case's or PETSC_OPTIONS') for
  /// the solves of its lifetime, then put back, errors included.
  class LooserTolerance {
   public:
    LooserTolerance(KSP ksp, double relative_tolerance, double& in_effect);
    ~LooserTolerance();
    LooserTolerance(const LooserTolerance&) = delete;
    LooserTolerance& operator=(const LooserTolerance&) = delete;

   private:
    KSP ksp_;
    double& in_effect_;
    PetscReal rtol_ = 0.0, abstol_ = 0.0, dtol_ = 0.0;
    PetscInt max_iterations_ = 0;
  };
  void solve_block(const Eigen::MatrixXd& b, Eigen::MatrixXd& x) const;
  /// b (every row, the caller's order) into the owned rows of `target`
  /// (rhs_, or solution_ for a starting guess).
  void scatter_in(const double* b, Vec target) const;
  /// solution_ gathered into x (every row, the caller's order); counts a solve.
  void gather_out(double* x) const;
  /// This rank's rows (the order of row_share()'s) into rhs_, and out of
  /// solution_ (counts a solve); throws where x is not this rank's rows.
  void own_rows_in(Eigen::Ref<const Eigen::VectorXd> x) const { own_rows_in(x, rhs_); }
  /// ... into `target` (solution_ for a starting guess).
  void own_rows_in(Eigen::Ref<const Eigen::VectorXd> x, Vec target) const;
  void own_rows_out(Eigen::Ref<Eigen::VectorXd> x) const;
  /// rhs_ -> solution_: the Krylov method's preconditioner once (counted as
  /// an iteration), MUMPS's solve (its preconditioner is its factor).
  void apply_preconditioner() const;
  /// rhs_ -> solution_ by the Krylov method (or MUMPS), convergence checked.
  void solve_rhs() const;
  /// solve_rhs() from solution_'s values, where they are a better start than zero.
  void solve_rhs_from_solution() const;
  void check_converged() const;
  void destroy();

  PetscSolverSettings settings_;
  // Solves that serve as a preconditioner (new_solver_for_preconditioning):
  // GMRES instead of CG.
  bool for_preconditioning_ = false;
  Eigen::MatrixXd rigid_body_modes_;
  int block_size_ = 1;  // 3 when the rows are nodes' x, y, z (GAMG's blocks)
  // The rows' division given before the matrix (divide_rows), shared with
  // the solvers of new_solver_for_preconditioning; else made from the
  // matrix at its first factorization.
  std::shared_ptr<const RowPartition> divided_rows_;
  PetscInt n_ = 0;
  OwnedRows rows_;
  Mat matrix_ = nullptr;
  KSP ksp_ = nullptr;
  Vec rhs_ = nullptr, solution_ = nullptr, gathered_ = nullptr;
  mutable Vec guess_residual_ = nullptr;     // b - A x0 of the guessed solves, made at the first
  mutable Eigen::VectorXd gathered_column_;  // solve_block's, in PETSc's order
  VecScatter to_all_ = nullptr;
  double factor_nonzeros_ = 0.0;      // MUMPS INFOG(29); 0 for the Krylov methods
  double factorization_flops_ = 0.0;  // MUMPS RINFOG(3); 0 for the Krylov methods
  mutable long solves_ = 0, krylov_iterations_ = 0;
  // The relative tolerance of the solve under way, for check_converged's
  // message (solve_to_tolerance raises it); 0: the method's own.
  mutable double tolerance_in_effect_ = 0.0;
};

PetscLinearSolver::LooserTolerance::LooserTolerance(KSP ksp, double relative_tolerance,
                                                    double& in_effect)
    : ksp_(ksp), in_effect_(in_effect) {
  check(KSPGetTolerances(ksp_, &rtol_, &abstol_, &dtol_, &max_iterations_), "KSPGetTolerances");
  const PetscReal looser = std::max(rtol_, static_cast<PetscReal>(relative_tolerance));
  check(KSPSetTolerances(ksp_, looser, abstol_, dtol_, max_iterations_), "KSPSetTolerances");
  in_effect_ = looser;
}

PetscLinearSolver::LooserTolerance::~LooserTolerance() {
  KSPSetTolerances(ksp_, rtol_, abstol_, dtol_, max_iterations_);
  in_effect_ = 0.0;
}

// The rows over the ranks by a graph partition (row_partition.hpp); each
// rank then holds its rows of the matrix and of every vector.
void PetscLinearSolver::create_matrix(const SparseMatrix& lower) {
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  n_ = static_cast<PetscInt>(lower.rows());
  if (rigid_body_modes_.rows() != lower.rows()) block_size_ = 1;
  if (divided_rows_ && static_cast<PetscInt>(divided_rows_->new_index.size()) != n_)
    throw std::logic_error("PETSc solver: the matrix's rows are not those divide_rows divided");
  rows_.partition =
      divided_rows_ ? *divided_rows_ : partition_rows(lower, block_size_, PETSC_COMM_WORLD);
  rows_.build(lower, rank);
  const PetscInt n_owned = rows_.end - rows_.first;
  gathered_column_.resize(n_);
  check(MatCreate(PETSC_COMM_WORLD, &matrix_), "MatCreate");
  check(MatSetSizes(matrix_, n_owned, n_owned, n_, n_), "MatSetSizes");
  check(MatSetType(matrix_, MATAIJ), "MatSetType");
  check(MatSetBlockSize(matrix_, block_size_), "MatSetBlockSize");
  check(MatSeqAIJSetPreallocation(matrix_, 0, rows_.diagonal_counts.data()),
        "MatSeqAIJSetPreallocation");
  check(MatMPIAIJSetPreallocation(matrix_, 0, rows_.diagonal_counts.data(), 0,
                                  rows_.off_diagonal_counts.data()),
        "MatMPIAIJSetPreallocation");
  check(MatSetOption(matrix_, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE), "MatSetOption");
  check(MatCreateVecs(matrix_, &solution_, &rhs_), "MatCreateVecs");
  check(VecScatterCreateToAll(solution_, &to_all_, &gathered_), "VecScatterCreateToAll");
}

// This rank's rows straight from the caller's lower triangle, column by
// column: entry (i, j) of column j is A_ij of row i and, off the diagonal,
// A_ji of row j. PETSc ignores negative indices: -1 marks a row that another
// rank holds, and the diagonal in the second call (the first set it). Not
// through a copy of the rows in PETSc's order: that copy (its columns,
// values and where each came from: 16 bytes an entry) was as large as
// PETSc's matrix itself, for K_ff and again for P, on every rank
// (docs/performance.md, "Memory of the stiffness").
//
// `changes` are added to their entries on the way, column by column, in a
// copy of the column alone.
void PetscLinearSolver::fill_matrix(const SparseMatrix& lower, const LowerChanges& changes) {
  const std::vector<int>& index = rows_.partition.new_index;
  const int* outer = lower.outerIndexPtr();
  const int* inner = lower.innerIndexPtr();
  int longest = 0;
  for (int j = 0; j < lower.outerSize(); ++j) longest = std::max(longest, outer[j + 1] - outer[j]);
  std::vector<PetscInt> targets(static_cast<std::size_t>(longest));
  std::vector<double> changed_column(static_cast<std::size_t>(longest));
  std::vector<std::size_t> by_position(changes.positions.size());  // checked by the caller
  for (std::size_t k = 0; k < by_position.size(); ++k) by_position[k] = k;
  std::sort(by_position.begin(), by_position.end(), [&](std::size_t a, std::size_t b) {
    return changes.positions[a] < changes.positions[b];
  });
  std::size_t next_change = 0;
  for (int j = 0; j < lower.outerSize(); ++j) {
    const int begin = outer[j];
    const auto count = static_cast<PetscInt>(outer[j + 1] - begin);
    if (count == 0) continue;
    const double* values = lower.valuePtr() + begin;
    if (next_change < by_position.size() &&
        changes.positions[by_position[next_change]] < begin + count) {
      std::copy(values, values + count, changed_column.begin());
      for (; next_change < by_position.size() &&
             changes.positions[by_position[next_change]] < begin + count;
           ++next_change) {
        const std::size_t k = by_position[next_change];
        changed_column[static_cast<std::size_t>(changes.positions[k] - begin)] += changes.values[k];
      }
      values = changed_column.data();
    }
    const PetscInt column = index[j];
    bool any_owned = false;
    for (PetscInt k = 0; k < count; ++k) {
      const int row = index[inner[begin + k]];
      targets[k] = rows_.owns(row) ? row : -1;
      any_owned = any_owned || targets[k] >= 0;
    }
    if (any_owned)  // A_ij into the rows i held here: a column of `count` rows
      check(MatSetValues(matrix_, count, targets.data(), 1, &column, values, INSERT_VALUES),
            "MatSetValues");
    if (!rows_.owns(column)) continue;
    for (PetscInt k = 0; k < count; ++k)  // A_ji, i != j, into row j
      targets[k] = inner[begin + k] == j ? -1 : index[inner[begin + k]];
    check(MatSetValues(matrix_, 1, &column, count, targets.data(), values, INSERT_VALUES),
          "MatSetValues");
  }
  check(MatAssemblyBegin(matrix_, MAT_FINAL_ASSEMBLY), "MatAssemblyBegin");
  check(MatAssemblyEnd(matrix_, MAT_FINAL_ASSEMBLY), "MatAssemblyEnd");
  check(MatSetOption(matrix_, MAT_SYMMETRIC, PETSC_TRUE), "MatSetOption");
  check(MatSetOption(matrix_, MAT_SPD, PETSC_TRUE), "MatSetOption");
}

// The KSP is kept across factorize_lower(reuse): with the same nonzero
// pattern PETSc redoes the numerical factorization (or the multigrid
// set-up) only.
void PetscLinearSolver::set_up_solver() {
  if (ksp_ == nullptr) {
    check(KSPCreate(PETSC_COMM_WORLD, &ksp_), "KSPCreate");
    configure_method();
  }
  if (settings_.method == PetscMethod::cg_gamg) attach_rigid_body_modes();
  check(KSPSetOperators(ksp_, matrix_, matrix_), "KSPSetOperators");
  if (settings_.method == PetscMethod::direct) enlarge_mumps_workspace();
  check(KSPSetUp(ksp_), "KSPSetUp");
  check_set_up();
}

// MUMPS sizes its workspace from its analysis plus ICNTL(14) percent (20 by
// default); on two ranks the seed of N = 32's cylinder overran it (INFOG(1)
// = -9) while memory was plentiful. 100 % more costs memory only when used.
void PetscLinearSolver::enlarge_mumps_workspace() {
  PC pc = nullptr;
  check(KSPGetPC(ksp_, &pc), "KSPGetPC");
  check(PCFactorSetUpMatSolverType(pc), "PCFactorSetUpMatSolverType");
  Mat factor = nullptr;
  check(PCFactorGetMatrix(pc, &factor), "PCFactorGetMatrix");
  check(MatMumpsSetIcntl(factor, 14, 100), "MatMumpsSetIcntl");
}

void PetscLinearSolver::configure_method() {
  PC pc = nullptr;
  check(KSPGetPC(ksp_, &pc), "KSPGetPC");
  if (settings_.method == PetscMethod::direct) {
    check(KSPSetType(ksp_, KSPPREONLY), "KSPSetType");
    check(PCSetType(pc, PCCHOLESKY), "PCSetType");
    check(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS), "PCFactorSetMatSolverType");
  } else {
    // CG breaks down (DIVERGED_INDEFINITE_PC) where GAMG's V-cycle is not
    // positive definite, as on K_ff + springs of a small mesh; GMRES with
    // right preconditioning does not, and its residual is the true one.
    check(KSPSetType(ksp_, for_preconditioning_ ? KSPGMRES : KSPCG), "KSPSetType");
    if (for_preconditioning_) check(KSPSetPCSide(ksp_, PC_RIGHT), "KSPSetPCSide");
    // The tolerance is on the true residual |b - A x| / |b|, as the case
    // file documents, not on the preconditioned one.
    check(KSPSetNormType(ksp_, KSP_NORM_UNPRECONDITIONED), "KSPSetNormType");
    check(KSPSetTolerances(ksp_, settings_.relative_tolerance, PETSC_DEFAULT, PETSC_DEFAULT,
                           settings_.max_iterations),
          "KSPSetTolerances");
    if (settings_.method == PetscMethod::cg_gamg) {
      check(PCSetType(pc, PCGAMG), "PCSetType");
    } else {
      check(PCSetType(pc, PCHYPRE), "PCSetType");
      check(PCHYPRESetType(pc, "boomeramg"), "PCHYPRESetType");
    }
  }
  // The user's own PETSC_OPTIONS (environment) may refine this; bipo's
  // command line and case file never reach PETSc.
  check(KSPSetFromOptions(ksp_), "KSPSetFromOptions");
}

// GAMG's near-null space: the six rigid-body modes on the free dofs,
// orthonormalized (PETSc requires it), this rank's rows taken as a
// right-hand side's are (scatter_in: the rows are numbered by rank after
// the graph partition, not in the caller's order).
void PetscLinearSolver::attach_rigid_body_modes() {
  if (rigid_body_modes_.rows() != n_ || rigid_body_modes_.cols() == 0) return;
  const Eigen::Index n_modes = rigid_body_modes_.cols();
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(rigid_body_modes_);
  const Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(n_, n_modes);
  std::vector<Vec> vectors(static_cast<std::size_t>(n_modes), nullptr);
  for (Eigen::Index m = 0; m < n_modes; ++m) {
    check(VecDuplicate(solution_, &vectors[m]), "VecDuplicate");
    scatter_in(q.col(m).data(), vectors[m]);
  }
  MatNullSpace space = nullptr;
  check(MatNullSpaceCreate(PETSC_COMM_WORLD, PETSC_FALSE, static_cast<PetscInt>(n_modes),
                           vectors.data(), &space),
        "MatNullSpaceCreate");
  check(MatSetNearNullSpace(matrix_, space), "MatSetNearNullSpace");
  check(MatNullSpaceDestroy(&space), "MatNullSpaceDestroy");
  for (Vec& vector : vectors) check(VecDestroy(&vector), "VecDestroy");
}

// A failed factorization is not a PETSc error (the KSP records it): a zero
// pivot is a singular K_ff, a negative one (MUMPS counts them, INFOG(12))
// an indefinite one.
void PetscLinearSolver::check_set_up() {
  PC pc = nullptr;
  check(KSPGetPC(ksp_, &pc), "KSPGetPC");
  PCFailedReason reason = PC_NOERROR;
  check(PCGetFailedReason(pc, &reason), "PCGetFailedReason");
  PetscInt negative_pivots = 0;
  factor_nonzeros_ = factorization_flops_ = 0.0;
  if (reason == PC_NOERROR && settings_.method == PetscMethod::direct) {
    Mat factor = nullptr;
    check(PCFactorGetMatrix(pc, &factor), "PCFactorGetMatrix");
    check(MatMumpsGetInfog(factor, 12, &negative_pivots), "MatMumpsGetInfog");
    PetscInt entries = 0;  // INFOG(29): the factor's entries, in millions if negative
    check(MatMumpsGetInfog(factor, 29, &entries), "MatMumpsGetInfog");
    factor_nonzeros_ = entries >= 0 ? static_cast<double>(entries) : -1e6 * entries;
    PetscReal flops = 0.0;  // RINFOG(3): the elimination's flops, as analysed
    check(MatMumpsGetRinfog(factor, 3, &flops), "MatMumpsGetRinfog");
    factorization_flops_ = flops;
  }
  // Out of memory is not a numerical failure: cutting the increment would
  // not need less (core/errors.hpp, OutOfMemoryError).
  if (reason == PC_FACTOR_OUTMEMORY)
    throw OutOfMemoryError("PETSc " + std::string(method_name(settings_.method)) +
                           " set-up failed: the factorization ran out of memory or of MUMPS's "
                           "workspace (PC_FACTOR_OUTMEMORY); " +
                           out_of_memory_hint);
  if (reason != PC_NOERROR || negative_pivots > 0)
    throw NumericalError(
        "PETSc " + std::string(method_name(settings_.method)) +
        " set-up failed: the stiffness is not positive definite (do the boundary conditions "
        "remove every rigid-body motion?)" +
        (reason != PC_NOERROR ? std::string(" (") + PCFailedReasons[reason] + ")" : ""));
}

void PetscLinearSolver::solve_columns(const Eigen::MatrixXd& b, Eigen::MatrixXd& x,
                                      double relative_tolerance) const {
  const std::lock_guard<std::mutex> lock(petsc_mutex);
  if (ksp_ == nullptr || b.rows() != n_) throw NumericalError("PETSc solve before factorization");
  x.resize(b.rows(), b.cols());
  if (settings_.method == PetscMethod::direct && b.cols() > 1) {
    solve_block(b, x);
    return;
  }
  std::optional<LooserTolerance> looser;
  if (relative_tolerance > 0.0 && settings_.method != PetscMethod::direct)
    looser.emplace(ksp_, relative_tolerance, tolerance_in_effect_);
  for (Eigen::Index col = 0; col < b.cols(); ++col) solve_one(b.col(col).data(), x.col(col).data());
}

void PetscLinearSolver::solve_vector(Eigen::Ref<Eigen::VectorXd> x,
                                     double relative_tolerance) const {
  const std::lock_guard<std::mutex> lock(petsc_mutex);
  if (ksp_ == nullptr || x.size() != n_) throw NumericalError("PETSc solve before factorization");
  std::optional<LooserTolerance> looser;
  if (relative_tolerance > 0.0 && settings_.method != PetscMethod::direct)
    looser.emplace(ksp_, relative_tolerance, tolerance_in_effect_);
  solve_one(x.data(), x.data());
}

// A Krylov method starts from x's values (KSPSetInitialGuessNonzero, for
// this solve only): its test |b - A x| <= rtol |b| is the same whatever the
// start (the unpreconditioned norm, and |b| as the reference, PETSc's
// default), so a guess changes the iterations, not what is accepted. MUMPS
// ignores the guess.
void PetscLinearSolver::solve_from_guess(const Eigen::VectorXd& b,
                                         Eigen::Ref<Eigen::VectorXd> x) const {
  const std::lock_guard<std::mutex> lock(petsc_mutex);
  if (ksp_ == nullptr || b.size() != n_ || x.size() != n_)
    throw NumericalError("PETSc solve before factorization");
  scatter_in(b.data(), rhs_);
  if (settings_.method != PetscMethod::direct) scatter_in(x.data(), solution_);
  solve_rhs_from_solution();
  gather_out(x.data());
}

// The same on this rank's rows alone: nothing gathered.
void PetscLinearSolver::solve_own_rows_from_guess(const Eigen::VectorXd& b,
                                                  Eigen::Ref<Eigen::VectorXd> x) const {
  const std::lock_guard<std::mutex> lock(petsc_mutex);
  own_rows_in(b);
  if (settings_.method != PetscMethod::direct) own_rows_in(x, solution_);
  solve_rhs_from_solution();
  own_rows_out(x);
}

// rhs_ -> solution_, a Krylov method starting from solution_'s values. A
// guess whose residual is not below |b| starts from zero instead: it is no
// better, and one far off would stop the method at once (its divergence
// test, |b - A x| > 1e5 |b|; a load that falls to zero). Collective: every
// rank takes the same branch (the norms are global).
void PetscLinearSolver::solve_rhs_from_solution() const {
  if (settings_.method == PetscMethod::direct) {
    solve_rhs();
    return;
  }
  if (guess_residual_ == nullptr) check(VecDuplicate(rhs_, &guess_residual_), "VecDuplicate");
  check(MatMult(matrix_, solution_, guess_residual_), "MatMult");
  check(VecAYPX(guess_residual_, -1.0, rhs_), "VecAYPX");
  PetscReal residual_norm = 0.0, b_norm = 0.0;
  check(VecNorm(guess_residual_, NORM_2, &residual_norm), "VecNorm");
  check(VecNorm(rhs_, NORM_2, &b_norm), "VecNorm");
  if (!(residual_norm < b_norm)) {
    solve_rhs();
    return;
  }
  struct NonzeroGuess {  // the flag is put back on every path out, errors included
    KSP ksp;
    explicit NonzeroGuess(KSP k) : ksp(k) {
      check(KSPSetInitialGuessNonzero(ksp, PETSC_TRUE), "KSPSetInitialGuessNonzero");
    }
    ~NonzeroGuess() { KSPSetInitialGuessNonzero(ksp, PETSC_FALSE); }
    NonzeroGuess(const NonzeroGuess&) = delete;
    NonzeroGuess& operator=(const NonzeroGuess&) = delete;
  } guess(ksp_);
  solve_rhs();
}

// The preconditioner of the Krylov method, applied once (PCApply: the PC
// set up by factorize). MUMPS's PC is its factor: a solve.
void PetscLinearSolver::apply_approximate_inverse(Eigen::Ref<Eigen::VectorXd> x) const {
  const std::lock_guard<std::mutex> lock(petsc_mutex);
  if (ksp_ == nullptr || x.size() != n_) throw NumericalError("PETSc solve before factorization");
  scatter_in(x.data(), rhs_);
  apply_preconditioner();
  gather_out(x.data());
}

// The same on this rank's rows alone: nothing gathered.
void PetscLinearSolver::apply_approximate_inverse_to_own_rows(Eigen::Ref<Eigen::VectorXd> x) const {
  const std::lock_guard<std::mutex> lock(petsc_mutex);
  own_rows_in(x);
  apply_preconditioner();
  own_rows_out(x);
}

void PetscLinearSolver::apply_preconditioner() const {
  if (settings_.method == PetscMethod::direct) {
    solve_rhs();
    return;
  }
  PC pc = nullptr;
  check(KSPGetPC(ksp_, &pc), "KSPGetPC");
  check(PCApply(pc, rhs_, solution_), "PCApply");
  ++krylov_iterations_;
}

void PetscLinearSolver::solve_rhs() const {
  check(KSPSolve(ksp_, rhs_, solution_), "KSPSolve");
  check_converged();
}

void PetscLinearSolver::solve_own_rows_to_tolerance(Eigen::Ref<Eigen::VectorXd> x,
                                                    double relative_tolerance) const {
  const std::lock_guard<std::mutex> lock(petsc_mutex);
  own_rows_in(x);
  std::optional<LooserTolerance> looser;
  if (relative_tolerance > 0.0 && settings_.method != PetscMethod::direct)
    looser.emplace(ksp_, relative_tolerance, tolerance_in_effect_);
  solve_rhs();
  own_rows_out(x);
}

// PETSc's rows of a rank are row_share()'s of that rank, in its order.
void PetscLinearSolver::own_rows_in(Eigen::Ref<const Eigen::VectorXd> x, Vec target) const {
  if (ksp_ == nullptr) throw NumericalError("PETSc solve before factorization");
  if (x.size() != rows_.end - rows_.first)
    throw std::logic_error("PETSc solver: a vector of own rows that are not this rank's");
  PetscScalar* owned = nullptr;
  check(VecGetArray(target, &owned), "VecGetArray");
  std::copy(x.data(), x.data() + x.size(), owned);
  check(VecRestoreArray(target, &owned), "VecRestoreArray");
}

void PetscLinearSolver::own_rows_out(Eigen::Ref<Eigen::VectorXd> x) const {
  const PetscScalar* owned = nullptr;
  check(VecGetArrayRead(solution_, &owned), "VecGetArrayRead");
  std::copy(owned, owned + x.size(), x.data());
  check(VecRestoreArrayRead(solution_, &owned), "VecRestoreArrayRead");
  ++solves_;
}

// b and x may be the same array: b is read into the distributed vector
// before x is written.
void PetscLinearSolver::solve_one(const double* b, double* x) const {
  scatter_in(b, rhs_);
  solve_rhs();
  gather_out(x);
}

void PetscLinearSolver::scatter_in(const double* b, Vec target) const {
  PetscScalar* owned = nullptr;
  check(VecGetArray(target, &owned), "VecGetArray");
  for (PetscInt r = 0; r < rows_.end - rows_.first; ++r) owned[r] = b[rows_.caller_rows[r]];
  check(VecRestoreArray(target, &owned), "VecRestoreArray");
}

// solution_ to every rank, in the caller's order.
void PetscLinearSolver::gather_out(double* x) const {
  check(VecScatterBegin(to_all_, solution_, gathered_, INSERT_VALUES, SCATTER_FORWARD),
        "VecScatterBegin");
  check(VecScatterEnd(to_all_, solution_, gathered_, INSERT_VALUES, SCATTER_FORWARD),
        "VecScatterEnd");
  const PetscScalar* all = nullptr;
  check(VecGetArrayRead(gathered_, &all), "VecGetArrayRead");
  const std::vector<int>& index = rows_.partition.new_index;
  for (PetscInt row = 0; row < n_; ++row) x[row] = all[index[row]];
  check(VecRestoreArrayRead(gathered_, &all), "VecRestoreArrayRead");
  ++solves_;
}

// Several right-hand sides at once (the condensation, the load patterns):
// MUMPS solves a dense block in one pass, much faster than column by column.
void PetscLinearSolver::solve_block(const Eigen::MatrixXd& b, Eigen::MatrixXd& x) const {
  const PetscInt n_owned = rows_.end - rows_.first, n_columns = static_cast<PetscInt>(b.cols());
  struct DenseBlock {  // destroyed on every path out, errors included
    Mat matrix = nullptr;
    ~DenseBlock() { MatDestroy(&matrix); }
  } rhs_block, solution_block;
  Mat& rhs = rhs_block.matrix;
  Mat& solution = solution_block.matrix;
  check(MatCreateDense(PETSC_COMM_WORLD, n_owned, PETSC_DECIDE, n_, n_columns, nullptr, &rhs),
        "MatCreateDense");
  check(MatCreateDense(PETSC_COMM_WORLD, n_owned, PETSC_DECIDE, n_, n_columns, nullptr, &solution),
        "MatCreateDense");
  PetscInt lda = 0;
  check(MatDenseGetLDA(rhs, &lda), "MatDenseGetLDA");
  PetscScalar* owned = nullptr;
  check(MatDenseGetArrayWrite(rhs, &owned), "MatDenseGetArrayWrite");
  const std::vector<int>& caller_rows = rows_.caller_rows;
  for (PetscInt col = 0; col < n_columns; ++col)
    for (PetscInt r = 0; r < n_owned; ++r) owned[col * lda + r] = b(caller_rows[r], col);
  check(MatDenseRestoreArrayWrite(rhs, &owned), "MatDenseRestoreArrayWrite");
  check(KSPMatSolve(ksp_, rhs, solution), "KSPMatSolve");
  check_converged();
  check(MatDenseGetLDA(solution, &lda), "MatDenseGetLDA");
  const PetscScalar* result = nullptr;
  check(MatDenseGetArrayRead(solution, &result), "MatDenseGetArrayRead");
  const RowPartition& partition = rows_.partition;
  for (PetscInt col = 0; col < n_columns; ++col) {
    MPI_Allgatherv(result + col * lda, static_cast<int>(n_owned), MPI_DOUBLE,
                   gathered_column_.data(), partition.counts.data(), partition.firsts.data(),
                   MPI_DOUBLE, PETSC_COMM_WORLD);
    for (PetscInt row = 0; row < n_; ++row)
      x(row, col) = gathered_column_(partition.new_index[row]);
  }
  check(MatDenseRestoreArrayRead(solution, &result), "MatDenseRestoreArrayRead");
  solves_ += n_columns;
}

void PetscLinearSolver::check_converged() const {
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  check(KSPGetConvergedReason(ksp_, &reason), "KSPGetConvergedReason");
  PetscInt iterations = 0;
  check(KSPGetIterationNumber(ksp_, &iterations), "KSPGetIterationNumber");
  krylov_iterations_ += iterations;
  if (reason > 0) return;
  PetscReal residual = 0.0, rhs_norm = 0.0;
  check(KSPGetResidualNorm(ksp_, &residual), "KSPGetResidualNorm");
  check(VecNorm(rhs_, NORM_2, &rhs_norm), "VecNorm");
  throw NumericalError("PETSc " + std::string(method_name(settings_.method)) +
                       " did not converge (" + KSPConvergedReasons[reason] + ") after " +
                       std::to_string(iterations) + " iterations: relative residual " +
                       short_number(rhs_norm > 0.0 ? residual / rhs_norm : residual) +
                       " against the tolerance " +
                       short_number(tolerance_in_effect_ > 0.0 ? tolerance_in_effect_
                                                               : settings_.relative_tolerance));
}

// After PetscFinalize the objects are gone with PETSc: nothing to destroy.
void PetscLinearSolver::destroy() {
  PetscBool finalized = PETSC_FALSE;
  PetscFinalized(&finalized);
  if (finalized) return;
  KSPDestroy(&ksp_);
  VecScatterDestroy(&to_all_);
  VecDestroy(&gathered_);
  VecDestroy(&guess_residual_);
  VecDestroy(&rhs_);
  VecDestroy(&solution_);
  MatDestroy(&matrix_);
}

}  // namespace

std::unique_ptr<LinearSolver> make_solver(const PetscSolverSettings& settings) {
  return std::make_unique<PetscLinearSolver>(settings);
}

}  // namespace bipo::petsc
