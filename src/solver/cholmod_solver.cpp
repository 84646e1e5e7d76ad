// The CHOLMOD backend of LinearSolver: supernodal Cholesky with CHOLMOD's own
// choice of fill-reducing ordering, called directly (Eigen's wrapper hides
// the factor, whose size we report).
#include <cholmod.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <numeric>
#include <sstream>
#include <vector>

#include "core/errors.hpp"
#include "solver/linear_solver.hpp"

extern "C" {
// LAPACK (Fortran ABI): A := U U^T for the upper triangle U of A, in place;
// A := (L L^T)^-1 (lower triangle) from the Cholesky factor L in A, in place.
void dlauum_(const char* uplo, const int* n, double* a, const int* lda, int* info,
             std::size_t uplo_len);
void dpotri_(const char* uplo, const int* n, double* a, const int* lda, int* info,
             std::size_t uplo_len);
// BLAS in single precision, for the preconditioner's triangular sweeps.
void strsv_(const char* uplo, const char* trans, const char* diag, const int* n, const float* a,
            const int* lda, float* x, const int* incx, std::size_t, std::size_t, std::size_t);
void sgemv_(const char* trans, const int* m, const int* n, const float* alpha, const float* a,
            const int* lda, const float* x, const int* incx, const float* beta, float* y,
            const int* incy, std::size_t);
}

namespace bipo {

namespace {

/// A CHOLMOD view (no copy) of the lower triangle stored in `lower`.
cholmod_sparse lower_view(SparseMatrix& lower) {
  lower.makeCompressed();
  cholmod_sparse view{};
  view.nrow = view.ncol = static_cast<size_t>(lower.rows());
  view.nzmax = static_cast<size_t>(lower.nonZeros());
  view.p = lower.outerIndexPtr();
  view.i = lower.innerIndexPtr();
  view.x = lower.valuePtr();
  view.stype = -1;  // symmetric, lower part stored
  view.itype = CHOLMOD_INT;
  view.xtype = CHOLMOD_REAL;
  view.dtype = CHOLMOD_DOUBLE;
  view.sorted = 1;
  view.packed = 1;
  return view;
}

class CholmodSolver final : public LinearSolver {
 public:
  /// `single_precision_inverse`: a solver for a preconditioner (the sparse
  /// contact path's P, new_solver_for_preconditioning). Its factor is kept
  /// in single precision only, and it offers apply_approximate_inverse alone
  /// (see keep_single_precision_factor), until keep_full_precision().
  explicit CholmodSolver(bool single_precision_inverse = false)
      : single_precision_inverse_(single_precision_inverse) {
    cholmod_start(&common_);
    common_.supernodal = CHOLMOD_SUPERNODAL;
    common_.print = 0;
    common_.error_handler = nullptr;
  }
  ~CholmodSolver() override {
    free_single_precision_factor();
    if (factor_) cholmod_free_factor(&factor_, &common_);
    for (cholmod_dense** work : {&solution_work_, &y_work_, &e_work_})
      if (*work) cholmod_free_dense(work, &common_);
    cholmod_finish(&common_);
  }
  CholmodSolver(const CholmodSolver&) = delete;
  CholmodSolver& operator=(const CholmodSolver&) = delete;

  void factorize(const SparseMatrix& a) override {
    free_single_precision_factor();
    if (factor_) cholmod_free_factor(&factor_, &common_);
    SparseMatrix lower = lower_triangle(a);
    cholmod_sparse view = lower_view(lower);
    factor_ = cholmod_analyze(&view, &common_);
    analysis_flops_ = common_.fl;
    if (!factor_) throw_failure("analysis", view);
    finish_factorization(view, a);
  }

  void factorize_lower(const SparseMatrix& lower, bool reuse_analysis) override {
    if (!lower.isCompressed())
      throw NumericalError("factorize_lower: the matrix is not compressed");
    // CHOLMOD reads the matrix only; the view needs non-const pointers.
    cholmod_sparse view = lower_view(const_cast<SparseMatrix&>(lower));  // NOLINT
    // The previous values go before the new ones are made: the peak is one
    // factor's values, as without the single-precision copy.
    free_single_precision_factor();
    if (!reuse_analysis || !factor_ || n_ != lower.rows()) {
      if (factor_) cholmod_free_factor(&factor_, &common_);
      factor_ = cholmod_analyze(&view, &common_);
      analysis_flops_ = common_.fl;
      if (!factor_) throw_failure("analysis", view);
    }
    finish_factorization(view, lower);
  }

