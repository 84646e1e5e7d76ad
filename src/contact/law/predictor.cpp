// The bipotential predictor of one node (SPEC.md sections 3.1, 3.2): A(v),
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
