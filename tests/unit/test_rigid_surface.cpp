// Rigid indenters (docs/physics.md section 2.1): the per-node frames of a
// sphere and a cylinder (orthonormal, right-handed, the normal from the
// closest surface point to the node), the gaps of points at known distances,
// a rigid motion of body and indenter together leaving gaps and slips
// unchanged, the small-sliding error order, a node at the centre or on the
// axis refused; and the `contact[i]` keys sphere/cylinder of the case file
// with their errors, each naming the file, the key path and the line.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

#include "../process_temp_path.hpp"
#include "app/run.hpp"
#include "contact/node_to_plane.hpp"
#include "contact/rigid_plane.hpp"
#include "core/errors.hpp"
#include "io/case_file.hpp"
#include "solver/analysis.hpp"

namespace bipo {
namespace {

RigidPlane sphere(const Eigen::Vector3d& center, double radius) {
  RigidPlane s;
  s.shape = SurfaceShape::sphere;
  s.point = center;
  s.radius = radius;
  s.t1_angle = 0.0;
  return s;
}

RigidPlane cylinder(const Eigen::Vector3d& point, const Eigen::Vector3d& axis, double radius) {
  RigidPlane s;
  s.shape = SurfaceShape::cylinder;
  s.point = point;
  s.axis = axis.normalized();
  s.radius = radius;
  s.t1_angle = 30.0;
  return s;
}

/// Random points in a box around the origin, away from it.
std::vector<Eigen::Vector3d> random_points(int n) {
  std::mt19937 generator(4242);
  std::uniform_real_distribution<double> uniform(-3.0, 3.0);
  std::vector<Eigen::Vector3d> points;
  while (static_cast<int>(points.size()) < n) {
    const Eigen::Vector3d x(uniform(generator), uniform(generator), uniform(generator));
    if (x.norm() > 0.1) points.push_back(x);
  }
  return points;
}

void expect_right_handed_orthonormal(const Eigen::Matrix3d& f) {
  EXPECT_LT((f * f.transpose() - Eigen::Matrix3d::Identity()).norm(), 1e-14);
  EXPECT_NEAR(f.determinant(), 1.0, 1e-14);
}

TEST(RigidSurface, SphereFramesAreOrthonormalWithTheRadialNormal) {
  const Eigen::Vector3d c(0.5, -1.0, 2.0);
  const RigidPlane s = sphere(c, 1.5);
  for (const Eigen::Vector3d& d : random_points(50)) {
    const auto frame = s.node_frame(c + d);
    ASSERT_TRUE(frame);
    expect_right_handed_orthonormal(*frame);
    EXPECT_LT((frame->row(0).transpose() - d.normalized()).norm(), 1e-15);
  }
}

TEST(RigidSurface, CylinderFramesHaveTheNormalPerpendicularToTheAxis) {
  const Eigen::Vector3d axis = Eigen::Vector3d(1.0, 2.0, -0.5).normalized();
  const RigidPlane s = cylinder(Eigen::Vector3d(1.0, 0.0, 0.0), axis, 0.7);
  for (const Eigen::Vector3d& d : random_points(50)) {
    const Eigen::Vector3d x = s.point + d;
    const auto frame = s.node_frame(x);
    ASSERT_TRUE(frame);
    expect_right_handed_orthonormal(*frame);
    const Eigen::Vector3d radial = d - d.dot(axis) * axis;
    EXPECT_LT((frame->row(0).transpose() - radial.normalized()).norm(), 1e-14);
  }
}

TEST(RigidSurface, DirectionVectorProjectedAtEachNode) {
  // Along the axis of a cylinder, the direction lies in every tangent plane.
  RigidPlane s = cylinder(Eigen::Vector3d::Zero(), Eigen::Vector3d::UnitY(), 1.0);
  s.t1_angle.reset();
  s.t1 = Eigen::Vector3d::UnitY();
  for (const Eigen::Vector3d& d : random_points(20)) {
    const auto frame = s.node_frame(d);
    if (Eigen::Vector2d(d.x(), d.z()).norm() < 1e-6) continue;
    ASSERT_TRUE(frame);
    EXPECT_EQ(frame->row(1).transpose(), Eigen::Vector3d::UnitY());
  }
  // A sphere's node whose normal is the direction vector has no t1.
  RigidPlane b = sphere(Eigen::Vector3d::Zero(), 1.0);
  b.t1_angle.reset();
  b.t1 = Eigen::Vector3d::UnitX();
  EXPECT_FALSE(b.node_frame(Eigen::Vector3d(2.0, 0.0, 0.0)));
  EXPECT_TRUE(b.node_frame(Eigen::Vector3d(0.0, 0.0, 2.0)));
}

TEST(RigidSurface, PlaneIsOneFrameForAllNodes) {
  RigidPlane p;
  p.normal = Eigen::Vector3d(0.0, 0.6, 0.8);
  p.t1 = Eigen::Vector3d::UnitX();
  for (const Eigen::Vector3d& x : random_points(5)) {
    EXPECT_EQ(*p.node_frame(x), p.frame());
    const auto at = p.surface_point(x);
    EXPECT_EQ(at->anchor, p.point);
    EXPECT_EQ(at->normal, p.normal);
    EXPECT_EQ(at->offset, 0.0);
  }
}

/// Gaps of the nodes `x` against `surface` for displacements `u`.
Eigen::VectorXd gaps(const RigidPlane& surface, const std::vector<Eigen::Vector3d>& x,
                     const Eigen::VectorXd& u) {
  std::vector<ContactNode> nodes;
  for (const auto& p : x) nodes.push_back({0, p});
  const NodeToPlaneContact contact({surface}, nodes);
  const Eigen::VectorXd v = contact.kinematics(u);
  Eigen::VectorXd g(static_cast<Eigen::Index>(x.size()));
  for (Eigen::Index i = 0; i < g.size(); ++i) g(i) = v(3 * i);
  return g;
}

TEST(RigidSurface, GapsOfPointsAtKnownDistances) {
  const Eigen::Vector3d c(1.0, 2.0, 3.0);
  // Sphere R = 2: points at distances 2.5, 2, 3.25 from the centre.
  const std::vector<Eigen::Vector3d> xs{
      c + Eigen::Vector3d(0, 0, 2.5),
      c + Eigen::Vector3d(2, 0, 0) * std::sqrt(0.5) + Eigen::Vector3d(0, 2, 0) * std::sqrt(0.5),
      c + Eigen::Vector3d(-3.25, 0, 0)};
  const Eigen::VectorXd g = gaps(sphere(c, 2.0), xs, Eigen::VectorXd::Zero(9));
  EXPECT_NEAR(g(0), 0.5, 1e-14);
  EXPECT_NEAR(g(1), 0.0, 1e-14);
  EXPECT_NEAR(g(2), 1.25, 1e-14);
  // Cylinder R = 1 along z through c: the axial position does not count;
  // a displacement along the normal changes the gap by its length.
  const RigidPlane cyl = cylinder(c, Eigen::Vector3d::UnitZ(), 1.0);
  const std::vector<Eigen::Vector3d> ys{c + Eigen::Vector3d(0, 3, 40),
                                        c + Eigen::Vector3d(2, 0, -7)};
  Eigen::VectorXd u = Eigen::VectorXd::Zero(6);
  u.segment<3>(3) = Eigen::Vector3d(-0.25, 0, 0.9);  // toward the axis by 0.25
  const Eigen::VectorXd h = gaps(cyl, ys, u);
  EXPECT_NEAR(h(0), 2.0, 1e-14);
  EXPECT_NEAR(h(1), 0.75, 1e-14);
}

TEST(RigidSurface, RigidMotionOfBodyAndIndenterLeavesGapsAndSlipsUnchanged) {
  for (const RigidPlane& surface :
       {sphere(Eigen::Vector3d(0, 0, -2), 2.0),
        cylinder(Eigen::Vector3d(0, 0, -2), Eigen::Vector3d(1, 1, 0), 2.0)}) {
    std::vector<ContactNode> nodes;
    for (const auto& d : random_points(20))
      nodes.push_back({0, Eigen::Vector3d(d.x(), d.y(), std::abs(d.z()))});
    NodeToPlaneContact contact({surface}, nodes);
    const Eigen::VectorXd reference = contact.kinematics(Eigen::VectorXd::Zero(60));
    const Eigen::Vector3d t(0.3, -0.7, 1.1);
    Eigen::VectorXd u(60);
    for (int i = 0; i < 20; ++i) u.segment<3>(3 * i) = t;
    contact.set_plane_motion(0, t);
    const Eigen::VectorXd moved = contact.kinematics(u);
    for (int i = 0; i < 20; ++i) {
      EXPECT_NEAR(moved(3 * i), reference(3 * i), 1e-14);
      EXPECT_NEAR(moved(3 * i + 1), 0.0, 1e-15);
      EXPECT_NEAR(moved(3 * i + 2), 0.0, 1e-15);
    }
  }
}

TEST(RigidSurface, SmallSlidingGapErrorIsQuadraticInTheTangentialMotion) {
  // A node on a sphere of radius R slid by s along its tangent: the fixed
  // frame keeps g = 0, the true distance is sqrt(R^2 + s^2) - R = s^2/(2R)
  // + O(s^4/R^3) (docs/physics.md section 2.1).
  const double radius = 5.0;
  const RigidPlane s = sphere(Eigen::Vector3d::Zero(), radius);
  const Eigen::Vector3d x(0.0, 0.0, radius);
  for (double slide : {0.1, 0.01}) {
    Eigen::VectorXd u = Eigen::VectorXd::Zero(3);
    u(0) = slide;
    const double linear = gaps(s, {x}, u)(0);
    const double exact = (x + u.head<3>()).norm() - radius;
    EXPECT_NEAR(linear, 0.0, 1e-15);
    EXPECT_NEAR((exact - linear) / (slide * slide / (2.0 * radius)), 1.0, slide * slide);
  }
}

TEST(RigidSurface, NodeAtTheCentreOrOnTheAxisIsRefused) {
  const RigidPlane s = sphere(Eigen::Vector3d(1, 2, 3), 1.0);
  EXPECT_FALSE(s.surface_point(Eigen::Vector3d(1, 2, 3)));
  EXPECT_FALSE(s.node_frame(Eigen::Vector3d(1, 2, 3)));
  const RigidPlane cyl = cylinder(Eigen::Vector3d::Zero(), Eigen::Vector3d::UnitX(), 1.0);
  EXPECT_FALSE(cyl.surface_point(Eigen::Vector3d(17.0, 0.0, 0.0)));
  EXPECT_TRUE(cyl.surface_point(Eigen::Vector3d(17.0, 0.0, 1e-6)));
  const std::vector<ContactNode> nodes{{0, Eigen::Vector3d(0, 0, 1)},
                                       {0, Eigen::Vector3d(5, 0, 0)}};
  EXPECT_THROW(NodeToPlaneContact({cyl}, nodes), std::invalid_argument);
}

}  // namespace
}  // namespace bipo

