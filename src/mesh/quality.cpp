#include "mesh/quality.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/errors.hpp"

namespace bipo {

namespace {

// Reference coordinates of the eight vertices, Gmsh hex8 ordering.
constexpr std::array<std::array<double, 3>, 8> kVertex = {{{-1, -1, -1},
                                                           {1, -1, -1},
                                                           {1, 1, -1},
                                                           {-1, 1, -1},
                                                           {-1, -1, 1},
                                                           {1, -1, 1},
                                                           {1, 1, 1},
                                                           {-1, 1, 1}}};

// Local faces, nodes counter-clockwise seen from outside.
constexpr std::array<std::array<int, 4>, 6> kFace = {
    {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4}, {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}}};

// Wedge (Gmsh "Prism 6") faces, counter-clockwise seen from outside.
constexpr std::array<std::array<int, 4>, 3> kWedgeQuad = {
    {{0, 1, 4, 3}, {1, 2, 5, 4}, {2, 0, 3, 5}}};
constexpr std::array<std::array<int, 3>, 2> kWedgeTriangle = {{{0, 2, 1}, {3, 4, 5}}};
// Tetrahedron faces, counter-clockwise seen from outside.
constexpr std::array<std::array<int, 3>, 4> kTetTriangle = {
    {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}}};

double gauss_abscissa() {
  return 1.0 / std::sqrt(3.0);
}

std::size_t hex_tag(const Mesh& mesh, int e) {
  return mesh.hex_tags.size() == mesh.hexes.size() ? mesh.hex_tags[e]
                                                   : static_cast<std::size_t>(e) + 1;
}

}  // namespace

double hex_jacobian_det(const Mesh& mesh, int e, const Eigen::Vector3d& xi) {
  Eigen::Matrix3d jac = Eigen::Matrix3d::Zero();
  const Hex8& hex = mesh.hexes[e];
  for (int a = 0; a < 8; ++a) {
    const auto& v = kVertex[a];
    const double fx = 1.0 + v[0] * xi[0];
    const double fy = 1.0 + v[1] * xi[1];
    const double fz = 1.0 + v[2] * xi[2];
    const Eigen::Vector3d grad(0.125 * v[0] * fy * fz, 0.125 * v[1] * fx * fz,
                               0.125 * v[2] * fx * fy);
    jac += mesh.nodes[hex[a]] * grad.transpose();
  }
  return jac.determinant();
}

double hex_min_gauss_jacobian(const Mesh& mesh, int e) {
  const double g = gauss_abscissa();
  double lowest = std::numeric_limits<double>::infinity();
  for (const auto& v : kVertex) {
    const double det = hex_jacobian_det(mesh, e, Eigen::Vector3d(g * v[0], g * v[1], g * v[2]));
    if (std::isnan(det)) return det;  // std::min would drop it
    lowest = std::min(lowest, det);
  }
  return lowest;
}

double hex_volume(const Mesh& mesh, int e) {
  const double g = gauss_abscissa();
  double volume = 0.0;
  for (const auto& v : kVertex) {
    volume += hex_jacobian_det(mesh, e, Eigen::Vector3d(g * v[0], g * v[1], g * v[2]));
  }
  return volume;
}

void check_hex_jacobians(const Mesh& mesh, const std::string& source) {
  const int n = mesh.n_nodes();
  for (int e = 0; e < mesh.n_hexes(); ++e) {
    for (const int node : mesh.hexes[e]) {
      if (node < 0 || node >= n) {
        throw InputError(source + ": hexahedron " + std::to_string(hex_tag(mesh, e)) +
                         " refers to node index " + std::to_string(node) + " outside the mesh's " +
                         std::to_string(n) + " nodes");
      }
    }
  }
  int n_bad = 0;
  int first_bad = -1;
  double first_min = 0.0;
  for (int e = 0; e < mesh.n_hexes(); ++e) {
    const double lowest = hex_min_gauss_jacobian(mesh, e);
    // Not finite: coordinates so large (or not numbers) that the Jacobian
    // overflows, which no later computation survives either.
    if (!(lowest > 0.0) || !std::isfinite(lowest)) {
      if (n_bad == 0) {
        first_bad = e;
        first_min = lowest;
      }
      ++n_bad;
    }
  }
  if (n_bad == 0) return;
  std::ostringstream msg;
  msg.precision(6);
  msg << source << ": hexahedron " << hex_tag(mesh, first_bad);
  if (std::isfinite(first_min)) {
    msg << " is inverted or degenerate: minimum Jacobian determinant " << first_min
        << " at its 2x2x2 Gauss points (expected > 0 with Gmsh hex8 node ordering)";
  } else {
    msg << " has a non-finite Jacobian determinant (" << first_min
        << ") at its Gauss points: its node coordinates are not finite or too large";
  }
  if (n_bad > 1) {
    msg << "; " << n_bad << " hexahedra in total have a non-positive or non-finite determinant";
  }
  throw InputError(msg.str());
}

