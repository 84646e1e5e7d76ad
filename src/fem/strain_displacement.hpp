// Owns the one strain-displacement matrix B of an isoparametric element with
// N nodes, from its shape functions' derivatives in reference coordinates:
// shared by the hexahedron (hex8.cpp) and the tetrahedron and wedge
// (solid_elements.cpp). Strains in the order xx, yy, zz, yz, xz, xy, with
// engineering shears, as the elasticity matrix of hex8.hpp takes them.
#pragma once

#include <Eigen/Core>
#include <Eigen/LU>

namespace bipo {

/// B from the shape function derivatives in reference coordinates
/// (dn_dxi(k, a) = dN_a / dxi_k) and the node coordinates x (one row per
/// node); det_j is the Jacobian's determinant at that point.
template <int N>
void strain_displacement(const Eigen::Matrix<double, 3, N>& dn_dxi,
                         const Eigen::Matrix<double, N, 3>& x, Eigen::Matrix<double, 6, 3 * N>& b,
                         double& det_j) {
  const Eigen::Matrix3d jacobian = dn_dxi * x;  // J(k, j) = d x_j / d xi_k
  det_j = jacobian.determinant();
  const Eigen::Matrix<double, 3, N> dn_dx = jacobian.inverse() * dn_dxi;
  b.setZero();
  for (int a = 0; a < N; ++a) {
    const int c = 3 * a;
    b(0, c) = dn_dx(0, a);
    b(1, c + 1) = dn_dx(1, a);
    b(2, c + 2) = dn_dx(2, a);
    b(3, c + 1) = dn_dx(2, a);
    b(3, c + 2) = dn_dx(1, a);
    b(4, c) = dn_dx(2, a);
    b(4, c + 2) = dn_dx(0, a);
    b(5, c) = dn_dx(1, a);
    b(5, c + 1) = dn_dx(0, a);
  }
}

}  // namespace bipo
