// Owns the geometry of a rigid surface (docs/physics.md section 2): a plane
// or a rigid indenter, a sphere or a cylinder (RigidPlane), the local frame
// (n, t1, t2) of a node against it built from the normal and the principal
// friction direction, the friction direction given by an angle or a vector,
// and the rotations between a frame's local components and global axes.
// Every frame of the program is built and rotated here.
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

/// The shape of a rigid surface (physics.md 2 and 2.1).
enum class SurfaceShape { plane, sphere, cylinder };

/// Where a node meets a rigid surface in the reference configuration
/// (physics.md 2.1): the gap is g = (X + u - anchor - w).n - offset.
struct SurfacePoint {
  Eigen::Vector3d anchor = Eigen::Vector3d::Zero();   ///< p0, the centre, or the axis point
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();  ///< unit, from the surface to the node
  double offset = 0.0;                                ///< 0 for a plane, R for an indenter
};

/// A rigid surface (physics.md 2, 2.1): a plane (point p0, unit normal n into
/// the body, principal friction direction t1, t2 = n x t1) or an indenter
/// (a sphere of centre `point`, or a cylinder of axis `axis` through
/// `point`, of radius R; the body outside), its law, and its prescribed
/// rigid displacement w at the current and at the last converged increment.
/// An indenter gives each node its own frame from its reference position.
struct RigidPlane {
  SurfaceShape shape = SurfaceShape::plane;
  double radius = 0.0;                              ///< R of an indenter
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();  ///< unit axis of a cylinder
  /// An indenter's friction direction: at this angle from
  /// reference_direction(n_i) at each node, or (no angle) `t1` projected
  /// on each node's tangent plane. Unused for a plane.
  std::optional<double> t1_angle;
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  /// A plane's normal; an indenter's axis of approach (for probes' radial
  /// directions only): the normal at its contact node nearest to it.
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();
  Eigen::Vector3d t1 = Eigen::Vector3d::UnitX();
  FrictionLaw law = FrictionLaw::isotropic(0.0);
  Eigen::Vector3d w = Eigen::Vector3d::Zero();
  Eigen::Vector3d w_prev = Eigen::Vector3d::Zero();

  /// plane_frame(normal, t1): rows n, t1, t2 (a plane's frame).
  [[nodiscard]] Eigen::Matrix3d frame() const { return plane_frame(normal, t1); }
  /// The surface point of a node at reference position x (physics.md
  /// 2.1); nothing where the normal is undefined (an indenter's node
  /// within 1e-9 R of its centre or axis).
  [[nodiscard]] std::optional<SurfacePoint> surface_point(const Eigen::Vector3d& x) const;
  /// The frame of a node at reference position x: a plane's frame(), or
  /// for an indenter the frame of the normal of surface_point(x) and the
  /// friction direction there; nothing where the normal is undefined or
  /// the direction vector is parallel to the normal.
  [[nodiscard]] std::optional<Eigen::Matrix3d> node_frame(const Eigen::Vector3d& x) const;
  /// The unit direction perpendicular to `normal` (and to a cylinder's axis)
  /// from `point` toward x (the radial direction of a point of a punch
  /// centred on p0, or of a face under an indenter); t1 where x projects
  /// onto p0.
  [[nodiscard]] Eigen::Vector3d radial_direction(const Eigen::Vector3d& x) const;
};

}  // namespace bipo
