#include "mesh/generate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <string>

#include "core/errors.hpp"
#include "mesh/quality.hpp"

namespace bipo {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw InputError(what);
}

// Rotation by b quarter turns about z, exact (only swaps and negations).
Eigen::Vector2d quarter_turn(double u, double v, int b) {
  switch (b) {
    case 0:
      return {u, v};
    case 1:
      return {-v, u};
    case 2:
      return {-u, -v};
    default:
      return {v, -u};
  }
}

void fill_tags(Mesh& mesh) {
  mesh.node_tags.resize(mesh.nodes.size());
  for (std::size_t i = 0; i < mesh.nodes.size(); ++i) mesh.node_tags[i] = i + 1;
  mesh.hex_tags.resize(mesh.hexes.size());
  for (std::size_t i = 0; i < mesh.hexes.size(); ++i) mesh.hex_tags[i] = i + 1;
  std::vector<int> all(mesh.nodes.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  mesh.node_sets["all"] = std::move(all);
}

void require_size(std::int64_t n_nodes, std::int64_t n_hexes, const std::string& what) {
  constexpr std::int64_t limit = std::numeric_limits<int>::max() / 8;
  require(n_nodes < limit && n_hexes < limit, what + ": too many elements requested");
}

/// The part of a cylinder mesh in x >= 0, y >= 0 (see generate_cylinder).
/// With an even core the nodes on the axes have a coordinate that is exactly
/// zero (possibly -0.0, which compares equal), so the tests are exact.
Mesh quarter_of(const Mesh& whole) {
  const auto inside = [&](int node) {
    return whole.nodes[node].x() >= 0.0 && whole.nodes[node].y() >= 0.0;
  };
  Mesh mesh;
  for (const Hex8& hex : whole.hexes)
    if (std::all_of(hex.begin(), hex.end(), inside)) mesh.hexes.push_back(hex);
  // Renumber the nodes those hexahedra use, in the whole mesh's order.
  std::vector<int> new_index(whole.nodes.size(), -1);
  for (const Hex8& hex : mesh.hexes)
    for (const int node : hex) new_index[node] = 0;
  for (std::size_t i = 0; i < whole.nodes.size(); ++i)
    if (new_index[i] == 0) {
      new_index[i] = mesh.n_nodes();
      mesh.nodes.push_back(whole.nodes[i]);
    }
  for (Hex8& hex : mesh.hexes)
    for (int& node : hex) node = new_index[node];
  for (const auto& [name, nodes] : whole.node_sets) {
    std::vector<int> kept;
    for (const int node : nodes)
      if (new_index[node] >= 0) kept.push_back(new_index[node]);
    std::sort(kept.begin(), kept.end());
    mesh.node_sets[name] = std::move(kept);
  }
  std::vector<int> x0, y0;
  for (int i = 0; i < mesh.n_nodes(); ++i) {
    if (mesh.nodes[i].x() == 0.0) x0.push_back(i);
    if (mesh.nodes[i].y() == 0.0) y0.push_back(i);
  }
  mesh.node_sets["symmetry_x0"] = std::move(x0);
  mesh.node_sets["symmetry_y0"] = std::move(y0);
  fill_tags(mesh);
  return mesh;
}

}  // namespace

