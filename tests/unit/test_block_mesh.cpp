// The built-in block (mesh.block, src/mesh/generate.hpp generate_block): its
// counts, volume, grading ratio, exact symmetries, node sets on their faces,
// and the case file's errors on bad keys (file, key path, line).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "../process_temp_path.hpp"
#include "core/errors.hpp"
#include "io/case_file.hpp"
#include "mesh/generate.hpp"
#include "mesh/quality.hpp"

namespace bipo {
namespace {

namespace fs = std::filesystem;

double total_volume(const Mesh& mesh) {
  double volume = 0.0;
  for (int e = 0; e < mesh.n_hexes(); ++e) volume += hex_volume(mesh, e);
  return volume;
}

/// The distinct node coordinates along direction d, ascending.
std::vector<double> axis_values(const Mesh& mesh, int d) {
  std::vector<double> v;
  for (const auto& x : mesh.nodes) v.push_back(x[d]);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

BlockParams params(std::array<int, 3> n, std::array<double, 3> g, BlockParams::Symmetry s) {
  BlockParams p;
  p.size = {4.0, 3.0, 2.0};
  p.elements = n;
  p.grading = g;
  p.symmetry = s;
  return p;
}

TEST(Block, CountsAndVolume) {
  for (const auto s :
       {BlockParams::Symmetry::none, BlockParams::Symmetry::half, BlockParams::Symmetry::quarter}) {
    const Mesh mesh = generate_block(params({6, 4, 5}, {3.0, 2.0, 10.0}, s));
    EXPECT_EQ(mesh.n_nodes(), 7 * 5 * 6);
    EXPECT_EQ(mesh.n_hexes(), 6 * 4 * 5);
    // Every hexahedron is a rectangular box: the sum is exact up to round-off.
    EXPECT_NEAR(total_volume(mesh), 4.0 * 3.0 * 2.0, 1e-12);
    for (int e = 0; e < mesh.n_hexes(); ++e) EXPECT_GT(hex_volume(mesh, e), 0.0);
  }
}

TEST(Block, ExtentFollowsTheSymmetry) {
  const auto extent = [](const Mesh& m, int d) {
    const auto v = axis_values(m, d);
    return std::pair{v.front(), v.back()};
  };
  const Mesh none = generate_block(params({4, 4, 2}, {1, 1, 1}, BlockParams::Symmetry::none));
  EXPECT_EQ(extent(none, 0), (std::pair{-2.0, 2.0}));
  EXPECT_EQ(extent(none, 1), (std::pair{-1.5, 1.5}));
  EXPECT_EQ(extent(none, 2), (std::pair{0.0, 2.0}));
  const Mesh half = generate_block(params({4, 4, 2}, {1, 1, 1}, BlockParams::Symmetry::half));
  EXPECT_EQ(extent(half, 0), (std::pair{0.0, 4.0}));
  EXPECT_EQ(extent(half, 1), (std::pair{-1.5, 1.5}));
  const Mesh quarter = generate_block(params({4, 4, 2}, {1, 1, 1}, BlockParams::Symmetry::quarter));
  EXPECT_EQ(extent(quarter, 0), (std::pair{0.0, 4.0}));
  EXPECT_EQ(extent(quarter, 1), (std::pair{0.0, 3.0}));
}

TEST(Block, GradingIsTheRatioOfLargestToSmallestElement) {
  const Mesh mesh =
      generate_block(params({8, 6, 5}, {5.0, 2.0, 20.0}, BlockParams::Symmetry::half));
  // x: graded from x = 0 (half); y: centred, each half graded from y = 0;
  // z: graded from the contact face z = 0.
  const std::array<double, 3> g{5.0, 2.0, 20.0};
  for (int d = 0; d < 3; ++d) {
    const auto v = axis_values(mesh, d);
    std::vector<double> h;
    for (std::size_t i = 1; i < v.size(); ++i) h.push_back(v[i] - v[i - 1]);
    const double hmin = *std::min_element(h.begin(), h.end());
    const double hmax = *std::max_element(h.begin(), h.end());
    EXPECT_NEAR(hmax / hmin, g[d], 1e-12 * g[d]) << "direction " << d;
    // A geometric progression from the contact point outward: constant
    // ratio g^(1 / (m - 1)) of neighbouring spans, m spans per graded run.
    const std::size_t first = d == 1 ? h.size() / 2 : 0;  // y: the half y >= 0
    const double ratio = std::pow(g[d], 1.0 / static_cast<double>(h.size() - first - 1));
    for (std::size_t i = first + 1; i < h.size(); ++i)
      EXPECT_NEAR(h[i] / h[i - 1], ratio, 1e-12) << "direction " << d << " span " << i;
  }
  EXPECT_EQ(axis_values(mesh, 0).front(), 0.0);
  EXPECT_EQ(axis_values(mesh, 2).front(), 0.0);
}

TEST(Block, UniformIsEquallySpacedAndCentredGradingIsExactlySymmetric) {
  const Mesh uniform = generate_block(params({5, 3, 4}, {1, 1, 1}, BlockParams::Symmetry::none));
  const auto x = axis_values(uniform, 0);
  for (std::size_t i = 0; i < x.size(); ++i)
    EXPECT_NEAR(x[i], -2.0 + 0.8 * static_cast<double>(i), 1e-15);
  const Mesh graded = generate_block(params({6, 4, 2}, {7, 3, 1}, BlockParams::Symmetry::none));
  for (int d = 0; d < 2; ++d) {
    const auto v = axis_values(graded, d);
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], -v[v.size() - 1 - i]);
    EXPECT_EQ(v[v.size() / 2], 0.0);  // a node at the contact point
  }
}

TEST(Block, SetsLieOnTheirFaces) {
  const Mesh mesh =
      generate_block(params({4, 6, 3}, {2.0, 3.0, 4.0}, BlockParams::Symmetry::quarter));
  const auto all_on = [&](const std::string& set, int d, double value) {
    const auto& nodes = mesh.node_sets.at(set);
    EXPECT_FALSE(nodes.empty()) << set;
    for (const int n : nodes) EXPECT_EQ(mesh.nodes[n][d], value) << set;
  };
  all_on("bottom", 2, 0.0);
  all_on("top", 2, 2.0);
  all_on("symmetry_x0", 0, 0.0);
  all_on("symmetry_y0", 1, 0.0);
  EXPECT_EQ(mesh.node_sets.at("bottom").size(), 5u * 7u);
  EXPECT_EQ(mesh.node_sets.at("symmetry_x0").size(), 7u * 4u);
  // lateral: x = Lx or y = Ly, and every such node.
  std::size_t outer = 0;
  for (const auto& x : mesh.nodes) outer += (x.x() == 4.0 || x.y() == 3.0) ? 1 : 0;
  EXPECT_EQ(mesh.node_sets.at("lateral").size(), outer);
  for (const int n : mesh.node_sets.at("lateral"))
    EXPECT_TRUE(mesh.nodes[n].x() == 4.0 || mesh.nodes[n].y() == 3.0);
  // Without symmetry there are no symmetry sets and lateral is all four sides.
  const Mesh whole = generate_block(params({4, 6, 3}, {1, 1, 1}, BlockParams::Symmetry::none));
  EXPECT_EQ(whole.node_sets.count("symmetry_x0"), 0u);
  std::size_t sides = 0;
  for (const auto& x : whole.nodes)
    sides += (std::abs(x.x()) == 2.0 || std::abs(x.y()) == 1.5) ? 1 : 0;
  EXPECT_EQ(whole.node_sets.at("lateral").size(), sides);
  EXPECT_EQ(sides, 4u * (2u * 5u + 2u * 5u));  // 4 layers of nodes, 20 around
}

TEST(Block, RejectsBadParametersNamingThem) {
  const auto error_of = [](const BlockParams& p) {
    try {
      (void)generate_block(p);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  BlockParams p;
  p.size[1] = 0.0;
  EXPECT_NE(error_of(p).find("size along y"), std::string::npos);
  p = BlockParams{};
  p.elements[2] = 0;
  EXPECT_NE(error_of(p).find("elements along z"), std::string::npos);
  p = BlockParams{};
  p.grading[0] = 0.5;
  EXPECT_NE(error_of(p).find("grading along x"), std::string::npos);
  p = BlockParams{};
  p.elements[0] = 5;
  p.grading[0] = 2.0;  // centred and graded: needs an even count
  EXPECT_NE(error_of(p).find("even"), std::string::npos);
  p = BlockParams{};
  p.elements = {3000, 3000, 3000};
  EXPECT_NE(error_of(p).find("nodes"), std::string::npos);
}

class BlockCaseFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device random;
    dir_ = bipo::test::process_temp_path("bipo_block_" + std::to_string(random()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& block) {
    const fs::path p = dir_ / "case.yaml";
    std::ofstream(p) << "mesh:\n  block: " << block
                     << "\nmaterial: {young: 1, poisson: 0.3}\n"
                        "load_program: [{to: 1, increments: 1}]\n";
    return p;
  }
  /// The message of reading block `block`, which must start with
  /// "<file>:2: <path>: ".
  std::string error(const std::string& block, const std::string& path) {
    const fs::path file = write(block);
    try {
      (void)read_case(file);
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(file.string() + ":2: " + path + ": ", 0), 0u) << msg;
      return msg;
    }
    ADD_FAILURE() << "no error for " << block;
    return "";
  }
  fs::path dir_;
};

TEST_F(BlockCaseFile, ReadsEveryKey) {
  const Case c = read_case(
      write("{size: [2, 3, 4], elements: [4, 5, 6], grading: [1, 2.5, 8], symmetry: quarter}"));
  ASSERT_TRUE(c.mesh.block.has_value());
  EXPECT_FALSE(c.mesh.cylinder.has_value());
  EXPECT_EQ(c.mesh.block->size, (std::array<double, 3>{2, 3, 4}));
  EXPECT_EQ(c.mesh.block->elements, (std::array<int, 3>{4, 5, 6}));
  EXPECT_EQ(c.mesh.block->grading, (std::array<double, 3>{1, 2.5, 8}));
  EXPECT_EQ(c.mesh.block->symmetry, BlockParams::Symmetry::quarter);
  EXPECT_EQ(read_case(write("{}")).mesh.block, BlockParams{});
}

TEST_F(BlockCaseFile, NamesTheBadKey) {
  EXPECT_NE(error("{size: [1, 1]}", "mesh.block.size").find("a list of 3 lengths"),
            std::string::npos);
  EXPECT_NE(error("{size: [1, -1, 1]}", "mesh.block.size[1]").find("[1e-9, 1e9]"),
            std::string::npos);
  EXPECT_NE(error("{elements: [1, 2.5, 1]}", "mesh.block.elements[1]").find("an integer"),
            std::string::npos);
  EXPECT_NE(error("{grading: [1, 1, 0.5]}", "mesh.block.grading[2]").find("[1, 10000]"),
            std::string::npos);
  EXPECT_NE(error("{symmetry: octant}", "mesh.block.symmetry").find("none, half or quarter"),
            std::string::npos);
  EXPECT_NE(error("{sizes: [1, 1, 1]}", "mesh.block.sizes").find("unknown key"), std::string::npos);
  EXPECT_NE(error("{elements: [3, 4, 4], grading: [2, 1, 1]}", "mesh.block.elements")
                .find("even number of elements along x"),
            std::string::npos);
  EXPECT_NE(error("{elements: [5000, 5000, 5]}", "mesh.block").find("at most 10000000 nodes"),
            std::string::npos);
}

}  // namespace
}  // namespace bipo
