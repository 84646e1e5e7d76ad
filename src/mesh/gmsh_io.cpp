#include "mesh/gmsh_io.hpp"

#include <fcntl.h>
#include <gmsh.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <clocale>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "core/file_errors.hpp"
#include "mesh/quality.hpp"

namespace bipo {

namespace {

namespace fs = std::filesystem;

constexpr int kHex8 = 5;    // Gmsh element type of the 8-node hexahedron
constexpr int kPoint = 15;  // Gmsh element type of the 1-node point

// Gmsh keeps global state: one session at a time in the process, each one
// initialized silently (no configuration files, nothing printed, errors
// thrown) and finalized at the end, so no option leaks from one call to the
// next. Initializing Gmsh also sets the OpenMP thread count to 1 and the
// locale to the environment's: both are restored when the session ends.
std::mutex& gmsh_mutex() {
  static std::mutex mutex;
  return mutex;
}

class GmshSession {
 public:
  GmshSession()
      : lock_(gmsh_mutex()),
        omp_threads_(omp_get_max_threads()),
        locale_(std::setlocale(LC_ALL, nullptr)) {
    try {
      gmsh::initialize(0, nullptr, false);
      gmsh::option::setNumber("General.Terminal", 0);
      gmsh::option::setNumber("General.AbortOnError", 2);  // errors are thrown
    } catch (...) {
      end();
      throw;
    }
  }
  GmshSession(const GmshSession&) = delete;
  GmshSession& operator=(const GmshSession&) = delete;
  ~GmshSession() { end(); }

 private:
  void end() noexcept {
    try {
      gmsh::finalize();
    } catch (...) {  // nothing sensible to do here
    }
    omp_set_num_threads(omp_threads_);
    std::setlocale(LC_ALL, locale_.c_str());
  }

  std::lock_guard<std::mutex> lock_;
  int omp_threads_;
  std::string locale_;
};

// Runs `body` inside a Gmsh session; whatever Gmsh throws becomes an
// InputError naming `file`.
template <class Body>
auto in_gmsh(const std::string& file, const std::string& doing, Body&& body) {
  try {
    GmshSession session;
    return body();
  } catch (const InputError&) {
    throw;
  } catch (const std::string& error) {
    throw InputError(file + ": " + doing + " failed: " + error);
  } catch (const std::exception& error) {
    throw InputError(file + ": " + doing + " failed: " + error.what());
  } catch (...) {
    throw InputError(file + ": " + doing + " failed (error inside Gmsh)");
  }
}

// The tags to write: the mesh's own, or 1..count when it has none.
std::vector<std::size_t> tags_or_default(const std::vector<std::size_t>& tags, std::size_t count,
                                         const std::string& what, const std::string& file) {
  if (tags.empty()) {
    std::vector<std::size_t> defaults(count);
    for (std::size_t i = 0; i < count; ++i) defaults[i] = i + 1;
    return defaults;
  }
  if (tags.size() != count) {
    throw InputError(file + ": cannot write the mesh: " + std::to_string(tags.size()) + " " + what +
                     " tags for " + std::to_string(count) + " " + what + "s");
  }
  std::vector<std::size_t> sorted = tags;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.front() == 0) {
    throw InputError(file + ": cannot write the mesh: " + what + " tag 0 (tags start at 1)");
  }
  const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end()) {
    throw InputError(file + ": cannot write the mesh: duplicate " + what + " tag " +
                     std::to_string(*dup));
  }
  return tags;
}

/// A node set Gmsh can write as a physical group and bipo can read back.
void check_writable_set(const Mesh& mesh, const std::string& set_name, const std::vector<int>& set,
                        const std::string& name) {
  const int n = mesh.n_nodes();
  if (set_name.empty() || set_name.find_first_of("\"\n\r") != std::string::npos) {
    throw InputError(name + ": cannot write node set '" + set_name +
                     "': a physical name must be non-empty, without quotes or line breaks");
  }
  if (set.empty()) {
    throw InputError(name + ": cannot write node set '" + set_name +
                     "': it is empty, and a .msh file cannot hold an empty physical group");
  }
  for (const int node : set) {
    if (node < 0 || node >= n) {
      throw InputError(name + ": cannot write node set '" + set_name + "': node index " +
                       std::to_string(node) + " is outside the mesh");
    }
  }
  if (set_name == "all") {
    std::vector<int> sorted = set;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    if (sorted.size() != mesh.nodes.size()) {
      throw InputError(name + ": cannot write node set 'all': it has " +
                       std::to_string(sorted.size()) + " of the " + std::to_string(n) +
                       " nodes, and the name 'all' is reserved for every node");
    }
  }
}

/// Refuses, before Gmsh sees it, what Gmsh would write wrongly: an unknown
/// version, no hexahedra, indices outside the mesh.
void check_writable(const Mesh& mesh, const std::string& name, double version) {
  if (version != 4.1 && version != 2.2) {
    std::ostringstream msg;
    msg << name << ": cannot write .msh version " << version << " (supported: 4.1, 2.2)";
    throw InputError(msg.str());
  }
  if (mesh.hexes.empty()) throw InputError(name + ": cannot write a mesh without hexahedra");
  const int n = mesh.n_nodes();
  for (const Hex8& hex : mesh.hexes) {
    for (const int node : hex) {
      if (node < 0 || node >= n) {
        throw InputError(name + ": cannot write the mesh: a hexahedron refers to node index " +
                         std::to_string(node) + " of " + std::to_string(n));
      }
    }
  }
}