namespace {

void check_cylinder_params(const CylinderParams& p) {
  const auto length = [](double v) {
    return std::isfinite(v) && v >= kMinCylinderLength && v <= kMaxCylinderLength;
  };
  const auto divisions = [](int v) { return v >= 1 && v <= kMaxCylinderDivisions; };
  const auto grading = [](double v) {
    return std::isfinite(v) && v >= 1.0 && v <= kMaxCylinderGrading;
  };
  const std::string lengths = " must be a number in [1e-9, 1e9], got ";
  const std::string counts = " must be an integer in [1, 10000], got ";
  const std::string gradings = " must be a number in [1, 10], got ";
  require(length(p.radius), "cylinder mesh: radius" + lengths + std::to_string(p.radius));
  require(length(p.height), "cylinder mesh: height" + lengths + std::to_string(p.height));
  require(divisions(p.core), "cylinder mesh: core" + counts + std::to_string(p.core));
  require(divisions(p.ring), "cylinder mesh: ring" + counts + std::to_string(p.ring));
  require(divisions(p.layers), "cylinder mesh: layers" + counts + std::to_string(p.layers));
  require(grading(p.rim_grading),
          "cylinder mesh: rim_grading" + gradings + std::to_string(p.rim_grading));
  require(grading(p.bottom_grading),
          "cylinder mesh: bottom_grading" + gradings + std::to_string(p.bottom_grading));
  require(p.sector == CylinderParams::Sector::full || p.core % 2 == 0,
          "cylinder mesh: a quarter sector needs an even core (grid lines on the axes), got " +
              std::to_string(p.core));
  require(cylinder_node_count(p) <= kMaxGeneratedNodes,
          "cylinder mesh: at most " + std::to_string(kMaxGeneratedNodes) + " nodes, got core " +
              std::to_string(p.core) + ", ring " + std::to_string(p.ring) + " and layers " +
              std::to_string(p.layers) + ", which make " + std::to_string(cylinder_node_count(p)) +
              " nodes ((layers + 1) ((core + 1)^2 + 4 core ring))");
}

/// The O-grid's cross-section: its node counts and the index of a node of
/// a ring block.
struct CrossSection {
  int n = 0;         // core: elements along a side of the square
  int m = 0;         // ring: radial elements of a ring block
  int n_core = 0;    // nodes of the square's grid
  int n_around = 0;  // nodes around one ring
  int n_2d = 0;      // nodes of the cross-section

  CrossSection(int core, int ring)
      : n(core),
        m(ring),
        n_core((core + 1) * (core + 1)),
        n_around(4 * core),
        n_2d(n_core + ring * n_around) {}

