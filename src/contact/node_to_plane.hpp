// Owns node-to-rigid-plane contact (SPEC.md section 2) for a list of contact
// nodes, and the solution of the condensed contact problem of an increment:
// semi-smooth Newton on the per-node fixed-point equations, with block
// Gauss-Seidel sweeps of the per-node law as its fallback (SPEC 3.2, 3.3).
//
// It knows nothing of meshes or of how the global system is solved: the
// solver gives it the Delassus operator W = E^T K^-1 E in the nodes' local
// frames (E maps local reactions to nodal forces) and, per increment, the
// contact nodes' displacements without contact forces. Everything per node is
// in the local frame (n, t1, t2).
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <vector>

#include "contact/friction_law.hpp"

namespace bipo {

/// A rigid plane (SPEC 2): point p0, unit normal n into the body, principal
/// friction direction t1, t2 = n x t1, its law, and its prescribed rigid
/// displacement w at the current and at the last converged increment.
struct RigidPlane {
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
  Eigen::Vector3d t1 = Eigen::Vector3d::UnitX();
  FrictionLaw law = FrictionLaw::isotropic(0.0);
  Eigen::Vector3d w = Eigen::Vector3d::Zero();
  Eigen::Vector3d w_prev = Eigen::Vector3d::Zero();

  /// Rows n, t1, t2: maps global vectors to local components.
  [[nodiscard]] Eigen::Matrix3d frame() const;
};

/// One contact node: the plane it touches and its reference position X.
struct ContactNode {
  int plane = 0;
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
};

/// Per-node results of an increment (all in the local frame).
struct ContactNodeState {
  Eigen::Vector3d r = Eigen::Vector3d::Zero();     ///< (r_n, r_t1, r_t2)
  double gap = 0.0;                                ///< g
  Eigen::Vector2d slip = Eigen::Vector2d::Zero();  ///< du_t of the increment
  ContactState state = ContactState::open;
  double f = 0.0;            ///< |r_t|_mu - r_n
  double certificate = 0.0;  ///< G_i (SPEC 3.1)
  double dissipation = 0.0;  ///< D_i = -r_t . du_t
};

/// How the contact iterations of one increment went.
struct ContactSolveReport {
  int newton_iterations = 0;  ///< semi-smooth Newton steps
  int sweeps = 0;             ///< block Gauss-Seidel sweeps (fallback)
  bool converged = false;
  double scaled_certificate = 0.0;  ///< max_i G_i / (max |r| * motion scale)
  double scaled_penetration = 0.0;  ///< max(-g) / motion scale
  double scaled_residual = 0.0;     ///< max_i |F_i| / max |r| (fixed-point residual, SPEC 3.2)
};

class NodeToPlaneContact {
 public:
  NodeToPlaneContact(std::vector<RigidPlane> planes, std::vector<ContactNode> nodes);

  [[nodiscard]] int n_nodes() const { return static_cast<int>(nodes_.size()); }
  [[nodiscard]] const std::vector<RigidPlane>& planes() const { return planes_; }
  [[nodiscard]] const std::vector<ContactNode>& nodes() const { return nodes_; }
  /// Local frame of node i (rows n, t1, t2).
  [[nodiscard]] const Eigen::Matrix3d& frame(int i) const { return frames_[i]; }

  /// Sets the condensed stiffness S = W^-1 of the contact nodes (3m x 3m,
  /// local frames), as a direct solver's factorization provides it, derives
  /// the Delassus operator W, and sets the per-node rho: automatic from the
  /// node's diagonal block of W (friction_law.hpp) unless a plane gives a
  /// fixed value (`rho_override`, one per plane, <= 0 = auto).
  void set_condensed_stiffness(Eigen::MatrixXd s, const std::vector<double>& rho_override);
  /// Sets S and W = S^-1 as already computed (another contact module of the
  /// same nodes and frames), and the per-node rho as above.
  void set_condensed_operators(const Eigen::MatrixXd& s, const Eigen::MatrixXd& w,
                               const std::vector<double>& rho_override);
  [[nodiscard]] const Eigen::MatrixXd& condensed_stiffness() const { return s_; }
  [[nodiscard]] const Eigen::MatrixXd& delassus() const { return w_; }
  [[nodiscard]] double rho(int i) const { return rho_[i]; }

  /// Moves the planes for the increment being solved.
  void set_plane_motion(int plane, const Eigen::Vector3d& w);

  /// Local kinematics (g, du_t1, du_t2) of every node for the given nodal
  /// displacements (3m, global components) at the end of the increment,
  /// against the last converged ones (SPEC 2).
  [[nodiscard]] Eigen::VectorXd kinematics(const Eigen::VectorXd& u) const;

  /// Solves the increment's contact problem: finds local reactions r (3m)
  /// such that, with v = q + W r the local kinematics, the law holds at every
  /// node. `q` is kinematics() of the displacements without contact forces.
  /// `r` is the starting point on entry (the last converged reactions).
  /// A semi-smooth Newton method on the fixed-point equations of SPEC 3.2
  /// runs first; when it stalls, short batches of block Gauss-Seidel sweeps
  /// alternate with it (see the definition for the limits).
  /// `max_iterations` bounds the Newton steps plus the sweeps.
  ContactSolveReport solve(const Eigen::VectorXd& q, Eigen::VectorXd& r, double law_tolerance,
                           int max_iterations) const;

