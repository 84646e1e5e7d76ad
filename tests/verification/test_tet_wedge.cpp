// Verification of the 4-node tetrahedron and the 6-node wedge (issue 16)
// against exact solutions, as test_elasticity.cpp does for the hexahedron:
// the patch test on irregular meshes (cut from a distorted box, and Gmsh's
// unstructured meshes of meshes/example2.geo), the uniform uniaxial state of
// the punch cylinder, the torsion of a circular shaft under refinement, and a
// frictional contact case on the tetrahedral and hexahedral Gmsh meshes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "../process_temp_path.hpp"
#include "contact/node_to_plane.hpp"
#include "elasticity_support.hpp"
#include "fem/elasticity.hpp"
#include "mesh/generate.hpp"
#include "mesh/msh_reader.hpp"
#include "mesh/quality.hpp"
#include "solver/analysis.hpp"
#include "solver/linear_solver.hpp"

namespace bipo {
namespace {

const std::filesystem::path kMeshes = std::filesystem::path(BIPO_SOURCE_DIR) / "meshes";

/// The nodes of the boundary faces (quadrilaterals and triangles).
std::vector<int> boundary_nodes(const Mesh& mesh) {
  const BoundaryFaces faces = boundary_faces_on_node_set(mesh, mesh.node_set("all"));
  std::vector<int> nodes;
  for (const auto& q : faces.quads) nodes.insert(nodes.end(), q.begin(), q.end());
  for (const auto& t : faces.triangles) nodes.insert(nodes.end(), t.begin(), t.end());
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

/// The patch test: u = A x + b prescribed on the boundary must come out
/// exactly inside, with the constant stress D eps in every element.
void expect_patch_test_passes(const Mesh& mesh, const std::string& what) {
  const Matrix6d d = isotropic_elasticity(210000.0, 0.3);
  Eigen::Matrix3d a;
  a << 1e-3, 2e-4, -3e-4, 5e-4, -2e-3, 1e-4, -4e-4, 3e-4, 1.5e-3;
  const Eigen::Vector3d b(0.01, -0.02, 0.03);
  auto exact = [&](const Eigen::Vector3d& x) -> Eigen::Vector3d { return a * x + b; };
  const std::vector<int> fixed = boundary_nodes(mesh);
  ASSERT_LT(fixed.size(), mesh.nodes.size()) << what << ": no interior node";
  const Eigen::VectorXd u = solve_with_prescribed(mesh, d, fixed, exact);
  double max_error = 0.0, max_u = 0.0;
  for (int n = 0; n < mesh.n_nodes(); ++n) {
    max_error = std::max(max_error, (u.segment<3>(3 * n) - exact(mesh.nodes[n])).norm());
    max_u = std::max(max_u, exact(mesh.nodes[n]).norm());
  }
  EXPECT_LT(max_error / max_u, 1e-10) << what;
  Vector6d eps;
  eps << a(0, 0), a(1, 1), a(2, 2), a(1, 2) + a(2, 1), a(0, 2) + a(2, 0), a(0, 1) + a(1, 0);
  const Vector6d sigma = d * eps;
  const auto stresses = element_stresses(mesh, d, u);
  ASSERT_EQ(static_cast<int>(stresses.size()), mesh.n_elements());
  double worst = 0.0;
  for (const Vector6d& s : stresses) worst = std::max(worst, (s - sigma).norm() / sigma.norm());
  EXPECT_LT(worst, 1e-10) << what;
}

TEST(TetWedgePatchTest, DistortedBoxCutIntoTetrahedraAndWedges) {
  Mesh box = generate_box({0, 0, 0}, {2.0, 1.0, 1.5}, 4, 3, 5);
  distort_interior_nodes(box, 0.25, 42);
  const Mesh tets = split_into_tetrahedra(box);
  EXPECT_EQ(tets.n_tets(), 12 * 60);
  check_element_jacobians(tets, "tets");
  expect_patch_test_passes(tets, "tetrahedra cut from the distorted box");
  const Mesh wedges = split_into_wedges(box);
  EXPECT_EQ(wedges.n_wedges(), 2 * 60);
  check_element_jacobians(wedges, "wedges");
  expect_patch_test_passes(wedges, "wedges cut from the distorted box");
}

TEST(TetWedgePatchTest, MixedMeshOfHexahedraAndWedges) {
  // The distorted box with the hexahedra of x > 1 cut into wedges: the cut
  // faces (z = const) are shared only within a column of wedges, and the
  // faces between a hexahedron and a wedge are quadrilaterals on both sides,
  // so the mixed mesh is conforming.
  Mesh box = generate_box({0, 0, 0}, {2.0, 1.0, 1.5}, 4, 3, 5);
  distort_interior_nodes(box, 0.25, 42);
  const Mesh wedges = split_into_wedges(box);
  Mesh mixed = box;
  mixed.hexes.clear();
  mixed.hex_tags.clear();
  for (std::size_t e = 0; e < box.hexes.size(); ++e) {
    Eigen::Vector3d centre = Eigen::Vector3d::Zero();
    for (const int node : box.hexes[e]) centre += box.nodes[node] / 8.0;
    if (centre.x() < 1.0) {
      mixed.hexes.push_back(box.hexes[e]);
    } else {
      mixed.wedges.push_back(wedges.wedges[2 * e]);
      mixed.wedges.push_back(wedges.wedges[2 * e + 1]);
    }
  }
  ASSERT_GT(mixed.n_hexes(), 0);
  ASSERT_GT(mixed.n_wedges(), 0);
  check_element_jacobians(mixed, "mixed");
  expect_patch_test_passes(mixed, "hexahedra and wedges in one mesh");
}

TEST(TetWedgePatchTest, GmshUnstructuredMeshesOfExample2) {
  const Mesh tets = read_msh(kMeshes / "example2_tet.msh");
  EXPECT_GT(tets.n_tets(), 1000);
  EXPECT_EQ(tets.n_hexes() + tets.n_wedges(), 0);
  expect_patch_test_passes(tets, "example2_tet.msh");
  const Mesh wedges = read_msh(kMeshes / "example2_wedge.msh");
  EXPECT_GT(wedges.n_wedges(), 500);
  EXPECT_EQ(wedges.n_hexes() + wedges.n_tets(), 0);
  expect_patch_test_passes(wedges, "example2_wedge.msh");
}

/// Roller compression of the cylinder (test_elasticity.cpp): the exact state
/// is uniform, so every element that passes the patch test gives it exactly.
void expect_uniform_compression(Mesh mesh, const std::string& what) {
  auto nearest = [&](const Eigen::Vector3d& p) {
    int best = 0;
    for (int n = 0; n < mesh.n_nodes(); ++n)
      if ((mesh.nodes[n] - p).norm() < (mesh.nodes[best] - p).norm()) best = n;
    return best;
  };
  mesh.node_sets["centre"] = {nearest({0, 0, 0})};
  mesh.node_sets["east"] = {nearest({10, 0, 0})};
  mesh.node_sets["north"] = {nearest({0, 10, 0})};
  const double delta = 0.1, strain = -delta / 10.0, young = 210000.0, nu = 0.3;
  Case c;
  c.source = "roller_compression";
  c.material = {young, nu};
  c.program.segments = {{1.0, 1, 0}};
  c.dirichlet.push_back({"bottom", {std::nullopt, std::nullopt, 0.0}, std::nullopt});
  c.dirichlet.push_back({"top", {std::nullopt, std::nullopt, -delta}, std::nullopt});
  c.dirichlet.push_back({"centre", {0.0, 0.0, std::nullopt}, std::nullopt});
  c.dirichlet.push_back({"east", {std::nullopt, 0.0, std::nullopt}, std::nullopt});
  c.dirichlet.push_back({"north", {0.0, std::nullopt, std::nullopt}, std::nullopt});
  Analysis analysis(c, mesh);
  const StepResult step = analysis.advance_to(1.0);
  const Eigen::VectorXd& u = analysis.displacement();
  for (int n = 0; n < mesh.n_nodes(); ++n) {
    const Eigen::Vector3d& x = mesh.nodes[n];
    const Eigen::Vector3d exact(-nu * strain * x.x(), -nu * strain * x.y(), strain * x.z());
    ASSERT_LT((u.segment<3>(3 * n) - exact).norm(), 1e-9 * delta) << what << " node " << n;
  }
  for (const Vector6d& s : element_stresses(mesh, analysis.elasticity(), u)) {
    ASSERT_NEAR(s(2), young * strain, 1e-9 * young * std::abs(strain)) << what;
    ASSERT_LT(s.head<2>().norm() + s.tail<3>().norm(), 1e-9 * young * std::abs(strain)) << what;
  }
  EXPECT_LT(step.equilibrium_residual, 1e-12) << what;
}

TEST(TetWedgeUniaxialCompression, PunchCylinderGivesUniformStateExactly) {
  expect_uniform_compression(split_into_tetrahedra(generate_cylinder({})), "tetrahedra");
  expect_uniform_compression(split_into_wedges(generate_cylinder({})), "wedges");
}

/// Torque of the top face of the cylinder (radius 10, height 10) twisted by
/// theta with the bottom clamped, on the O-grid of `level` x `level` elements
/// in `layers` layers, cut into tetrahedra or wedges.
double torsion_torque(int level, int layers, bool tetrahedra, double theta) {
  const Mesh hexes = generate_cylinder({10.0, 10.0, level, level, layers});
  const Mesh mesh = tetrahedra ? split_into_tetrahedra(hexes) : split_into_wedges(hexes);
  const Matrix6d d = isotropic_elasticity(210000.0, 0.3);
  std::vector<int> fixed = mesh.node_set("bottom");
  for (int n : mesh.node_set("top")) fixed.push_back(n);
  auto exact = [&](const Eigen::Vector3d& x) -> Eigen::Vector3d {
    const double angle = theta * x.z() / 10.0;
    return Eigen::Vector3d(-angle * x.y(), angle * x.x(), 0.0);
  };
  Eigen::VectorXd reactions;
  (void)solve_with_prescribed(mesh, d, fixed, exact, &reactions);
  double torque = 0.0;
  for (int n : mesh.node_set("top"))
    torque += mesh.nodes[n].x() * reactions(3 * n + 1) - mesh.nodes[n].y() * reactions(3 * n);
  return torque;
}

/// Relative torque errors against Saint-Venant, T = G J theta / H with
/// J = pi R^4 / 2, at the levels 4 and 8 (layers = level / 2: the
/// tetrahedron must also resolve the field along z, which is bilinear in y
/// and z).
std::vector<double> torsion_errors(bool tetrahedra) {
  const double theta = 1e-3, shear = 210000.0 / (2.0 * 1.3);
  const double exact = shear * std::numbers::pi * std::pow(10.0, 4) / 2.0 * theta / 10.0;
  std::vector<double> errors;
  for (int level : {4, 8}) {
    const double torque = torsion_torque(level, level / 2, tetrahedra, theta);
    errors.push_back((torque - exact) / exact);
  }
  return errors;
}

TEST(TetWedgeTorsion, TorqueConvergesAtSecondOrderToSaintVenant) {
  // Measured (levels 4, 8, 16): tetrahedra +1.558e-1, +3.470e-2, +8.361e-3
  // (rates 2.17, 2.05); wedges -5.023e-2, -1.278e-2, -3.208e-3 (rates 1.98,
  // 1.99). Two O(h^2) errors: the polygonal section lies inside the circle
  // (smaller J: torque too low), and the displacement method is too stiff
  // (torque too high); the linear tetrahedron cannot represent the bilinear
  // field y z, so its stiffness error dominates. The wedge (linear in z
  // times linear in the section) represents it, like the hexahedron. Level
  // 16 takes about ten seconds, so the suite stops at 8.
  for (const bool tetrahedra : {true, false}) {
    const std::vector<double> e = torsion_errors(tetrahedra);
    const double rate = std::log2(std::abs(e[0] / e[1]));
    const char* what = tetrahedra ? "tetrahedra" : "wedges";
    std::printf("%s: torsion torque errors %.4e %.4e, rate %.3f\n", what, e[0], e[1], rate);
    EXPECT_GT(rate, 1.8) << what;
    EXPECT_GT(e[1] * (tetrahedra ? 1.0 : -1.0), 0.0) << what << ": sign of the error";
    EXPECT_LT(std::abs(e[1]), tetrahedra ? 4e-2 : 1.5e-2) << what;
  }
}

/// The block of meshes/example2.geo pressed on a rigid plane with isotropic
/// friction mu = 0.3 by its top face, held in-plane and pushed down by
/// 0.02 mm (E = 70000, nu = 0.33), in 4 increments. The Poisson expansion of
/// the base is resisted by friction: a central zone sticks, a rim slips.
struct PressedBlock {
  double normal_force = 0.0;            // sum of r_n (N)
  double area = 0.0, stick_area = 0.0;  // tributary areas (mm^2)
  int n_contact = 0;
};

PressedBlock press_block(const std::filesystem::path& file) {
  const Mesh mesh = read_msh(file);
  Case c;
  c.source = file;
  c.material = {70000.0, 0.33};
  c.program.segments = {{1.0, 4, 0}};
  c.dirichlet.push_back({"top", {0.0, 0.0, -0.02}, std::nullopt});
  ContactPlane plane;
  plane.name = "plane";
  plane.set = "contact";
  plane.friction = {0.3, 0.3, 0.3, 0.3};
  c.contacts.push_back(plane);
  Analysis analysis(c, mesh);
  const StepResult step = analysis.advance_to(1.0);
  // Tributary areas: an equal share of each boundary face of the set.
  std::vector<double> area(mesh.nodes.size(), 0.0);
  const BoundaryFaces faces = boundary_faces_on_node_set(mesh, mesh.node_set("contact"));
  for (const auto& q : faces.quads) {
    const double a =
        0.5 *
        (mesh.nodes[q[2]] - mesh.nodes[q[0]]).cross(mesh.nodes[q[3]] - mesh.nodes[q[1]]).norm();
    for (const int n : q) area[n] += a / 4.0;
  }
  for (const auto& t : faces.triangles) {
    const double a =
        0.5 *
        (mesh.nodes[t[1]] - mesh.nodes[t[0]]).cross(mesh.nodes[t[2]] - mesh.nodes[t[0]]).norm();
    for (const int n : t) area[n] += a / 3.0;
  }
  PressedBlock r;
  r.normal_force = step.contact_normal_force;
  const auto& nodes = analysis.contact_mesh_nodes();
  r.n_contact = static_cast<int>(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    r.area += area[nodes[i]];
    if (analysis.contact_states()[i].state == ContactState::stick) r.stick_area += area[nodes[i]];
  }
  std::printf("%s: N = %.6g, area %.6g, stick area %.6g (%d contact nodes)\n",
              file.filename().c_str(), r.normal_force, r.area, r.stick_area, r.n_contact);
  return r;
}

TEST(TetContact, PressedBlockOnTetrahedraAgreesWithHexahedra) {
  const PressedBlock hex = press_block(kMeshes / "example2.msh");
  const PressedBlock tet = press_block(kMeshes / "example2_tet.msh");
  // Every node of the face is closed: the tributary areas add up to the face.
  EXPECT_NEAR(hex.area, 100.0, 1e-12);
  EXPECT_NEAR(tet.area, 100.0, 1e-12);
  // Tolerances from refinement (DISABLED_RefinedMeshesOfThePressedBlock),
  // measured:            h = 1 mm (here)          h = 0.5 mm
  //   N hexahedra        10693.5                  10606.5
  //   N tetrahedra       10803.2 (+1.03 %)        10653.6 (+0.44 %)
  //   stick, hexahedra   49.0 mm^2                51.25 mm^2
  //   stick, tetrahedra  41.1 mm^2                41.4 mm^2
  // The normal forces converge to each other (each changes by about 1 %
  // from h = 1 to 0.5): 2 % at h = 1. The stick zone's area is not
  // converged at these sizes (the edge of the zone is resolved node by node,
  // along grid lines on the hexahedra, raggedly on the unstructured
  // tetrahedra): the bound only says that the zone is the same central
  // patch, within 12 % of the face.
  EXPECT_NEAR(tet.normal_force / hex.normal_force, 1.0, 0.02);
  EXPECT_NEAR(tet.stick_area, hex.stick_area, 12.0);
  EXPECT_GT(tet.stick_area, 30.0);
  EXPECT_LT(tet.stick_area, 70.0);
}

/// The same at h = 0.5 mm: the meshes are made by Gmsh from
/// meshes/example2.geo (`gmsh` on the PATH). Run by hand (about a minute):
///   bipo_verification_tests --gtest_also_run_disabled_tests
///       --gtest_filter='TetContact.DISABLED_*'
TEST(TetContact, DISABLED_RefinedMeshesOfThePressedBlock) {
  const auto dir = bipo::test::process_temp_path("bipo_pressed_block");
  std::filesystem::create_directories(dir);
  for (const auto& [kind, name] : {std::pair{0, "hex"}, std::pair{1, "tet"}}) {
    const std::string command = "gmsh -3 -format msh4 -setnumber h 0.5 -setnumber kind " +
                                std::to_string(kind) + " '" + (kMeshes / "example2.geo").string() +
                                "' -o '" + (dir / (std::string(name) + ".msh")).string() +
                                "' > /dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  const PressedBlock hex = press_block(dir / "hex.msh");
  const PressedBlock tet = press_block(dir / "tet.msh");
  std::filesystem::remove_all(dir);
  std::printf("h = 0.5: N tet / hex - 1 = %.3e, stick area tet - hex = %.3g\n",
              tet.normal_force / hex.normal_force - 1.0, tet.stick_area - hex.stick_area);
}

/// The sum of the `area` column of a contact map (maps/step_NNNNNN.csv).
double map_area(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  // The column named "area", wherever it is (later columns may follow it).
  const auto split = [](const std::string& text) {
    std::vector<std::string> cells;
    std::stringstream stream(text);
    for (std::string cell; std::getline(stream, cell, ',');) cells.push_back(cell);
    return cells;
  };
  const std::vector<std::string> header = split(line);
  const auto column = std::find(header.begin(), header.end(), "area");
  EXPECT_NE(column, header.end()) << file;
  if (column == header.end()) return 0.0;
  const auto index = static_cast<std::size_t>(column - header.begin());
  double sum = 0.0;
  while (std::getline(in, line)) sum += std::stod(split(line).at(index));
  return sum;
}

TEST(Example2, HexahedralAndTetrahedralCasesRunAsDocumented) {
  // docs/case-file.md, Example 2: both cases run to completion, and the
  // tributary areas that bipo writes for the contact face (quadrilaterals,
  // resp. triangles) add up to the face's 10 x 10 mm.
  const auto root = bipo::test::process_temp_path("bipo_example2_test");
  std::filesystem::remove_all(root);
  for (const char* name : {"example2", "example2_tet"}) {
    const auto out = root / name;
    const std::string command = std::string("'") + BIPO_EXE + "' run -q -o '" + out.string() +
                                "' '" + BIPO_SOURCE_DIR + "/cases/" + name + ".yaml'";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    std::ifstream summary(out / "summary.json");
    std::stringstream text;
    text << summary.rdbuf();
    EXPECT_NE(text.str().find("\"status\": \"completed\""), std::string::npos) << name;
    EXPECT_NEAR(map_area(out / "maps" / "step_000060.csv"), 100.0, 1e-12) << name;
  }
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace bipo