  /// Index of the node at radial position k (0 = the square) and
  /// circumferential position j (0..n) of block b.
  [[nodiscard]] int ring_node(int k, int b, int j) const {
    if (k > 0) return n_core + (k - 1) * n_around + (b * n + j) % n_around;
    switch (b) {  // the square's edge, in the core grid
      case 0:
        return j * (n + 1) + n;
      case 1:
        return n * (n + 1) + (n - j);
      case 2:
        return (n - j) * (n + 1);
      default:
        return j;
    }
  }
};

/// Cross-section nodes: the core grid, then ring after ring (k = 1..m), each
/// ring counter-clockwise from the south-east diagonal.
std::vector<Eigen::Vector2d> cross_section_nodes(const CylinderParams& p, const CrossSection& cs) {
  const int n = cs.n;
  const int m = cs.m;
  const double radius = p.radius;
  // Half-side of the central square: its corners lie on r = radius / 2.
  const double a = 0.5 * radius * std::numbers::sqrt2 / 2.0;
  const double diagonal = radius * std::numbers::sqrt2 / 2.0;  // cos 45 = sin 45, one value

  // Equally spaced parameter in [-1, 1], exactly odd: t(n - j) == -t(j).
  const auto t = [n](int j) { return static_cast<double>(2 * j - n) / n; };

  std::vector<Eigen::Vector2d> xy(cs.n_2d);
  for (int jj = 0; jj <= n; ++jj) {
    for (int i = 0; i <= n; ++i) xy[jj * (n + 1) + i] = {a * t(i), a * t(jj)};
  }
  // Radial fraction of ring k: k / m, or 1 - ((m - k) / m)^q graded toward the
  // rim (exactly 1 at k = m). Uniform (q = 1) keeps the original expression.
  const double q_rim = p.rim_grading;
  const auto radial = [m, q_rim](int k) {
    if (q_rim == 1.0) return static_cast<double>(k) / m;
    return 1.0 - std::pow(static_cast<double>(m - k) / m, q_rim);
  };
  for (int k = 1; k <= m; ++k) {
    const double s = radial(k);
    for (int j = 0; j < n; ++j) {
      // East block in local coordinates (u outward, v counter-clockwise),
      // computed from |t| so that v is exactly odd in t and u exactly even.
      const double tj = t(j);
      const double at = std::abs(tj);
      double cu = diagonal;
      double sv = diagonal;
      if (at != 1.0) {
        const double phi = 0.25 * std::numbers::pi * at;
        cu = radius * std::cos(phi);
        sv = radius * std::sin(phi);
      }
      const double u = (1.0 - s) * a + s * cu;
      const double v_abs = (1.0 - s) * (a * at) + s * sv;
      const double v = tj < 0.0 ? -v_abs : v_abs;
      for (int b = 0; b < 4; ++b)
        xy[cs.n_core + (k - 1) * cs.n_around + b * n + j] = quarter_turn(u, v, b);
    }
  }
  return xy;
}

/// Counter-clockwise quadrilaterals of the cross-section.
std::vector<std::array<int, 4>> cross_section_quads(const CrossSection& cs) {
  const int n = cs.n;
  std::vector<std::array<int, 4>> quads;
  quads.reserve(static_cast<std::size_t>(n) * n + static_cast<std::size_t>(cs.n_around) * cs.m);
  for (int jj = 0; jj < n; ++jj) {
    for (int i = 0; i < n; ++i) {
      const int q = jj * (n + 1) + i;
      quads.push_back({q, q + 1, q + n + 2, q + n + 1});
    }
  }
  for (int b = 0; b < 4; ++b) {
    for (int k = 0; k < cs.m; ++k) {
      for (int j = 0; j < n; ++j) {
        quads.push_back({cs.ring_node(k, b, j), cs.ring_node(k + 1, b, j),
                         cs.ring_node(k + 1, b, j + 1), cs.ring_node(k, b, j + 1)});
      }
    }
  }
  return quads;
}

/// The cross-section extruded along z in `layers` layers: nodes layer by
/// layer, hexahedra bottom quadrilateral first.
Mesh extrude(const CylinderParams& p, const std::vector<Eigen::Vector2d>& xy,
             const std::vector<std::array<int, 4>>& quads) {
  const int n_layers = p.layers;
  const int n_2d = static_cast<int>(xy.size());
  Mesh mesh;
  mesh.nodes.reserve(static_cast<std::size_t>(n_2d) * (n_layers + 1));
  // Layer coordinate zeta = l / layers; z = height zeta^q graded toward the
  // bottom face (exactly height at l = layers). Uniform (q = 1) keeps the
  // original expression.
  const double q_bottom = p.bottom_grading;
  const auto axial = [n_layers, q_bottom](int l) {
    const double zeta = static_cast<double>(l) / n_layers;
    return q_bottom == 1.0 ? zeta : std::pow(zeta, q_bottom);
  };
  for (int l = 0; l <= n_layers; ++l) {
    const double z = p.height * axial(l);
    for (const auto& q : xy) mesh.nodes.emplace_back(q.x(), q.y(), z);
  }
  mesh.hexes.reserve(quads.size() * n_layers);
  for (int l = 0; l < n_layers; ++l) {
    const int lo = l * n_2d;
    const int hi = lo + n_2d;
    for (const auto& q : quads) {
      mesh.hexes.push_back(
          {lo + q[0], lo + q[1], lo + q[2], lo + q[3], hi + q[0], hi + q[1], hi + q[2], hi + q[3]});
    }
  }
  return mesh;
}

/// The node sets `bottom`, `top` and `lateral` of the extruded O-grid.
void add_cylinder_node_sets(Mesh& mesh, const CrossSection& cs, int n_layers) {
  const int n_2d = cs.n_2d;
  std::vector<int> bottom(n_2d), top(n_2d), lateral;
  for (int i = 0; i < n_2d; ++i) {
    bottom[i] = i;
    top[i] = n_layers * n_2d + i;
  }
  lateral.reserve(static_cast<std::size_t>(cs.n_around) * (n_layers + 1));
  for (int l = 0; l <= n_layers; ++l) {
    for (int c = 0; c < cs.n_around; ++c)
      lateral.push_back(l * n_2d + cs.n_core + (cs.m - 1) * cs.n_around + c);
  }
  mesh.node_sets["bottom"] = std::move(bottom);
  mesh.node_sets["top"] = std::move(top);
  mesh.node_sets["lateral"] = std::move(lateral);
}

}  // namespace

