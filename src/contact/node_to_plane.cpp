// Node-to-rigid-surface contact (docs/physics.md section 2, 2.1): frames, kinematics, nodal
// forces, the condensed operators and the increment's problem, and what is
// done with a solution. See node_to_plane.hpp.
#include "contact/node_to_plane.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace bipo {

NodeToPlaneContact::NodeToPlaneContact(std::vector<RigidPlane> planes,
                                       std::vector<ContactNode> nodes)
    : planes_(std::move(planes)), nodes_(std::move(nodes)) {
  const int m = n_nodes();
  frames_.reserve(nodes_.size());
  laws_.reserve(nodes_.size());
  gap_prev_.resize(m);
  surface_.reserve(nodes_.size());
  for (int i = 0; i < m; ++i) {
    const RigidPlane& plane = planes_[nodes_[i].plane];
    // physics.md 2.1: frames fixed at the reference configuration (small
    // sliding); one frame for all the nodes of a plane.
    const std::optional<SurfacePoint> at = plane.surface_point(nodes_[i].position);
    const std::optional<Eigen::Matrix3d> frame = plane.node_frame(nodes_[i].position);
    if (!at || !frame)
      throw std::invalid_argument("NodeToPlaneContact: contact node " + std::to_string(i) +
                                  " has no normal or friction direction on its surface");
    surface_.push_back(*at);
    frames_.push_back(*frame);
    laws_.push_back(plane.law);
    gap_prev_(i) = (nodes_[i].position - at->anchor - plane.w).dot(at->normal) - at->offset;
  }
  u_prev_ = Eigen::VectorXd::Zero(3 * m);
  gap_offset_ = Eigen::VectorXd::Zero(m);
  rho_.assign(nodes_.size(), 1.0);
}

void NodeToPlaneContact::set_condensed_stiffness(Eigen::MatrixXd s,
                                                 const std::vector<double>& rho_override) {
  operators_ = CondensedOperators::from_stiffness(std::move(s));
  set_rho(rho_override);
}

void NodeToPlaneContact::set_condensed_operators(std::shared_ptr<const DelassusOperator> operators,
                                                 const std::vector<double>& rho_override) {
  if (!operators || operators->size() != 3 * n_nodes())
    throw std::invalid_argument("set_condensed_operators: operators of the wrong size");
  operators_ = std::move(operators);
  set_rho(rho_override);
}

void NodeToPlaneContact::set_rho(const std::vector<double>& rho_override) {
  rho_override_ = rho_override;
  for (int i = 0; i < n_nodes(); ++i) {
    const int plane = nodes_[i].plane;
    const double fixed = plane < static_cast<int>(rho_override.size()) ? rho_override[plane] : 0.0;
    rho_[i] = fixed > 0.0 ? fixed : automatic_rho(operators_->diagonal_block(i), laws_[i]);
  }
}

void NodeToPlaneContact::set_law(int plane, const FrictionLaw& law) {
  const FrictionLaw& now = planes_[plane].law;
  if (now.mu1() == law.mu1() && now.mu2() == law.mu2() && now.p1() == law.p1() &&
      now.p2() == law.p2())
    return;
  planes_[plane].law = law;
  const double fixed = plane < static_cast<int>(rho_override_.size()) ? rho_override_[plane] : 0.0;
  for (int i = 0; i < n_nodes(); ++i) {
    if (nodes_[i].plane != plane) continue;
    laws_[i] = law;
    // The automatic rho weighs the tangential compliance by omega^2 (zero
    // for a frictionless law): a new law needs its own.
    if (operators_ && !(fixed > 0.0)) rho_[i] = automatic_rho(operators_->diagonal_block(i), law);
  }
}

Eigen::VectorXd NodeToPlaneContact::delassus_times(const Eigen::VectorXd& r) const {
  Eigen::VectorXd v = Eigen::VectorXd::Zero(r.size());
  operators_->add_product(r, v);
  return v;
}

CondensedContactProblem NodeToPlaneContact::problem(const Eigen::VectorXd& q) const {
  return {operators_, q, laws_, rho_, motion_scale(q)};
}

void NodeToPlaneContact::set_gap_offset(const Eigen::VectorXd& offset) {
  if (offset.size() != n_nodes())
    throw std::invalid_argument("set_gap_offset: one offset per contact node expected");
  gap_prev_ += offset - gap_offset_;
  gap_offset_ = offset;
}

void NodeToPlaneContact::set_plane_motion(int plane, const Eigen::Vector3d& w) {
  planes_[plane].w = w;
}