namespace {

namespace fs = std::filesystem;

/// The case-file keys of indenters (docs/case-file.md, `contact`).
class IndenterCaseFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = bipo::test::process_temp_path(
        "bipo_indenter_" +
        std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& contact) {
    const fs::path p = dir_ / "case.yaml";
    std::ofstream(p) << kHead << contact;
    return p;
  }

  /// Reads a case with `contact` expecting an InputError starting with
  /// "<file>:<line>: <path>: " and containing `detail`; `line` is that of
  /// `marker` in the file.
  void expect_error(const std::string& contact, const std::string& path, const std::string& marker,
                    const std::string& detail) {
    const fs::path file = write(contact);
    const std::string text = kHead + contact;
    const int line =
        1 + static_cast<int>(std::count(text.begin(),
                                        text.begin() + static_cast<long>(text.find(marker)), '\n'));
    try {
      (void)bipo::read_case(file);
      ADD_FAILURE() << "no error for " << path;
    } catch (const bipo::InputError& e) {
      const std::string msg = e.what();
      const std::string prefix = file.string() + ":" + std::to_string(line) + ": " + path + ": ";
      EXPECT_EQ(msg.rfind(prefix, 0), 0u) << "message: " << msg << "\nexpected prefix: " << prefix;
      EXPECT_NE(msg.find(detail), std::string::npos) << "message: " << msg;
    }
  }