Mesh generate_cylinder(const CylinderParams& p) {
  check_cylinder_params(p);
  const CrossSection cs(p.core, p.ring);
  Mesh mesh = extrude(p, cross_section_nodes(p, cs), cross_section_quads(cs));
  add_cylinder_node_sets(mesh, cs, p.layers);
  if (p.sector == CylinderParams::Sector::quarter) return quarter_of(mesh);
  fill_tags(mesh);
  return mesh;
}

namespace {

/// The structured grid of the node coordinates `axes` (each ascending): node
/// (i, j, k) has index i + (nx + 1) (j + (ny + 1) k); hexahedra in the same
/// order; node sets `xmin`, `xmax`, `ymin`, `ymax`, `zmin`, `zmax` (by index,
/// so exact) and `all`.
Mesh structured_grid(const std::array<std::vector<double>, 3>& axes) {
  const int nx = static_cast<int>(axes[0].size()) - 1;
  const int ny = static_cast<int>(axes[1].size()) - 1;
  const int nz = static_cast<int>(axes[2].size()) - 1;
  const std::array<int, 3> cells{nx, ny, nz};
  const auto index = [&](int i, int j, int k) { return i + (nx + 1) * (j + (ny + 1) * k); };

  Mesh mesh;
  mesh.nodes.reserve(static_cast<std::size_t>(nx + 1) * (ny + 1) * (nz + 1));
  for (int k = 0; k <= nz; ++k) {
    for (int j = 0; j <= ny; ++j) {
      for (int i = 0; i <= nx; ++i) mesh.nodes.emplace_back(axes[0][i], axes[1][j], axes[2][k]);
    }
  }
  mesh.hexes.reserve(static_cast<std::size_t>(nx) * ny * nz);
  for (int k = 0; k < nz; ++k) {
    for (int j = 0; j < ny; ++j) {
      for (int i = 0; i < nx; ++i) {
        mesh.hexes.push_back({index(i, j, k), index(i + 1, j, k), index(i + 1, j + 1, k),
                              index(i, j + 1, k), index(i, j, k + 1), index(i + 1, j, k + 1),
                              index(i + 1, j + 1, k + 1), index(i, j + 1, k + 1)});
      }
    }
  }

  const std::array<const char*, 6> names{"xmin", "xmax", "ymin", "ymax", "zmin", "zmax"};
  for (int d = 0; d < 3; ++d) {
    for (int side = 0; side < 2; ++side) {
      const int wanted = side == 0 ? 0 : cells[d];
      std::vector<int> set;
      for (int k = 0; k <= nz; ++k) {
        for (int j = 0; j <= ny; ++j) {
          for (int i = 0; i <= nx; ++i) {
            const std::array<int, 3> ijk{i, j, k};
            if (ijk[d] == wanted) set.push_back(index(i, j, k));
          }
        }
      }
      mesh.node_sets[names[2 * d + side]] = std::move(set);
    }
  }
  fill_tags(mesh);
  return mesh;
}

}  // namespace

Mesh generate_box(Eigen::Vector3d lo, Eigen::Vector3d hi, int nx, int ny, int nz) {
  for (int d = 0; d < 3; ++d) {
    require(std::isfinite(lo[d]) && std::isfinite(hi[d]) && lo[d] < hi[d],
            "box mesh: need lo < hi in every direction, got lo[" + std::to_string(d) +
                "] = " + std::to_string(lo[d]) + ", hi[" + std::to_string(d) +
                "] = " + std::to_string(hi[d]));
  }
  require(nx >= 1 && ny >= 1 && nz >= 1, "box mesh: need at least one element per direction, got " +
                                             std::to_string(nx) + " x " + std::to_string(ny) +
                                             " x " + std::to_string(nz));
  require_size((std::int64_t{nx} + 1) * (ny + 1) * (nz + 1), std::int64_t{nx} * ny * nz,
               "box mesh");

  const std::array<int, 3> cells{nx, ny, nz};
  std::array<std::vector<double>, 3> axes;
  for (int d = 0; d < 3; ++d) {
    // Exactly lo at 0 and hi at the last index.
    for (int i = 0; i <= cells[d]; ++i) {
      const double s = static_cast<double>(i) / cells[d];
      axes[d].push_back((1.0 - s) * lo[d] + s * hi[d]);
    }
  }
  return structured_grid(axes);
}