namespace {

double wedge_jacobian_det(const Mesh& mesh, int w, const Eigen::Vector3d& xi) {
  // N_a = L_a(r, s) (1 -+ zeta) / 2 (fem/solid_elements.cpp).
  const double l[3] = {1.0 - xi[0] - xi[1], xi[0], xi[1]};
  const double dl_dr[3] = {-1.0, 1.0, 0.0};
  const double dl_ds[3] = {-1.0, 0.0, 1.0};
  Eigen::Matrix3d jac = Eigen::Matrix3d::Zero();
  const Wedge6& wedge = mesh.wedges[static_cast<std::size_t>(w)];
  for (int layer = 0; layer < 2; ++layer) {
    const double sign = layer == 0 ? -1.0 : 1.0;
    const double h = 0.5 * (1.0 + sign * xi[2]);
    for (int a = 0; a < 3; ++a) {
      const Eigen::Vector3d grad(dl_dr[a] * h, dl_ds[a] * h, 0.5 * sign * l[a]);
      jac += mesh.nodes[wedge[3 * layer + a]] * grad.transpose();
    }
  }
  return jac.determinant();
}

}  // namespace

double wedge_min_gauss_jacobian(const Mesh& mesh, int w) {
  const double g = gauss_abscissa();
  constexpr double r[3][2] = {{1.0 / 6, 1.0 / 6}, {2.0 / 3, 1.0 / 6}, {1.0 / 6, 2.0 / 3}};
  double lowest = std::numeric_limits<double>::infinity();
  for (const double zeta : {-g, g}) {
    for (const auto& p : r) {
      const double det = wedge_jacobian_det(mesh, w, Eigen::Vector3d(p[0], p[1], zeta));
      if (std::isnan(det)) return det;
      lowest = std::min(lowest, det);
    }
  }
  return lowest;
}

double tet_jacobian_det(const Mesh& mesh, int t) {
  const Tet4& tet = mesh.tets[static_cast<std::size_t>(t)];
  const Eigen::Vector3d& x0 = mesh.nodes[tet[0]];
  return (mesh.nodes[tet[1]] - x0).cross(mesh.nodes[tet[2]] - x0).dot(mesh.nodes[tet[3]] - x0);
}

namespace {

/// Whether tetrahedron t is valid: 6 V > 1e-12 * 6 (longest edge)^3 and finite.
bool tet_is_valid(const Mesh& mesh, int t, double& det) {
  det = tet_jacobian_det(mesh, t);
  const Tet4& tet = mesh.tets[static_cast<std::size_t>(t)];
  double longest = 0.0;
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b)
      longest = std::max(longest, (mesh.nodes[tet[a]] - mesh.nodes[tet[b]]).norm());
  return std::isfinite(det) && det > 6e-12 * longest * longest * longest;
}

/// Refuses a mesh whose elements refer to nodes that do not exist.
void check_node_indices(const Mesh& mesh, const std::string& source) {
  const int n = mesh.n_nodes();
  for (int e = 0; e < mesh.n_elements(); ++e) {
    for (const int node : mesh.element_nodes(e)) {
      if (node < 0 || node >= n) {
        throw InputError(source + ": " + element_kind_name(mesh.element_kind(e)) + " " +
                         std::to_string(mesh.element_tag(e)) + " refers to node index " +
                         std::to_string(node) + " outside the mesh's " + std::to_string(n) +
                         " nodes");
      }
    }
  }
}

/// The error for `n_bad` bad elements of one kind, the first being `tag`
/// with Jacobian determinant `det`.
[[noreturn]] void throw_bad_elements(const std::string& source, const char* kind, const char* where,
                                     const char* ordering, std::size_t tag, double det, int n_bad) {
  std::ostringstream msg;
  msg.precision(6);
  msg << source << ": " << kind << ' ' << tag;
  if (std::isfinite(det)) {
    msg << " is inverted or degenerate: Jacobian determinant " << det << where << " (expected > 0"
        << ordering << ")";
  } else {
    msg << " has a non-finite Jacobian determinant (" << det
        << "): its node coordinates are not finite or too large";
  }
  if (n_bad > 1) msg << "; " << n_bad << " " << kind << " elements in total are bad";
  throw InputError(msg.str());
}

}  // namespace

