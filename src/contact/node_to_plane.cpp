#include "contact/node_to_plane.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "io/errors.hpp"

namespace bipo {

Eigen::Matrix3d RigidPlane::frame() const {
  Eigen::Matrix3d f;
  f.row(0) = normal.transpose();
  f.row(1) = t1.transpose();
  f.row(2) = normal.cross(t1).transpose();
  return f;
}

NodeToPlaneContact::NodeToPlaneContact(std::vector<RigidPlane> planes,
                                       std::vector<ContactNode> nodes)
    : planes_(std::move(planes)), nodes_(std::move(nodes)) {
  const int m = n_nodes();
  frames_.reserve(nodes_.size());
  gap_prev_.resize(m);
  for (int i = 0; i < m; ++i) {
    const RigidPlane& plane = planes_[nodes_[i].plane];
    frames_.push_back(plane.frame());
    gap_prev_(i) = (nodes_[i].position - plane.point - plane.w).dot(plane.normal);
  }
  u_prev_ = Eigen::VectorXd::Zero(3 * m);
  rho_.assign(nodes_.size(), 1.0);
}

void NodeToPlaneContact::set_delassus(Eigen::MatrixXd w, const std::vector<double>& rho_override) {
  w_ = std::move(w);
  for (int i = 0; i < n_nodes(); ++i) {
    const int plane = nodes_[i].plane;
    const double fixed = plane < static_cast<int>(rho_override.size()) ? rho_override[plane] : 0.0;
    rho_[i] = fixed > 0.0 ? fixed
                          : automatic_rho(w_.block<3, 3>(3 * i, 3 * i), planes_[plane].law);
  }
}

void NodeToPlaneContact::set_plane_motion(int plane, const Eigen::Vector3d& w) {
  planes_[plane].w = w;
}

Eigen::VectorXd NodeToPlaneContact::kinematics(const Eigen::VectorXd& u) const {
  Eigen::VectorXd v(3 * n_nodes());
  for (int i = 0; i < n_nodes(); ++i) {
    const RigidPlane& plane = planes_[nodes_[i].plane];
    const Eigen::Vector3d ui = u.segment<3>(3 * i);
    // SPEC 2: g = (X + u - p0 - w).n ; du_t = ((u - u_prev) - (w - w_prev)).(t1, t2)
    v(3 * i) = (nodes_[i].position + ui - plane.point - plane.w).dot(plane.normal);
    const Eigen::Vector3d relative = (ui - u_prev_.segment<3>(3 * i)) - (plane.w - plane.w_prev);
    v.segment<2>(3 * i + 1) = frames_[i].bottomRows<2>() * relative;
  }
  return v;
}

void NodeToPlaneContact::measure(const Eigen::VectorXd& v, const Eigen::VectorXd& r,
                                 ContactSolveReport& report) const {
  // SPEC 3.1: G is an energy; it is scaled by the largest reaction times the
  // largest relative motion of a node against its plane in the increment.
  double max_r = 0.0, max_motion = 0.0, max_g = 0.0, max_penetration = 0.0;
  for (int i = 0; i < n_nodes(); ++i) {
    const Eigen::Vector3d vi = v.segment<3>(3 * i);
    const Eigen::Vector3d ri = r.segment<3>(3 * i);
    const double motion = std::hypot(vi(0) - gap_prev_(i), vi(1), vi(2));
    max_r = std::max(max_r, ri.norm());
    max_motion = std::max(max_motion, motion);
    const double g = law_certificate(ri, vi(0), vi.tail<2>(), planes_[nodes_[i].plane].law);
    max_g = std::max(max_g, std::abs(g));
    max_penetration = std::max(max_penetration, -vi(0));
  }
  const double scale = max_r * max_motion;
  report.scaled_certificate = scale > 0.0 ? max_g / scale : (max_g > 0.0 ? 1.0 : 0.0);
  report.scaled_penetration =
      max_motion > 0.0 ? max_penetration / max_motion : (max_penetration > 0.0 ? 1.0 : 0.0);
}

ContactSolveReport NodeToPlaneContact::solve(const Eigen::VectorXd& q, Eigen::VectorXd& r,
                                             double law_tolerance, int max_sweeps) const {
  // SPEC 3.3: block Gauss-Seidel sweeps on W. Node i sees the others frozen:
  // v_i = q_i + sum_j W_ij r_j = (q_i + sum_{j!=i} W_ij r_j) + W_ii r_i, and
  // its one-node law is solved by the bipotential predictor-corrector.
  const int m = n_nodes();
  ContactSolveReport report;
  Eigen::VectorXd v = q + w_ * r;
  const double local_tolerance = 0.01 * law_tolerance;
  for (int sweep = 1; sweep <= max_sweeps; ++sweep) {
    for (int i = 0; i < m; ++i) {
      const Eigen::Matrix3d w_ii = w_.block<3, 3>(3 * i, 3 * i);
      const Eigen::Vector3d r_i = r.segment<3>(3 * i);
      const Eigen::Vector3d q_i = v.segment<3>(3 * i) - w_ii * r_i;
      const LocalSolution local = solve_node_law(w_ii, q_i, planes_[nodes_[i].plane].law, rho_[i],
                                                 r_i, local_tolerance, 200);
      const Eigen::Vector3d delta = local.r - r_i;
      if (delta.isZero(0.0)) continue;
      v.noalias() += w_.middleCols<3>(3 * i) * delta;
      r.segment<3>(3 * i) = local.r;
    }
    report.sweeps = sweep;
    if (!v.allFinite() || !r.allFinite())
      throw NumericalError("non-finite contact reactions in sweep " + std::to_string(sweep));
    measure(v, r, report);
    if (report.scaled_certificate <= law_tolerance && report.scaled_penetration <= law_tolerance) {
      report.converged = true;
      return report;
    }
  }
  return report;
}

Eigen::VectorXd NodeToPlaneContact::nodal_forces(const Eigen::VectorXd& r) const {
  Eigen::VectorXd forces(3 * n_nodes());
  for (int i = 0; i < n_nodes(); ++i)
    forces.segment<3>(3 * i) = frames_[i].transpose() * r.segment<3>(3 * i);
  return forces;
}

std::vector<ContactNodeState> NodeToPlaneContact::evaluate(const Eigen::VectorXd& v,
                                                           const Eigen::VectorXd& r) const {
  std::vector<ContactNodeState> states(nodes_.size());
  for (int i = 0; i < n_nodes(); ++i) {
    const FrictionLaw& law = planes_[nodes_[i].plane].law;
    ContactNodeState& s = states[i];
    s.r = r.segment<3>(3 * i);
    s.gap = v(3 * i);
    s.slip = v.segment<2>(3 * i + 1);
    s.f = friction_function(s.r, law);
    s.certificate = law_certificate(s.r, s.gap, s.slip, law);
    s.dissipation = frictional_dissipation(s.r, s.slip);
    // The state is read off the reaction: open without force, slip on the
    // cone's surface (within round-off), stick inside.
    const double size = s.r.norm();
    if (s.r(0) <= 0.0 || size == 0.0)
      s.state = ContactState::open;
    else if (law.frictionless() || s.f >= -1e-9 * size)
      s.state = ContactState::slip;
    else
      s.state = ContactState::stick;
  }
  return states;
}

void NodeToPlaneContact::accept(const Eigen::VectorXd& u) {
  const Eigen::VectorXd v = kinematics(u);
  for (int i = 0; i < n_nodes(); ++i) gap_prev_(i) = v(3 * i);
  u_prev_ = u;
  for (auto& plane : planes_) plane.w_prev = plane.w;
}

}  // namespace bipo
