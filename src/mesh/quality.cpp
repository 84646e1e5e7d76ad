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

std::vector<std::array<int, 4>> faces_on_node_set(const Mesh& mesh, const std::vector<int>& set) {
  std::vector<char> in_set(mesh.nodes.size(), 0);
  for (const int node : set) {
    if (node >= 0 && node < mesh.n_nodes()) in_set[node] = 1;
  }
  // Candidate faces (all four nodes in the set), keyed by their sorted nodes.
  struct Candidate {
    std::array<int, 4> key;
    int hex;
    int face;
  };
  std::vector<Candidate> candidates;
  for (int e = 0; e < mesh.n_hexes(); ++e) {
    const Hex8& hex = mesh.hexes[e];
    for (int f = 0; f < 6; ++f) {
      std::array<int, 4> key{};
      bool inside = true;
      for (int k = 0; k < 4; ++k) {
        key[k] = hex[kFace[f][k]];
        inside = inside && in_set[key[k]] != 0;
      }
      if (!inside) continue;
      std::sort(key.begin(), key.end());
      candidates.push_back({key, e, f});
    }
  }
  // A face shared by two hexahedra is interior: drop every key seen twice.
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
  std::vector<std::array<int, 4>> faces;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!boundary[i]) continue;
    const Hex8& hex = mesh.hexes[candidates[i].hex];
    const auto& local = kFace[candidates[i].face];
    faces.push_back({hex[local[0]], hex[local[1]], hex[local[2]], hex[local[3]]});
  }
  return faces;
}

}  // namespace bipo