namespace {

const char* const kBlockAxis[3] = {"x", "y", "z"};

void check_block_params(const BlockParams& p) {
  for (int d = 0; d < 3; ++d) {
    const std::string axis = kBlockAxis[d];
    const double length = p.size[d];
    require(std::isfinite(length) && length >= kMinCylinderLength && length <= kMaxCylinderLength,
            "block mesh: size along " + axis + " must be a number in [1e-9, 1e9], got " +
                std::to_string(length));
    const int n = p.elements[d];
    require(n >= 1 && n <= kMaxCylinderDivisions, "block mesh: elements along " + axis +
                                                      " must be an integer in [1, 10000], got " +
                                                      std::to_string(n));
    const double g = p.grading[d];
    require(std::isfinite(g) && g >= 1.0 && g <= kMaxBlockGrading,
            "block mesh: grading along " + axis + " must be a number in [1, 10000], got " +
                std::to_string(g));
    require(!block_is_centred(p, d) || g == 1.0 || n % 2 == 0,
            "block mesh: a graded direction centred on 0 (" + axis +
                ") needs an even number of elements (graded from the centre out), got " +
                std::to_string(n));
  }
  require(block_node_count(p) <= kMaxGeneratedNodes,
          "block mesh: at most " + std::to_string(kMaxGeneratedNodes) + " nodes, got " +
              std::to_string(block_node_count(p)) + " ((nx + 1) (ny + 1) (nz + 1))");
}

/// m + 1 points from 0 to 1 (both exact) whose m spans grow geometrically
/// from the first to the last by the ratio g (the last span is g times the
/// first); g = 1 gives i / m.
std::vector<double> graded_span(int m, double g) {
  std::vector<double> t(static_cast<std::size_t>(m) + 1);
  const double r = m > 1 ? std::pow(g, 1.0 / (m - 1)) : 1.0;
  for (int i = 0; i <= m; ++i) {
    t[i] = (g == 1.0 || m == 1) ? static_cast<double>(i) / m
                                : (std::pow(r, i) - 1.0) / (std::pow(r, m) - 1.0);
  }
  t[m] = 1.0;
  return t;
}

/// The node coordinates of the block along direction d: [0, L] graded from
/// 0, or centred [-L/2, L/2] graded from 0 outward both ways (mirror images,
/// exactly), or uniform centred for an odd count.
std::vector<double> block_axis(const BlockParams& p, int d) {
  const double length = p.size[d];
  const int n = p.elements[d];
  if (!block_is_centred(p, d)) {
    std::vector<double> x = graded_span(n, p.grading[d]);
    for (double& v : x) v *= length;
    return x;
  }
  if (n % 2 != 0) {
    std::vector<double> x(static_cast<std::size_t>(n) + 1);
    for (int i = 0; i <= n; ++i) {
      const double s = static_cast<double>(i) / n;
      x[i] = (1.0 - s) * (-0.5 * length) + s * (0.5 * length);
    }
    return x;
  }
  const std::vector<double> half = graded_span(n / 2, p.grading[d]);
  std::vector<double> x(static_cast<std::size_t>(n) + 1);
  for (int i = 0; i <= n / 2; ++i) {
    x[n / 2 + i] = 0.5 * length * half[i];
    x[n / 2 - i] = -(0.5 * length * half[i]);
  }
  x[n / 2] = 0.0;
  return x;
}

}  // namespace

