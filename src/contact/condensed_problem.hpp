// Owns the condensed contact problem of an increment as a plain value (docs/physics.md
// section 3.3): find local reactions r (3m) such that, with v = q + W r the
// local kinematics (g, du_t1, du_t2) of the m contact nodes, the law of every
// node holds. W, the Delassus operator, is reached through a shared
// DelassusOperator: dense (CondensedOperators, W and S = W^-1 as matrices)
// or sparse (the solver layer's, W applied by solves), so that copying a
// problem (as the continuation does for each of its stages) never copies an
// operator. The solvers that act on it are free functions
// (contact/solvers.hpp); how it is built from a mesh is the caller's concern
// (contact/node_to_plane.hpp).
#pragma once

#include <Eigen/Core>
#include <memory>
#include <string>
#include <vector>

#include "contact/condensed_matrices.hpp"
#include "contact/law/friction_law.hpp"

namespace bipo {

class SparseNewtonStep;

/// W, the Delassus operator of a set of contact nodes (3m x 3m, the nodes'
/// local frames, displacement per unit reaction), as an operator: the
/// solvers reach it only through this interface. Two kinds exist: the dense
/// CondensedOperators below (W and S = W^-1 held as matrices, for problems
/// of up to a few thousand nodes) and a sparse one that the solver layer
/// implements (W r by solves with the stiffness' factorization and Newton
/// steps on the sparse system; memory that grows like the mesh). Immutable
/// and shared between analyses of the same body.
class DelassusOperator {
 public:
  DelassusOperator() = default;
  DelassusOperator(const DelassusOperator&) = delete;
  DelassusOperator& operator=(const DelassusOperator&) = delete;
  virtual ~DelassusOperator() = default;

  [[nodiscard]] virtual int size() const = 0;
  /// v += W r.
  virtual void add_product(const Eigen::VectorXd& r, Eigen::VectorXd& v) const = 0;
  /// W_ii, node i's compliance (frame (n, t1, t2)), or an estimate of it of
  /// the right size where W is not formed: it only chooses rho.
  [[nodiscard]] virtual Eigen::Matrix3d diagonal_block(int i) const = 0;
  /// The dense operators, or nullptr when W is not formed.
  [[nodiscard]] virtual const class CondensedOperators* dense() const { return nullptr; }
  /// Where W is not formed: a new solver of Newton steps on this operator,
  /// with its own state (one per solve running at a time).
  [[nodiscard]] virtual std::unique_ptr<SparseNewtonStep> make_newton_step() const {
    return nullptr;
  }
};

/// The linear system of one semi-smooth Newton step (physics.md 3.2) where W is
/// not formed: B_i dr_i + C_i dv_i = -F_i at every node with dv = W dr, for
/// the derivatives B_i = dF_i/dr_i, C_i = dF_i/dv_i of the fixed-point
/// residual F at the iterate, and the nodes' states there.
struct NewtonStepEquations {
  const std::vector<ContactState>& states;
  const std::vector<Eigen::Matrix3d>& b;
  const std::vector<Eigen::Matrix3d>& c;
  const Eigen::VectorXd& f;
  const std::vector<double>& rho;
};

/// Solves Newton steps on a sparse DelassusOperator; keeps what it can reuse
/// from one step to the next (a factorization, for instance).
class SparseNewtonStep {
 public:
  virtual ~SparseNewtonStep() = default;
  /// (dr, dv) of the step, to a relative residual of `tolerance`; false if
  /// the linear solver failed.
  virtual bool solve(const NewtonStepEquations& equations, double tolerance, Eigen::VectorXd& dr,
                     Eigen::VectorXd& dv) = 0;
  /// Linear-solver work of the steps so far (for reports).
  struct Work {
    long steps = 0, factorizations = 0, iterations = 0;
    /// Krylov iterations of the preconditioner's own solves, where an
    /// iterative backend solves it, or where CHOLMOD's single-precision P
    /// is applied by refined solves (once a step needs the long restart);
    /// 0 otherwise.
    long preconditioner_krylov_iterations = 0;
    /// Steps solved again with the preconditioner solved, where its single
    /// application (one V-cycle), freshly set up, did not take GMRES to the
    /// step's tolerance.
    long preconditioner_fallbacks = 0;
    /// Steps solved by the GMRES with the long restart, which a step takes
    /// once the short one failed on a fresh preconditioner (and every step
    /// after it in the run).
    long long_restart_steps = 0;
    /// Steps that needed the long restart where it did not fit in half of
    /// the memory available (they failed, and the contact iteration's
    /// continuation or a cut increment took over).
    long long_restart_refused_steps = 0;
    /// K_ff solves that made a step's motion dv equal to W dr (where the
    /// step's GMRES left the rows off the contact nodes above round-off).
    long motion_corrections = 0;
    /// Steps solved with the preconditioner's factor in single precision
    /// (CHOLMOD's P: one sweep per application until a step needs the long
    /// restart, refined solves from then on).
    long single_precision_steps = 0;
  };
  [[nodiscard]] virtual Work work() const = 0;
};

/// W and S = W^-1 of a set of contact nodes as dense matrices, each exactly
/// symmetric, held together in one buffer (CondensedMatrices: half the
/// memory of two whole matrices; each product reads its own triangle).
/// Immutable; shared.
class CondensedOperators final : public DelassusOperator {
 public:
  /// From the condensed stiffness S (as a direct solver's factorization
  /// provides it; its lower triangle is taken): W = S^-1 by Cholesky.
  /// Throws NumericalError if S is not positive definite.
  static std::shared_ptr<const CondensedOperators> from_stiffness(const Eigen::MatrixXd& s);
  /// From S and W = S^-1 (as a direct solver's factorization gives them,
  /// in the same frames); the caller vouches that W is S's inverse.
  static std::shared_ptr<const CondensedOperators> from_matrices(CondensedMatrices matrices);

