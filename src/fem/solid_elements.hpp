// Owns the linear 4-node tetrahedron and the linear 6-node wedge (docs/physics.md
// section 1), next to the trilinear hexahedron of hex8.hpp: shape function
// derivatives, strain-displacement matrices, element stiffness and the
// element's stress. Fixed-size Eigen types only: nothing here allocates.
//
// Integration rules (docs/elements.md):
// - tetrahedron: one point (the centroid). The strain is constant in the
//   element, so the one-point rule integrates B^T D B exactly.
// - wedge: 3 points in the triangle (r, s) = (1/6, 1/6), (2/3, 1/6),
//   (1/6, 2/3), weight 1/6, times 2 Gauss points zeta = +-1/sqrt 3: exact
//   for an undistorted (straight-sided, parallel-faced) wedge.
#pragma once

#include <Eigen/Core>

#include "fem/hex8.hpp"

namespace bipo {

using Matrix12d = Eigen::Matrix<double, 12, 12>;
using Vector12d = Eigen::Matrix<double, 12, 1>;
using Matrix18d = Eigen::Matrix<double, 18, 18>;
using Vector18d = Eigen::Matrix<double, 18, 1>;
/// Node coordinates of one element, one row per node (Gmsh order).
using TetCoordinates = Eigen::Matrix<double, 4, 3>;
using WedgeCoordinates = Eigen::Matrix<double, 6, 3>;

/// Strain-displacement matrix B (6 x 12, constant) and det J = 6 x volume.
/// Element dofs are ordered (u_x, u_y, u_z) node by node.
void tet4_strain_displacement(const TetCoordinates& x, Eigen::Matrix<double, 6, 12>& b,
                              double& det_j);

/// K_e = B^T D B V.
[[nodiscard]] Matrix12d tet4_stiffness(const TetCoordinates& x, const Matrix6d& d);

/// The element's (constant) stress D B u_e.
[[nodiscard]] Vector6d tet4_stress(const TetCoordinates& x, const Matrix6d& d,
                                   const Vector12d& u_e);

/// The six points (r, s, zeta) of the wedge rule (each of weight 1/6).
[[nodiscard]] const Eigen::Matrix<double, 6, 3>& wedge6_gauss_points();

/// Strain-displacement matrix B (6 x 18) and det J at the reference point
/// (r, s, zeta), r, s >= 0, r + s <= 1, zeta in [-1, 1].
void wedge6_strain_displacement(const WedgeCoordinates& x, const Eigen::Vector3d& xi,
                                Eigen::Matrix<double, 6, 18>& b, double& det_j);

/// K_e = sum_g w_g B^T D B det J over the six-point rule.
[[nodiscard]] Matrix18d wedge6_stiffness(const WedgeCoordinates& x, const Matrix6d& d);

/// Stress (Voigt) averaged over the element's six points (unweighted, like
/// hex8_mean_stress: the weights are equal).
[[nodiscard]] Vector6d wedge6_mean_stress(const WedgeCoordinates& x, const Matrix6d& d,
                                          const Vector18d& u_e);

}  // namespace bipo