  // With the condensed unknowns ordered last (constrained AMD), K = P^T L L^T P
  // and the trailing block L_cc of L is the Cholesky factor of the Schur
  // complement: S = L_cc L_cc^T and S^-1 = L_cc^-T L_cc^-1. No solve is
  // needed, and S is never factorized again.
  CondensedMatrices factorize_lower_and_condense(const SparseMatrix& lower,
                                                 const std::vector<int>& condensed) override {
    const int n = static_cast<int>(lower.rows());
    const int n_c = static_cast<int>(condensed.size());
    if (n_c == 0) {
      factorize_lower(lower, false);
      return {};
    }
    if (!lower.isCompressed())
      throw NumericalError("factorize_lower_and_condense: the matrix is not compressed");
    if (single_precision_inverse_)
      throw NumericalError("factorize_lower_and_condense on a preconditioner's CHOLMOD solver");
    free_single_precision_factor();
    if (factor_) cholmod_free_factor(&factor_, &common_);
    // CHOLMOD reads the matrix only; the view needs non-const pointers.
    cholmod_sparse view = lower_view(const_cast<SparseMatrix&>(lower));  // NOLINT
    std::vector<int> perm = contact_last_ordering(lower, condensed);
    analyze_with_given_ordering(view, perm);
    finish_factorization(view, lower);
    const int* final_perm = static_cast<const int*>(factor_->Perm);
    if (!factor_->is_super || !std::equal(perm.begin(), perm.end(), final_perm))
      throw NumericalError("CHOLMOD did not keep the given ordering");
    const int first = n - n_c;
    try {
      // One (n_c)^2 array besides the factor: L_cc is read off the factor
      // into the pair's upper triangle twice, once for S and once for W.
      CondensedMatrices pair(n_c);
      schur_from_trailing_factor(first, pair);
      inverse_from_trailing_factor(first, pair);
      return in_caller_order(std::move(pair), perm, condensed, n);
    } catch (const std::bad_alloc&) {
      throw_dense_out_of_memory(n_c);
    }
  }

 private:
  // Ordering: CHOLMOD's own best fill-reducing ordering (AMD or METIS) of
  // the other unknowns, then the condensed ones. (Constrained AMD on the
  // whole matrix gave a 3x larger factor on 3D meshes: AMD orders their
  // interior much worse than nested dissection.)
  std::vector<int> contact_last_ordering(const SparseMatrix& lower,
                                         const std::vector<int>& condensed) {
    const int n = static_cast<int>(lower.rows());
    const int n_c = static_cast<int>(condensed.size());
    std::vector<int> is_condensed(static_cast<std::size_t>(n), 0);
    for (int dof : condensed) is_condensed[dof] = 1;
    std::vector<int> interior, interior_index(static_cast<std::size_t>(n), -1);
    for (int dof = 0; dof < n; ++dof)
      if (!is_condensed[dof]) {
        interior_index[dof] = static_cast<int>(interior.size());
        interior.push_back(dof);
      }
    const int first = n - n_c;
    std::vector<int> perm(static_cast<std::size_t>(n));
    if (first > 0) {
      SparseMatrix interior_lower = interior_block(lower, interior_index, first);
      cholmod_sparse interior_view = lower_view(interior_lower);
      cholmod_factor* symbolic = cholmod_analyze(&interior_view, &common_);
      if (!symbolic) throw_failure("analysis", interior_view);
      const int* interior_perm = static_cast<const int*>(symbolic->Perm);
      for (int k = 0; k < first; ++k) perm[k] = interior[interior_perm[k]];
      cholmod_free_factor(&symbolic, &common_);
    }
    for (int c = 0; c < n_c; ++c) perm[first + c] = condensed[c];
    return perm;
  }

  /// The lower triangle of the interior-interior block, in interior numbering.
  static SparseMatrix interior_block(const SparseMatrix& lower,
                                     const std::vector<int>& interior_index, int first) {
    std::vector<Eigen::Triplet<double, int>> entries;
    for (int col = 0; col < lower.outerSize(); ++col)
      for (SparseMatrix::InnerIterator it(lower, col); it; ++it)
        if (interior_index[it.row()] >= 0 && interior_index[col] >= 0)
          entries.emplace_back(interior_index[it.row()], interior_index[col], it.value());
    SparseMatrix interior_lower(first, first);
    interior_lower.setFromTriplets(entries.begin(), entries.end());
    return interior_lower;
  }

  // Analyze with exactly this ordering (no postordering, which could move
  // the trailing block), then restore CHOLMOD's defaults.
  void analyze_with_given_ordering(cholmod_sparse& view, std::vector<int>& perm) {
    const int saved_methods = common_.nmethods, saved_postorder = common_.postorder;
    const int saved_ordering = common_.method[0].ordering;
    common_.nmethods = 1;
    common_.method[0].ordering = CHOLMOD_GIVEN;
    common_.postorder = 0;
    factor_ = cholmod_analyze_p(&view, perm.data(), nullptr, 0, &common_);
    common_.nmethods = saved_methods;
    common_.method[0].ordering = saved_ordering;
    common_.postorder = saved_postorder;
    if (!factor_) throw_failure("analysis", view);
  }

