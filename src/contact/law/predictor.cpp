// The bipotential predictor of one node (docs/physics.md sections 3.1, 3.2): A(v),
// dA/dv, the predictor-corrector, the certificate and the dissipation. See
// predictor.hpp.
#include "contact/law/predictor.hpp"

namespace bipo {

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

ConeProjection bipotential_update(const Eigen::Vector3d& r, double g, const Eigen::Vector2d& du_t,
                                  double rho, const FrictionLaw& law) {
  return project_onto_friction_cone(predictor(r, Eigen::Vector3d(g, du_t(0), du_t(1)), rho, law),
                                    law);
}

namespace {

/// (1, s1, s2): r = S r', v' = S v.
Eigen::Vector3d scaling(const FrictionLaw& law) {
  return {1.0, law.update_scales()(0), law.update_scales()(1)};
}

}  // namespace

ConeProjection scaled_update(const Eigen::Vector3d& r, const Eigen::Vector3d& v, double rho,
                             const FrictionLaw& law) {
  if (law.unscaled_update()) return project_onto_friction_cone(predictor(r, v, rho, law), law);
  const FrictionLaw scaled = law.scaled();
  const Eigen::Vector3d s = scaling(law);
  ConeProjection p = project_onto_friction_cone(
      predictor(r.cwiseQuotient(s), v.cwiseProduct(s), rho, scaled), scaled);
  p.r = p.r.cwiseProduct(s);
  return p;
}

ContactState node_residual(const Eigen::Vector3d& r, const Eigen::Vector3d& v, double rho,
                           const FrictionLaw& law, Eigen::Vector3d& f, Eigen::Matrix3d* b,
                           Eigen::Matrix3d* c) {
  if (law.unscaled_update()) {
    const Eigen::Vector3d tau = predictor(r, v, rho, law);
    const ConeProjection projection = project_onto_friction_cone(tau, law);
    f = r - projection.r;
    if (b && c) {
      const Eigen::Matrix3d p = projection_derivative(tau, projection.state, law);
      *b = Eigen::Matrix3d::Identity() - p;
      *c = rho * p * augmented_kinematics_derivative(v, law);
    }
    return projection.state;
  }
  // f = S f'(r', v') with r' = S^-1 r, v' = S v, S = diag(1, s1, s2):
  // B = S (I - P') S^-1 and C = S (rho P' dA'/dv') S.
  const FrictionLaw scaled = law.scaled();
  const Eigen::Vector3d s = scaling(law);
  const Eigen::Vector3d r_scaled = r.cwiseQuotient(s);
  const Eigen::Vector3d v_scaled = v.cwiseProduct(s);
  const Eigen::Vector3d step = rho * augmented_kinematics(v_scaled, scaled);
  const Eigen::Vector3d tau = r_scaled - step;
  const ConeProjection projection = project_onto_friction_cone(tau, scaled);
  // Inside the cone f' = r' - tau = rho A'(v'), taken as such: rho is small
  // in the normal direction for a large scale, and r' - tau would lose
  // rho (g + ...) below the ulp of r_n.
  f = s.cwiseProduct(
      projection.state == ContactState::stick ? step : Eigen::Vector3d(r_scaled - projection.r));
  if (b && c) {
    const Eigen::Matrix3d p = projection_derivative(tau, projection.state, scaled);
    *b = Eigen::Matrix3d::Identity() - s.asDiagonal() * p * s.cwiseInverse().asDiagonal();
    *c = rho * s.asDiagonal() * p * augmented_kinematics_derivative(v_scaled, scaled) *
         s.asDiagonal();
  }
  return projection.state;
}

double law_certificate(const Eigen::Vector3d& r, double g, const Eigen::Vector2d& du_t,
                       const FrictionLaw& law) {
  if (law.frictionless()) return g * r(0);
  const Eigen::Vector2d x = law.omega_squared().cwiseProduct(du_t);
  return r(0) * law.dual_norm_mu(x) + x.dot(r.tail<2>()) + g * r(0);
}

double frictional_dissipation(const Eigen::Vector3d& r, const Eigen::Vector2d& du_t) {
  return -r.tail<2>().dot(du_t);
}

}  // namespace bipo
