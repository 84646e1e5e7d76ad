// Owns the trilinear 8-node hexahedron (docs/physics.md section 1): shape function
// derivatives, the strain-displacement matrix, the 2x2x2 Gauss element
// stiffness and stresses, and the isotropic elasticity matrix. Fixed-size
// Eigen types only: nothing here allocates.
#pragma once

#include <Eigen/Core>

namespace bipo {

/// Voigt order (xx, yy, zz, yz, xz, xy), engineering shear strains.
using Matrix6d = Eigen::Matrix<double, 6, 6>;
using Vector6d = Eigen::Matrix<double, 6, 1>;
using Matrix24d = Eigen::Matrix<double, 24, 24>;
using Vector24d = Eigen::Matrix<double, 24, 1>;
/// Node coordinates of one element, one row per node (Gmsh order).
using HexCoordinates = Eigen::Matrix<double, 8, 3>;

/// Isotropic linear elasticity in Voigt notation, from E and nu.
[[nodiscard]] Matrix6d isotropic_elasticity(double young, double poisson);

/// Reference coordinates (xi, eta, zeta) of the eight nodes, Gmsh ordering.
[[nodiscard]] const Eigen::Matrix<double, 8, 3>& hex8_reference_nodes();

/// The eight Gauss points of the 2x2x2 rule (weights are all 1).
[[nodiscard]] const Eigen::Matrix<double, 8, 3>& hex8_gauss_points();

/// Strain-displacement matrix B (6 x 24) and det J at the reference point xi.
/// Element dofs are ordered (u_x, u_y, u_z) node by node.
void hex8_strain_displacement(const HexCoordinates& x, const Eigen::Vector3d& xi,
                              Eigen::Matrix<double, 6, 24>& b, double& det_j);

/// Element stiffness K_e = sum_g B^T D B det J over the 2x2x2 rule.
[[nodiscard]] Matrix24d hex8_stiffness(const HexCoordinates& x, const Matrix6d& d);

/// Stress (Voigt) averaged over the element's Gauss points.
[[nodiscard]] Vector6d hex8_mean_stress(const HexCoordinates& x, const Matrix6d& d,
                                        const Vector24d& u_e);

/// Von Mises equivalent stress of a Voigt stress vector.
[[nodiscard]] double von_mises(const Vector6d& s);

}  // namespace bipo
