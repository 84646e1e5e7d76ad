// The CHOLMOD backend of LinearSolver: supernodal Cholesky with CHOLMOD's own
// choice of fill-reducing ordering, called directly (Eigen's wrapper hides
// the factor, whose size we report).
#include <cholmod.h>

#include "io/errors.hpp"
#include "solver/linear_solver.hpp"

namespace bipo {

namespace {

class CholmodSolver final : public LinearSolver {
 public:
  CholmodSolver() {
    cholmod_start(&common_);
    common_.supernodal = CHOLMOD_SUPERNODAL;
    common_.print = 0;
    common_.error_handler = nullptr;
  }
  ~CholmodSolver() override {
    if (factor_) cholmod_free_factor(&factor_, &common_);
    cholmod_finish(&common_);
  }
  CholmodSolver(const CholmodSolver&) = delete;
  CholmodSolver& operator=(const CholmodSolver&) = delete;

  void factorize(const SparseMatrix& a) override {
    if (factor_) cholmod_free_factor(&factor_, &common_);
    // A view of the lower triangle of Eigen's compressed column storage.
    SparseMatrix lower = a.triangularView<Eigen::Lower>();
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
    factor_ = cholmod_analyze(&view, &common_);
    if (!factor_) throw NumericalError("CHOLMOD analysis failed (out of memory?)");
    cholmod_factorize(&view, factor_, &common_);
    if (common_.status == CHOLMOD_NOT_POSDEF || factor_->minor < factor_->n)
      throw NumericalError(
          "CHOLMOD factorization failed: the stiffness is not positive definite (do the "
          "boundary conditions remove every rigid-body motion?)");
    if (common_.status < CHOLMOD_OK) throw NumericalError("CHOLMOD factorization failed");
    n_ = a.rows();
  }

  void solve(const Eigen::MatrixXd& b, Eigen::MatrixXd& x) const override {
    if (!factor_ || b.rows() != n_) throw NumericalError("CHOLMOD solve before factorization");
    cholmod_dense rhs{};
    rhs.nrow = static_cast<size_t>(b.rows());
    rhs.ncol = static_cast<size_t>(b.cols());
    rhs.nzmax = rhs.nrow * rhs.ncol;
    rhs.d = rhs.nrow;
    rhs.x = const_cast<double*>(b.data());
    rhs.xtype = CHOLMOD_REAL;
    rhs.dtype = CHOLMOD_DOUBLE;
    cholmod_dense* solution = cholmod_solve(CHOLMOD_A, factor_, &rhs, &common_);
    if (!solution) throw NumericalError("CHOLMOD solve failed");
    x = Eigen::Map<const Eigen::MatrixXd>(static_cast<const double*>(solution->x), b.rows(),
                                          b.cols());
    cholmod_free_dense(&solution, &common_);
  }

  [[nodiscard]] double factor_nonzeros() const override {
    if (!factor_) return 0.0;
    return factor_->is_super ? static_cast<double>(factor_->xsize)
                             : static_cast<double>(factor_->nzmax);
  }

  [[nodiscard]] std::string name() const override { return "CHOLMOD supernodal Cholesky"; }

 private:
  mutable cholmod_common common_{};
  cholmod_factor* factor_ = nullptr;
  Eigen::Index n_ = 0;
};

}  // namespace

std::unique_ptr<LinearSolver> make_cholmod_solver() { return std::make_unique<CholmodSolver>(); }

}  // namespace bipo