void check_element_jacobians(const Mesh& mesh, const std::string& source) {
  if (mesh.n_elements() == 0) throw InputError(source + ": the mesh has no volume elements");
  check_node_indices(mesh, source);
  check_hex_jacobians(mesh, source);
  int n_bad = 0, first = -1;
  double first_det = 0.0;
  for (int w = 0; w < mesh.n_wedges(); ++w) {
    const double det = wedge_min_gauss_jacobian(mesh, w);
    if (!(det > 0.0) || !std::isfinite(det)) {
      if (n_bad++ == 0) {
        first = w;
        first_det = det;
      }
    }
  }
  if (n_bad > 0) {
    throw_bad_elements(source, "wedge", " at its six integration points",
                       " with Gmsh \"Prism 6\" node ordering",
                       mesh.element_tag(mesh.n_hexes() + first), first_det, n_bad);
  }
  for (int t = 0; t < mesh.n_tets(); ++t) {
    double det = 0.0;
    if (!tet_is_valid(mesh, t, det)) {
      if (n_bad++ == 0) {
        first = t;
        first_det = det;
      }
    }
  }
  if (n_bad > 0) {
    throw_bad_elements(source, "tetrahedron", " (six times its volume)",
                       " and above 1e-12 x 6 x its longest edge cubed, with Gmsh "
                       "\"Tetrahedron 4\" node ordering",
                       mesh.element_tag(mesh.n_hexes() + mesh.n_wedges() + first), first_det,
                       n_bad);
  }
}

namespace {

/// A face of an element whose nodes all lie in the set: `key` its sorted
/// nodes, `nodes` in the element's outward order.
template <std::size_t K>
struct FaceCandidate {
  std::array<int, K> key;
  std::array<int, K> nodes;
};

template <std::size_t K, std::size_t N, std::size_t F>
void add_candidates(const std::vector<std::array<int, N>>& elements,
                    const std::array<std::array<int, K>, F>& local, const std::vector<char>& in_set,
                    std::vector<FaceCandidate<K>>& out) {
  for (const auto& element : elements) {
    for (const auto& face : local) {
      FaceCandidate<K> c{};
      bool inside = true;
      for (std::size_t k = 0; k < K; ++k) {
        c.nodes[k] = element[static_cast<std::size_t>(face[k])];
        inside = inside && in_set[static_cast<std::size_t>(c.nodes[k])] != 0;
      }
      if (!inside) continue;
      c.key = c.nodes;
      std::sort(c.key.begin(), c.key.end());
      out.push_back(c);
    }
  }
}

/// The candidates seen once, in their order (a face shared by two elements
/// is interior: every key seen twice is dropped).
template <std::size_t K>
std::vector<std::array<int, K>> boundary_only(const std::vector<FaceCandidate<K>>& candidates) {
  std::vector<int> order(candidates.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return candidates[a].key < candidates[b].key; });
  std::vector<char> boundary(candidates.size(), 1);
  for (std::size_t i = 0; i + 1 < order.size(); ++i) {
    if (candidates[order[i]].key == candidates[order[i + 1]].key) {
      boundary[order[i]] = 0;
      boundary[order[i + 1]] = 0;
    }
  }
  std::vector<std::array<int, K>> faces;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (boundary[i]) faces.push_back(candidates[i].nodes);
  return faces;
}

std::vector<char> membership(const Mesh& mesh, const std::vector<int>& set) {
  std::vector<char> in_set(mesh.nodes.size(), 0);
  for (const int node : set) {
    if (node >= 0 && node < mesh.n_nodes()) in_set[static_cast<std::size_t>(node)] = 1;
  }
  return in_set;
}

}  // namespace

std::vector<std::array<int, 4>> faces_on_node_set(const Mesh& mesh, const std::vector<int>& set) {
  const std::vector<char> in_set = membership(mesh, set);
  std::vector<FaceCandidate<4>> quads;
  add_candidates(mesh.hexes, kFace, in_set, quads);
  add_candidates(mesh.wedges, kWedgeQuad, in_set, quads);
  return boundary_only(quads);
}

BoundaryFaces boundary_faces_on_node_set(const Mesh& mesh, const std::vector<int>& set) {
  const std::vector<char> in_set = membership(mesh, set);
  std::vector<FaceCandidate<3>> triangles;
  add_candidates(mesh.wedges, kWedgeTriangle, in_set, triangles);
  add_candidates(mesh.tets, kTetTriangle, in_set, triangles);
  return {faces_on_node_set(mesh, set), boundary_only(triangles)};
}

}  // namespace bipo