  [[nodiscard]] int size() const override { return matrices_.size(); }
  void add_product(const Eigen::VectorXd& r, Eigen::VectorXd& v) const override {
    matrices_.add_delassus_product(r, v);
  }
  /// S = W^-1, the condensed stiffness, and W, the Delassus operator.
  [[nodiscard]] const CondensedMatrices& matrices() const { return matrices_; }
  [[nodiscard]] Eigen::Matrix3d diagonal_block(int i) const override {
    return matrices_.delassus_block(i, i);
  }
  [[nodiscard]] const CondensedOperators* dense() const override { return this; }

 private:
  CondensedOperators() = default;
  CondensedMatrices matrices_;
};

/// The contact problem of one increment: the operators, the free motion q
/// (the kinematics v without contact forces), the law and rho of each node,
/// and the increment's motion scale (the largest motion of a node against its
/// plane in q, which scales the stopping tests).
struct CondensedContactProblem {
  std::shared_ptr<const DelassusOperator> operators;
  Eigen::VectorXd q;
  std::vector<FrictionLaw> laws;
  std::vector<double> rho;
  double motion_scale = 0.0;

  [[nodiscard]] int n_nodes() const { return static_cast<int>(laws.size()); }
  /// The dense operators, or nullptr when W is not formed (a sparse operator).
  [[nodiscard]] const CondensedOperators* dense() const { return operators->dense(); }
  /// Some node's sliding rule is not normal to its cone (p != mu).
  [[nodiscard]] bool has_non_associated_law() const;
};

/// How the contact iterations of one increment went, or how far a state
/// (v, r) is from the law (measure_law).
struct ContactSolveReport {
  int newton_iterations = 0;  ///< semi-smooth Newton steps
  int sweeps = 0;             ///< block Gauss-Seidel sweeps (fallback)
  bool converged = false;
  double scaled_certificate = 0.0;  ///< max_i G_i / (max |r| * motion scale)
  double scaled_penetration = 0.0;  ///< max(-g) / motion scale
  double scaled_residual = 0.0;  ///< max_i |F_i| / max |r| (fixed-point residual, physics.md 3.2)
};

/// Scaled certificate and penetration of kinematics v and reactions r (3m
/// each) for the nodes' laws (see ContactSolveReport); |G_i| is used, as a
/// penetration within the tolerance can make G_i slightly negative.
void measure_law(const std::vector<FrictionLaw>& laws, const Eigen::VectorXd& v,
                 const Eigen::VectorXd& r, double motion_scale, ContactSolveReport& report);

}  // namespace bipo