  /// visit(row, column, value) for every entry of L_cc that the supernodal
  /// factor holds: rows and columns >= first (in L_cc's numbering, from 0),
  /// row >= column; the others are 0.
  template <typename Visit>
  void for_each_trailing_factor_entry(int first, Visit visit) const {
    const int* super = static_cast<const int*>(factor_->super);
    const int* pi = static_cast<const int*>(factor_->pi);
    const int* px = static_cast<const int*>(factor_->px);
    const int* rows = static_cast<const int*>(factor_->s);
    const double* values = static_cast<const double*>(factor_->x);
    for (size_t k = 0; k < factor_->nsuper; ++k) {
      const int k1 = super[k], k2 = super[k + 1];
      if (k2 <= first) continue;
      const int n_rows = pi[k + 1] - pi[k];
      for (int col = std::max(k1, first); col < k2; ++col)
        for (int i = col - k1; i < n_rows; ++i) {
          const int row = rows[pi[k] + i];
          if (row >= first)
            visit(row - first, col - first, values[px[k] + i + (col - k1) * n_rows]);
        }
    }
  }

  /// S (in the factor's order) = L_cc L_cc^T = J (U U^T) J for U = J L_cc J,
  /// J the reversal of the n_c unknowns: LAPACK's dlauum forms U U^T of a
  /// triangular U in place, a third of the flops of a general product
  /// (dsyrk on the square L_cc). Reversing maps (i, j) to (n-1-i, n-1-j):
  /// L_cc's lower triangle to U's upper one, and U U^T's upper triangle to
  /// S's lower one. U is formed in W's triangle of the pair (free until
  /// inverse_from_trailing_factor), read off the factor, and S moved from
  /// there into its own triangle.
  void schur_from_trailing_factor(int first, CondensedMatrices& pair) const {
    const int n_c = pair.size();
    for_each_trailing_factor_entry(first, [&pair, n_c](int row, int col, double value) {
      pair.delassus_upper(n_c - 1 - row, n_c - 1 - col) = value;
    });
    const char upper_part = 'U';
    const int lda = pair.leading_dimension();
    int info = 0;
    dlauum_(&upper_part, &n_c, pair.data(), &lda, &info, 1);
    if (info != 0) throw NumericalError("LAPACK dlauum failed (info " + std::to_string(info) + ")");
    // Sources in W's triangle, destinations in S's: no overlap.
    for (int j = 0; j < n_c; ++j)
      for (int i = j; i < n_c; ++i)
        pair.stiffness_lower(i, j) = pair.delassus_upper(n_c - 1 - i, n_c - 1 - j);
  }

  /// W (in the factor's order) = S^-1 = (L_cc L_cc^T)^-1 = (U^T U)^-1 for
  /// U = L_cc^T, by LAPACK's dpotri in W's triangle of the pair, where U is
  /// read off the factor CHOLMOD made (no Cholesky of S).
  void inverse_from_trailing_factor(int first, CondensedMatrices& pair) const {
    const int n_c = pair.size();
    for (int j = 0; j < n_c; ++j)
      for (int i = 0; i <= j; ++i) pair.delassus_upper(i, j) = 0.0;
    for_each_trailing_factor_entry(
        first, [&pair](int row, int col, double value) { pair.delassus_upper(col, row) = value; });
    const char upper_part = 'U';
    const int lda = pair.leading_dimension();
    int info = 0;
    dpotri_(&upper_part, &n_c, pair.data(), &lda, &info, 1);
    if (info != 0)
      throw NumericalError(
          "the condensed stiffness of the contact nodes is singular (LAPACK dpotri "
          "info " +
          std::to_string(info) + ")");
  }

  /// S and W from the factor's order to the caller's order of the condensed
  /// unknowns.
  static CondensedMatrices in_caller_order(CondensedMatrices pair, const std::vector<int>& perm,
                                           const std::vector<int>& condensed, int n) {
    const int n_c = static_cast<int>(condensed.size());
    const int first = n - n_c;
    std::vector<int> position(static_cast<std::size_t>(n), -1);
    for (int c = 0; c < n_c; ++c) position[condensed[c]] = c;
    std::vector<int> caller_index(static_cast<std::size_t>(n_c));
    for (int t = 0; t < n_c; ++t) caller_index[t] = position[perm[first + t]];
    // The ordering above keeps the caller's order of the condensed unknowns,
    // so this copy (a tenth of the set-up of the seed punch) is skipped.
    if (std::is_sorted(caller_index.begin(), caller_index.end())) return pair;
    CondensedMatrices ordered(n_c);
    for (int j = 0; j < n_c; ++j)
      for (int i = 0; i < n_c; ++i) {
        const int row = caller_index[i], column = caller_index[j];
        if (row >= column) ordered.stiffness_lower(row, column) = pair.stiffness(i, j);
        if (row <= column) ordered.delassus_upper(row, column) = pair.delassus(i, j);
      }
    return ordered;
  }