/// The mesh as a Gmsh model (one discrete volume, the hexahedra, physical
/// group `all`; one discrete point entity of point elements per other node
/// set), written by Gmsh to `tmp`.
void write_with_gmsh(const Mesh& mesh, const fs::path& tmp, bool binary, double version,
                     const std::vector<std::size_t>& node_tags,
                     const std::vector<std::size_t>& hex_tags) {
  std::vector<double> coords;
  coords.reserve(3 * mesh.nodes.size());
  for (const auto& x : mesh.nodes) coords.insert(coords.end(), {x.x(), x.y(), x.z()});
  std::vector<std::size_t> connectivity;
  connectivity.reserve(8 * mesh.hexes.size());
  for (const Hex8& hex : mesh.hexes) {
    for (const int node : hex) connectivity.push_back(node_tags[node]);
  }
  gmsh::model::add("bipo");
  gmsh::model::addDiscreteEntity(3, 1);
  gmsh::model::mesh::addNodes(3, 1, node_tags, coords);
  gmsh::model::mesh::addElementsByType(1, kHex8, hex_tags, connectivity);
  gmsh::model::addPhysicalGroup(3, {1}, 1);
  gmsh::model::setPhysicalName(3, 1, "all");
  int point = 0;
  for (const auto& [set_name, set] : mesh.node_sets) {
    if (set_name == "all") continue;
    ++point;
    gmsh::model::addDiscreteEntity(0, point);
    std::vector<std::size_t> members;
    members.reserve(set.size());
    for (const int node : set) members.push_back(node_tags[node]);
    gmsh::model::mesh::addElementsByType(point, kPoint, {}, members);
    gmsh::model::addPhysicalGroup(0, {point}, point);
    gmsh::model::setPhysicalName(0, point, set_name);
  }
  gmsh::option::setNumber("Mesh.MshFileVersion", version);
  gmsh::option::setNumber("Mesh.Binary", binary ? 1 : 0);
  gmsh::option::setNumber("Mesh.SaveAll", 0);
  gmsh::write(tmp.string());
}

/// Gmsh does not report failed writes (a full disk truncates its file): the
/// file it writes ends with the elements' section. Throws the system's
/// reason, if it still has one (what writing more says), for `path`.
void require_complete(const fs::path& tmp, const fs::path& path) {
  const std::string name = path.string();
  if (!fs::is_regular_file(tmp)) throw InputError(name + ": Gmsh did not write the file");
  const std::string end = "$EndElements\n";
  std::ifstream written(tmp, std::ios::binary | std::ios::ate);
  const auto size = static_cast<std::streamoff>(written.tellg());
  std::string tail(end.size(), '\0');
  if (size >= static_cast<std::streamoff>(end.size())) {
    written.seekg(size - static_cast<std::streamoff>(end.size()));
    written.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  }
  if (written && tail == end) return;
  int reason = 0;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) reason = errno;
  const std::string padding(4096, '\0');
  for (int k = 0; fd >= 0 && reason == 0 && k < 16; ++k)
    if (::write(fd, padding.data(), padding.size()) < 0) reason = errno;
  if (fd >= 0) ::close(fd);
  if (reason != 0) throw_file_error("write", path, reason);
  throw SystemError("cannot write " + name + ": the file Gmsh wrote is incomplete");
}

}  // namespace

void write_msh(const Mesh& mesh, const fs::path& path, bool binary, double version) {
  const std::string name = path.string();
  check_writable(mesh, name, version);
  const std::vector<std::size_t> node_tags =
      tags_or_default(mesh.node_tags, mesh.nodes.size(), "node", name);
  const std::vector<std::size_t> hex_tags =
      tags_or_default(mesh.hex_tags, mesh.hexes.size(), "hexahedron", name);
  for (const auto& [set_name, set] : mesh.node_sets) check_writable_set(mesh, set_name, set, name);

  // Gmsh opens its output by name, following links and truncating what is
  // there: it writes into a fresh folder of our own next to `path` (the same
  // file system, so the final rename is atomic; mode 0700, so nothing can be
  // planted in it), under a `.msh` name (Gmsh picks the format from it).
  require_regular_file_or_nothing(path);
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string folder_name = (parent / ".bipo-mesh-XXXXXX").string();
  if (::mkdtemp(folder_name.data()) == nullptr) throw_file_error("write", path, errno);
  const fs::path folder(folder_name);
  const fs::path tmp = folder / "mesh.msh";
  try {
    in_gmsh(name, "writing the mesh",
            [&] { write_with_gmsh(mesh, tmp, binary, version, node_tags, hex_tags); });
    require_complete(tmp, path);
    if (::rename(tmp.c_str(), path.c_str()) != 0) throw_file_error("write", path, errno);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(folder, ignored);
    throw;
  }
  std::error_code ignored;
  fs::remove(folder, ignored);
}

}  // namespace bipo