  /// The two methods solve() combines, exposed for tests and benchmarks.
  ContactSolveReport solve_semismooth_newton(const Eigen::VectorXd& q, Eigen::VectorXd& r,
                                             double law_tolerance, int max_iterations) const;
  ContactSolveReport solve_gauss_seidel(const Eigen::VectorXd& q, Eigen::VectorXd& r,
                                        double law_tolerance, int max_sweeps) const;
  /// Continuation in the sliding coefficients from the associated law to the
  /// planes' laws, a semi-smooth Newton solve per stage (solve() falls back on
  /// it for non-associated laws). `r` is the starting point of the first stage.
  ContactSolveReport solve_by_continuation(const Eigen::VectorXd& q, Eigen::VectorXd& r,
                                           double law_tolerance, int max_iterations) const;

  /// Nodal forces of the reactions on the body (3m, global components).
  [[nodiscard]] Eigen::VectorXd nodal_forces(const Eigen::VectorXd& r) const;

  /// The reactions of a converged increment as they are applied and
  /// reported, from the solver's iterate r for the free motion q (the gaps
  /// are those of v = q + W r): at a node without compressive force (r_n <=
  /// 0), or clear of its plane beyond the penetration tolerance (g >
  /// law_tolerance * motion_scale) with a normal force at the tolerance's
  /// level of the largest one (r_n <= law_tolerance * max_j r_n,j), r = 0
  /// exactly (open); elsewhere r is made admissible exactly
  /// (admissible_reaction: projected onto its cone). The change is within
  /// the solver's tolerance (docs/contact-law.md, "Reported reactions and
  /// states").
  void settle_reactions(const Eigen::VectorXd& q, Eigen::VectorXd& r, double law_tolerance,
                        double motion_scale) const;

  /// Per-node law quantities for kinematics v and reactions r (as settled by
  /// settle_reactions). The state is read off the reaction: open when r = 0
  /// (r_n <= 0), slip on the cone's surface (f >= -1e-9 |r|; always for a
  /// frictionless law), stick inside. Quantities with a sign by definition
  /// are clamped at 0 against round-off: the dissipation (>= 0 by the
  /// sliding rule; round-off slip of a stick node can make it -0) and the
  /// certificate (>= 0 for an admissible state; a penetration within the
  /// tolerance can make it slightly negative; measure() uses |G_i|).
  [[nodiscard]] std::vector<ContactNodeState> evaluate(const Eigen::VectorXd& v,
                                                       const Eigen::VectorXd& r) const;

  /// The displacement scale of an increment: the largest motion of a node
  /// against its plane if there were no contact forces (from q). It depends
  /// on the load, not on the solution, so it also scales increments where
  /// nothing moves (full stick).
  [[nodiscard]] double motion_scale(const Eigen::VectorXd& q) const;

  /// Scaled certificate and penetration of v, r (see ContactSolveReport).
  void measure(const Eigen::VectorXd& v, const Eigen::VectorXd& r, double motion_scale,
               ContactSolveReport& report) const;

  /// Accepts the increment: u becomes the last converged displacement, the
  /// plane positions w become w_prev.
  void accept(const Eigen::VectorXd& u);

 private:
  std::vector<RigidPlane> planes_;
  std::vector<ContactNode> nodes_;
  std::vector<Eigen::Matrix3d> frames_;
  /// Residual F_i = r_i - proj_K(r_i - rho_i A(v_i)) of every node (SPEC
  /// 3.2), and optionally its derivatives B_i = dF_i/dr_i, C_i = dF_i/dv_i.
  void set_rho(const std::vector<double>& rho_override);
  [[nodiscard]] bool has_non_associated_law() const;
  /// The law of node i in the current solve: its plane's, or a stage's of
  /// solve_by_continuation.
  [[nodiscard]] const FrictionLaw& law_of(int i) const;
  /// The stopping test of both iterations: scaled certificate, penetration
  /// and fixed-point residual F (of v, r) all below the tolerance.
  bool has_converged(const Eigen::VectorXd& v, const Eigen::VectorXd& r, const Eigen::VectorXd& f,
                     double motion_scale, double law_tolerance, ContactSolveReport& report) const;
  void fixed_point_residual(const Eigen::VectorXd& v, const Eigen::VectorXd& r, Eigen::VectorXd& f,
                            std::vector<ContactState>* states, std::vector<Eigen::Matrix3d>* b,
                            std::vector<Eigen::Matrix3d>* c) const;

  Eigen::MatrixXd w_;
  Eigen::MatrixXd s_;  // W^-1: the condensed stiffness of the contact nodes
  std::vector<double> rho_;
  Eigen::VectorXd u_prev_;    // 3m, global components
  Eigen::VectorXd gap_prev_;  // m, gaps at the last converged increment
  // Scratch storage of the Newton step's dense matrix, kept between calls
  // (so solve() must not run concurrently on one object).
  mutable std::vector<double> newton_matrix_;
  // The laws of the current continuation stage (one per plane), or null.
  mutable const std::vector<FrictionLaw>* continuation_laws_ = nullptr;
};

}  // namespace bipo
