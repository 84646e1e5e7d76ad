// Frame geometry of a rigid plane (contact/rigid_plane.hpp, docs/physics.md section
// 2): frames are right-handed orthonormal with rows n, t1, t2; the reference
// direction and the direction at an angle follow docs/case-file.md
// (contact[].direction); the rotations to and from global axes invert each
// other and agree with the frame's definition.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cmath>

#include "contact/rigid_plane.hpp"

namespace bipo {
namespace {

using Eigen::Matrix3d;
using Eigen::Vector2d;
using Eigen::Vector3d;

TEST(RigidPlaneFrame, RowsAreNormalT1AndTheirCrossProduct) {
  const Vector3d n = Vector3d(1.0, 2.0, 2.0) / 3.0;
  const Vector3d t1 = Vector3d(2.0, 1.0, -2.0) / 3.0;  // orthogonal to n
  const Matrix3d f = plane_frame(n, t1);
  EXPECT_EQ(Vector3d(f.row(0).transpose()), n);
  EXPECT_EQ(Vector3d(f.row(1).transpose()), t1);
  // t2 = n x t1 written out.
  const Vector3d t2(n.y() * t1.z() - n.z() * t1.y(), n.z() * t1.x() - n.x() * t1.z(),
                    n.x() * t1.y() - n.y() * t1.x());
  EXPECT_LE((Vector3d(f.row(2).transpose()) - t2).norm(), 1e-15);
  EXPECT_LE((f * f.transpose() - Matrix3d::Identity()).norm(), 1e-15);
  EXPECT_NEAR(f.determinant(), 1.0, 1e-15);
  RigidPlane plane;
  plane.normal = n;
  plane.t1 = t1;
  EXPECT_EQ(plane.frame(), f);
}

TEST(RigidPlaneFrame, ReferenceDirectionAndAngles) {
  // Global x projected onto the plane; global y when n is along x.
  EXPECT_LE((reference_direction(Vector3d::UnitZ()) - Vector3d::UnitX()).norm(), 1e-15);
  EXPECT_LE((reference_direction(-Vector3d::UnitX()) - Vector3d::UnitY()).norm(), 1e-15);
  const Vector3d n = Vector3d(0.0, 1.0, 1.0).normalized();
  const Vector3d e = reference_direction(n);
  EXPECT_NEAR(e.norm(), 1.0, 1e-15);
  EXPECT_NEAR(e.dot(n), 0.0, 1e-15);
  EXPECT_LE((e - Vector3d::UnitX()).norm(), 1e-15);
  // The angle turns from e towards n x e.
  EXPECT_LE((direction_at_angle(n, 0.0) - e).norm(), 1e-15);
  EXPECT_LE((direction_at_angle(n, 90.0) - n.cross(e)).norm(), 1e-15);
  EXPECT_LE((direction_at_angle(n, 180.0) + e).norm(), 1e-15);
  const Vector3d d30 = direction_at_angle(n, 30.0);
  EXPECT_NEAR(d30.dot(e), std::sqrt(3.0) / 2.0, 1e-15);
  EXPECT_NEAR(d30.dot(n), 0.0, 1e-15);
}

TEST(RigidPlaneFrame, DirectionAlongAVector) {
  const Vector3d n = Vector3d::UnitZ();
  const auto t = direction_along(n, Vector3d(3.0, 4.0, 12.0).normalized());
  ASSERT_TRUE(t.has_value());
  EXPECT_LE((*t - Vector3d(0.6, 0.8, 0.0)).norm(), 1e-15);
  EXPECT_FALSE(direction_along(n, Vector3d::UnitZ()).has_value());
  EXPECT_FALSE(direction_along(n, Vector3d(1e-9, 0.0, 1.0).normalized()).has_value());
}

TEST(RigidPlaneFrame, RotationsInvertEachOther) {
  const Vector3d n = Vector3d(1.0, -2.0, 2.0) / 3.0;
  const Matrix3d f = plane_frame(n, direction_at_angle(n, 40.0));
  const Vector3d global(0.3, -1.7, 2.5);
  const Vector3d local = to_local(f, global);
  // Components along n, t1, t2 by dot products.
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(local(k), f.row(k).dot(global), 1e-15);
  EXPECT_LE((to_global(f, local) - global).norm(), 1e-14);
  const Vector2d tangential = tangential_components(f, global);
  EXPECT_EQ(tangential, local.tail<2>());
  // The in-plane part of the vector: global minus its normal component.
  const Vector3d in_plane = global - global.dot(n) * n;
  EXPECT_LE((tangential_to_global(f, tangential) - in_plane).norm(), 1e-14);
}

TEST(RigidPlaneFrame, RadialDirectionIsTheUnitInPlaneDirectionFromThePlanesPoint) {
  // A tilted plane: n = (0, 3, 4)/5 through p0 = (1, 1, 1). A point p0 + 2 a
  // + 7 n, with a = (1, 0, 0) in the plane, is radially along a; a point on
  // the normal through p0 has no radial direction and gets t1.
  RigidPlane plane;
  plane.point = Vector3d(1.0, 1.0, 1.0);
  plane.normal = Vector3d(0.0, 3.0, 4.0) / 5.0;
  plane.t1 = Vector3d(0.0, 4.0, -3.0) / 5.0;
  const Vector3d a(1.0, 0.0, 0.0);
  EXPECT_LE((plane.radial_direction(plane.point + 2.0 * a + 7.0 * plane.normal) - a).norm(), 1e-15);
  const Vector3d b = plane.t1;
  EXPECT_LE((plane.radial_direction(plane.point - 0.5 * b) + b).norm(), 1e-15);
  EXPECT_EQ(plane.radial_direction(plane.point + 3.0 * plane.normal), plane.t1);
}

}  // namespace
}  // namespace bipo
