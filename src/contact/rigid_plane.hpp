// Owns the geometry of a rigid plane (docs/physics.md section 2): the plane itself
// (RigidPlane), its local frame (n, t1, t2) built from the normal and the
// principal friction direction, the friction direction given by an angle or
// a vector, and the rotations between a frame's local components and global
// axes. Every frame of the program is built and rotated here.
//
// A frame is stored as a 3x3 matrix F with rows n, t1, t2: F maps global
// components to local ones, F^T local to global. The rotations are templates
// over Eigen expressions so that a caller's product keeps the exact operand
// types (and so the exact rounding) it had when written inline.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <optional>

#include "contact/law/friction_law.hpp"

namespace bipo {

/// The frame with rows n, t1, t2 = n x t1 (unit n and t1, t1 orthogonal to n).
[[nodiscard]] Eigen::Matrix3d plane_frame(const Eigen::Vector3d& normal, const Eigen::Vector3d& t1);

/// t1 for angle 0 on a plane of unit normal n: the projection of global x
/// onto the plane, or of global y when n is parallel to x; unit length.
[[nodiscard]] Eigen::Vector3d reference_direction(const Eigen::Vector3d& n);

/// The friction direction t1 at `degrees` from reference_direction(n),
/// turning towards n x reference_direction(n); unit length.
[[nodiscard]] Eigen::Vector3d direction_at_angle(const Eigen::Vector3d& n, double degrees);

/// The friction direction along the unit vector u: its projection onto the
/// plane, normalized; nothing if that projection is below 1e-8 |u| (u is
/// parallel to n).
[[nodiscard]] std::optional<Eigen::Vector3d> direction_along(const Eigen::Vector3d& n,
                                                             const Eigen::Vector3d& u);

/// Local components (n, t1, t2) of a vector -> its global components: F^T v.
template <class Local>
[[nodiscard]] Eigen::Vector3d to_global(const Eigen::Matrix3d& frame,
                                        const Eigen::MatrixBase<Local>& local) {
  return frame.transpose() * local;
}

/// Global components of a vector -> its local components (n, t1, t2): F x.
template <class Global>
[[nodiscard]] Eigen::Vector3d to_local(const Eigen::Matrix3d& frame,
                                       const Eigen::MatrixBase<Global>& global) {
  return frame * global;
}

/// Tangential components (t1, t2) of a vector in the plane -> its global
/// components: [t1 t2] v.
template <class Tangential>
[[nodiscard]] Eigen::Vector3d tangential_to_global(const Eigen::Matrix3d& frame,
                                                   const Eigen::MatrixBase<Tangential>& t) {
  return frame.bottomRows<2>().transpose() * t;
}

/// Global components of a vector -> its tangential components (t1, t2).
template <class Global>
[[nodiscard]] Eigen::Vector2d tangential_components(const Eigen::Matrix3d& frame,
                                                    const Eigen::MatrixBase<Global>& global) {
  return frame.bottomRows<2>() * global;
}

/// A 3x3 block of a tensor coupling two nodes (a condensed stiffness S_ij,
/// global components on both sides) -> in their local frames: F_i S_ij F_j^T.
template <class Block>
[[nodiscard]] Eigen::Matrix3d block_to_local(const Eigen::Matrix3d& frame_i,
                                             const Eigen::MatrixBase<Block>& block,
                                             const Eigen::Matrix3d& frame_j) {
  return frame_i * block * frame_j.transpose();
}

/// A rigid plane (physics.md 2): point p0, unit normal n into the body, principal
/// friction direction t1, t2 = n x t1, its law, and its prescribed rigid
/// displacement w at the current and at the last converged increment.
struct RigidPlane {
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
  Eigen::Vector3d t1 = Eigen::Vector3d::UnitX();
  FrictionLaw law = FrictionLaw::isotropic(0.0);
  Eigen::Vector3d w = Eigen::Vector3d::Zero();
  Eigen::Vector3d w_prev = Eigen::Vector3d::Zero();

  /// plane_frame(normal, t1): rows n, t1, t2.
  [[nodiscard]] Eigen::Matrix3d frame() const { return plane_frame(normal, t1); }
  /// The unit direction in the plane from the plane's point p0 toward the
  /// projection of x (the radial direction of a point of a punch centred on
  /// p0); t1 where x projects onto p0.
  [[nodiscard]] Eigen::Vector3d radial_direction(const Eigen::Vector3d& x) const;
};

}  // namespace bipo
