#include "fem/hex8.hpp"

#include <Eigen/LU>
#include <cmath>

#include "fem/strain_displacement.hpp"

namespace bipo {

Matrix6d isotropic_elasticity(double young, double poisson) {
  const double lambda = young * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson));
  const double shear = young / (2.0 * (1.0 + poisson));
  Matrix6d d = Matrix6d::Zero();
  d.topLeftCorner<3, 3>().setConstant(lambda);
  d.topLeftCorner<3, 3>().diagonal().array() += 2.0 * shear;
  d.bottomRightCorner<3, 3>().diagonal().setConstant(shear);
  return d;
}

const Eigen::Matrix<double, 8, 3>& hex8_reference_nodes() {
  static const Eigen::Matrix<double, 8, 3> nodes = [] {
    Eigen::Matrix<double, 8, 3> m;
    m << -1, -1, -1, 1, -1, -1, 1, 1, -1, -1, 1, -1,  //
        -1, -1, 1, 1, -1, 1, 1, 1, 1, -1, 1, 1;
    return m;
  }();
  return nodes;
}

const Eigen::Matrix<double, 8, 3>& hex8_gauss_points() {
  static const Eigen::Matrix<double, 8, 3> points = [] {
    const double a = 1.0 / std::sqrt(3.0);
    return Eigen::Matrix<double, 8, 3>(hex8_reference_nodes() * a);
  }();
  return points;
}

void hex8_strain_displacement(const HexCoordinates& x, const Eigen::Vector3d& xi,
                              Eigen::Matrix<double, 6, 24>& b, double& det_j) {
  const auto& ref = hex8_reference_nodes();
  // dN_a/dxi_k = ref(a,k)/8 * prod_{l != k} (1 + ref(a,l) xi_l)
  Eigen::Matrix<double, 3, 8> dn_dxi;
  for (int a = 0; a < 8; ++a) {
    const double f0 = 1.0 + ref(a, 0) * xi(0);
    const double f1 = 1.0 + ref(a, 1) * xi(1);
    const double f2 = 1.0 + ref(a, 2) * xi(2);
    dn_dxi(0, a) = 0.125 * ref(a, 0) * f1 * f2;
    dn_dxi(1, a) = 0.125 * ref(a, 1) * f0 * f2;
    dn_dxi(2, a) = 0.125 * ref(a, 2) * f0 * f1;
  }
  strain_displacement<8>(dn_dxi, x, b, det_j);
}

Matrix24d hex8_stiffness(const HexCoordinates& x, const Matrix6d& d) {
  Matrix24d k = Matrix24d::Zero();
  Eigen::Matrix<double, 6, 24> b;
  double det_j = 0.0;
  const auto& gauss = hex8_gauss_points();
  for (int g = 0; g < 8; ++g) {
    hex8_strain_displacement(x, gauss.row(g).transpose(), b, det_j);
    k.noalias() += b.transpose() * (d * b) * det_j;
  }
  return k;
}

Vector6d hex8_mean_stress(const HexCoordinates& x, const Matrix6d& d, const Vector24d& u_e) {
  Vector6d mean = Vector6d::Zero();
  Eigen::Matrix<double, 6, 24> b;
  double det_j = 0.0;
  const auto& gauss = hex8_gauss_points();
  for (int g = 0; g < 8; ++g) {
    hex8_strain_displacement(x, gauss.row(g).transpose(), b, det_j);
    mean.noalias() += d * (b * u_e);
  }
  return mean / 8.0;
}

double von_mises(const Vector6d& s) {
  const double a = s(0) - s(1), b = s(1) - s(2), c = s(2) - s(0);
  return std::sqrt(0.5 * (a * a + b * b + c * c) + 3.0 * (s(3) * s(3) + s(4) * s(4) + s(5) * s(5)));
}

}  // namespace bipo