  void finish_factorization(cholmod_sparse& view, const SparseMatrix& a) {
    cholmod_factorize(&view, factor_, &common_);
    if (common_.status < CHOLMOD_OK) throw_failure("factorization", view);
    if (common_.status == CHOLMOD_NOT_POSDEF || factor_->minor < factor_->n)
      throw NumericalError(
          "CHOLMOD factorization failed: the stiffness is not positive definite (do the "
          "boundary conditions remove every rigid-body motion?)");
    n_ = a.rows();
    if (!single_precision_inverse_) return;
    keep_single_precision_factor();
    if (approximate_inverse_matrix_ && single_values_)
      start_refinement(approximate_inverse_matrix_);
  }
  /// refined_solve from now on, on `lower` (the matrix factorized, held in
  /// double by the caller), with |A|_inf, the stopping test's scale.
  void start_refinement(std::shared_ptr<const SparseMatrix> lower) const {
    if (!lower || lower->rows() != n_ || lower->cols() != n_)
      throw NumericalError("CHOLMOD's refined solves: not the matrix factorized");
    matrix_norm_ = symmetric_infinity_norm(*lower);
    refinement_matrix_ = std::move(lower);
  }
  // A preconditioner's solves need a few digits (a flexible GMRES corrects
  // them), and a triangular sweep of a large factor runs at the speed of
  // memory: half the bytes, about half the time (one BLAS thread: 0.051 s
  // against CHOLMOD's 0.099 s at 102,515 unknowns; docs/performance.md, "P in
  // single precision"); K_ff's solves (keep_factor_in_single_precision) get
  // their digits back from CG on the double matrix. The double values are
  // rounded in place, the block shrunk
  // to their size (glibc shrinks a large block where it is, so the peak
  // stays one factor's values) and taken from the factor, which CHOLMOD
  // then holds as its symbolic analysis alone, for the next factorization.
  void keep_single_precision_factor() {
    if (!factor_->is_super) return;  // CHOLMOD's own choice; solved in double then
    const std::size_t entries = factor_->xsize;
    auto* values = static_cast<double*>(factor_->x);
    auto* bytes = reinterpret_cast<unsigned char*>(values);  // NOLINT: rounded in place
    // Entry k's float goes to bytes [4k, 4k + 4), which belong to entries
    // already read (4k + 3 < 8k for k >= 1; entry 0 is read first).
    for (std::size_t k = 0; k < entries; ++k) {
      const auto rounded = static_cast<float>(values[k]);
      std::memcpy(bytes + sizeof(float) * k, &rounded, sizeof(float));
    }
    std::size_t size = entries;
    // On failure CHOLMOD leaves the block (and size) as they were: the
    // floats are then kept in the whole block.
    void* kept = cholmod_realloc((entries + 1) / 2, sizeof(double), values, &size, &common_);
    common_.status = CHOLMOD_OK;
    // The factor as cholmod_analyze leaves it (supernodal, no values):
    // what cholmod_change_factor(CHOLMOD_PATTERN, ...) makes of it, which
    // would free the values itself.
    factor_->x = nullptr;
    factor_->xtype = CHOLMOD_PATTERN;
    single_values_ = static_cast<float*>(kept);
    single_values_size_ = size;
  }
  void free_single_precision_factor() const {
    refinement_matrix_.reset();
    if (!single_values_) return;
    cholmod_free(single_values_size_, sizeof(double), single_values_, &common_);
    single_values_ = nullptr;
    single_values_size_ = 0;
  }

  /// The error of a failed CHOLMOD `step` ("analysis", "factorization") of
  /// `view`: out of memory (OutOfMemoryError, with the factor's size when
  /// an analysis gave it), or too large for 32-bit indices, or other.
  [[noreturn]] void throw_failure(const char* step, const cholmod_sparse& view) const {
    std::ostringstream what;
    what << "CHOLMOD's Cholesky " << step << " (" << view.nrow << " unknowns, " << view.nzmax
         << " nonzeros in the matrix's lower triangle";
    if (factor_ != nullptr && factor_->is_super) {
      // The supernodal factor's values and row indices, as analysed.
      const double bytes =
          8.0 * static_cast<double>(factor_->xsize) + 4.0 * static_cast<double>(factor_->ssize);
      what << "; its factor, by CHOLMOD's analysis: " << static_cast<double>(factor_->xsize)
           << " nonzeros, " << std::setprecision(3) << bytes / (1024.0 * 1024.0 * 1024.0) << " GiB";
    }
    what << ")";
    if (common_.status == CHOLMOD_OUT_OF_MEMORY)
      throw OutOfMemoryError(what.str() + " ran out of memory: the machine cannot give it the " +
                             "memory it needs; " + out_of_memory_hint);
    if (common_.status == CHOLMOD_TOO_LARGE)
      throw NumericalError(what.str() + " failed: the factor is too large for CHOLMOD's 32-bit " +
                           "indices; " + out_of_memory_hint);
    throw NumericalError(what.str() + " failed (CHOLMOD status " + std::to_string(common_.status) +
                         ")");
  }

