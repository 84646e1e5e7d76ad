// Tests of src/mesh: the cylinder and box generators, the quality checks and
// boundary faces, and the Gmsh .msh reader and writer (the reader's hostile
// inputs are in test_msh_reader.cpp).
#include <gtest/gtest.h>
#include <omp.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <clocale>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <numbers>
#include <random>
#include <string>

#include "../process_temp_path.hpp"
#include "core/errors.hpp"
#include "mesh/generate.hpp"
#include "mesh/gmsh_io.hpp"
#include "mesh/quality.hpp"

namespace bipo {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed at the end.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::random_device random;
    path_ = bipo::test::process_temp_path("bipo_mesh_" + std::string(info->name()) + "_" +
                                          std::to_string(random()));
    fs::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  [[nodiscard]] fs::path operator/(const std::string& name) const { return path_ / name; }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// The message of the InputError thrown by f (fails the test if none).
std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

// Largest distance from the image of a node to the nearest node; also checks
// that the images of distinct nodes are distinct nodes (brute force).
double symmetry_defect(const Mesh& mesh,
                       const std::function<Eigen::Vector3d(const Eigen::Vector3d&)>& map) {
  double worst = 0.0;
  std::vector<char> used(mesh.nodes.size(), 0);
  for (const auto& x : mesh.nodes) {
    const Eigen::Vector3d y = map(x);
    double best = std::numeric_limits<double>::infinity();
    std::size_t best_index = 0;
    for (std::size_t j = 0; j < mesh.nodes.size(); ++j) {
      const double d = (mesh.nodes[j] - y).cwiseAbs().maxCoeff();
      if (d < best) {
        best = d;
        best_index = j;
      }
    }
    EXPECT_FALSE(used[best_index]) << "two nodes map onto node " << best_index;
    used[best_index] = 1;
    worst = std::max(worst, best);
  }
  return worst;
}

double total_volume(const Mesh& mesh) {
  double volume = 0.0;
  for (int e = 0; e < mesh.n_hexes(); ++e) volume += hex_volume(mesh, e);
  return volume;
}

Eigen::Vector3d face_normal(const Mesh& mesh, const std::array<int, 4>& f) {
  const auto& x = mesh.nodes;
  return (x[f[2]] - x[f[0]]).cross(x[f[3]] - x[f[1]]);
}

// ---------------------------------------------------------------- cylinder --

TEST(Cylinder, DefaultCountsMatchTheHeadlineCase) {
  const Mesh mesh = generate_cylinder(CylinderParams{});
  EXPECT_EQ(mesh.n_hexes(), 1280);
  EXPECT_EQ(mesh.n_nodes(), 1685);
  EXPECT_EQ(mesh.node_set("bottom").size(), 337u);
  EXPECT_EQ(mesh.node_set("top").size(), 337u);
  EXPECT_EQ(mesh.node_set("lateral").size(), 5u * 32u);
  EXPECT_EQ(mesh.node_set("all").size(), 1685u);
  EXPECT_EQ(mesh.node_sets.size(), 4u);
  for (int i = 0; i < mesh.n_nodes(); ++i) ASSERT_EQ(mesh.node_tags[i], std::size_t(i) + 1);
  for (int e = 0; e < mesh.n_hexes(); ++e) ASSERT_EQ(mesh.hex_tags[e], std::size_t(e) + 1);
}

TEST(Cylinder, CountsFollowTheFormulas) {
  for (const auto& [core, ring, layers] :
       {std::array{1, 1, 1}, std::array{2, 3, 1}, std::array{5, 1, 3}, std::array{3, 7, 2}}) {
    SCOPED_TRACE(std::to_string(core) + " " + std::to_string(ring) + " " + std::to_string(layers));
    CylinderParams p;
    p.core = core;
    p.ring = ring;
    p.layers = layers;
    const Mesh mesh = generate_cylinder(p);
    const int per_layer = (core + 1) * (core + 1) + 4 * core * ring;
    EXPECT_EQ(mesh.n_hexes(), layers * (core * core + 4 * core * ring));
    EXPECT_EQ(mesh.n_nodes(), (layers + 1) * per_layer);
    EXPECT_EQ(mesh.node_set("bottom").size(), std::size_t(per_layer));
    EXPECT_EQ(mesh.node_set("top").size(), std::size_t(per_layer));
    EXPECT_EQ(mesh.node_set("lateral").size(), std::size_t((layers + 1) * 4 * core));
    EXPECT_NO_THROW(check_hex_jacobians(mesh, "generated"));
    // Every node is used by a hexahedron.
    std::vector<char> used(mesh.nodes.size(), 0);
    for (const auto& hex : mesh.hexes)
      for (const int node : hex) used[node] = 1;
    EXPECT_EQ(std::count(used.begin(), used.end(), 1), mesh.n_nodes());
  }
}

TEST(Cylinder, SetsLieOnTheirSurfaces) {
  CylinderParams p;
  p.radius = 3.5;
  p.height = 2.0;
  const Mesh mesh = generate_cylinder(p);
  for (const int i : mesh.node_set("bottom")) EXPECT_EQ(mesh.nodes[i].z(), 0.0);
  for (const int i : mesh.node_set("top")) EXPECT_EQ(mesh.nodes[i].z(), 2.0);
  for (const int i : mesh.node_set("lateral")) {
    EXPECT_NEAR(mesh.nodes[i].head<2>().norm(), 3.5, 1e-14 * 3.5);
  }
  // Nothing else is on the lateral surface, top or bottom.
  int on_circle = 0, on_bottom = 0;
  for (const auto& x : mesh.nodes) {
    on_circle += std::abs(x.head<2>().norm() - 3.5) < 1e-9 ? 1 : 0;
    on_bottom += x.z() == 0.0 ? 1 : 0;
  }
  EXPECT_EQ(on_circle, int(mesh.node_set("lateral").size()));
  EXPECT_EQ(on_bottom, int(mesh.node_set("bottom").size()));
}

TEST(Cylinder, IsExactlySymmetric) {
  const Mesh mesh = generate_cylinder(CylinderParams{});
  const double tolerance = 1e-14 * 10.0;  // exact by construction; round-off allowed
  using V = Eigen::Vector3d;
  EXPECT_LE(symmetry_defect(mesh, [](const V& x) { return V(-x.y(), x.x(), x.z()); }), tolerance);
  EXPECT_LE(symmetry_defect(mesh, [](const V& x) { return V(-x.x(), -x.y(), x.z()); }), tolerance);
  EXPECT_LE(symmetry_defect(mesh, [](const V& x) { return V(x.y(), -x.x(), x.z()); }), tolerance);
  EXPECT_LE(symmetry_defect(mesh, [](const V& x) { return V(-x.x(), x.y(), x.z()); }), tolerance);
  EXPECT_LE(symmetry_defect(mesh, [](const V& x) { return V(x.x(), -x.y(), x.z()); }), tolerance);
  EXPECT_LE(symmetry_defect(mesh, [](const V& x) { return V(x.y(), x.x(), x.z()); }), tolerance);
}

TEST(Cylinder, IsSymmetricForOddCore) {
  CylinderParams p;
  p.core = 5;
  p.ring = 3;
  p.layers = 1;
  const Mesh mesh = generate_cylinder(p);
  using V = Eigen::Vector3d;
  EXPECT_LE(symmetry_defect(mesh, [](const V& x) { return V(-x.y(), x.x(), x.z()); }), 1e-13);
  EXPECT_LE(symmetry_defect(mesh, [](const V& x) { return V(-x.x(), x.y(), x.z()); }), 1e-13);
  EXPECT_LE(symmetry_defect(mesh, [](const V& x) { return V(x.x(), -x.y(), x.z()); }), 1e-13);
}

TEST(Cylinder, ElementsAreWellShaped) {
  const Mesh mesh = generate_cylinder(CylinderParams{});
  EXPECT_NO_THROW(check_hex_jacobians(mesh, "generated"));
  // Scaled Jacobian at the corners: det of the three unit edge vectors.
  constexpr std::array<std::array<int, 4>, 8> corner = {{{0, 1, 3, 4},
                                                         {1, 2, 0, 5},
                                                         {2, 3, 1, 6},
                                                         {3, 0, 2, 7},
                                                         {4, 7, 5, 0},
                                                         {5, 4, 6, 1},
                                                         {6, 5, 7, 2},
                                                         {7, 6, 4, 3}}};
  double worst = 1.0;
  for (const auto& hex : mesh.hexes) {
    for (const auto& c : corner) {
      Eigen::Matrix3d m;
      for (int k = 0; k < 3; ++k) {
        m.col(k) = (mesh.nodes[hex[c[k + 1]]] - mesh.nodes[hex[c[0]]]).normalized();
      }
      worst = std::min(worst, m.determinant());
    }
  }
  // The ring elements at the square's corners have a 135 degree angle.
  EXPECT_GT(worst, 0.65);
  EXPECT_NEAR(total_volume(mesh), std::numbers::pi * 1000.0, 0.01 * std::numbers::pi * 1000.0);
}

TEST(Cylinder, VolumeConvergesAtSecondOrder) {
  const double radius = 2.0, height = 3.0;
  const double exact = std::numbers::pi * radius * radius * height;
  std::vector<double> errors;
  for (const int k : {4, 8, 16, 32}) {
    CylinderParams p;
    p.radius = radius;
    p.height = height;
    p.core = k;
    p.ring = k;
    p.layers = 1;
    errors.push_back(exact - total_volume(generate_cylinder(p)));
  }
  for (std::size_t i = 0; i + 1 < errors.size(); ++i) {
    EXPECT_GT(errors[i], 0.0);  // the inscribed polygon
    const double rate = std::log2(errors[i] / errors[i + 1]);
    EXPECT_NEAR(rate, 2.0, 0.05) << "refinement " << i;
  }
}

TEST(Cylinder, RejectsBadParameters) {
  CylinderParams p;
  p.core = 0;
  EXPECT_NE(input_error_of([&] { (void)generate_cylinder(p); }).find("core"), std::string::npos);
  p = CylinderParams{};
  p.radius = -1.0;
  EXPECT_NE(input_error_of([&] { (void)generate_cylinder(p); }).find("radius"), std::string::npos);
  p = CylinderParams{};
  p.layers = 0;
  EXPECT_NE(input_error_of([&] { (void)generate_cylinder(p); }).find("layers"), std::string::npos);
}

// ----------------------------------------------------------------- quarter --

CylinderParams graded(int core, int ring, int layers, double rim, double bottom);

// The quarter is the whole mesh's part in x, y >= 0: a quarter of its
// hexahedra, each one a hexahedron of the whole mesh (same corner positions
// to the last bit, same order), the nodes those hexahedra use, the sets
// restricted, and the symmetry sets exactly the nodes on x = 0 and y = 0.
TEST(CylinderQuarter, IsTheWholeMeshPartInThePositiveQuadrant) {
  for (const auto& [core, ring, layers, rim] :
       {std::array{2.0, 1.0, 1.0, 1.0}, std::array{8.0, 8.0, 4.0, 1.0},
        std::array{6.0, 5.0, 3.0, 2.0}}) {
    CylinderParams p =
        graded(static_cast<int>(core), static_cast<int>(ring), static_cast<int>(layers), rim, rim);
    SCOPED_TRACE(std::to_string(p.core) + " " + std::to_string(p.ring));
    const Mesh whole = generate_cylinder(p);
    p.sector = CylinderParams::Sector::quarter;
    const Mesh quarter = generate_cylinder(p);
    const int n = p.core, m = p.ring, l = p.layers;
    EXPECT_EQ(4 * quarter.n_hexes(), whole.n_hexes());
    const int per_layer = (n / 2 + 1) * (n / 2 + 1) + m * (n + 1);
    EXPECT_EQ(quarter.n_nodes(), (l + 1) * per_layer);
    EXPECT_EQ(quarter.node_set("bottom").size(), std::size_t(per_layer));
    EXPECT_EQ(quarter.node_set("top").size(), std::size_t(per_layer));
    EXPECT_EQ(quarter.node_set("lateral").size(), std::size_t((l + 1) * (n + 1)));
    EXPECT_EQ(quarter.node_set("symmetry_x0").size(), std::size_t((l + 1) * (n / 2 + 1 + m)));
    EXPECT_EQ(quarter.node_set("symmetry_y0").size(), std::size_t((l + 1) * (n / 2 + 1 + m)));
    EXPECT_EQ(quarter.node_sets.size(), 6u);
    EXPECT_NO_THROW(check_hex_jacobians(quarter, "quarter"));
    using Key = std::array<double, 3>;
    const auto key = [](const Eigen::Vector3d& x) { return Key{x.x(), x.y(), x.z()}; };
    std::map<std::vector<Key>, int> whole_hexes;
    for (const Hex8& hex : whole.hexes) {
      std::vector<Key> corners;
      for (const int node : hex) corners.push_back(key(whole.nodes[node]));
      whole_hexes[corners] = 1;
    }
    for (const Hex8& hex : quarter.hexes) {
      std::vector<Key> corners;
      for (const int node : hex) corners.push_back(key(quarter.nodes[node]));
      EXPECT_EQ(whole_hexes.count(corners), 1u);
    }
    for (int i = 0; i < quarter.n_nodes(); ++i) {
      const Eigen::Vector3d& x = quarter.nodes[i];
      ASSERT_GE(x.x(), 0.0);
      ASSERT_GE(x.y(), 0.0);
      const auto& x0 = quarter.node_set("symmetry_x0");
      const auto& y0 = quarter.node_set("symmetry_y0");
      EXPECT_EQ(std::binary_search(x0.begin(), x0.end(), i), x.x() == 0.0);
      EXPECT_EQ(std::binary_search(y0.begin(), y0.end(), i), x.y() == 0.0);
      const auto& bottom = quarter.node_set("bottom");
      EXPECT_EQ(std::binary_search(bottom.begin(), bottom.end(), i), x.z() == 0.0);
      ASSERT_EQ(quarter.node_tags[i], std::size_t(i) + 1);
    }
  }
}

TEST(CylinderQuarter, NeedsAnEvenCore) {
  CylinderParams p = graded(5, 2, 1, 1.0, 1.0);
  p.sector = CylinderParams::Sector::quarter;
  EXPECT_NE(input_error_of([&] {
              (void)generate_cylinder(p);
            }).find("a quarter sector needs an even core (grid lines on the axes), got 5"),
            std::string::npos);
}

// ----------------------------------------------------------------- grading --

CylinderParams graded(int core, int ring, int layers, double rim, double bottom) {
  CylinderParams p;
  p.core = core;
  p.ring = ring;
  p.layers = layers;
  p.rim_grading = rim;
  p.bottom_grading = bottom;
  return p;
}

TEST(CylinderGrading, DefaultIsTheUniformMeshBitForBit) {
  // The expressions of the uniform generator, evaluated independently: layer
  // l at height (l / L), ring k on the x axis at (1 - k / m) a + (k / m) R.
  for (const auto& [core, ring, layers] :
       {std::array{8, 8, 4}, std::array{16, 16, 8}, std::array{12, 12, 6}, std::array{3, 5, 7}}) {
    SCOPED_TRACE(std::to_string(core) + " " + std::to_string(ring) + " " + std::to_string(layers));
    CylinderParams p;
    p.core = core;
    p.ring = ring;
    p.layers = layers;
    EXPECT_EQ(p.rim_grading, 1.0);
    EXPECT_EQ(p.bottom_grading, 1.0);
    const Mesh mesh = generate_cylinder(p);
    EXPECT_EQ(mesh.nodes, generate_cylinder(graded(core, ring, layers, 1.0, 1.0)).nodes);
    const int per_layer = (core + 1) * (core + 1) + 4 * core * ring;
    for (int l = 0; l <= layers; ++l) {
      const double z = p.height * (static_cast<double>(l) / layers);
      for (int i = 0; i < per_layer; ++i) ASSERT_EQ(mesh.nodes[l * per_layer + i].z(), z);
    }
    if (core % 2 == 0) {
      const double a = 0.5 * p.radius * std::numbers::sqrt2 / 2.0;
      for (int k = 1; k <= ring; ++k) {
        const double s = static_cast<double>(k) / ring;
        const Eigen::Vector3d& x =
            mesh.nodes[(core + 1) * (core + 1) + (k - 1) * 4 * core + core / 2];
        EXPECT_EQ(x.x(), (1.0 - s) * a + s * p.radius) << "ring " << k;
        EXPECT_EQ(x.y(), 0.0);
      }
    }
  }
}

TEST(CylinderGrading, LayersFollowZetaToTheQ) {
  for (const double q : {1.0, 1.5, 2.0, 3.7}) {
    SCOPED_TRACE("q = " + std::to_string(q));
    const CylinderParams p = graded(4, 3, 5, 1.0, q);
    const Mesh mesh = generate_cylinder(p);
    const int per_layer = 25 + 4 * 4 * 3;
    for (int l = 0; l <= p.layers; ++l) {
      const double z = p.height * std::pow(static_cast<double>(l) / p.layers, q);
      for (int i = 0; i < per_layer; ++i) ASSERT_EQ(mesh.nodes[l * per_layer + i].z(), z);
    }
    for (const int i : mesh.node_set("bottom")) EXPECT_EQ(mesh.nodes[i].z(), 0.0);
    for (const int i : mesh.node_set("top")) EXPECT_EQ(mesh.nodes[i].z(), p.height);
    // The cross-section does not depend on the axial grading.
    const Mesh uniform = generate_cylinder(graded(4, 3, 5, 1.0, 1.0));
    for (int i = 0; i < mesh.n_nodes(); ++i) {
      ASSERT_EQ(mesh.nodes[i].head<2>(), uniform.nodes[i].head<2>());
    }
  }
}

TEST(CylinderGrading, RimSpacingFollowsThePowerLaw) {
  const int core = 6, ring = 5;
  const double radius = 10.0;
  const double a = 0.5 * radius * std::numbers::sqrt2 / 2.0;
  for (const double q : {1.0, 1.5, 2.0, 3.0}) {
    SCOPED_TRACE("q = " + std::to_string(q));
    const Mesh mesh = generate_cylinder(graded(core, ring, 2, q, 1.0));
    const int n_core = (core + 1) * (core + 1);
    // Along every radial line of the east block, from S on the square to C on
    // the circle: the node of ring k is on the segment SC at distance
    // ((m - k) / m)^q |SC| from C.
    for (int j = 0; j < core; ++j) {
      const double t = static_cast<double>(2 * j - core) / core;
      const double phi = 0.25 * std::numbers::pi * t;
      const Eigen::Vector2d S(a, a * t);
      const Eigen::Vector2d C(radius * std::cos(phi), radius * std::sin(phi));
      const double length = (C - S).norm();
      for (int k = 1; k <= ring; ++k) {
        const Eigen::Vector2d x = mesh.nodes[n_core + (k - 1) * 4 * core + j].head<2>();
        const double expected = std::pow(static_cast<double>(ring - k) / ring, q) * length;
        EXPECT_NEAR((C - x).norm(), expected, 1e-13 * radius) << "j " << j << " ring " << k;
        const Eigen::Vector2d d = (C - S) / length;
        EXPECT_NEAR(d.x() * (x - S).y() - d.y() * (x - S).x(), 0.0, 1e-13 * radius);  // on SC
      }
      // The rim element: (1 / m)^q of the radial line, the innermost
      // 1 - (1 - 1 / m)^q.
      const Eigen::Vector2d last = mesh.nodes[n_core + (ring - 2) * 4 * core + j].head<2>();
      EXPECT_NEAR((C - last).norm(), std::pow(1.0 / ring, q) * length, 1e-13 * radius);
      const Eigen::Vector2d first = mesh.nodes[n_core + j].head<2>();
      EXPECT_NEAR((first - S).norm(), (1.0 - std::pow(1.0 - 1.0 / ring, q)) * length,
                  1e-13 * radius);
    }
    for (const int i : mesh.node_set("lateral")) {
      EXPECT_NEAR(mesh.nodes[i].head<2>().norm(), radius, 1e-14 * radius);
    }
  }
}

TEST(CylinderGrading, KeepsTheExactSymmetries) {
  using V = Eigen::Vector3d;
  for (const auto& p :
       {graded(6, 5, 3, 1.7, 2.3), graded(5, 4, 2, 2.0, 1.5), graded(8, 8, 2, 2.0, 2.0)}) {
    SCOPED_TRACE(std::to_string(p.core) + " " + std::to_string(p.ring));
    const Mesh mesh = generate_cylinder(p);
    // To the last bit: the quadrants are exact rotations of one another.
    EXPECT_EQ(symmetry_defect(mesh, [](const V& x) { return V(-x.y(), x.x(), x.z()); }), 0.0);
    EXPECT_EQ(symmetry_defect(mesh, [](const V& x) { return V(-x.x(), -x.y(), x.z()); }), 0.0);
    EXPECT_EQ(symmetry_defect(mesh, [](const V& x) { return V(x.y(), -x.x(), x.z()); }), 0.0);
    EXPECT_EQ(symmetry_defect(mesh, [](const V& x) { return V(-x.x(), x.y(), x.z()); }), 0.0);
    EXPECT_EQ(symmetry_defect(mesh, [](const V& x) { return V(x.x(), -x.y(), x.z()); }), 0.0);
  }
}

TEST(CylinderGrading, HexahedraStayValidAndTheVolumeIsUnchanged) {
  for (const auto& p :
       {graded(8, 8, 4, 1.5, 1.5), graded(16, 16, 8, 2.0, 2.0), graded(16, 16, 8, 3.0, 3.0),
        graded(3, 7, 2, 4.0, 1.0), graded(1, 1, 1, 2.0, 2.0)}) {
    SCOPED_TRACE(std::to_string(p.core) + " " + std::to_string(p.rim_grading));
    const Mesh mesh = generate_cylinder(p);
    EXPECT_NO_THROW(check_hex_jacobians(mesh, "graded"));
    for (int e = 0; e < mesh.n_hexes(); ++e) ASSERT_GT(hex_min_gauss_jacobian(mesh, e), 0.0);
    // The boundary is the uniform mesh's (the same polygon prism), so is the
    // volume.
    const Mesh uniform = generate_cylinder(graded(p.core, p.ring, p.layers, 1.0, 1.0));
    EXPECT_NEAR(total_volume(mesh), total_volume(uniform), 1e-11 * total_volume(uniform));
  }
}

TEST(CylinderGrading, RejectsBadValuesNamingTheKey) {
  for (const double bad : {0.5, 0.0, -2.0, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()}) {
    CylinderParams p;
    p.rim_grading = bad;
    EXPECT_NE(input_error_of([&] { (void)generate_cylinder(p); }).find("rim_grading"),
              std::string::npos);
    p = CylinderParams{};
    p.bottom_grading = bad;
    EXPECT_NE(input_error_of([&] { (void)generate_cylinder(p); }).find("bottom_grading"),
              std::string::npos);
  }
}

// --------------------------------------------------------------------- box --

TEST(Box, CountsSetsAndCoordinates) {
  const Eigen::Vector3d lo(-1.0, 0.1, 2.0), hi(3.0, 0.7, 2.3);
  const Mesh mesh = generate_box(lo, hi, 4, 3, 2);
  EXPECT_EQ(mesh.n_hexes(), 24);
  EXPECT_EQ(mesh.n_nodes(), 5 * 4 * 3);
  EXPECT_EQ(mesh.node_set("xmin").size(), 12u);
  EXPECT_EQ(mesh.node_set("xmax").size(), 12u);
  EXPECT_EQ(mesh.node_set("ymin").size(), 15u);
  EXPECT_EQ(mesh.node_set("ymax").size(), 15u);
  EXPECT_EQ(mesh.node_set("zmin").size(), 20u);
  EXPECT_EQ(mesh.node_set("zmax").size(), 20u);
  EXPECT_EQ(mesh.node_set("all").size(), 60u);
  for (int d = 0; d < 3; ++d) {
    const std::string axis(1, "xyz"[d]);
    for (const int i : mesh.node_set(axis + "min")) EXPECT_EQ(mesh.nodes[i][d], lo[d]);
    for (const int i : mesh.node_set(axis + "max")) EXPECT_EQ(mesh.nodes[i][d], hi[d]);
  }
  EXPECT_NO_THROW(check_hex_jacobians(mesh, "box"));
  EXPECT_NEAR(total_volume(mesh), 4.0 * 0.6 * 0.3, 1e-14);
  EXPECT_FALSE(input_error_of([] { (void)generate_box({0, 0, 0}, {1, 0, 1}, 1, 1, 1); }).empty());
  EXPECT_FALSE(input_error_of([] { (void)generate_box({0, 0, 0}, {1, 1, 1}, 1, 0, 1); }).empty());
}

TEST(Box, DistortionMovesOnlyInteriorNodes) {
  const Mesh original = generate_box({0, 0, 0}, {1, 2, 1}, 4, 4, 4);
  Mesh mesh = original;
  distort_interior_nodes(mesh, 0.3, 42);
  std::vector<char> boundary(mesh.nodes.size(), 0);
  for (const char* name : {"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"}) {
    for (const int i : mesh.node_set(name)) boundary[i] = 1;
  }
  int moved = 0;
  for (int i = 0; i < mesh.n_nodes(); ++i) {
    if (boundary[i]) {
      EXPECT_EQ(mesh.nodes[i], original.nodes[i]) << "boundary node " << i << " moved";
    } else {
      moved += mesh.nodes[i] != original.nodes[i] ? 1 : 0;
      EXPECT_LE((mesh.nodes[i] - original.nodes[i]).cwiseAbs().maxCoeff(), 0.3 * 0.25 + 1e-15);
    }
  }
  EXPECT_EQ(moved, 27);
  EXPECT_NO_THROW(check_hex_jacobians(mesh, "distorted"));
  EXPECT_NEAR(total_volume(mesh), 2.0, 1e-12);  // the boundary did not move

  Mesh again = original;
  distort_interior_nodes(again, 0.3, 42);
  EXPECT_EQ(again.nodes, mesh.nodes);
  Mesh other = original;
  distort_interior_nodes(other, 0.3, 43);
  EXPECT_NE(other.nodes, mesh.nodes);

  // Large amplitudes are tamed so that every hexahedron stays valid.
  for (unsigned seed = 0; seed < 5; ++seed) {
    Mesh wild = original;
    distort_interior_nodes(wild, 0.9, seed);
    for (int e = 0; e < wild.n_hexes(); ++e) EXPECT_GT(hex_min_gauss_jacobian(wild, e), 0.0);
  }
  EXPECT_FALSE(input_error_of([&] { distort_interior_nodes(mesh, -0.1, 1); }).empty());
}

// ------------------------------------------------------- quality and faces --

TEST(MeshQuality, InvertedHexahedronIsNamed) {
  Mesh mesh = generate_box({0, 0, 0}, {1, 1, 1}, 2, 2, 1);
  auto& hex = mesh.hexes[2];
  std::swap(hex[1], hex[3]);
  std::swap(hex[5], hex[7]);
  mesh.hex_tags[2] = 77;
  const std::string msg = input_error_of([&] { check_hex_jacobians(mesh, "punch.msh"); });
  EXPECT_NE(msg.find("punch.msh"), std::string::npos) << msg;
  EXPECT_NE(msg.find("hexahedron 77"), std::string::npos) << msg;
  EXPECT_NE(msg.find("-0.03125"), std::string::npos) << msg;  // det J = -(1/2)^3 / 4
  EXPECT_LT(hex_min_gauss_jacobian(mesh, 2), 0.0);
}

TEST(MeshQuality, FacesOnNodeSetsPointOutwards) {
  CylinderParams p;
  p.core = 4;
  p.ring = 3;
  p.layers = 2;
  const Mesh mesh = generate_cylinder(p);
  const int per_layer = 16 + 4 * 4 * 3;
  const auto bottom = faces_on_node_set(mesh, mesh.node_set("bottom"));
  ASSERT_EQ(int(bottom.size()), per_layer);
  for (const auto& f : bottom) EXPECT_LT(face_normal(mesh, f).z(), 0.0);
  const auto top = faces_on_node_set(mesh, mesh.node_set("top"));
  ASSERT_EQ(int(top.size()), per_layer);
  for (const auto& f : top) EXPECT_GT(face_normal(mesh, f).z(), 0.0);
  const auto lateral = faces_on_node_set(mesh, mesh.node_set("lateral"));
  ASSERT_EQ(int(lateral.size()), 16 * 2);
  for (const auto& f : lateral) {
    Eigen::Vector3d centre = Eigen::Vector3d::Zero();
    for (const int node : f) centre += mesh.nodes[node] / 4.0;
    centre.z() = 0.0;
    EXPECT_GT(face_normal(mesh, f).dot(centre), 0.0);
  }
  // The whole boundary: each face once, and the surface is closed.
  const auto all = faces_on_node_set(mesh, mesh.node_set("all"));
  EXPECT_EQ(all.size(), bottom.size() + top.size() + lateral.size());
  Eigen::Vector3d sum = Eigen::Vector3d::Zero();
  for (const auto& f : all) sum += face_normal(mesh, f);
  EXPECT_LT(sum.norm(), 1e-12);

  const Mesh box = generate_box({0, 0, 0}, {1, 1, 1}, 3, 2, 4);
  EXPECT_EQ(faces_on_node_set(box, box.node_set("all")).size(), 2u * (6 + 8 + 12));
  const auto xmax = faces_on_node_set(box, box.node_set("xmax"));
  ASSERT_EQ(xmax.size(), 8u);
  for (const auto& f : xmax) {
    const Eigen::Vector3d n = face_normal(box, f).normalized();
    EXPECT_NEAR(n.x(), 1.0, 1e-14);
  }
  // A set that holds no whole face gives no faces.
  EXPECT_TRUE(faces_on_node_set(box, {0, 1, 2}).empty());
}

// -------------------------------------------------------------- Gmsh files --

void expect_same_mesh(const Mesh& a, const Mesh& b, double tolerance, bool same_hex_tags) {
  ASSERT_EQ(a.n_nodes(), b.n_nodes());
  ASSERT_EQ(a.n_hexes(), b.n_hexes());
  double worst = 0.0;
  for (int i = 0; i < a.n_nodes(); ++i) {
    worst = std::max(worst, (a.nodes[i] - b.nodes[i]).cwiseAbs().maxCoeff());
  }
  if (tolerance == 0.0) {
    EXPECT_EQ(a.nodes, b.nodes);
  } else {
    EXPECT_LE(worst, tolerance);
  }
  EXPECT_EQ(a.hexes, b.hexes);
  EXPECT_EQ(a.node_tags, b.node_tags);
  if (same_hex_tags) {
    EXPECT_EQ(a.hex_tags, b.hex_tags);
  }
  EXPECT_EQ(a.node_sets, b.node_sets);
}

TEST(GmshIo, RoundTripsInEveryFormat) {
  TempDir dir;
  CylinderParams p;
  p.core = 4;
  p.ring = 3;
  p.layers = 2;
  const Mesh cylinder = generate_cylinder(p);
  for (const double version : {4.1, 2.2}) {
    for (const bool binary : {false, true}) {
      SCOPED_TRACE("version " + std::to_string(version) + (binary ? " binary" : " ASCII"));
      const fs::path file =
          dir / ("cylinder_" + std::to_string(version) + std::to_string(binary) + ".msh");
      write_msh(cylinder, file, binary, version);
      EXPECT_FALSE(fs::exists(file.string() + ".tmp.msh"));
      const Mesh back = read_msh(file);
      // ASCII .msh holds 16 significant digits; binary is bit for bit.
      expect_same_mesh(cylinder, back, binary ? 0.0 : 1e-15 * 10.0, version == 4.1);
    }
  }
}

TEST(GmshIo, KeepsArbitraryTagsIn41) {
  TempDir dir;
  Mesh mesh = generate_box({0, 0, 0}, {1, 1, 1}, 2, 3, 2);
  distort_interior_nodes(mesh, 0.2, 7);
  for (std::size_t i = 0; i < mesh.node_tags.size(); ++i) mesh.node_tags[i] = 7 + 3 * i;
  for (std::size_t e = 0; e < mesh.hex_tags.size(); ++e) mesh.hex_tags[e] = 1000 + 2 * e;
  mesh.node_sets["a corner"] = {0};
  for (const bool binary : {false, true}) {
    const fs::path file = dir / (binary ? "b.msh" : "a.msh");
    write_msh(mesh, file, binary, 4.1);
    expect_same_mesh(mesh, read_msh(file), binary ? 0.0 : 1e-15, true);
  }
}

TEST(GmshIo, WritingIsAtomicAndValidated) {
  TempDir dir;
  const Mesh mesh = generate_box({0, 0, 0}, {1, 1, 1}, 1, 1, 1);
  const fs::path nowhere = dir / "missing" / "box.msh";
  const std::string msg = input_error_of([&] { write_msh(mesh, nowhere); });
  EXPECT_NE(msg.find(nowhere.string()), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(dir / "missing"));

  const fs::path file = dir / "box.msh";
  write_msh(mesh, file);
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator{}), 1);
  // Overwriting replaces the file.
  Mesh bigger = generate_box({0, 0, 0}, {1, 1, 1}, 2, 1, 1);
  write_msh(bigger, file, true, 2.2);
  EXPECT_EQ(read_msh(file).n_hexes(), 2);

  EXPECT_NE(input_error_of([&] { write_msh(mesh, dir / "v3.msh", false, 3.0); }).find("version"),
            std::string::npos);
  Mesh bad_set = mesh;
  bad_set.node_sets["empty"] = {};
  EXPECT_NE(input_error_of([&] { write_msh(bad_set, dir / "e.msh"); }).find("empty"),
            std::string::npos);
  Mesh bad_all = mesh;
  bad_all.node_sets["all"] = {0, 1};
  EXPECT_NE(input_error_of([&] { write_msh(bad_all, dir / "all.msh"); }).find("'all'"),
            std::string::npos);
  // Gmsh's C API would cut a name at a NUL, and read_msh refuses control
  // characters in names.
  Mesh nul_name = mesh;
  nul_name.node_sets[std::string("a\0b", 3)] = {0};
  EXPECT_NE(input_error_of([&] { write_msh(nul_name, dir / "n.msh"); }).find("NUL"),
            std::string::npos);
  Mesh bad_tags = mesh;
  bad_tags.node_tags[3] = bad_tags.node_tags[2];
  EXPECT_NE(input_error_of([&] { write_msh(bad_tags, dir / "t.msh"); }).find("duplicate"),
            std::string::npos);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator{}), 1);
}