Mesh generate_block(const BlockParams& p) {
  check_block_params(p);
  Mesh mesh = structured_grid({block_axis(p, 0), block_axis(p, 1), block_axis(p, 2)});
  auto& sets = mesh.node_sets;
  sets["bottom"] = sets.at("zmin");
  sets["top"] = sets.at("zmax");
  // The outer side faces, where a half-space model puts its far field; the
  // faces on symmetry planes are left out.
  const bool x0_symmetry = p.symmetry != BlockParams::Symmetry::none;
  const bool y0_symmetry = p.symmetry == BlockParams::Symmetry::quarter;
  if (x0_symmetry) sets["symmetry_x0"] = sets.at("xmin");
  if (y0_symmetry) sets["symmetry_y0"] = sets.at("ymin");
  std::vector<int> lateral;
  const auto add_face = [&](const char* face) {
    lateral.insert(lateral.end(), sets.at(face).begin(), sets.at(face).end());
  };
  add_face("xmax");
  add_face("ymax");
  if (!x0_symmetry) add_face("xmin");
  if (!y0_symmetry) add_face("ymin");
  std::sort(lateral.begin(), lateral.end());
  lateral.erase(std::unique(lateral.begin(), lateral.end()), lateral.end());
  sets["lateral"] = std::move(lateral);
  return mesh;
}

namespace {

/// The shortest hexahedron edge at each node.
std::vector<double> shortest_edge_at_nodes(const Mesh& mesh) {
  constexpr std::array<std::array<int, 2>, 12> kEdges = {{{0, 1},
                                                          {1, 2},
                                                          {2, 3},
                                                          {3, 0},
                                                          {4, 5},
                                                          {5, 6},
                                                          {6, 7},
                                                          {7, 4},
                                                          {0, 4},
                                                          {1, 5},
                                                          {2, 6},
                                                          {3, 7}}};
  std::vector<double> h(mesh.nodes.size(), std::numeric_limits<double>::infinity());
  for (const Hex8& hex : mesh.hexes) {
    for (const auto& edge : kEdges) {
      const double length = (mesh.nodes[hex[edge[0]]] - mesh.nodes[hex[edge[1]]]).norm();
      h[hex[edge[0]]] = std::min(h[hex[edge[0]]], length);
      h[hex[edge[1]]] = std::min(h[hex[edge[1]]], length);
    }
  }
  return h;
}

/// Corners and Gauss points of the reference cube, where a distorted
/// hexahedron's Jacobian determinant must stay positive.
std::vector<Eigen::Vector3d> jacobian_probes() {
  std::vector<Eigen::Vector3d> probes;
  const double g = 1.0 / std::sqrt(3.0);
  for (const double scale : {1.0, g}) {
    for (int c = 0; c < 8; ++c) {
      probes.emplace_back(scale * ((c & 1) ? 1 : -1), scale * ((c & 2) ? 1 : -1),
                          scale * ((c & 4) ? 1 : -1));
    }
  }
  return probes;
}

}  // namespace

void distort_interior_nodes(Mesh& mesh, double amplitude, unsigned seed) {
  require(std::isfinite(amplitude) && amplitude >= 0.0,
          "distort_interior_nodes: amplitude must be >= 0, got " + std::to_string(amplitude));
  const int n = mesh.n_nodes();
  std::vector<int> all(n);
  for (int i = 0; i < n; ++i) all[i] = i;
  std::vector<char> on_boundary(n, 0);
  for (const auto& face : faces_on_node_set(mesh, all)) {
    for (const int node : face) on_boundary[node] = 1;
  }

  const std::vector<double> h = shortest_edge_at_nodes(mesh);

  // Offsets from the raw generator output (portable, unlike the distributions).
  std::mt19937 generator(seed);
  const auto uniform = [&generator] {
    return 2.0 * (static_cast<double>(generator()) / 4294967295.0) - 1.0;
  };
  const std::vector<Eigen::Vector3d> original = mesh.nodes;
  std::vector<Eigen::Vector3d> offset(n, Eigen::Vector3d::Zero());
  for (int i = 0; i < n; ++i) {
    if (on_boundary[i] || !std::isfinite(h[i])) continue;
    const double x = uniform(), y = uniform(), z = uniform();
    offset[i] = amplitude * h[i] * Eigen::Vector3d(x, y, z);
  }

  const std::vector<Eigen::Vector3d> probes = jacobian_probes();
  for (int attempt = 0; attempt < 80; ++attempt) {
    for (int i = 0; i < n; ++i) mesh.nodes[i] = original[i] + offset[i];
    bool valid = true;
    for (int e = 0; e < mesh.n_hexes(); ++e) {
      bool ok = true;
      for (const auto& xi : probes) ok = ok && hex_jacobian_det(mesh, e, xi) > 0.0;
      if (ok) continue;
      valid = false;
      for (const int node : mesh.hexes[e]) offset[node] *= 0.5;
    }
    if (valid) return;
  }
  mesh.nodes = original;
  throw InputError(
      "distort_interior_nodes: the mesh has hexahedra with non-positive Jacobians even "
      "without distortion");
}