  static constexpr const char* kHead =
      "mesh: {cylinder: {}}\n"
      "material: {young: 210000, poisson: 0.3}\n"
      "load_program: [{to: 1, increments: 5}]\n";
  fs::path dir_;
};

TEST_F(IndenterCaseFile, SphereAndCylinderReadToTheRightValues) {
  const bipo::Case c = bipo::read_case(write(
      "contact:\n"
      "  - {name: ball, set: top, friction: {mu: 0.3}, motion: {displacement: [0, 0, -0.01]},\n"
      "     sphere: {center: [0, 0, 12], radius: 10}}\n"
      "  - {set: side, friction: {mu: 0.2}, direction: {vector: [0, 3, 0]},\n"
      "     cylinder: {point: [1, 2, 3], axis: [0, 2, 0], radius: 4}}\n"));
  ASSERT_EQ(c.contacts.size(), 2u);
  EXPECT_EQ(c.contacts[0].shape, bipo::ContactShape::sphere);
  EXPECT_EQ(c.contacts[0].point, Eigen::Vector3d(0, 0, 12));
  EXPECT_EQ(c.contacts[0].radius, 10.0);
  EXPECT_EQ(c.contacts[0].direction_angle, 0.0);
  EXPECT_EQ(c.contacts[0].motion, Eigen::Vector3d(0, 0, -0.01));
  EXPECT_EQ(c.contacts[1].shape, bipo::ContactShape::cylinder);
  EXPECT_EQ(c.contacts[1].axis, Eigen::Vector3d::UnitY());
  EXPECT_EQ(c.contacts[1].radius, 4.0);
  EXPECT_FALSE(c.contacts[1].direction_angle);
  EXPECT_EQ(c.contacts[1].direction, Eigen::Vector3d::UnitY());
}

