// Owns the linear algebra interface of bipo: one small class that factorizes a
// symmetric positive definite sparse matrix once and solves with it many
// times. Backends: CHOLMOD (supernodal Cholesky, in one process) and PETSc
// (src/parallel/plugin: MUMPS, or CG with algebraic multigrid, over MPI).
#pragma once

#include <Eigen/Core>
#include <memory>
#include <string>
#include <vector>

#include "contact/condensed_matrices.hpp"
#include "fem/elasticity.hpp"

namespace bipo {

/// The lower triangle (row >= column) of `a`, compressed, in storage of
/// exactly its entries: what factorize_lower takes. Not
/// `a.triangularView<Eigen::Lower>()` assigned to a matrix: Eigen 3.4 grows
/// that one's storage by doubling as it fills it, up to twice the entries,
/// and keeps the excess.
[[nodiscard]] SparseMatrix lower_triangle(const SparseMatrix& a);

/// |A|_inf (the largest row sum of |A_ij|) of the symmetric matrix whose
/// lower triangle is `lower`: an entry below the diagonal counts in its row
/// and, as its mirror image, in its column's row. 0 for an empty matrix.
/// With `rows` (one flag per row), the largest sum of the rows flagged
/// non-zero only (an MPI rank's own rows, the others partial).
[[nodiscard]] double symmetric_infinity_norm(const SparseMatrix& lower,
                                             const std::vector<char>* rows = nullptr);

class LinearSolver {
 public:
  virtual ~LinearSolver() = default;
  /// Factorizes an SPD matrix; throws NumericalError if it is not SPD.
  virtual void factorize(const SparseMatrix& a) = 0;
  /// Factorizes the SPD matrix A whose lower triangle (compressed) is
  /// `lower`, like factorize_lower(lower, false), and returns the condensed
  /// operators on the unknowns `condensed` (dense, rows and columns in the
  /// order given, both in one buffer: CondensedMatrices):
  /// S = A_cc - A_ci A_ii^-1 A_ic, the stiffness that the rest of the system
  /// offers at those unknowns, and its inverse W = S^-1 = E^T A^-1 E for E
  /// selecting them. This default computes E^T A^-1 E by solves and inverts
  /// it; a backend can do much better (CHOLMOD reads both off a factor that
  /// orders them last). Throws NumericalError if they are not SPD.
  virtual CondensedMatrices factorize_lower_and_condense(const SparseMatrix& lower,
                                                         const std::vector<int>& condensed);
  /// Factorizes the SPD matrix whose lower triangle (compressed) is
  /// `lower`. With `reuse_analysis`, keeps the ordering and symbolic
  /// analysis of the previous factorize_lower, which must have had the same
  /// pattern: a refactorization costs the numeric part only.
  virtual void factorize_lower(const SparseMatrix& lower, bool reuse_analysis) = 0;
  /// Entries added to a matrix's lower triangle, by position in its value
  /// array (lower.valuePtr()): the matrix A + C of factorize_lower_changed.
  struct LowerChanges {
    std::vector<int> positions;
    std::vector<double> values;
    /// Throws std::logic_error unless there is one value per position and
    /// every position is one of `lower`'s entries (a caller's mistake).
    void check_within(const SparseMatrix& lower) const;
    /// Adds them to the values of `matrix`, which has the pattern of the
    /// `lower` they were made for.
    void add_to(SparseMatrix& matrix) const;
  };
  /// factorize_lower of `lower` with `changes` added to its values, for a
  /// matrix that differs from one the caller keeps in a few entries of its
  /// pattern only (the sparse contact path's P = K_ff + springs). This
  /// default adds them to a copy of `lower`, which lives during the call.
  /// A backend that copies the values into its own matrix anyway (PETSc)
  /// adds them there: with it the caller need not hold a copy of A + C
  /// (keeps_own_copy_of_matrix).
  virtual void factorize_lower_changed(const SparseMatrix& lower, const LowerChanges& changes,
                                       bool reuse_analysis);
  /// True for a backend whose solves use a copy of the matrix that it made
  /// when it factorized (PETSc's matrix of each rank's rows), false where
  /// the factor alone is kept (CHOLMOD).
  [[nodiscard]] virtual bool keeps_own_copy_of_matrix() const { return false; }
  /// Solves A X = B for one or several right-hand sides (columns of b).
  /// Safe to call from several threads at once (analyses running at once
  /// share a factorization); a backend whose library is not serializes.
  virtual void solve(const Eigen::MatrixXd& b, Eigen::MatrixXd& x) const = 0;
  /// Solves A x = b for one right-hand side, in place: `x` holds b on entry
  /// and x on return. For the iterations that apply A^-1 once per step
  /// (Krylov methods, the sparse Delassus operator): a backend keeps its
  /// workspace, so that a call allocates nothing once a first one has run.
  /// This default copies through solve(). Same thread safety as solve().
  virtual void solve_in_place(Eigen::Ref<Eigen::VectorXd> x) const;
  /// Solves A x = b for one right-hand side, an iterative backend starting
  /// from the guess that `x` holds on entry, a direct one ignoring it (this
  /// default). What is accepted is what solve() accepts (the same test of
  /// the residual against b): a guess near x only saves iterations. For
  /// the recovery of an increment, whose displacements are near those the
  /// last two increments extrapolate to. Same thread safety as solve().
  virtual void solve_from_guess(const Eigen::VectorXd& b, Eigen::Ref<Eigen::VectorXd> x) const {
    x = b;
    solve_in_place(x);
  }
  /// solve() and solve_in_place() for results that need only a few digits
  /// (a preconditioner's coarse operator, an estimate, the products of an
  /// inexact Newton step's Krylov iteration): an iterative backend may stop
  /// at the relative residual `relative_tolerance` of each column, but never
  /// before its own tolerance (a tolerance of 0 or less: its own, as
  /// solve()); a direct one solves as always (these defaults), except
  /// where its factor is kept in single precision and its solves are
  /// iterated (keep_factor_in_single_precision): they stop there too.
  virtual void solve_to_tolerance(const Eigen::MatrixXd& b, Eigen::MatrixXd& x,
                                  double relative_tolerance) const {
    static_cast<void>(relative_tolerance);
    solve(b, x);
  }
  virtual void solve_in_place_to_tolerance(Eigen::Ref<Eigen::VectorXd> x,
                                           double relative_tolerance) const {
    static_cast<void>(relative_tolerance);
    solve_in_place(x);
  }
  /// One application of a cheap approximation of A^-1 to x, in place: for
  /// an iterative backend its own preconditioner once (PETSc: one V-cycle
  /// of GAMG or BoomerAMG, no Krylov iteration; a fixed linear operator),
  /// counted as one Krylov iteration; a direct backend solves (this
  /// default), CHOLMOD's solver made by new_solver_for_preconditioning with
  /// its factor in single precision. For a preconditioner that a Krylov
  /// method around it corrects (the sparse contact path's P).
  virtual void apply_approximate_inverse(Eigen::Ref<Eigen::VectorXd> x) const { solve_in_place(x); }
  /// apply_approximate_inverse() and solve_in_place_to_tolerance() on the
  /// rows of this process alone (row_share()'s, in their order there): `x`
  /// holds this process's rows of b on entry and of the result on return,
  /// and no other process's rows are gathered (collectives: every process
  /// calls them at the same point). For vectors kept by rank (the sparse
  /// contact path's Newton step under MPI). A serial backend's rows are all
  /// of them (these defaults).
  virtual void apply_approximate_inverse_to_own_rows(Eigen::Ref<Eigen::VectorXd> x) const {
    apply_approximate_inverse(x);
  }
  virtual void solve_own_rows_to_tolerance(Eigen::Ref<Eigen::VectorXd> x,
                                           double relative_tolerance) const {
    solve_in_place_to_tolerance(x, relative_tolerance);
  }
  /// solve_from_guess() on the rows of this process alone (b and the guess
  /// in x: this process's rows, in row_share()'s order; collective).
  virtual void solve_own_rows_from_guess(const Eigen::VectorXd& b,
                                         Eigen::Ref<Eigen::VectorXd> x) const {
    solve_from_guess(b, x);
  }
  /// Number of nonzeros of the factor (for reports).
  [[nodiscard]] virtual double factor_nonzeros() const = 0;
  /// The bytes that factorize_lower(lower, false) would give its factor, by
  /// the backend's symbolic analysis alone (no numeric work; for an
  /// iterative backend, its preconditioner's size), or a negative value
  /// when the backend cannot say beforehand. Leaves any factorization held
  /// as it is. For choices that must know whether a factor fits in memory.
  [[nodiscard]] virtual double analyzed_factor_bytes(const SparseMatrix& lower) {
    static_cast<void>(lower);
    return -1.0;
  }
  /// Floating-point operations of a numerical factorization, as the
  /// backend's analysis counts them (0 if it does not): a cost that does not
  /// depend on the machine's load, for decisions that must not either.
  [[nodiscard]] virtual double factorization_flops() const { return 0.0; }
  [[nodiscard]] virtual std::string name() const = 0;
  /// A new solver of the same backend and settings (and near-null space,
  /// if one was given), holding no matrix, for a second matrix on the same
  /// unknowns whose solves serve as a preconditioner (the sparse contact
  /// path's P = K_ff + springs, inside a flexible GMRES). An iterative
  /// backend solves it with a Krylov method that does not need its own
  /// preconditioner to be positive definite (PETSc: GMRES instead of CG;
  /// GAMG's V-cycle on P was not, on small meshes). CHOLMOD keeps that
  /// solver's factor in single precision only (half the memory between
  /// factorizations, about half the time per solve): it is applied by
  /// apply_approximate_inverse, and its solve() and solve_in_place() throw
  /// (until keep_full_precision(), below).
  [[nodiscard]] virtual std::unique_ptr<LinearSolver> new_solver_for_preconditioning() const = 0;
  /// For a solver that keeps its factor in a lower precision (CHOLMOD's
  /// from new_solver_for_preconditioning): from the next factorization on,
  /// keeps it in full precision, and solve() works again. Where a lower
  /// precision's rounding costs its Krylov method more than it saves (the
  /// sparse contact path, once a step needs the long restart). Otherwise
  /// nothing to do (this default).
  virtual void keep_full_precision() {}
  /// For a solver that keeps its factor in a lower precision (CHOLMOD's
  /// from new_solver_for_preconditioning): from now on (the factor held and
  /// every later one), apply_approximate_inverse solves by conjugate
  /// gradients on `lower` preconditioned by the rounded factor, as
  /// keep_factor_in_single_precision's solves do, to the relative residual
  /// `relative_tolerance` (0 or less: a direct solve's backward error).
  /// `lower` is the matrix that every later factorize_lower is given (its
  /// values may change before each). Where that CG does not converge, the
  /// factor is made again in double and kept so (keep_full_precision). The
  /// sparse contact path's P once a step needs the long restart: a double
  /// P's Newton steps at a single one's memory. Returns false where the
  /// backend has no such mode (this default; also a factor held in double).
  virtual bool refine_approximate_inverse(std::shared_ptr<const SparseMatrix> lower,
                                          double relative_tolerance) {
    static_cast<void>(lower);
    static_cast<void>(relative_tolerance);
    return false;
  }
  /// Keeps the factor held in single precision from now on (half its
  /// memory) and solves by conjugate gradients on `lower` (the lower
  /// triangle of the matrix factorized, in double) preconditioned by it,
  /// to a direct solve's backward error: solve() and solve_in_place() keep
  /// their digits, at a few sweeps of the rounded factor each, and the
  /// *_to_tolerance solves stop at the tolerance asked. For the sparse
  /// contact path's K_ff, whose factor would otherwise sit in double beside
  /// P's (docs/performance.md, "K_ff's factor in single precision"). Until
  /// the next factorization. Safe while other threads solve. Returns false
  /// where the backend does not (this default; also a factor already in a
  /// lower precision).
  virtual bool keep_factor_in_single_precision(std::shared_ptr<const SparseMatrix> lower) {
    static_cast<void>(lower);
    return false;
  }
  /// True while the factor held is in a lower precision (above).
  [[nodiscard]] virtual bool holds_lower_precision_factor() const { return false; }
  /// True for a backend whose solves stop at a residual tolerance (PETSc's
  /// Krylov methods), false for a direct one (CHOLMOD, MUMPS).
  [[nodiscard]] virtual bool is_iterative() const { return false; }
  /// True for a factorization held whole in this process (CHOLMOD): a
  /// second one of the same kind beside it (the sparse contact path's
  /// `stiffness_factor`) is in keeping with the run. False for a backend
  /// chosen to spread or bound the memory (PETSc, on one rank or several),
  /// whose runs must need only its solves.
  [[nodiscard]] virtual bool is_serial_factorization() const { return false; }
  /// The processes (MPI ranks) whose memory this solver's matrix and
  /// factorization or multigrid hierarchy are divided among: 1 for a
  /// serial backend. A second solver of the same kind (the sparse contact
  /// path's `stiffness_factor`) costs each rank about its share.
  [[nodiscard]] virtual int processes() const { return 1; }
  /// How a distributed backend divides the rows of the matrix it holds
  /// among the processes: `rows`, every row of the caller's numbering once,
  /// rank 0's first, then rank 1's, ... (ascending within a rank), and
  /// `counts`, how many each rank holds. Empty (no counts) for a serial
  /// backend and before the first factorization or divide_rows. For
  /// vectors of the whole mesh that the caller keeps by rank, as the
  /// backend does its own (the sparse contact path's Krylov vectors), and
  /// for the rows of the matrix that each rank assembles.
  struct RowShare {
    std::vector<int> rows;
    std::vector<int> counts;
  };
  [[nodiscard]] virtual RowShare row_share() const { return {}; }
  /// The rank of each row of `share` (rows 0 ... n - 1, n its rows);
  /// throws std::logic_error unless the share lists every row once and its
  /// counts add up to them.
  [[nodiscard]] static std::vector<int> rank_of_each_row(const RowShare& share);
  /// The graph of the matrix's rows by node, for dividing them among the
  /// ranks before the matrix exists: vertex k is a node with free unknowns,
  /// its rows are first_row[k] ... first_row[k + 1] - 1 (consecutive,
  /// vertices in the order of their rows; every vertex's, on every rank).
  /// A process holds the neighbour lists of its slice of the vertices,
  /// first_vertex ... first_vertex + starts.size() - 2: those of vertex
  /// first_vertex + j (the nodes it shares an element with; itself left
  /// out, ascending) are neighbours[starts[j]] ... neighbours[starts[j + 1]
  /// - 1]. Under MPI the ranks' slices follow each other in rank order and
  /// together hold every vertex (free_row_graph), so that no rank holds
  /// the whole graph; one process holds every vertex.
  struct RowGraph {
    std::vector<int> first_row;
    int first_vertex = 0;
    std::vector<int> starts, neighbours;
  };
  /// Divides the rows among the processes from `graph`, each rank's slice of
  /// it (collective; the same division on every rank, every node's rows on
  /// one rank), before the first factorization, which then keeps it, as do
  /// the solvers of new_solver_for_preconditioning; row_share() tells it
  /// from now on. So that each rank can assemble only the elements of its
  /// rows. Nothing for a serial backend (this default).
  virtual void divide_rows(const RowGraph& graph) { static_cast<void>(graph); }
  /// The rigid-body modes of the body on the free unknowns (n_free x 6:
  /// three translations, three rotations), given before a factorization
  /// to a backend that uses them (an algebraic multigrid's near-null
  /// space, a distributed backend's node blocks); uses_rigid_body_modes()
  /// says whether to compute them at all.
  virtual void set_rigid_body_modes(const Eigen::MatrixXd& modes) { static_cast<void>(modes); }
  [[nodiscard]] virtual bool uses_rigid_body_modes() const { return false; }
  /// Counters for reports: right-hand sides solved, and the iterations of
  /// an iterative backend over all of them (0 for a direct one; CHOLMOD
  /// counts the solves it iterates on its single-precision factor,
  /// keep_factor_in_single_precision).
  [[nodiscard]] virtual long solve_count() const { return 0; }
  [[nodiscard]] virtual long krylov_iterations() const { return 0; }
};

/// CHOLMOD supernodal Cholesky, fill-reducing ordering chosen by CHOLMOD.
[[nodiscard]] std::unique_ptr<LinearSolver> make_cholmod_solver();

}  // namespace bipo
