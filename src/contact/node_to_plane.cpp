#include "contact/node_to_plane.hpp"

#include <Eigen/LU>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/errors.hpp"

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

/// Solves a x = b in place (b becomes x, a its LU) by LAPACK; false if
/// singular. `a` is n x n, column-major with leading dimension n.
bool solve_dense_lu(double* a, int n, double* b, std::vector<int>& pivots) {
  const int one = 1;
  int info = 0;
  pivots.resize(static_cast<std::size_t>(n));
  dgetrf_(&n, &n, a, &n, pivots.data(), &info);
  if (info != 0) return false;
  const char trans = 'N';
  dgetrs_(&trans, &n, &one, a, &n, pivots.data(), b, &n, &info, 1);
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

/// The unknowns of one node that does not stick in the Newton step of
/// NodeToPlaneContact::solve_semismooth_newton: its motion increment is
/// dv_i = dv0_i + N theta_i with theta of size 2 or 3, and its rows of the
/// step's equations are E (B_i dr_i + C_i dv_i) = -E F_i with G = E B_i,
/// H = E C_i.
struct NewtonNodeUnknowns {
  int node = 0;
  int offset = 0;  // first row and column of theta in the dense system
  int size = 3;
  Eigen::Matrix<double, Eigen::Dynamic, 3, 0, 3, 3> g, h;
  Eigen::Matrix<double, 3, Eigen::Dynamic, 0, 3, 3> basis;  // N
  Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 3, 1> rhs;    // -E F_i
};

/// For a slip node the projection derivative P fixes the generator of the
/// cone through proj_K(tau) (the cone is homogeneous), so B = I - P is
/// singular: along its left null vector u the step's equation reads
/// u^T C dv_i = -u^T F_i, which involves the node's own motion only. That
/// equation is solved locally (dv0 on the line of C^T u, theta in the plane
/// orthogonal to it), and the node keeps 2 unknowns instead of 3; the dense
/// system of a slip-dominated increment shrinks by a third and its LU by
/// 70 %. Returns false (keep 3 unknowns) when B is not numerically singular.
bool reduce_slip_node(const Eigen::Matrix3d& b, const Eigen::Matrix3d& c, const Eigen::Vector3d& f,
                      NewtonNodeUnknowns& unknowns, Eigen::Vector3d& dv0) {
  const Eigen::JacobiSVD<Eigen::Matrix3d> svd(b, Eigen::ComputeFullU);
  const Eigen::Vector3d sigma = svd.singularValues();
  // The finite-difference P is exact to about 1e-10; dropping u^T B dr_i
  // below 1e-8 |B| changes the Newton step by as little.
  if (!(sigma(2) <= 1e-8 * sigma(0))) return false;
  const Eigen::Vector3d u = svd.matrixU().col(2);
  const Eigen::Vector3d line = c.transpose() * u;
  const double length = line.norm();
  if (!(length > 1e-12 * c.norm())) return false;
  const Eigen::Vector3d axis = line / length;
  dv0 = axis * (-u.dot(f) / length);
  // An orthonormal basis of the plane orthogonal to the axis.
  Eigen::Vector3d t = std::abs(axis(0)) < 0.9 ? Eigen::Vector3d::UnitX() : Eigen::Vector3d::UnitY();
  t = (t - t.dot(axis) * axis).normalized();
  unknowns.size = 2;
  unknowns.basis.resize(3, 2);
  unknowns.basis.col(0) = t;
  unknowns.basis.col(1) = axis.cross(t);
  const Eigen::Matrix<double, 2, 3> e = svd.matrixU().leftCols<2>().transpose();
  unknowns.g = e * b;
  unknowns.h = e * c;
  unknowns.rhs = -(e * f);
  return true;
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

void NodeToPlaneContact::set_condensed_operators(const Eigen::MatrixXd& s, const Eigen::MatrixXd& w,
                                                 const std::vector<double>& rho_override) {
  if (s.rows() != 3 * n_nodes() || w.rows() != 3 * n_nodes())
    throw std::invalid_argument("set_condensed_operators: operators of the wrong size");
  s_ = s;
  w_ = w;
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
    const double g = law_certificate(ri, vi(0), vi.tail<2>(), law_of(i));
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
  // SPEC 3.3, in order of cost:
  // 1. Semi-smooth Newton on the fixed-point equations (fast and exact to
  //    round-off once the states settle). When its line search stalls, a
  //    short batch of Gauss-Seidel sweeps moves the iterate and Newton starts
  //    again from there (on case C of the punch this needs a tenth of the
  //    sweeps of running them to convergence); at most a few rounds.
  // 2. For a non-associated law, continuation from the associated law
  //    (solve_by_continuation), from the starting point.
  // 3. Gauss-Seidel sweeps to the end of the budget (slow but robust).
  constexpr int newton_limit = 60;
  constexpr int sweeps_per_round = 20;
  constexpr int max_rounds = 5;
  ContactSolveReport total;
  const auto spent = [&] { return total.newton_iterations + total.sweeps; };
  const auto take = [&](const ContactSolveReport& part) {
    total.newton_iterations += part.newton_iterations;
    total.sweeps += part.sweeps;
    total.converged = part.converged;
    total.scaled_certificate = part.scaled_certificate;
    total.scaled_penetration = part.scaled_penetration;
    total.scaled_residual = part.scaled_residual;
  };
  const Eigen::VectorXd r_start = r;
  for (int round = 1; round <= max_rounds && spent() < max_iterations; ++round) {
    const ContactSolveReport newton = solve_semismooth_newton(
        q, r, law_tolerance, std::min(max_iterations - spent(), newton_limit));
    take(newton);
    if (newton.converged) return total;
    if (!r.allFinite()) r = r_start;
    if (newton.newton_iterations == 0 || round == max_rounds) break;  // no help from more rounds
    take(solve_gauss_seidel(q, r, law_tolerance,
                            std::min(max_iterations - spent(), sweeps_per_round)));
    if (total.converged) return total;
  }
  if (has_non_associated_law() && spent() < max_iterations) {
    Eigen::VectorXd r_path = r_start;
    const ContactSolveReport path =
        solve_by_continuation(q, r_path, law_tolerance, max_iterations - spent());
    take(path);
    if (path.converged) {
      r = r_path;
      return total;
    }
  }
  if (spent() < max_iterations)
    take(solve_gauss_seidel(q, r, law_tolerance, max_iterations - spent()));
  return total;
}

bool NodeToPlaneContact::has_non_associated_law() const {
  for (const auto& plane : planes_)
    if (plane.law.p1() != plane.law.mu1() || plane.law.p2() != plane.law.mu2()) return true;
  return false;
}

ContactSolveReport NodeToPlaneContact::solve_by_continuation(const Eigen::VectorXd& q,
                                                             Eigen::VectorXd& r,
                                                             double law_tolerance,
                                                             int max_iterations) const {
  // The sliding coefficients go from the friction coefficients (t = 0, the
  // associated law) to their values (t = 1): p_k(t) = mu_k + t (p_k - mu_k),
  // the cone itself unchanged. Each stage starts Newton from the previous
  // stage's solution; a stage that fails is retried with half the step in t,
  // a stage that succeeds doubles it (at most 1/4). On the refined punch of
  // case C (1313 contact nodes), whose first unloading increment neither
  // Newton nor Gauss-Seidel solved, a first trial with fixed steps of 0.1
  // solved every stage in 2-8 Newton steps.
  constexpr double min_step = 1.0 / 1024.0;
  ContactSolveReport report;
  std::vector<FrictionLaw> laws;
  const auto laws_at = [&](double t) {
    laws.clear();
    for (const auto& plane : planes_) {
      const FrictionLaw& law = plane.law;
      laws.push_back(FrictionLaw::orthotropic(law.mu1(), law.mu2(),
                                              law.mu1() + t * (law.p1() - law.mu1()),
                                              law.mu2() + t * (law.p2() - law.mu2())));
    }
    continuation_laws_ = &laws;
  };
  Eigen::VectorXd r_stage = r;
  double t = 0.0, step = 0.25;
  bool first = true;
  while (report.newton_iterations < max_iterations) {
    const double t_next = first ? 0.0 : std::min(1.0, t + step);
    laws_at(t_next);
    Eigen::VectorXd r_try = r_stage;
    const ContactSolveReport stage = solve_semismooth_newton(
        q, r_try, law_tolerance, std::min(60, max_iterations - report.newton_iterations));
    continuation_laws_ = nullptr;
    report.newton_iterations += stage.newton_iterations;
    if (stage.converged) {
      r_stage = r_try;
      if (t_next == 1.0) {
        const int steps = report.newton_iterations;
        report = stage;
        report.newton_iterations = steps;
        r = r_stage;
        return report;
      }
      if (!first) step = std::min(2.0 * step, 0.25);
      t = t_next;
      first = false;
    } else {
      if (first || step <= min_step) break;  // the associated problem or a tiny step failed
      step *= 0.5;
    }
  }
  continuation_laws_ = nullptr;
  report.converged = false;
  return report;
}

const FrictionLaw& NodeToPlaneContact::law_of(int i) const {
  const int plane = nodes_[i].plane;
  return continuation_laws_ != nullptr ? (*continuation_laws_)[plane] : planes_[plane].law;
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
    const FrictionLaw& law = law_of(i);
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
  //
  // The dense products with S and W are the costly part besides the LU, so a
  // step multiplies by each column of S once (the stick columns before the
  // solve, the unknown ones after it), and trial points move v along dv
  // instead of recomputing q + W r. Before convergence is declared, v is
  // recomputed as q + W r, so the test is always on consistent (v, r).
  const int m = n_nodes();
  ContactSolveReport report;
  std::vector<ContactState> states(m);
  std::vector<Eigen::Matrix3d> b(m), c(m);
  Eigen::VectorXd v = q + w_ * r, f(3 * m), dv(3 * m), dr(3 * m), trial_r, trial_v, trial_f(3 * m);
  std::vector<NewtonNodeUnknowns> unknowns;
  std::vector<int> pivots;
  Eigen::VectorXd rhs;
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic> s_times_basis(3 * m, 3);
  unknowns.reserve(static_cast<std::size_t>(m));
  const double scale = motion_scale(q);
  bool v_is_exact = true;
  for (int iteration = 0;; ++iteration) {
    fixed_point_residual(v, r, f, &states, &b, &c);
    if (has_converged(v, r, f, scale, law_tolerance, report)) {
      if (v_is_exact) return report;
      v.noalias() = q + w_ * r;
      v_is_exact = true;
      fixed_point_residual(v, r, f, &states, &b, &c);
      if (has_converged(v, r, f, scale, law_tolerance, report)) return report;
    }
    if (iteration == max_iterations) return report;
    report.newton_iterations = iteration + 1;

    // Stick nodes: dv_i from their own equation; slip nodes: the part dv0_i
    // fixed by their own equation (reduce_slip_node); the rest is unknown.
    dv.setZero();
    dr.setZero();
    unknowns.clear();
    int n_system = 0;
    for (int i = 0; i < m; ++i) {
      const Eigen::Vector3d f_i = f.segment<3>(3 * i);
      if (states[i] == ContactState::stick) {
        dv.segment<3>(3 * i) = -c[i].partialPivLu().solve(f_i);
        continue;
      }
      NewtonNodeUnknowns& node = unknowns.emplace_back();
      node.node = i;
      node.offset = n_system;
      Eigen::Vector3d dv0 = Eigen::Vector3d::Zero();
      if (states[i] == ContactState::open || !reduce_slip_node(b[i], c[i], f_i, node, dv0)) {
        node.size = 3;
        node.basis = Eigen::Matrix3d::Identity();
        node.g = b[i];
        node.h = c[i];
        node.rhs = -f_i;
      }
      dv.segment<3>(3 * i) = dv0;
      n_system += node.size;
    }
    // Forces of the known motion (stick dv and slip dv0), column by column.
    for (int j = 0; j < m; ++j)
      if (!dv.segment<3>(3 * j).isZero(0.0))
        dr.noalias() += s_.middleCols<3>(3 * j) * dv.segment<3>(3 * j);
    if (n_system > 0) {
      // The matrix lives in storage kept between calls: a fresh allocation
      // per step of this size costs page faults comparable to the LU.
      const auto size = static_cast<std::size_t>(n_system) * static_cast<std::size_t>(n_system);
      if (newton_matrix_.size() < size) newton_matrix_.resize(size);
      Eigen::Map<Eigen::MatrixXd> system(newton_matrix_.data(), n_system, n_system);
      rhs.resize(n_system);
      // Blocks G_i S_ij N_j (+ H_i N_i on the diagonal). The blocks are at
      // most 3 x 3: coefficient-wise (lazy) products avoid the general
      // matrix-product machinery, which dominated this loop.
      for (const NewtonNodeUnknowns& col : unknowns) {
        const int j = col.node;
        s_times_basis.noalias() = s_.middleCols<3>(3 * j).lazyProduct(col.basis);
        for (const NewtonNodeUnknowns& row : unknowns)
          system.block(row.offset, col.offset, row.size, col.size).noalias() =
              row.g.lazyProduct(s_times_basis.middleRows<3>(3 * row.node));
        system.block(col.offset, col.offset, col.size, col.size).noalias() +=
            col.h.lazyProduct(col.basis);
        rhs.segment(col.offset, col.size) = col.rhs - col.g.lazyProduct(dr.segment<3>(3 * j)) -
                                            col.h.lazyProduct(dv.segment<3>(3 * j));
      }
      if (!solve_dense_lu(system.data(), n_system, rhs.data(), pivots)) return report;
      for (const NewtonNodeUnknowns& node : unknowns) {
        const int j = node.node;
        const Eigen::Vector3d delta = node.basis * rhs.segment(node.offset, node.size);
        dv.segment<3>(3 * j) += delta;
        dr.noalias() += s_.middleCols<3>(3 * j) * delta;
      }
    }
    if (!dr.allFinite() || !dv.allFinite()) return report;

    // Backtracking on |F|: semi-smooth Newton is only locally convergent.
    const double norm_f = f.norm();
    double step = 1.0;
    bool accepted = false;
    for (int halving = 0; halving < 12 && !accepted; ++halving, step *= 0.5) {
      trial_r = r + step * dr;
      trial_v = v + step * dv;
      fixed_point_residual(trial_v, trial_r, trial_f, nullptr, nullptr, nullptr);
      accepted = trial_f.norm() < (1.0 - 1e-4 * step) * norm_f;
    }
    if (!accepted) return report;
    r.swap(trial_r);
    v.swap(trial_v);
    v_is_exact = false;
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
      const LocalSolution local =
          solve_node_law(w_ii, q_i, law_of(i), rho_[i], r_i, local_tolerance, 200);
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

void NodeToPlaneContact::settle_reactions(const Eigen::VectorXd& q, Eigen::VectorXd& r,
                                          double law_tolerance, double motion_scale) const {
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
  const Eigen::VectorXd solved = r;
  for (int i = 0; i < n_nodes(); ++i) {
    const double rn = solved(3 * i);
    if (rn <= 0.0 ||
        (rn <= force_tolerance && q(3 * i) + w_.col(3 * i).dot(solved) > gap_tolerance))
      r.segment<3>(3 * i).setZero();
    else
      r.segment<3>(3 * i) = admissible_reaction(r.segment<3>(3 * i), planes_[nodes_[i].plane].law);
  }
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