TEST_F(IndenterCaseFile, ExactlyOneSurface) {
  expect_error("contact:\n  - set: top\n    friction: {mu: 0}\n", "contact[0].plane", "set: top",
               "missing required key; expected a map {point: [x, y, z], normal: [x, y, z]}, or "
               "instead a rigid indenter sphere: {center, radius} or cylinder");
  expect_error(
      "contact:\n  - set: top\n    friction: {mu: 0}\n"
      "    plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n"
      "    sphere: {center: [0, 0, 0], radius: 1}\n",
      "contact[0]", "set: top", "got more than one");
}

TEST_F(IndenterCaseFile, DegenerateIndenters) {
  const std::string head = "contact:\n  - set: top\n    friction: {mu: 0}\n";
  expect_error(head + "    sphere: {center: [0, 0, 0], radius: 0}\n", "contact[0].sphere.radius",
               "    sphere:", "expected a length in (0, 1e9], got 0");
  expect_error(head + "    sphere: {center: [0, 0, 0]}\n", "contact[0].sphere.radius",
               "sphere:", "missing required key");
  expect_error(head + "    cylinder: {point: [0, 0, 0], axis: [0, 0, 0], radius: 1}\n",
               "contact[0].cylinder.axis",
               "    cylinder:", "expected a non-zero axis, got [0, 0, 0]");
  expect_error(head + "    cylinder: {point: [0, 0, 0], normal: [0, 0, 1], radius: 1}\n",
               "contact[0].cylinder.normal", "    cylinder:", "allowed keys: point, axis, radius");
  expect_error(
      head + "    sphere: {center: [0, 0, 0], radius: 1}\n    direction: {vector: [0, 0, 0]}\n",
      "contact[0].direction.vector", "direction:", "expected a non-zero vector");
}