  /// The dense condensed stiffness of `n_c` contact unknowns did not fit.
  [[noreturn]] static void throw_dense_out_of_memory(int n_c) {
    const double gib = 8.0 * n_c * static_cast<double>(n_c) / (1024.0 * 1024.0 * 1024.0);
    std::ostringstream what;
    what << "the dense contact path's condensed stiffness (" << n_c << " x " << n_c
         << " contact unknowns, " << std::setprecision(3) << gib
         << " GiB a copy) ran out of memory: the machine cannot give it the memory it needs; "
         << out_of_memory_hint;
    throw OutOfMemoryError(what.str());
  }

  /// The error of a failed solve with `columns` right-hand sides.
  [[noreturn]] void throw_solve_failure(Eigen::Index columns) const {
    if (common_.status != CHOLMOD_OUT_OF_MEMORY) throw NumericalError("CHOLMOD solve failed");
    std::ostringstream what;
    what << "CHOLMOD's solve (" << n_ << " unknowns, " << columns
         << " right-hand sides) ran out of memory: the machine cannot give it the memory it "
            "needs; "
         << out_of_memory_hint;
    throw OutOfMemoryError(what.str());
  }

 public:
  void solve(const Eigen::MatrixXd& b, Eigen::MatrixXd& x) const override {
    solve_to_tolerance(b, x, 0.0);
  }
  void solve_in_place(Eigen::Ref<Eigen::VectorXd> x) const override {
    solve_in_place_to_tolerance(x, 0.0);
  }

  // A direct solve ignores the tolerance; the single-precision factor of
  // keep_factor_in_single_precision stops there. The mode is read under the
  // lock: another analysis sharing this solver may change it.
  void solve_to_tolerance(const Eigen::MatrixXd& b, Eigen::MatrixXd& x,
                          double relative_tolerance) const override {
    if (!factor_ || b.rows() != n_) throw NumericalError("CHOLMOD solve before factorization");
    // cholmod_common holds workspace and counters that cholmod_solve
    // updates: analyses sharing this factorization take turns.
    const std::lock_guard<std::mutex> lock(solve_mutex_);
    if (refinement_matrix_) {
      x = b;
      for (Eigen::Index j = 0; j < x.cols(); ++j) refined_solve(x.col(j), relative_tolerance);
      return;
    }
    if (single_values_) throw NumericalError("CHOLMOD solve with a preconditioner's factor");
    cholmod_dense rhs{};
    rhs.nrow = static_cast<size_t>(b.rows());
    rhs.ncol = static_cast<size_t>(b.cols());
    rhs.nzmax = rhs.nrow * rhs.ncol;
    rhs.d = rhs.nrow;
    rhs.x = const_cast<double*>(b.data());
    rhs.xtype = CHOLMOD_REAL;
    rhs.dtype = CHOLMOD_DOUBLE;
    cholmod_dense* solution = cholmod_solve(CHOLMOD_A, factor_, &rhs, &common_);
    if (!solution) throw_solve_failure(b.cols());
    x = Eigen::Map<const Eigen::MatrixXd>(static_cast<const double*>(solution->x), b.rows(),
                                          b.cols());
    cholmod_free_dense(&solution, &common_);
  }
  void solve_in_place_to_tolerance(Eigen::Ref<Eigen::VectorXd> x,
                                   double relative_tolerance) const override {
    if (!factor_ || x.size() != n_) throw NumericalError("CHOLMOD solve before factorization");
    const std::lock_guard<std::mutex> lock(solve_mutex_);
    if (refinement_matrix_) {
      refined_solve(x, relative_tolerance);
      return;
    }
    if (single_values_) throw NumericalError("CHOLMOD solve with a preconditioner's factor");
    direct_solve_in_place(x);
  }

  /// With the single-precision factor: x := (L L^T)^-1 x in single
  /// precision (sweep_single_precision_factor). Otherwise the exact solve.
  void apply_approximate_inverse(Eigen::Ref<Eigen::VectorXd> x) const override {
    if (!factor_ || x.size() != n_) throw NumericalError("CHOLMOD solve before factorization");
    const std::lock_guard<std::mutex> lock(solve_mutex_);
    if (refinement_matrix_)
      refined_solve(x, approximate_inverse_tolerance_);
    else if (single_values_)
      sweep_single_precision_factor(x);
    else
      direct_solve_in_place(x);
  }