TEST(GmshIo, LeavesTheProcessStateAlone) {
  // Initializing Gmsh sets the OpenMP thread count to 1 and the locale to the
  // environment's: reading and writing must restore both.
  TempDir dir;
  const int threads = omp_get_max_threads();
  omp_set_num_threads(3);
  const std::string locale = std::setlocale(LC_ALL, nullptr);
  const fs::path file = dir / "box.msh";
  write_msh(generate_box({0, 0, 0}, {1, 1, 1}, 1, 1, 1), file);
  EXPECT_EQ(omp_get_max_threads(), 3);
  (void)read_msh(file);
  EXPECT_EQ(omp_get_max_threads(), 3);
  EXPECT_EQ(std::string(std::setlocale(LC_ALL, nullptr)), locale);
  omp_set_num_threads(threads);
}

// Two hexahedra side by side: nodes 1-12, x in {0, 1, 2}.
const char* const kTwoHexNodes =
    "$Nodes\n12\n"
    "1 0 0 0\n2 1 0 0\n3 2 0 0\n4 0 1 0\n5 1 1 0\n6 2 1 0\n"
    "7 0 0 1\n8 1 0 1\n9 2 0 1\n10 0 1 1\n11 1 1 1\n12 2 1 1\n"
    "$EndNodes\n";
