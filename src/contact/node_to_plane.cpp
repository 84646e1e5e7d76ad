#include "contact/node_to_plane.hpp"

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>

#include "io/errors.hpp"

// LAPACK (Fortran ABI; OpenBLAS on Debian when libopenblas is installed):
// the dense LU of the Newton system is the contact solver's hot spot.
extern "C" {
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda,
             const int* ipiv, double* b, const int* ldb, int* info, std::size_t trans_len);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info,
             std::size_t uplo_len);
void dpotri_(const char* uplo, const int* n, double* a, const int* lda, int* info,
             std::size_t uplo_len);
}

namespace bipo {

namespace {

/// The inverse of an SPD matrix by LAPACK's Cholesky; false if not SPD.
bool invert_spd(const Eigen::MatrixXd& a, Eigen::MatrixXd& inverse) {
  const int n = static_cast<int>(a.rows());
  const char lower = 'L';
  int info = 0;
  inverse = a;
  if (n == 0) return true;
  dpotrf_(&lower, &n, inverse.data(), &n, &info, 1);
  if (info != 0) return false;
  dpotri_(&lower, &n, inverse.data(), &n, &info, 1);
  if (info != 0) return false;
  inverse.triangularView<Eigen::StrictlyUpper>() = inverse.transpose();
  return true;
}

/// Solves a x = b in place (b becomes x) by LAPACK's LU; false if singular.
bool solve_dense_lu(Eigen::MatrixXd& a, Eigen::VectorXd& b, std::vector<int>& pivots) {
  const int n = static_cast<int>(a.rows());
  const int one = 1;
  int info = 0;
  pivots.resize(static_cast<std::size_t>(n));
  dgetrf_(&n, &n, a.data(), &n, pivots.data(), &info);
  if (info != 0) return false;
  const char trans = 'N';
  dgetrs_(&trans, &n, &one, a.data(), &n, pivots.data(), b.data(), &n, &info, 1);
  return info == 0;
}

/// A(v) = (g + |omega^2 du_t|_mu*, omega^2 du_t), the kinematic part of the
/// predictor of SPEC 3.2: tau = r - rho A(v) for v = (g, du_t).
Eigen::Vector3d augmented_kinematics(const Eigen::Vector3d& v, const FrictionLaw& law) {
  const Eigen::Vector2d x = law.omega_squared().cwiseProduct(v.tail<2>());
  return {v(0) + law.dual_norm_mu(x), x(0), x(1)};
}

/// dA/dv. At du_t = 0 the dual norm is not differentiable; its zero
/// subgradient is used (the Newton step of a stick node then aims at v = 0).
Eigen::Matrix3d augmented_kinematics_derivative(const Eigen::Vector3d& v, const FrictionLaw& law) {
  const Eigen::Vector2d w2 = law.omega_squared();
  const Eigen::Vector2d x = w2.cwiseProduct(v.tail<2>());
  Eigen::Matrix3d a = Eigen::Matrix3d::Zero();
  a(0, 0) = 1.0;
  a(1, 1) = w2(0);
  a(2, 2) = w2(1);
  const double norm = law.dual_norm_mu(x);
  if (norm > 0.0) {
    a(0, 1) = w2(0) * law.mu1() * law.mu1() * x(0) / norm;
    a(0, 2) = w2(1) * law.mu2() * law.mu2() * x(1) / norm;
  }
  return a;
}

/// Derivative of proj_K at tau: the identity inside (stick), zero in the polar
/// cone (open), and on the surface branch (slip), where the projection is
/// smooth, central differences with a relative step of 1e-6 (truncation and
/// round-off errors both near 1e-11 of |tau|: ample for a Newton step).
Eigen::Matrix3d projection_derivative(const Eigen::Vector3d& tau, ContactState state,
                                      const FrictionLaw& law) {
  if (state == ContactState::stick) return Eigen::Matrix3d::Identity();
  if (state == ContactState::open) return Eigen::Matrix3d::Zero();
  const double h = 1e-6 * tau.norm();
  if (!(h > 0.0)) return Eigen::Matrix3d::Zero();
  Eigen::Matrix3d d;
  for (int k = 0; k < 3; ++k) {
    Eigen::Vector3d step = Eigen::Vector3d::Zero();
    step(k) = h;
    d.col(k) = (project_onto_friction_cone(tau + step, law).r -
                project_onto_friction_cone(tau - step, law).r) /
               (2.0 * h);
  }
  return d;
}

}  // namespace

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

void NodeToPlaneContact::set_condensed_stiffness(Eigen::MatrixXd s,
                                                 const std::vector<double>& rho_override) {
  s_ = std::move(s);
  if (!invert_spd(s_, w_))
    throw NumericalError("the condensed stiffness of the contact nodes is not positive definite");
  set_rho(rho_override);
}

void NodeToPlaneContact::set_rho(const std::vector<double>& rho_override) {
  for (int i = 0; i < n_nodes(); ++i) {
    const int plane = nodes_[i].plane;
    const double fixed = plane < static_cast<int>(rho_override.size()) ? rho_override[plane] : 0.0;
    rho_[i] = fixed > 0.0 ? fixed : automatic_rho(w_.block<3, 3>(3 * i, 3 * i), planes_[plane].law);
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

double NodeToPlaneContact::motion_scale(const Eigen::VectorXd& q) const {
  double scale = 0.0;
  for (int i = 0; i < n_nodes(); ++i)
    scale = std::max(scale, std::hypot(q(3 * i) - gap_prev_(i), q(3 * i + 1), q(3 * i + 2)));
  return scale;
}

void NodeToPlaneContact::measure(const Eigen::VectorXd& v, const Eigen::VectorXd& r,
                                 double motion_scale, ContactSolveReport& report) const {
  // SPEC 3.1: G is an energy; it is scaled by the largest reaction times the
  // increment's motion scale. G vanishes quadratically in a misaligned slip
  // direction, so the solver also checks the fixed-point residual, which is
  // linear in the error.
  double max_r = 0.0, max_g = 0.0, max_penetration = 0.0;
  for (int i = 0; i < n_nodes(); ++i) {
    const Eigen::Vector3d vi = v.segment<3>(3 * i);
    const Eigen::Vector3d ri = r.segment<3>(3 * i);
    max_r = std::max(max_r, ri.norm());
    const double g = law_certificate(ri, vi(0), vi.tail<2>(), planes_[nodes_[i].plane].law);
    max_g = std::max(max_g, std::abs(g));
    max_penetration = std::max(max_penetration, -vi(0));
  }
  const double scale = max_r * motion_scale;
  report.scaled_certificate = scale > 0.0 ? max_g / scale : (max_g > 0.0 ? 1.0 : 0.0);
  report.scaled_penetration =
      motion_scale > 0.0 ? max_penetration / motion_scale : (max_penetration > 0.0 ? 1.0 : 0.0);
}

ContactSolveReport NodeToPlaneContact::solve(const Eigen::VectorXd& q, Eigen::VectorXd& r,
                                             double law_tolerance, int max_iterations) const {
  // SPEC 3.3: semi-smooth Newton on the fixed-point equations first (fast
  // and exact to round-off once the states settle); Gauss-Seidel sweeps from
  // where it stopped if it stalls (slow but robust).
  const int newton_limit = std::min(max_iterations, 60);
  const Eigen::VectorXd r_start = r;
  ContactSolveReport report = solve_semismooth_newton(q, r, law_tolerance, newton_limit);
  if (report.converged) return report;
  if (!r.allFinite()) r = r_start;
  const ContactSolveReport sweeps =
      solve_gauss_seidel(q, r, law_tolerance, max_iterations - report.newton_iterations);
  ContactSolveReport combined = sweeps;
  combined.newton_iterations = report.newton_iterations;
  return combined;
}

bool NodeToPlaneContact::has_converged(const Eigen::VectorXd& v, const Eigen::VectorXd& r,
                                       const Eigen::VectorXd& f, double motion_scale,
                                       double law_tolerance, ContactSolveReport& report) const {
  measure(v, r, motion_scale, report);
  const double max_r = r.lpNorm<Eigen::Infinity>();
  const double max_f = f.lpNorm<Eigen::Infinity>();
  report.scaled_residual = max_r > 0.0 ? max_f / max_r : (max_f > 0.0 ? 1.0 : 0.0);
  report.converged = report.scaled_certificate <= law_tolerance &&
                     report.scaled_penetration <= law_tolerance &&
                     report.scaled_residual <= law_tolerance;
  return report.converged;
}

void NodeToPlaneContact::fixed_point_residual(const Eigen::VectorXd& v, const Eigen::VectorXd& r,
                                              Eigen::VectorXd& f, std::vector<ContactState>* states,
                                              std::vector<Eigen::Matrix3d>* b,
                                              std::vector<Eigen::Matrix3d>* c) const {
  for (int i = 0; i < n_nodes(); ++i) {
    const FrictionLaw& law = planes_[nodes_[i].plane].law;
    const Eigen::Vector3d vi = v.segment<3>(3 * i);
    const Eigen::Vector3d ri = r.segment<3>(3 * i);
    const Eigen::Vector3d tau = ri - rho_[i] * augmented_kinematics(vi, law);
    const ConeProjection projection = project_onto_friction_cone(tau, law);
    f.segment<3>(3 * i) = ri - projection.r;
    if (states) (*states)[i] = projection.state;
    if (b && c) {
      const Eigen::Matrix3d p = projection_derivative(tau, projection.state, law);
      (*b)[i] = Eigen::Matrix3d::Identity() - p;
      (*c)[i] = rho_[i] * p * augmented_kinematics_derivative(vi, law);
    }
  }
}

ContactSolveReport NodeToPlaneContact::solve_semismooth_newton(const Eigen::VectorXd& q,
                                                               Eigen::VectorXd& r,
                                                               double law_tolerance,
                                                               int max_iterations) const {
  // Newton on F(r) = 0, F_i = r_i - proj_K(r_i - rho_i A(v_i)), v = q + W r.
  // The step solves B_i dr_i + C_i dv_i = -F_i with dv = W dr, i.e. dr = S dv.
  // Stick nodes (B_i = 0) give dv_i = -C_i^-1 F_i and open nodes (C_i = 0)
  // give dr_i = -F_i: only the slip and open nodes' dv remain unknown, in a
  // dense system of their size (small when most nodes stick).
  const int m = n_nodes();
  ContactSolveReport report;
  std::vector<ContactState> states(m);
  std::vector<Eigen::Matrix3d> b(m), c(m);
  Eigen::VectorXd v = q + w_ * r, f(3 * m), dv(3 * m), dr(3 * m), trial_r, trial_v, trial_f(3 * m);
  std::vector<int> unknown, pivots;
  unknown.reserve(m);
  const double scale = motion_scale(q);
  for (int iteration = 0;; ++iteration) {
    fixed_point_residual(v, r, f, &states, &b, &c);
    if (has_converged(v, r, f, scale, law_tolerance, report)) return report;
    if (iteration == max_iterations) return report;
    report.newton_iterations = iteration + 1;

    dv.setZero();
    unknown.clear();
    for (int i = 0; i < m; ++i) {
      if (states[i] == ContactState::stick)
        dv.segment<3>(3 * i) = -c[i].partialPivLu().solve(f.segment<3>(3 * i));
      else
        unknown.push_back(i);
    }
    const Eigen::VectorXd z = s_ * dv;  // forces of the stick nodes' known motion
    const int n_unknown = static_cast<int>(unknown.size());
    if (n_unknown > 0) {
      Eigen::MatrixXd system(3 * n_unknown, 3 * n_unknown);
      Eigen::VectorXd rhs(3 * n_unknown);
      for (int a = 0; a < n_unknown; ++a) {
        const int i = unknown[a];
        const bool open = states[i] == ContactState::open;
        for (int e = 0; e < n_unknown; ++e) {
          const int j = unknown[e];
          const Eigen::Matrix3d s_ij = s_.block<3, 3>(3 * i, 3 * j);
          system.block<3, 3>(3 * a, 3 * e) = open ? s_ij : Eigen::Matrix3d(b[i] * s_ij);
        }
        if (open) {
          rhs.segment<3>(3 * a) = -f.segment<3>(3 * i) - z.segment<3>(3 * i);
        } else {
          system.block<3, 3>(3 * a, 3 * a) += c[i];
          rhs.segment<3>(3 * a) = -f.segment<3>(3 * i) - b[i] * z.segment<3>(3 * i);
        }
      }
      if (!solve_dense_lu(system, rhs, pivots)) return report;
      for (int a = 0; a < n_unknown; ++a) dv.segment<3>(3 * unknown[a]) = rhs.segment<3>(3 * a);
    }
    dr.noalias() = s_ * dv;
    if (!dr.allFinite()) return report;

    // Backtracking on |F|: semi-smooth Newton is only locally convergent.
    const double norm_f = f.norm();
    double step = 1.0;
    bool accepted = false;
    for (int halving = 0; halving < 12 && !accepted; ++halving, step *= 0.5) {
      trial_r = r + step * dr;
      trial_v = q + w_ * trial_r;
      fixed_point_residual(trial_v, trial_r, trial_f, nullptr, nullptr, nullptr);
      accepted = trial_f.norm() < (1.0 - 1e-4 * step) * norm_f;
    }
    if (!accepted) return report;
    r.swap(trial_r);
    v.swap(trial_v);
  }
}

ContactSolveReport NodeToPlaneContact::solve_gauss_seidel(const Eigen::VectorXd& q,
                                                          Eigen::VectorXd& r, double law_tolerance,
                                                          int max_sweeps) const {
  // SPEC 3.3: block Gauss-Seidel sweeps on W. Node i sees the others frozen:
  // v_i = q_i + sum_j W_ij r_j = (q_i + sum_{j!=i} W_ij r_j) + W_ii r_i, and
  // its one-node law is solved by the bipotential predictor-corrector.
  const int m = n_nodes();
  ContactSolveReport report;
  Eigen::VectorXd v = q + w_ * r, f(3 * m);
  const double scale = motion_scale(q);
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
    fixed_point_residual(v, r, f, nullptr, nullptr, nullptr);
    if (has_converged(v, r, f, scale, law_tolerance, report)) return report;
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