namespace {

void require_hexahedra_only(const Mesh& mesh, const char* what) {
  require(mesh.wedges.empty() && mesh.tets.empty(),
          std::string(what) + ": the mesh must consist of hexahedra only");
}

template <class Element>
std::vector<std::size_t> consecutive_tags(const std::vector<Element>& elements) {
  std::vector<std::size_t> tags(elements.size());
  for (std::size_t i = 0; i < tags.size(); ++i) tags[i] = i + 1;
  return tags;
}

// Faces of the Gmsh hexahedron, counter-clockwise seen from outside.
constexpr std::array<std::array<int, 4>, 6> kHexFaces = {
    {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4}, {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}}};

}  // namespace

Mesh split_into_tetrahedra(const Mesh& hexes) {
  require_hexahedra_only(hexes, "split_into_tetrahedra");
  Mesh mesh;
  mesh.nodes = hexes.nodes;
  mesh.node_sets = hexes.node_sets;
  mesh.tets.reserve(12 * hexes.hexes.size());
  for (const Hex8& hex : hexes.hexes) {
    Eigen::Vector3d centre = Eigen::Vector3d::Zero();
    for (const int node : hex) centre += hexes.nodes[node];
    const int c = static_cast<int>(mesh.nodes.size());
    mesh.nodes.push_back(centre / 8.0);
    for (const auto& local : kHexFaces) {
      std::array<int, 4> q{};
      for (int k = 0; k < 4; ++k) q[k] = hex[local[k]];
      const int lowest = static_cast<int>(std::min_element(q.begin(), q.end()) - q.begin());
      // The diagonal through the smallest node: (q0, q2) or (q1, q3).
      const int a = lowest % 2;
      // Triangles (q_a, q_a+1, q_a+2) and (q_a, q_a+2, q_a+3), counter-clockwise
      // from outside; the tetrahedron (p, r, q, centre) is then positive.
      const int p = q[a], t1 = q[a + 1], t2 = q[(a + 2) % 4], t3 = q[(a + 3) % 4];
      mesh.tets.push_back({p, t2, t1, c});
      mesh.tets.push_back({p, t3, t2, c});
    }
  }
  mesh.node_tags = consecutive_tags(mesh.nodes);
  mesh.tet_tags = consecutive_tags(mesh.tets);
  std::vector<int> all(mesh.nodes.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  mesh.node_sets["all"] = std::move(all);
  return mesh;
}

Mesh split_into_wedges(const Mesh& hexes) {
  require_hexahedra_only(hexes, "split_into_wedges");
  Mesh mesh;
  mesh.nodes = hexes.nodes;
  mesh.node_tags = hexes.node_tags;
  mesh.node_sets = hexes.node_sets;
  mesh.wedges.reserve(2 * hexes.hexes.size());
  for (const Hex8& h : hexes.hexes) {
    mesh.wedges.push_back({h[0], h[1], h[2], h[4], h[5], h[6]});
    mesh.wedges.push_back({h[0], h[2], h[3], h[4], h[6], h[7]});
  }
  mesh.wedge_tags = consecutive_tags(mesh.wedges);
  return mesh;
}

}  // namespace bipo
