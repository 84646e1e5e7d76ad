// Owns the condensed contact problem of an increment as a plain value (SPEC.md
// section 3.3): find local reactions r (3m) such that, with v = q + W r the
// local kinematics (g, du_t1, du_t2) of the m contact nodes, the law of every
// node holds. W, the Delassus operator, and S = W^-1, the condensed
// stiffness, are held by a shared CondensedOperators, so that copying a
// problem (as the continuation does for each of its stages) never copies a
// dense matrix. The solvers that act on it are free functions
// (contact/solvers.hpp); how it is built from a mesh is the caller's concern
// (contact/node_to_plane.hpp).
#pragma once

#include <Eigen/Core>
#include <memory>
#include <vector>

#include "contact/law/friction_law.hpp"

namespace bipo {

/// W and S = W^-1 of a set of contact nodes (3m x 3m, the nodes' local
/// frames, displacement per unit reaction for W). Immutable; shared.
class CondensedOperators {
 public:
  /// From the condensed stiffness S (as a direct solver's factorization
  /// provides it): W = S^-1 by Cholesky. Throws NumericalError if S is not
  /// positive definite.
  static std::shared_ptr<const CondensedOperators> from_stiffness(Eigen::MatrixXd s);

  [[nodiscard]] int size() const { return static_cast<int>(w_.rows()); }
  /// W, the Delassus operator.
  [[nodiscard]] const Eigen::MatrixXd& delassus() const { return w_; }
  /// S = W^-1, the condensed stiffness.
  [[nodiscard]] const Eigen::MatrixXd& stiffness() const { return s_; }
  /// W_ii, node i's compliance (frame (n, t1, t2)).
  [[nodiscard]] Eigen::Matrix3d diagonal_block(int i) const { return w_.block<3, 3>(3 * i, 3 * i); }

 private:
  CondensedOperators() = default;
  Eigen::MatrixXd w_, s_;
};

/// The contact problem of one increment: the operators, the free motion q
/// (the kinematics v without contact forces), the law and rho of each node,
/// and the increment's motion scale (the largest motion of a node against its
/// plane in q, which scales the stopping tests).
struct CondensedContactProblem {
  std::shared_ptr<const CondensedOperators> operators;
  Eigen::VectorXd q;
  std::vector<FrictionLaw> laws;
  std::vector<double> rho;
  double motion_scale = 0.0;

  [[nodiscard]] int n_nodes() const { return static_cast<int>(laws.size()); }
  [[nodiscard]] const Eigen::MatrixXd& w() const { return operators->delassus(); }
  [[nodiscard]] const Eigen::MatrixXd& s() const { return operators->stiffness(); }
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
  double scaled_residual = 0.0;     ///< max_i |F_i| / max |r| (fixed-point residual, SPEC 3.2)
};

/// Scaled certificate and penetration of kinematics v and reactions r (3m
/// each) for the nodes' laws (see ContactSolveReport); |G_i| is used, as a
/// penetration within the tolerance can make G_i slightly negative.
void measure_law(const std::vector<FrictionLaw>& laws, const Eigen::VectorXd& v,
                 const Eigen::VectorXd& r, double motion_scale, ContactSolveReport& report);

}  // namespace bipo
