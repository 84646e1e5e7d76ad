// Frame geometry of a rigid plane or indenter (docs/physics.md section 2). See rigid_plane.hpp.
#include "contact/rigid_plane.hpp"

#include <cmath>
#include <numbers>

namespace bipo {

Eigen::Matrix3d plane_frame(const Eigen::Vector3d& normal, const Eigen::Vector3d& t1) {
  Eigen::Matrix3d f;
  f.row(0) = normal.transpose();
  f.row(1) = t1.transpose();
  f.row(2) = normal.cross(t1).transpose();
  return f;
}

Eigen::Vector3d reference_direction(const Eigen::Vector3d& n) {
  Eigen::Vector3d e = Eigen::Vector3d::UnitX() - n.x() * n;
  if (e.norm() < 1e-6) e = Eigen::Vector3d::UnitY() - n.y() * n;
  return e.normalized();
}

Eigen::Vector3d direction_at_angle(const Eigen::Vector3d& n, double degrees) {
  const Eigen::Vector3d e = reference_direction(n);
  const double rad = degrees * std::numbers::pi / 180.0;
  return (std::cos(rad) * e + std::sin(rad) * n.cross(e)).normalized();
}

std::optional<Eigen::Vector3d> direction_along(const Eigen::Vector3d& n, const Eigen::Vector3d& u) {
  const Eigen::Vector3d t = u - u.dot(n) * n;
  if (t.norm() <= 1e-8 * u.norm()) return std::nullopt;
  return t.normalized();
}

std::optional<SurfacePoint> RigidPlane::surface_point(const Eigen::Vector3d& x) const {
  if (shape == SurfaceShape::plane) return SurfacePoint{point, normal, 0.0};
  // physics.md 2.1: the closest point of the surface to x lies on the line
  // from the centre (sphere) or from x's foot on the axis (cylinder) to x.
  Eigen::Vector3d anchor = point;
  if (shape == SurfaceShape::cylinder) anchor += (x - point).dot(axis) * axis;
  const Eigen::Vector3d d = x - anchor;
  if (d.norm() <= 1e-9 * radius) return std::nullopt;
  return SurfacePoint{anchor, d.normalized(), radius};
}

std::optional<Eigen::Matrix3d> RigidPlane::node_frame(const Eigen::Vector3d& x) const {
  if (shape == SurfaceShape::plane) return frame();
  const std::optional<SurfacePoint> at = surface_point(x);
  if (!at) return std::nullopt;
  if (t1_angle) return plane_frame(at->normal, direction_at_angle(at->normal, *t1_angle));
  const std::optional<Eigen::Vector3d> t = direction_along(at->normal, t1);
  if (!t) return std::nullopt;
  return plane_frame(at->normal, *t);
}

Eigen::Vector3d RigidPlane::radial_direction(const Eigen::Vector3d& x) const {
  Eigen::Vector3d in_plane = x - point;
  in_plane -= in_plane.dot(normal) * normal;
  if (shape == SurfaceShape::cylinder) in_plane -= in_plane.dot(axis) * axis;
  return in_plane.norm() > 1e-12 ? Eigen::Vector3d(in_plane.normalized()) : t1;
}

}  // namespace bipo
