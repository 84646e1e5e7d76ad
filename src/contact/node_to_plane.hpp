// Owns node-to-rigid-surface contact (docs/physics.md section 2, 2.1) for a list of
// contact nodes: each node against its plane or indenter, with its local frame, the kinematics
// (gaps and slips) of nodal displacements, the nodal forces of reactions, the
// condensed operators of the nodes, and the increment's contact problem as a
// value (problem()) for the solvers of contact/solvers.hpp. After a solve it
// settles, evaluates and measures the reactions, and accepts the increment.
//
// It knows nothing of meshes or of how the global system is solved: the
// solver gives it the condensed stiffness S in the nodes' local frames (W =
// S^-1 = E^T K^-1 E, E mapping local reactions to nodal forces) and, per
// increment, the contact nodes' displacements without contact forces.
// Everything per node is in the local frame (n, t1, t2).
#pragma once

#include <Eigen/Core>
#include <memory>
#include <vector>

#include "contact/condensed_problem.hpp"
#include "contact/law/law.hpp"
#include "contact/rigid_plane.hpp"

namespace bipo {

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
  double certificate = 0.0;  ///< G_i (physics.md 3.1)
  double dissipation = 0.0;  ///< D_i = -r_t . du_t
};

class NodeToPlaneContact {
 public:
  NodeToPlaneContact(std::vector<RigidPlane> planes, std::vector<ContactNode> nodes);

  [[nodiscard]] int n_nodes() const { return static_cast<int>(nodes_.size()); }
  [[nodiscard]] const std::vector<RigidPlane>& planes() const { return planes_; }
  [[nodiscard]] const std::vector<ContactNode>& nodes() const { return nodes_; }
  /// Local frame of node i (rows n, t1, t2; see rigid_plane.hpp).
  [[nodiscard]] const Eigen::Matrix3d& frame(int i) const { return frames_[i]; }
  /// Where node i meets its surface (physics.md 2.1).
  [[nodiscard]] const SurfacePoint& surface_point(int i) const { return surface_[i]; }
  /// The law of node i: its plane's.
  [[nodiscard]] const FrictionLaw& law(int i) const { return laws_[i]; }

  /// Sets the condensed stiffness S = W^-1 of the contact nodes (3m x 3m,
  /// local frames), as a direct solver's factorization provides it, derives
  /// the Delassus operator W, and sets the per-node rho: automatic from the
  /// node's diagonal block of W (law/one_node.hpp) unless a plane gives a
  /// fixed value (`rho_override`, one per plane, <= 0 = auto).
  void set_condensed_stiffness(Eigen::MatrixXd s, const std::vector<double>& rho_override);
  /// Sets operators already computed: another contact module's (the same
  /// nodes and frames), or a sparse operator that the solver layer built;
  /// and sets the per-node rho as above (from the operator's diagonal
  /// blocks, estimated for a sparse operator).
  void set_condensed_operators(std::shared_ptr<const DelassusOperator> operators,
                               const std::vector<double>& rho_override);
  [[nodiscard]] const std::shared_ptr<const DelassusOperator>& condensed_operators() const {
    return operators_;
  }
  /// W r.
  [[nodiscard]] Eigen::VectorXd delassus_times(const Eigen::VectorXd& r) const;
  [[nodiscard]] double rho(int i) const { return rho_[i]; }

  /// Sets the gap offset of every node (m values, [length]): the depth h_i
  /// worn off the body at node i, which adds to its gap (g_i + h_i, the
  /// surface receded along n_i; contact/wear.hpp). The operators do not
  /// depend on it; the last converged gaps shift with it.
  void set_gap_offset(const Eigen::VectorXd& offset);
  [[nodiscard]] const Eigen::VectorXd& gap_offset() const { return gap_offset_; }
  /// Gives every node of `plane` the law `law` from the next problem() on
  /// (a friction program, docs/case-file.md `contact`), with what derives
  /// from it: their automatic rho (law/one_node.hpp). Nothing if the law is
  /// the plane's already.
  void set_law(int plane, const FrictionLaw& law);

  /// Moves the planes for the increment being solved.
  void set_plane_motion(int plane, const Eigen::Vector3d& w);

  /// Local kinematics (g, du_t1, du_t2) of every node for the given nodal
  /// displacements (3m, global components) at the end of the increment,
  /// against the last converged ones (physics.md 2).
  [[nodiscard]] Eigen::VectorXd kinematics(const Eigen::VectorXd& u) const;

  /// The increment's contact problem for the free motion q (kinematics() of
  /// the displacements without contact forces): the shared operators, q, the
  /// nodes' laws and rho, and motion_scale(q). Solve it with solve_contact
  /// (contact/solvers.hpp).
  [[nodiscard]] CondensedContactProblem problem(const Eigen::VectorXd& q) const;

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
  /// `motion`, if given, is v = q + W r for the r given (its gaps are then
  /// read there, not from a product with W).
  void settle_reactions(const Eigen::VectorXd& q, Eigen::VectorXd& r, double law_tolerance,
                        double motion_scale, const Eigen::VectorXd* motion = nullptr) const;

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
  void set_rho(const std::vector<double>& rho_override);

  std::vector<RigidPlane> planes_;
  std::vector<ContactNode> nodes_;
  std::vector<Eigen::Matrix3d> frames_;
  std::vector<SurfacePoint> surface_;  // per node: where it meets its surface (physics.md 2.1)
  std::vector<FrictionLaw> laws_;      // per node: its plane's
  std::shared_ptr<const DelassusOperator> operators_;
  std::vector<double> rho_;
  std::vector<double> rho_override_;  // per plane, <= 0 = automatic (set_rho)
  Eigen::VectorXd u_prev_;            // 3m, global components
  Eigen::VectorXd gap_prev_;          // m, gaps at the last converged increment
  Eigen::VectorXd gap_offset_;        // m, worn depth added to the gaps
};

}  // namespace bipo
