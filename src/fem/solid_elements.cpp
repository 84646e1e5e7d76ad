#include "fem/solid_elements.hpp"

#include <Eigen/LU>
#include <cmath>

#include "fem/strain_displacement.hpp"

namespace bipo {

void tet4_strain_displacement(const TetCoordinates& x, Eigen::Matrix<double, 6, 12>& b,
                              double& det_j) {
  // N = (1 - r - s - t, r, s, t).
  Eigen::Matrix<double, 3, 4> dn_dxi;
  dn_dxi << -1, 1, 0, 0,  //
      -1, 0, 1, 0,        //
      -1, 0, 0, 1;
  strain_displacement<4>(dn_dxi, x, b, det_j);
}

Matrix12d tet4_stiffness(const TetCoordinates& x, const Matrix6d& d) {
  Eigen::Matrix<double, 6, 12> b;
  double det_j = 0.0;
  tet4_strain_displacement(x, b, det_j);
  return b.transpose() * (d * b) * (det_j / 6.0);
}

Vector6d tet4_stress(const TetCoordinates& x, const Matrix6d& d, const Vector12d& u_e) {
  Eigen::Matrix<double, 6, 12> b;
  double det_j = 0.0;
  tet4_strain_displacement(x, b, det_j);
  return d * (b * u_e);
}

const Eigen::Matrix<double, 6, 3>& wedge6_gauss_points() {
  static const Eigen::Matrix<double, 6, 3> points = [] {
    const double g = 1.0 / std::sqrt(3.0);
    Eigen::Matrix<double, 6, 3> m;
    m << 1.0 / 6, 1.0 / 6, -g, 2.0 / 3, 1.0 / 6, -g, 1.0 / 6, 2.0 / 3, -g,  //
        1.0 / 6, 1.0 / 6, g, 2.0 / 3, 1.0 / 6, g, 1.0 / 6, 2.0 / 3, g;
    return m;
  }();
  return points;
}

void wedge6_strain_displacement(const WedgeCoordinates& x, const Eigen::Vector3d& xi,
                                Eigen::Matrix<double, 6, 18>& b, double& det_j) {
  // N_a = L_a(r, s) (1 -+ zeta) / 2, L = (1 - r - s, r, s); nodes 0-2 at
  // zeta = -1, 3-5 at zeta = +1.
  const double l[3] = {1.0 - xi(0) - xi(1), xi(0), xi(1)};
  const double dl_dr[3] = {-1.0, 1.0, 0.0};
  const double dl_ds[3] = {-1.0, 0.0, 1.0};
  Eigen::Matrix<double, 3, 6> dn_dxi;
  for (int layer = 0; layer < 2; ++layer) {
    const double sign = layer == 0 ? -1.0 : 1.0;
    const double h = 0.5 * (1.0 + sign * xi(2));
    for (int a = 0; a < 3; ++a) {
      dn_dxi(0, 3 * layer + a) = dl_dr[a] * h;
      dn_dxi(1, 3 * layer + a) = dl_ds[a] * h;
      dn_dxi(2, 3 * layer + a) = 0.5 * sign * l[a];
    }
  }
  strain_displacement<6>(dn_dxi, x, b, det_j);
}

Matrix18d wedge6_stiffness(const WedgeCoordinates& x, const Matrix6d& d) {
  Matrix18d k = Matrix18d::Zero();
  Eigen::Matrix<double, 6, 18> b;
  double det_j = 0.0;
  const auto& gauss = wedge6_gauss_points();
  for (int g = 0; g < 6; ++g) {
    wedge6_strain_displacement(x, gauss.row(g).transpose(), b, det_j);
    k.noalias() += b.transpose() * (d * b) * (det_j / 6.0);
  }
  return k;
}

Vector6d wedge6_mean_stress(const WedgeCoordinates& x, const Matrix6d& d, const Vector18d& u_e) {
  Vector6d mean = Vector6d::Zero();
  Eigen::Matrix<double, 6, 18> b;
  double det_j = 0.0;
  const auto& gauss = wedge6_gauss_points();
  for (int g = 0; g < 6; ++g) {
    wedge6_strain_displacement(x, gauss.row(g).transpose(), b, det_j);
    mean.noalias() += d * (b * u_e);
  }
  return mean / 6.0;
}

}  // namespace bipo