Eigen::VectorXd NodeToPlaneContact::kinematics(const Eigen::VectorXd& u) const {
  Eigen::VectorXd v(3 * n_nodes());
  for (int i = 0; i < n_nodes(); ++i) {
    const RigidPlane& plane = planes_[nodes_[i].plane];
    const SurfacePoint& at = surface_[i];
    const Eigen::Vector3d ui = u.segment<3>(3 * i);
    // physics.md 2, 2.1: g = (X + u - p0 - w).n - R (R = 0 for a plane);
    // du_t = ((u - u_prev) - (w - w_prev)).(t1, t2)
    v(3 * i) =
        (nodes_[i].position + ui - at.anchor - plane.w).dot(at.normal) - at.offset + gap_offset_(i);
    const Eigen::Vector3d relative = (ui - u_prev_.segment<3>(3 * i)) - (plane.w - plane.w_prev);
    v.segment<2>(3 * i + 1) = tangential_components(frames_[i], relative);
  }
  return v;
}

double NodeToPlaneContact::motion_scale(const Eigen::VectorXd& q) const {
  double scale = 0.0;
  for (int i = 0; i < n_nodes(); ++i)
    scale = std::max(scale, std::hypot(q(3 * i) - gap_prev_(i), q(3 * i + 1), q(3 * i + 2)));
  return scale;
}

void NodeToPlaneContact::measure(const Eigen::VectorXd& v, const Eigen::VectorXd& r,
                                 double motion_scale, ContactSolveReport& report) const {
  measure_law(laws_, v, r, motion_scale, report);
}

Eigen::VectorXd NodeToPlaneContact::nodal_forces(const Eigen::VectorXd& r) const {
  Eigen::VectorXd forces(3 * n_nodes());
  for (int i = 0; i < n_nodes(); ++i)
    forces.segment<3>(3 * i) = to_global(frames_[i], r.segment<3>(3 * i));
  return forces;
}

void NodeToPlaneContact::settle_reactions(const Eigen::VectorXd& q, Eigen::VectorXd& r,
                                          double law_tolerance, double motion_scale,
                                          const Eigen::VectorXd* motion) const {
  double max_rn = 0.0;
  for (int i = 0; i < n_nodes(); ++i) max_rn = std::max(max_rn, r(3 * i));
  // The solver's own scales: it accepts a penetration up to law_tolerance x
  // motion_scale, and reactions to law_tolerance of the largest one. A gap
  // beyond the first with a force below the second is a node clear of the
  // plane whose force is the iteration's round-off (seen: r_n = 1e-24 at a
  // gap of 0.96 mm); the law (g > 0 -> r = 0) says it is exactly 0.
  const double gap_tolerance = law_tolerance * motion_scale;
  const double force_tolerance = law_tolerance * max_rn;
  // The decisions use the reactions the solver returned, not those already
  // settled; only nodes with a small force need their gap (one row of W
  // each, instead of the dense product W r for all nodes: 0.24 ms a step on
  // the seed punch, 1.5 % of its run time).
  // Without a dense W the gaps come from one product W r, or from the
  // motion the caller knows.
  const Eigen::VectorXd solved = r;
  const CondensedOperators* dense = operators_->dense();
  Eigen::VectorXd w_r;
  if (!dense && !motion) w_r = delassus_times(solved);
  const auto gap = [&](int i) {
    if (motion) return (*motion)(3 * i);
    return q(3 * i) + (dense ? dense->matrices().delassus_row_dot(3 * i, solved) : w_r(3 * i));
  };
  for (int i = 0; i < n_nodes(); ++i) {
    const double rn = solved(3 * i);
    if (rn <= 0.0 || (rn <= force_tolerance && gap(i) > gap_tolerance))
      r.segment<3>(3 * i).setZero();
    else
      r.segment<3>(3 * i) = admissible_reaction(r.segment<3>(3 * i), laws_[i]);
  }
}

std::vector<ContactNodeState> NodeToPlaneContact::evaluate(const Eigen::VectorXd& v,
                                                           const Eigen::VectorXd& r) const {
  std::vector<ContactNodeState> states(nodes_.size());
  for (int i = 0; i < n_nodes(); ++i) {
    const FrictionLaw& law = laws_[i];
    ContactNodeState& s = states[i];
    s.r = r.segment<3>(3 * i);
    s.gap = v(3 * i);
    s.slip = v.segment<2>(3 * i + 1);
    s.f = friction_function(s.r, law);
    s.certificate = std::max(0.0, law_certificate(s.r, s.gap, s.slip, law));
    s.dissipation = std::max(0.0, frictional_dissipation(s.r, s.slip));
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
