// Benchmark of reading .msh files (issue 11): bipo's own parser (read_msh)
// against the Gmsh SDK's reader that bipo used before, on the punch mesh and
// on a large generated cylinder (core 32, ring 32, layers 16 by default) in
// 4.1 ASCII, 4.1 binary and 2.2 ASCII. Prints the median wall time of each
// over several runs, the ratio, and checks that both give the same mesh.
//
// The SDK reader below is the former read_msh (gmsh::open and the model
// queries, then the same Mesh assembly); it only ever sees the files this
// program wrote itself, or the repository's punch mesh.
//
//   bench_msh_reader [--reps N] [--core N --ring N --layers N]
#include <gmsh.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bench_support.hpp"
#include "mesh/generate.hpp"
#include "mesh/gmsh_io.hpp"
#include "mesh/msh_reader.hpp"
#include "mesh/quality.hpp"

namespace {

using namespace bench;  // NOLINT: the shared helpers of bench_support.hpp
namespace fs = std::filesystem;

// The former reader: the Gmsh SDK reads the file, bipo queries the model.
bipo::Mesh sdk_read_msh(const fs::path& path) {
  gmsh::initialize(0, nullptr, false);
  gmsh::option::setNumber("General.Terminal", 0);
  gmsh::open(path.string());
  std::vector<std::size_t> hex_tags, hex_nodes;
  gmsh::model::mesh::getElementsByType(5, hex_tags, hex_nodes);
  std::vector<std::size_t> node_tags;
  std::vector<double> coords, unused;
  gmsh::model::mesh::getNodes(node_tags, coords, unused, -1, -1, false, false);
  std::unordered_map<std::size_t, std::size_t> position;
  position.reserve(node_tags.size());
  for (std::size_t i = 0; i < node_tags.size(); ++i) position.emplace(node_tags[i], i);
  bipo::Mesh out;
  out.node_tags = hex_nodes;
  std::sort(out.node_tags.begin(), out.node_tags.end());
  out.node_tags.erase(std::unique(out.node_tags.begin(), out.node_tags.end()), out.node_tags.end());
  std::unordered_map<std::size_t, int> index;
  index.reserve(out.node_tags.size());
  for (const std::size_t tag : out.node_tags) {
    const std::size_t p = 3 * position.at(tag);
    index.emplace(tag, static_cast<int>(out.nodes.size()));
    out.nodes.emplace_back(coords[p], coords[p + 1], coords[p + 2]);
  }
  out.hex_tags = std::move(hex_tags);
  out.hexes.resize(out.hex_tags.size());
  for (std::size_t e = 0; e < out.hexes.size(); ++e) {
    for (std::size_t a = 0; a < 8; ++a) out.hexes[e][a] = index.at(hex_nodes[8 * e + a]);
  }
  gmsh::vectorpair groups;
  gmsh::model::getPhysicalGroups(groups);
  for (const auto& [dim, tag] : groups) {
    std::string name;
    gmsh::model::getPhysicalName(dim, tag, name);
    if (name.empty()) name = "physical_" + std::to_string(dim) + "_" + std::to_string(tag);
    std::vector<std::size_t> members;
    std::vector<double> member_coords;
    gmsh::model::mesh::getNodesForPhysicalGroup(dim, tag, members, member_coords);
    std::vector<int>& set = out.node_sets[name];
    for (const std::size_t member : members) set.push_back(index.at(member));
  }
  gmsh::finalize();
  for (auto& [name, set] : out.node_sets) {
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
  }
  std::vector<int> every(out.nodes.size());
  for (std::size_t i = 0; i < every.size(); ++i) every[i] = static_cast<int>(i);
  out.node_sets["all"] = std::move(every);
  bipo::check_hex_jacobians(out, path.string());
  return out;
}

bool same_mesh(const bipo::Mesh& a, const bipo::Mesh& b) {
  return a.nodes == b.nodes && a.hexes == b.hexes && a.node_tags == b.node_tags &&
         a.hex_tags == b.hex_tags && a.node_sets == b.node_sets;
}

void usage() {
  std::fprintf(stderr, "usage: bench_msh_reader [--reps N] [--core N --ring N --layers N]\n");
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7;
  bipo::CylinderParams big;
  big.core = 32;
  big.ring = 32;
  big.layers = 16;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--reps") {
      reps = std::atoi(option_value(argc, argv, a, usage));
    } else if (arg == "--core") {
      big.core = std::atoi(option_value(argc, argv, a, usage));
    } else if (arg == "--ring") {
      big.ring = std::atoi(option_value(argc, argv, a, usage));
    } else if (arg == "--layers") {
      big.layers = std::atoi(option_value(argc, argv, a, usage));
    } else {
      usage();
      return 2;
    }
  }
  const fs::path dir = fs::temp_directory_path() / ("bench_msh_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const bipo::Mesh cylinder = bipo::generate_cylinder(big);
  struct File {
    std::string label;
    fs::path path;
  };
  std::vector<File> files = {
      {"punch.msh (4.1 ASCII)", fs::path(BIPO_SOURCE_DIR) / "meshes/punch.msh"}};
  const std::string size = std::to_string(cylinder.n_nodes()) + " nodes, " +
                           std::to_string(cylinder.n_hexes()) + " hex8";
  for (const auto& [version, binary, label] :
       {std::tuple{4.1, false, "4.1 ASCII"}, std::tuple{4.1, true, "4.1 binary"},
        std::tuple{2.2, false, "2.2 ASCII"}}) {
    const fs::path path =
        dir / (std::string("big_") + (binary ? "bin" : "ascii") + std::to_string(version) + ".msh");
    bipo::write_msh(cylinder, path, binary, version);
    files.push_back({std::string("cylinder ") + label + " (" + size + ")", path});
  }
  std::printf("reading .msh files: median of %d runs each; load %s\n", reps,
              load_average().c_str());
  std::printf("%-48s %7s %9s %9s %9s %9s\n", "file", "MB", "SDK [s]", "bipo [s]", "SDK/bipo",
              "same");
  double jacobians = 0.0;
  for (const File& f : files) {
    bipo::Mesh a, b;
    const double sdk = time_median(reps, [&] { a = sdk_read_msh(f.path); });
    const double own = time_median(reps, [&] { b = bipo::read_msh(f.path); });
    std::printf("%-48s %7.2f %9.4f %9.4f %9.1f %9s\n", f.label.c_str(),
                static_cast<double>(fs::file_size(f.path)) / 1e6, sdk, own, sdk / own,
                same_mesh(a, b) ? "yes" : "NO");
    jacobians = time_median(reps, [&] { bipo::check_hex_jacobians(b, f.path.string()); });
  }
  // Both readers end with it.
  std::printf("of which the Jacobian check of the cylinder: %.4f s\n", jacobians);
  std::printf("peak memory %.2f GiB\n", peak_rss_gib());
  fs::remove_all(dir);
  return 0;
}