  bool refine_approximate_inverse(std::shared_ptr<const SparseMatrix> lower,
                                  double relative_tolerance) override {
    const std::lock_guard<std::mutex> lock(solve_mutex_);
    if (!single_precision_inverse_ || !single_values_ || !factor_) return false;
    start_refinement(lower);
    approximate_inverse_matrix_ = std::move(lower);
    approximate_inverse_tolerance_ = relative_tolerance;
    return true;
  }

  // The double values are rounded in place as for a preconditioner's factor
  // (keep_single_precision_factor: no second copy, so the peak stays one
  // factor's values), and |A|_inf, the stopping test's scale, is measured
  // once here.
  bool keep_factor_in_single_precision(std::shared_ptr<const SparseMatrix> lower) override {
    const std::lock_guard<std::mutex> lock(solve_mutex_);
    if (!factor_ || !factor_->is_super || single_values_ || single_precision_inverse_) return false;
    if (!lower || lower->rows() != n_ || lower->cols() != n_)
      throw NumericalError("keep_factor_in_single_precision: not the matrix factorized");
    keep_single_precision_factor();
    if (!single_values_) return false;
    start_refinement(std::move(lower));
    return true;
  }

 private:
  // cholmod_solve2 reuses the solution and its two workspaces when their
  // sizes match: after the first call, a solve allocates nothing. The
  // caller holds solve_mutex_.
  void direct_solve_in_place(Eigen::Ref<Eigen::VectorXd> x) const {
    cholmod_dense rhs{};
    rhs.nrow = rhs.nzmax = rhs.d = static_cast<size_t>(x.size());
    rhs.ncol = 1;
    rhs.x = x.data();
    rhs.xtype = CHOLMOD_REAL;
    rhs.dtype = CHOLMOD_DOUBLE;
    if (!cholmod_solve2(CHOLMOD_A, factor_, &rhs, nullptr, &solution_work_, nullptr, &y_work_,
                        &e_work_, &common_))
      throw_solve_failure(1);
    x = Eigen::Map<const Eigen::VectorXd>(static_cast<const double*>(solution_work_->x), x.size());
  }

  /// Where refined_solve does not converge: the matrix factorized again in
  /// double (the numeric phase on the kept analysis), and direct solves
  /// from then on, at the memory of the double factor. The answers do not
  /// change, so this is done within a const solve. The caller holds
  /// solve_mutex_.
  void restore_double_precision_factor() const {
    const std::shared_ptr<const SparseMatrix> matrix = refinement_matrix_;  // freed below
    // A preconditioner's factor too stays in double from here on: where
    // its rounding failed once it tends to fail again.
    single_precision_inverse_ = false;
    approximate_inverse_matrix_.reset();
    cholmod_sparse view =
        lower_view(const_cast<SparseMatrix&>(*matrix));  // NOLINT: CHOLMOD reads it
    free_single_precision_factor();
    cholmod_factorize(&view, factor_, &common_);
    if (common_.status < CHOLMOD_OK || factor_->minor < factor_->n)
      throw_failure("factorization", view);
  }

  /// x := (L L^T)^-1 x in single precision, supernode by supernode (a
  /// triangular solve with the diagonal block, a product with the rows
  /// below it), as CHOLMOD's own solve does in double. The caller holds
  /// solve_mutex_.
  void sweep_single_precision_factor(Eigen::Ref<Eigen::VectorXd> x) const {
    const auto n = static_cast<std::size_t>(n_);
    const int* perm = static_cast<const int*>(factor_->Perm);
    const int* super = static_cast<const int*>(factor_->super);
    const int* pi = static_cast<const int*>(factor_->pi);
    const int* px = static_cast<const int*>(factor_->px);
    const int* rows = static_cast<const int*>(factor_->s);
    single_x_.resize(n);
    single_below_.resize(factor_->maxesize);
    float* y = single_x_.data();
    float* below = single_below_.data();
    for (std::size_t k = 0; k < n; ++k) y[k] = static_cast<float>(x(perm[k]));
    const int one = 1;
    const float plus = 1.0F, minus = -1.0F, zero = 0.0F;
    const auto n_super = static_cast<int>(factor_->nsuper);
    for (int j = 0; j < n_super; ++j) {  // L y = b
      const int first = super[j], n_cols = super[j + 1] - first, n_rows = pi[j + 1] - pi[j];
      const int n_below = n_rows - n_cols;
      const float* block = single_values_ + px[j];
      strsv_("L", "N", "N", &n_cols, block, &n_rows, y + first, &one, 1, 1, 1);
      if (n_below == 0) continue;
      sgemv_("N", &n_below, &n_cols, &plus, block + n_cols, &n_rows, y + first, &one, &zero, below,
             &one, 1);
      const int* below_rows = rows + pi[j] + n_cols;
      for (int r = 0; r < n_below; ++r) y[below_rows[r]] -= below[r];
    }
    for (int j = n_super - 1; j >= 0; --j) {  // L^T x = y
      const int first = super[j], n_cols = super[j + 1] - first, n_rows = pi[j + 1] - pi[j];
      const int n_below = n_rows - n_cols;
      const float* block = single_values_ + px[j];
      if (n_below > 0) {
        const int* below_rows = rows + pi[j] + n_cols;
        for (int r = 0; r < n_below; ++r) below[r] = y[below_rows[r]];
        sgemv_("T", &n_below, &n_cols, &minus, block + n_cols, &n_rows, below, &one, &plus,
               y + first, &one, 1);
      }
      strsv_("L", "T", "N", &n_cols, block, &n_rows, y + first, &one, 1, 1, 1);
    }
    for (std::size_t k = 0; k < n; ++k) x(perm[k]) = static_cast<double>(y[k]);
  }