/// Sets up the analysis of `contact` on the built-in cylinder (its node
/// set `bottom`, z = 0, holds a node on the z axis) expecting an InputError
/// starting with "<file>:<line>: <path>: " and containing `detail`.
void expect_setup_error(const fs::path& file, const std::string& text, const std::string& path,
                        const std::string& marker, const std::string& detail) {
  std::ofstream(file) << text;
  const int line =
      1 + static_cast<int>(
              std::count(text.begin(), text.begin() + static_cast<long>(text.find(marker)), '\n'));
  const bipo::Case c = bipo::read_case(file);
  const bipo::Mesh mesh = bipo::load_mesh(c);
  try {
    bipo::Analysis analysis(c, mesh);
    ADD_FAILURE() << "no error for " << path;
  } catch (const bipo::InputError& e) {
    const std::string msg = e.what();
    const std::string prefix = file.string() + ":" + std::to_string(line) + ": " + path + ": ";
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << "message: " << msg << "\nexpected prefix: " << prefix;
    EXPECT_NE(msg.find(detail), std::string::npos) << "message: " << msg;
  }
}

TEST_F(IndenterCaseFile, NodeAtTheCentreOrOnTheAxisOrBodyInsideIsAnInputError) {
  const std::string head = std::string(kHead) +
                           "boundary_conditions: [{set: top, displacement: {x: 0, y: 0, z: 0}}]\n"
                           "contact:\n  - set: bottom\n    friction: {mu: 0.2}\n";
  const fs::path file = dir_ / "case.yaml";
  expect_setup_error(file, head + "    cylinder: {point: [0, 0, -3], axis: [0, 0, 1], radius: 1}\n",
                     "contact[0].cylinder", "    cylinder:",
                     "is on the cylinder's axis (within 1e-9 R), where the normal is undefined");
  expect_setup_error(file, head + "    sphere: {center: [0, 0, 0], radius: 1}\n",
                     "contact[0].sphere", "    sphere:", "is at the sphere's centre");
  expect_setup_error(file,
                     head +
                         "    sphere: {center: [0, 0, -1], radius: 1}\n"
                         "    direction: {vector: [0, 0, 1]}\n",
                     "contact[0].direction",
                     "    direction:", "has its normal along the friction direction vector");
  // The whole body (radius 10, height 10) inside a sphere of radius 30.
  expect_setup_error(file, head + "    sphere: {center: [0, 0, 5], radius: 30}\n",
                     "contact[0].sphere", "    sphere:", "the body is inside the sphere");
  // The same sphere below the face: accepted.
  std::ofstream(file) << head << "    sphere: {center: [0, 0, -30], radius: 30}\n";
  const bipo::Case c = bipo::read_case(file);
  const bipo::Mesh mesh = bipo::load_mesh(c);
  const bipo::Analysis analysis(c, mesh);
  // Its axis of approach (probes' radial directions): the normal at the
  // node nearest to it, on the z axis.
  EXPECT_EQ(analysis.contact().planes()[0].normal, Eigen::Vector3d::UnitZ());
  EXPECT_EQ(analysis.contact().planes()[0].radial_direction(Eigen::Vector3d(0, 3, 0)),
            Eigen::Vector3d::UnitY());
}

}  // namespace