const char* const kHeader22 = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n";

TEST(GmshIo, PhysicalGroupsOfEveryDimensionBecomeSets) {
  TempDir dir;
  const fs::path file = dir / "groups.msh";
  write_text(file, std::string(kHeader22) +
                       "$PhysicalNames\n3\n3 1 \"body\"\n2 7 \"base\"\n0 9 \"corner\"\n"
                       "$EndPhysicalNames\n" +
                       kTwoHexNodes +
                       "$Elements\n6\n"
                       "1 15 2 9 1 12\n"
                       "2 1 2 3 1 1 2\n"
                       "3 3 2 7 1 1 4 5 2\n"
                       "4 3 2 7 1 2 5 6 3\n"
                       "5 5 2 1 1 1 2 5 4 7 8 11 10\n"
                       "6 5 2 1 1 2 3 6 5 8 9 12 11\n"
                       "$EndElements\n");
  const Mesh mesh = read_msh(file);
  EXPECT_EQ(mesh.n_nodes(), 12);
  EXPECT_EQ(mesh.n_hexes(), 2);
  EXPECT_EQ(mesh.hex_tags, (std::vector<std::size_t>{5, 6}));
  EXPECT_EQ(mesh.node_set("body").size(), 12u);
  EXPECT_EQ(mesh.node_set("base"), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(mesh.node_set("corner"), (std::vector<int>{11}));
  EXPECT_EQ(mesh.node_set("physical_1_3"), (std::vector<int>{0, 1}));
  EXPECT_EQ(mesh.node_set("all").size(), 12u);
  EXPECT_EQ(mesh.node_sets.size(), 5u);
}

TEST(GmshIo, ReadsTetrahedraAndPrismsAlongsideHexahedra) {
  TempDir dir;
  const fs::path tets = dir / "tets.msh";
  write_text(tets, std::string(kHeader22) +
                       "$Nodes\n5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 1 1\n$EndNodes\n"
                       "$Elements\n3\n1 2 2 7 2 1 2 3\n2 4 2 1 1 1 2 3 4\n3 4 2 1 1 2 3 4 5\n"
                       "$EndElements\n");
  Mesh mesh = read_msh(tets);
  EXPECT_EQ(mesh.n_hexes(), 0);
  EXPECT_EQ(mesh.n_tets(), 2);
  EXPECT_EQ(mesh.tets[1], (Tet4{1, 2, 3, 4}));
  EXPECT_EQ(mesh.tet_tags, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(mesh.node_set("physical_2_7"), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(describe_elements(mesh), "2 tetrahedra");
  // Six times the volumes: 1 and 2 (triple products).
  EXPECT_DOUBLE_EQ(tet_jacobian_det(mesh, 0), 1.0);
  EXPECT_DOUBLE_EQ(tet_jacobian_det(mesh, 1), 2.0);

  // The cube [1, 2] x [0, 1] x [0, 1] as two prisms next to the hexahedron
  // [0, 1]^3: conforming through the face x = 1.
  const fs::path mixed = dir / "mixed.msh";
  write_text(mixed, std::string(kHeader22) + kTwoHexNodes +
                        "$Elements\n3\n"
                        "7 6 2 1 1 2 3 6 8 9 12\n"
                        "8 6 2 1 1 2 6 5 8 12 11\n"
                        "9 5 2 1 1 1 2 5 4 7 8 11 10\n"
                        "$EndElements\n");
  mesh = read_msh(mixed);
  EXPECT_EQ(mesh.n_elements(), 3);
  EXPECT_EQ(mesh.hex_tags, (std::vector<std::size_t>{9}));
  EXPECT_EQ(mesh.wedge_tags, (std::vector<std::size_t>{7, 8}));
  EXPECT_EQ(mesh.element_kind(1), ElementKind::wedge);
  EXPECT_EQ(mesh.element_tag(2), 8u);
  EXPECT_EQ(describe_elements(mesh), "1 hexahedra, 2 wedges");
  // The boundary of the 2 x 1 x 1 box: the hexahedron's 5 outer faces, 3
  // quadrilaterals and 4 triangles of the prisms; total area 10.
  const BoundaryFaces faces = boundary_faces_on_node_set(mesh, mesh.node_set("all"));
  EXPECT_EQ(faces.quads.size(), 8u);
  EXPECT_EQ(faces.triangles.size(), 4u);
  double area = 0.0;
  Eigen::Vector3d flux = Eigen::Vector3d::Zero();  // sum of outward area vectors: 0
  for (const auto& q : faces.quads) {
    const Eigen::Vector3d v =
        0.5 * (mesh.nodes[q[2]] - mesh.nodes[q[0]]).cross(mesh.nodes[q[3]] - mesh.nodes[q[1]]);
    area += v.norm();
    flux += v;
    // Outward: the face's centre minus the box's centre is along v.
    const Eigen::Vector3d centre =
        0.25 * (mesh.nodes[q[0]] + mesh.nodes[q[1]] + mesh.nodes[q[2]] + mesh.nodes[q[3]]);
    EXPECT_GT(v.dot(centre - Eigen::Vector3d(1.0, 0.5, 0.5)), 0.0);
  }
  for (const auto& t : faces.triangles) {
    const Eigen::Vector3d v =
        0.5 * (mesh.nodes[t[1]] - mesh.nodes[t[0]]).cross(mesh.nodes[t[2]] - mesh.nodes[t[0]]);
    area += v.norm();
    flux += v;
    const Eigen::Vector3d centre = (mesh.nodes[t[0]] + mesh.nodes[t[1]] + mesh.nodes[t[2]]) / 3.0;
    EXPECT_GT(v.dot(centre - Eigen::Vector3d(1.0, 0.5, 0.5)), 0.0);
  }
  EXPECT_NEAR(area, 10.0, 1e-14);
  EXPECT_LT(flux.norm(), 1e-14);
}

TEST(GmshIo, RejectsOtherVolumeElementsByTypeName) {
  TempDir dir;
  const fs::path file = dir / "pyramids.msh";
  write_text(file, std::string(kHeader22) + kTwoHexNodes +
                       "$Elements\n3\n"
                       "1 5 2 1 1 1 2 5 4 7 8 11 10\n"
                       "2 7 2 1 1 2 3 6 5 9\n"
                       "3 11 2 1 1 1 2 3 4 5 6 7 8 9 10\n"
                       "$EndElements\n");
  const std::string msg = input_error_of([&] { (void)read_msh(file); });
  EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("1 elements of type \"Pyramid 5\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("1 elements of type \"Tetrahedron 10\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("4-node tetrahedra"), std::string::npos) << msg;
}

TEST(GmshIo, RejectsInvertedAndFlatTetrahedraAndWedgesByTag) {
  TempDir dir;
  const std::string nodes =
      "$Nodes\n6\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 0 1\n6 0 1 1\n"
      "$EndNodes\n";
  const auto error_of = [&](const std::string& name, const std::string& elements) {
    const fs::path file = dir / name;
    write_text(file, std::string(kHeader22) + nodes + "$Elements\n" + elements + "$EndElements\n");
    const std::string msg = input_error_of([&] { (void)read_msh(file); });
    EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
    return msg;
  };
  // Nodes 2 and 3 swapped: negative volume.
  std::string msg = error_of("inverted_tet.msh", "2\n4 4 2 1 1 1 2 3 4\n5 4 2 1 1 1 2 4 3\n");
  EXPECT_NE(msg.find("tetrahedron 5 is inverted or degenerate"), std::string::npos) << msg;
  // Four coplanar nodes (z = 0 and the point (1, 0, 0) twice over): flat.
  msg = error_of("flat_tet.msh", "1\n9 4 2 1 1 1 2 3 2\n");
  EXPECT_NE(msg.find("tetrahedron 9 is inverted or degenerate"), std::string::npos) << msg;
  // A prism listed top first: every Jacobian negative.
  msg = error_of("inverted_wedge.msh", "1\n3 6 2 1 1 4 5 6 1 2 3\n");
  EXPECT_NE(msg.find("wedge 3 is inverted or degenerate"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Prism 6"), std::string::npos) << msg;
  // The valid prism is read.
  const fs::path good = dir / "wedge.msh";
  write_text(
      good, std::string(kHeader22) + nodes + "$Elements\n1\n3 6 2 1 1 1 2 3 4 5 6\n$EndElements\n");
  const Mesh mesh = read_msh(good);
  ASSERT_EQ(mesh.n_wedges(), 1);
  // x = r, y = s, z = (1 + zeta) / 2: det J = 1/2 everywhere.
  EXPECT_NEAR(wedge_min_gauss_jacobian(mesh, 0), 0.5, 1e-15);
}

TEST(GmshIo, RejectsAMeshWithoutHexahedra) {
  TempDir dir;
  const fs::path file = dir / "surface.msh";
  write_text(file, std::string(kHeader22) + kTwoHexNodes +
                       "$Elements\n1\n1 3 2 1 1 1 2 5 4\n$EndElements\n");
  const std::string msg = input_error_of([&] { (void)read_msh(file); });
  EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("no volume elements"), std::string::npos) << msg;
}

TEST(GmshIo, RejectsAnInvertedHexahedronByTag) {
  TempDir dir;
  Mesh mesh = generate_box({0, 0, 0}, {1, 1, 1}, 3, 1, 1);
  auto& hex = mesh.hexes[1];
  std::swap(hex[0], hex[4]);
  std::swap(hex[1], hex[5]);
  std::swap(hex[2], hex[6]);
  std::swap(hex[3], hex[7]);
  mesh.hex_tags = {11, 12, 13};
  const std::string check = input_error_of([&] { check_hex_jacobians(mesh, "box"); });
  EXPECT_NE(check.find("hexahedron 12"), std::string::npos) << check;
  for (const bool binary : {false, true}) {
    const fs::path file = dir / (binary ? "inverted_bin.msh" : "inverted.msh");
    write_msh(mesh, file, binary, 4.1);
    const std::string msg = input_error_of([&] { (void)read_msh(file); });
    EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("hexahedron 12 "), std::string::npos) << msg;
  }
  // 2.2 numbers the elements consecutively: with no set but `all` the
  // hexahedra are elements 1..3.
  mesh.node_sets.clear();
  const fs::path file = dir / "inverted22.msh";
  write_msh(mesh, file, true, 2.2);
  const std::string msg = input_error_of([&] { (void)read_msh(file); });
  EXPECT_NE(msg.find("hexahedron 2 "), std::string::npos) << msg;
}

TEST(GmshIo, RejectsMissingUnreadableAndMalformedFiles) {
  TempDir dir;
  const fs::path missing = dir / "nope.msh";
  std::string msg = input_error_of([&] { (void)read_msh(missing); });
  EXPECT_NE(msg.find(missing.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("no such file"), std::string::npos) << msg;

  msg = input_error_of([&] { (void)read_msh(dir.path()); });
  EXPECT_NE(msg.find("is a directory, not a regular file"), std::string::npos) << msg;

  const fs::path garbage = dir / "garbage.msh";
  write_text(garbage, "$MeshFormat\n9.9 0 8\n$EndMeshFormat\n");
  msg = input_error_of([&] { (void)read_msh(garbage); });
  EXPECT_NE(msg.find(garbage.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("MSH version '9.9' is not supported"), std::string::npos) << msg;

  // A physical group with a node outside the hexahedra.
  const fs::path stray = dir / "stray.msh";
  write_text(stray, std::string(kHeader22) + kTwoHexNodes +
                        "$Elements\n2\n1 5 2 1 1 1 2 5 4 7 8 11 10\n2 15 2 4 2 3\n$EndElements\n");
  msg = input_error_of([&] { (void)read_msh(stray); });
  EXPECT_NE(msg.find("physical_0_4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("belong to no volume element"), std::string::npos) << msg;
}

// ------------------------------------------------------------ punch mesh --

const fs::path kPunch = fs::path(BIPO_SOURCE_DIR) / "meshes" / "punch.msh";

TEST(PunchMesh, FileMatchesTheGenerator) {
  ASSERT_TRUE(fs::exists(kPunch)) << kPunch;
  EXPECT_LT(fs::file_size(kPunch), 1000000u);
  std::ifstream in(kPunch);
  std::string line;
  std::getline(in, line);
  std::getline(in, line);
  EXPECT_EQ(line, "4.1 0 8");  // version 4.1, ASCII
  expect_same_mesh(generate_cylinder(CylinderParams{}), read_msh(kPunch), 1e-14, true);
}

// Regenerates meshes/punch.msh (run with --gtest_also_run_disabled_tests
// --gtest_filter='*RegeneratePunchMesh*'); see meshes/README.md.
TEST(PunchMesh, DISABLED_RegeneratePunchMesh) {
  write_msh(generate_cylinder(CylinderParams{}), kPunch, false, 4.1);
}

}  // namespace
}  // namespace bipo