  /// x := A^-1 x (x holds b on entry) by conjugate gradients on A in double
  /// (refinement_matrix_), preconditioned by the single-precision factor:
  /// M = L~ L~^T is SPD and M^-1 A = I + O(kappa(A) u_single), so each
  /// iteration gains digits (the iterative refinement of a mixed-precision
  /// Cholesky solve, accelerated by CG, which also copes where kappa
  /// u_single is near 1). Flexible (Polak-Ribiere) beta, since the rounded
  /// sweeps are not exactly one linear operator. Stops where the backward
  /// error is a direct solve's, |b - A x|_inf <= 2 eps |A|_inf |x|_inf, or
  /// where the residual stops falling; accepted within LAPACK's dsposv test
  /// (sqrt(n) eps |A|_inf |x|_inf), else the factor is made again in double
  /// (restore_double_precision_factor) and the solve is direct. With a relative tolerance
  /// > 0, also stops at |b - A x|_2 <= tolerance |b|_2 (an inexact solve
  /// asked for; LinearSolver::solve_in_place_to_tolerance). The caller holds
  /// solve_mutex_.
  void refined_solve(Eigen::Ref<Eigen::VectorXd> x, double relative_tolerance) const {
    const SparseMatrix& a = *refinement_matrix_;
    const auto product = a.selfadjointView<Eigen::Lower>();
    refine_b_ = x;
    ++refined_solves_;
    const double b_norm = refine_b_.norm();
    x.setZero();
    if (!(b_norm > 0.0)) return;
    const double eps = std::numeric_limits<double>::epsilon();
    const double wanted = 2.0 * eps * matrix_norm_;
    const double accepted = std::sqrt(static_cast<double>(n_)) * eps * matrix_norm_;
    const double asked = relative_tolerance > 0.0 ? relative_tolerance * b_norm : 0.0;
    Eigen::VectorXd& r = refine_r_;
    Eigen::VectorXd& z = refine_z_;
    Eigen::VectorXd& p = refine_p_;
    Eigen::VectorXd& q = refine_q_;
    r = refine_b_;
    z = r;
    sweep_single_precision_factor(z);
    p = z;
    double rz = r.dot(z);
    double best = r.lpNorm<Eigen::Infinity>();
    int without_progress = 0;
    constexpr int max_iterations = 200;
    for (int iteration = 0; iteration < max_iterations; ++iteration) {
      q.noalias() = product * p;
      const double pq = p.dot(q);
      if (!(pq > 0.0) || !std::isfinite(pq)) break;
      const double alpha = rz / pq;
      x += alpha * p;
      r -= alpha * q;
      ++refinement_iterations_;
      const double r_inf = r.lpNorm<Eigen::Infinity>();
      const double x_inf = x.lpNorm<Eigen::Infinity>();
      if (r_inf <= wanted * x_inf || (asked > 0.0 && r.norm() <= asked)) {
        // The recursive residual drifts from b - A x: confirm with the true one.
        q = refine_b_;
        q.noalias() -= product * x;
        if (q.lpNorm<Eigen::Infinity>() <= accepted * x_inf || (asked > 0.0 && q.norm() <= asked))
          return;
        r = q;  // start again from the true residual
        z = r;
        sweep_single_precision_factor(z);
        p = z;
        rz = r.dot(z);
        if (++without_progress == 3) break;
        continue;
      }
      if (r_inf < 0.5 * best) {
        best = r_inf;
        without_progress = 0;
      } else if (++without_progress == 3) {
        break;
      }
      z = r;
      sweep_single_precision_factor(z);
      const double rz_next = r.dot(z);
      const double beta = -alpha * z.dot(q) / rz;  // z . (r_next - r) / rz
      rz = rz_next;
      p = z + beta * p;
    }
    q = refine_b_;
    q.noalias() -= product * x;
    const double r_inf = q.lpNorm<Eigen::Infinity>();
    if (r_inf <= accepted * x.lpNorm<Eigen::Infinity>() && x.allFinite()) return;
    // Too ill-conditioned for the rounded factor (kappa u_single far above
    // 1): back to double for the rest of the run, and this solve direct.
    restore_double_precision_factor();
    x = refine_b_;
    direct_solve_in_place(x);
  }

