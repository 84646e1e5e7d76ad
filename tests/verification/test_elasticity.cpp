// Verification of the linear-elastic hex8 solver against exact solutions
// (issue 2): the patch test, uniaxial compression of the punch cylinder, and
// the torsion of a circular shaft under mesh refinement.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numbers>

#include "../process_temp_path.hpp"
#include "elasticity_support.hpp"
#include "fem/elasticity.hpp"
#include "mesh/generate.hpp"
#include "mesh/gmsh_io.hpp"
#include "solver/analysis.hpp"
#include "solver/linear_solver.hpp"

namespace bipo {
namespace {

std::vector<int> boundary_nodes_of_box(const Mesh& mesh) {
  std::vector<int> nodes;
  for (const char* name : {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"})
    for (int n : mesh.node_set(name)) nodes.push_back(n);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

TEST(PatchTest, DistortedMeshReproducesLinearFieldAndConstantStress) {
  Mesh mesh = generate_box({0, 0, 0}, {2.0, 1.0, 1.5}, 4, 3, 5);
  distort_interior_nodes(mesh, 0.25, 42);
  const Matrix6d d = isotropic_elasticity(210000.0, 0.3);
  Eigen::Matrix3d a;
  a << 1e-3, 2e-4, -3e-4, 5e-4, -2e-3, 1e-4, -4e-4, 3e-4, 1.5e-3;
  const Eigen::Vector3d b(0.01, -0.02, 0.03);
  auto exact = [&](const Eigen::Vector3d& x) -> Eigen::Vector3d { return a * x + b; };
  const Eigen::VectorXd u = solve_with_prescribed(mesh, d, boundary_nodes_of_box(mesh), exact);
  double max_error = 0.0, max_u = 0.0;
  for (int n = 0; n < mesh.n_nodes(); ++n) {
    max_error = std::max(max_error, (u.segment<3>(3 * n) - exact(mesh.nodes[n])).norm());
    max_u = std::max(max_u, exact(mesh.nodes[n]).norm());
  }
  EXPECT_LT(max_error / max_u, 1e-10);
  // Constant stress D eps, eps the symmetric part of a (Voigt, engineering shear).
  Vector6d eps;
  eps << a(0, 0), a(1, 1), a(2, 2), a(1, 2) + a(2, 1), a(0, 2) + a(2, 0), a(0, 1) + a(1, 0);
  const Vector6d sigma = d * eps;
  for (const Vector6d& s : element_stresses(mesh, d, u))
    EXPECT_LT((s - sigma).norm() / sigma.norm(), 1e-10);
}

/// Case of the uniaxial compression of the cylinder with roller supports:
/// bottom uz = 0, top uz = -delta, and the in-plane rigid motion removed by
/// conditions the uniform state satisfies: u = 0 in-plane at the bottom
/// centre, uy = 0 at (R, 0, 0), ux = 0 at (0, R, 0).
Case roller_compression_case(Mesh& mesh, double delta) {
  auto nearest = [&](const Eigen::Vector3d& p) {
    int best = 0;
    for (int n = 0; n < mesh.n_nodes(); ++n)
      if ((mesh.nodes[n] - p).norm() < (mesh.nodes[best] - p).norm()) best = n;
    return best;
  };
  mesh.node_sets["centre"] = {nearest({0, 0, 0})};
  mesh.node_sets["east"] = {nearest({10, 0, 0})};
  mesh.node_sets["north"] = {nearest({0, 10, 0})};
  Case c;
  c.source = "roller_compression";
  c.material = {210000.0, 0.3};
  c.program.segments = {{1.0, 1, 0}};
  c.dirichlet.push_back({"bottom", {std::nullopt, std::nullopt, 0.0}, std::nullopt});
  c.dirichlet.push_back({"top", {std::nullopt, std::nullopt, -delta}, std::nullopt});
  c.dirichlet.push_back({"centre", {0.0, 0.0, std::nullopt}, std::nullopt});
  c.dirichlet.push_back({"east", {std::nullopt, 0.0, std::nullopt}, std::nullopt});
  c.dirichlet.push_back({"north", {0.0, std::nullopt, std::nullopt}, std::nullopt});
  return c;
}

TEST(UniaxialCompression, PunchCylinderGivesUniformStateExactly) {
  Mesh mesh = generate_cylinder({});
  const double delta = 0.1, strain = -delta / 10.0, young = 210000.0, nu = 0.3;
  const Case c = roller_compression_case(mesh, delta);
  Analysis analysis(c, mesh);
  const StepResult step = analysis.advance_to(1.0);
  const Eigen::VectorXd& u = analysis.displacement();
  for (int n = 0; n < mesh.n_nodes(); ++n) {
    const Eigen::Vector3d& x = mesh.nodes[n];
    const Eigen::Vector3d exact(-nu * strain * x.x(), -nu * strain * x.y(), strain * x.z());
    ASSERT_LT((u.segment<3>(3 * n) - exact).norm(), 1e-9 * delta) << "node " << n;
  }
  for (const Vector6d& s : element_stresses(mesh, analysis.elasticity(), u)) {
    EXPECT_NEAR(s(2), young * strain, 1e-9 * young * std::abs(strain));
    EXPECT_LT(s.head<2>().norm() + s.tail<3>().norm(), 1e-9 * young * std::abs(strain));
  }
  // The top reaction is the stress times the cross-section of the mesh.
  EXPECT_LT(step.equilibrium_residual, 1e-12);
  const double top_force = step.dirichlet_reactions[1].z();
  EXPECT_LT(top_force, 0.0);
}

TEST(MeshRoundTrip, WrittenAndReadPunchMeshGivesTheSameSolution) {
  // The generated punch and its .msh copy (binary 4.1: bit-exact nodes) must
  // give the same compression solution, node for node.
  Mesh generated = generate_cylinder({});
  const auto file =
      bipo::test::process_temp_path("bipo_round_trip_punch").replace_extension(".msh");
  write_msh(generated, file, true, 4.1);
  Mesh read = read_msh(file);
  std::filesystem::remove(file);
  ASSERT_EQ(read.n_nodes(), generated.n_nodes());
  ASSERT_EQ(read.n_hexes(), 1280);
  const Case c = roller_compression_case(generated, 0.1);
  (void)roller_compression_case(read, 0.1);  // the same single-node sets on the copy
  Analysis a(c, generated), b(c, read);
  const StepResult step_a = a.advance_to(1.0), step_b = b.advance_to(1.0);
  EXPECT_EQ((a.displacement() - b.displacement()).lpNorm<Eigen::Infinity>(), 0.0);
  EXPECT_EQ(step_a.dirichlet_reactions[1], step_b.dirichlet_reactions[1]);
}

/// Torque of the top face of a cylinder twisted by theta (bottom clamped).
double torsion_torque(int core, int ring, int layers, double theta) {
  const Mesh mesh = generate_cylinder({10.0, 10.0, core, ring, layers});
  const Matrix6d d = isotropic_elasticity(210000.0, 0.3);
  std::vector<int> fixed = mesh.node_set("bottom");
  for (int n : mesh.node_set("top")) fixed.push_back(n);
  auto exact = [&](const Eigen::Vector3d& x) -> Eigen::Vector3d {
    const double angle = theta * x.z() / 10.0;
    return Eigen::Vector3d(-angle * x.y(), angle * x.x(), 0.0);
  };
  Eigen::VectorXd reactions;
  const Eigen::VectorXd u = solve_with_prescribed(mesh, d, fixed, exact, &reactions);
  double torque = 0.0;
  for (int n : mesh.node_set("top"))
    torque += mesh.nodes[n].x() * reactions(3 * n + 1) - mesh.nodes[n].y() * reactions(3 * n);
  return torque;
}

TEST(Torsion, TorqueConvergesAtSecondOrderToSaintVenant) {
  // T = G J theta / H with J = pi R^4 / 2 for the circular shaft.
  const double theta = 1e-3, shear = 210000.0 / (2.0 * 1.3);
  const double exact = shear * std::numbers::pi * std::pow(10.0, 4) / 2.0 * theta / 10.0;
  std::vector<double> errors;
  for (int level : {4, 8, 16}) {
    const double torque = torsion_torque(level, level, 2, theta);
    errors.push_back(std::abs(torque - exact) / exact);
  }
  const double rate_1 = std::log2(errors[0] / errors[1]);
  const double rate_2 = std::log2(errors[1] / errors[2]);
  RecordProperty("rate_coarse", std::to_string(rate_1));
  RecordProperty("rate_fine", std::to_string(rate_2));
  std::printf("torsion torque errors %.4e %.4e %.4e, rates %.3f %.3f\n", errors[0], errors[1],
              errors[2], rate_1, rate_2);
  EXPECT_GT(rate_2, 1.8) << "errors " << errors[0] << ' ' << errors[1] << ' ' << errors[2];
  EXPECT_LT(errors[2], 5e-3);
}

}  // namespace
}  // namespace bipo