 public:
  [[nodiscard]] double factor_nonzeros() const override {
    if (!factor_) return 0.0;
    return factor_->is_super ? static_cast<double>(factor_->xsize)
                             : static_cast<double>(factor_->nzmax);
  }

  [[nodiscard]] double factorization_flops() const override { return analysis_flops_; }

  // The supernodal factor's values and row indices, as throw_failure counts
  // them; the analysis is CHOLMOD's own ordering, as factorize_lower's.
  [[nodiscard]] double analyzed_factor_bytes(const SparseMatrix& lower) override {
    if (!lower.isCompressed())
      throw NumericalError("analyzed_factor_bytes: the matrix is not compressed");
    cholmod_sparse view = lower_view(const_cast<SparseMatrix&>(lower));  // NOLINT
    cholmod_factor* symbolic = cholmod_analyze(&view, &common_);
    if (!symbolic) {
      if (common_.status == CHOLMOD_OUT_OF_MEMORY)
        throw OutOfMemoryError("CHOLMOD's analysis of the stiffness (" + std::to_string(view.nrow) +
                               " unknowns) ran out of memory; " + out_of_memory_hint);
      return -1.0;
    }
    const double bytes = symbolic->is_super ? 8.0 * static_cast<double>(symbolic->xsize) +
                                                  4.0 * static_cast<double>(symbolic->ssize)
                                            : -1.0;
    cholmod_free_factor(&symbolic, &common_);
    return bytes;
  }

  [[nodiscard]] std::string name() const override { return "CHOLMOD supernodal Cholesky"; }
  [[nodiscard]] std::unique_ptr<LinearSolver> new_solver_for_preconditioning() const override {
    return std::make_unique<CholmodSolver>(true);
  }
  [[nodiscard]] bool is_serial_factorization() const override { return true; }
  // Counted while the factor is kept in single precision (its solves are
  // then conjugate gradients); a direct solve counts nothing, as before.
  [[nodiscard]] long solve_count() const override { return refined_solves_; }
  [[nodiscard]] long krylov_iterations() const override { return refinement_iterations_; }
  void keep_full_precision() override { single_precision_inverse_ = false; }
  [[nodiscard]] bool holds_lower_precision_factor() const override {
    return single_values_ != nullptr;
  }

 private:
  mutable cholmod_common common_{};
  mutable std::mutex solve_mutex_;
  cholmod_factor* factor_ = nullptr;
  double analysis_flops_ = 0.0;  // common_.fl after the last cholmod_analyze
  Eigen::Index n_ = 0;
  // solve_in_place's solution and workspaces (guarded by solve_mutex_).
  mutable cholmod_dense* solution_work_ = nullptr;
  mutable cholmod_dense* y_work_ = nullptr;
  mutable cholmod_dense* e_work_ = nullptr;
  // The single-precision factor (keep_single_precision_factor): its values,
  // in a block CHOLMOD allocated (single_values_size_ doubles), and the
  // sweeps' vectors (guarded by solve_mutex_).
  // Mutable: restore_double_precision_factor ends it.
  mutable bool single_precision_inverse_ = false;
  // refine_approximate_inverse's matrix, for every factorization from then on.
  mutable std::shared_ptr<const SparseMatrix> approximate_inverse_matrix_;
  double approximate_inverse_tolerance_ = 0.0;
  // Mutable: restore_double_precision_factor, within a const solve, frees them.
  mutable float* single_values_ = nullptr;
  mutable std::size_t single_values_size_ = 0;
  mutable std::vector<float> single_x_, single_below_;
  // keep_factor_in_single_precision: the matrix that refined_solve iterates
  // on (the caller's lower triangle), |A|_inf, and the iteration's vectors
  // (guarded by solve_mutex_).
  mutable std::shared_ptr<const SparseMatrix> refinement_matrix_;
  mutable double matrix_norm_ = 0.0;
  mutable Eigen::VectorXd refine_b_, refine_r_, refine_z_, refine_p_, refine_q_;
  mutable long refined_solves_ = 0, refinement_iterations_ = 0;
};

}  // namespace

std::unique_ptr<LinearSolver> make_cholmod_solver() {
  return std::make_unique<CholmodSolver>();
}

}  // namespace bipo
