#include "mesh/gmsh_io.hpp"

#include <fcntl.h>
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
#include "mesh/gmsh_library.hpp"
#include "mesh/quality.hpp"

namespace bipo {

namespace {

namespace fs = std::filesystem;

constexpr int kHex8 = 5;    // Gmsh element type of the 8-node hexahedron
constexpr int kPoint = 15;  // Gmsh element type of the 1-node point

// What a call of Gmsh's C API reports when it fails: Gmsh's last error
// message (empty if Gmsh gave none).
struct GmshFailure {
  std::string message;
};

// Calls `function` of Gmsh's C API with `arguments` and its error flag;
// throws GmshFailure if the flag is set.
template <class Function, class... Arguments>
void call(const GmshApi& gmsh, Function function, Arguments... arguments) {
  int failed = 0;
  function(arguments..., &failed);
  if (failed == 0) return;
  char* message = nullptr;
  int no_message = 0;
  gmsh.logger_get_last_error(&message, &no_message);
  GmshFailure failure;
  if (no_message == 0 && message != nullptr) {
    failure.message = message;
    gmsh.free(message);
  }
  throw failure;
}

// Gmsh keeps global state: one session at a time in the process, each one
// initialized silently (no configuration files, nothing printed, errors
// reported) and finalized at the end, so no option leaks from one call to the
// next. Initializing Gmsh also sets the OpenMP thread count to 1 and the
// locale to the environment's: both are restored when the session ends.
std::mutex& gmsh_mutex() {
  static std::mutex mutex;
  return mutex;
}

class GmshSession {
 public:
  explicit GmshSession(const GmshApi& gmsh)
      : gmsh_(gmsh),
        lock_(gmsh_mutex()),
        omp_threads_(omp_get_max_threads()),
        locale_(std::setlocale(LC_ALL, nullptr)) {
    try {
      call(gmsh_, gmsh_.initialize, 0, nullptr, 0);
      call(gmsh_, gmsh_.option_set_number, "General.Terminal", 0.0);
      call(gmsh_, gmsh_.option_set_number, "General.AbortOnError", 2.0);  // errors reported
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
    int failed = 0;  // nothing sensible to do if it did
    gmsh_.finalize(&failed);
    omp_set_num_threads(omp_threads_);
    std::setlocale(LC_ALL, locale_.c_str());
  }

  const GmshApi& gmsh_;
  std::lock_guard<std::mutex> lock_;
  int omp_threads_;
  std::string locale_;
};

// Runs `body` inside a Gmsh session; whatever fails there becomes an
// InputError naming `file`.
template <class Body>
auto in_gmsh(const GmshApi& gmsh, const std::string& file, const std::string& doing, Body&& body) {
  try {
    GmshSession session(gmsh);
    return body();
  } catch (const InputError&) {
    throw;
  } catch (const GmshFailure& failure) {
    if (failure.message.empty()) {
      throw InputError(file + ": " + doing + " failed (error inside Gmsh)");
    }
    throw InputError(file + ": " + doing + " failed: " + failure.message);
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
  if (set_name.find('\0') != std::string::npos) {  // Gmsh's C API would end the name there
    throw InputError(name + ": cannot write a node set whose name contains a NUL character");
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
  if (!mesh.wedges.empty() || !mesh.tets.empty())
    throw InputError(name + ": writing .msh supports hexahedral meshes only (this one has " +
                     describe_elements(mesh) + ")");
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
/// set), written by Gmsh to `tmp`. The C API takes arrays as non-const
/// pointers and copies them.
void write_with_gmsh(const GmshApi& gmsh, const Mesh& mesh, const fs::path& tmp, bool binary,
                     double version, const std::vector<std::size_t>& node_tags,
                     const std::vector<std::size_t>& hex_tags) {
  std::vector<double> coords;
  coords.reserve(3 * mesh.nodes.size());
  for (const auto& x : mesh.nodes) coords.insert(coords.end(), {x.x(), x.y(), x.z()});
  std::vector<std::size_t> connectivity;
  connectivity.reserve(8 * mesh.hexes.size());
  for (const Hex8& hex : mesh.hexes) {
    for (const int node : hex) connectivity.push_back(node_tags[node]);
  }
  const std::size_t none = 0;
  call(gmsh, gmsh.model_add, "bipo");
  call(gmsh, gmsh.model_add_discrete_entity, 3, 1, nullptr, none);
  call(gmsh, gmsh.model_mesh_add_nodes, 3, 1, const_cast<std::size_t*>(node_tags.data()),
       node_tags.size(), coords.data(), coords.size(), nullptr, none);
  call(gmsh, gmsh.model_mesh_add_elements_by_type, 1, kHex8,
       const_cast<std::size_t*>(hex_tags.data()), hex_tags.size(), connectivity.data(),
       connectivity.size());
  int volume = 1;
  call(gmsh, gmsh.model_add_physical_group, 3, &volume, std::size_t{1}, 1);
  call(gmsh, gmsh.model_set_physical_name, 3, 1, "all");
  int point = 0;
  for (const auto& [set_name, set] : mesh.node_sets) {
    if (set_name == "all") continue;
    ++point;
    call(gmsh, gmsh.model_add_discrete_entity, 0, point, nullptr, none);
    std::vector<std::size_t> members;
    members.reserve(set.size());
    for (const int node : set) members.push_back(node_tags[node]);
    call(gmsh, gmsh.model_mesh_add_elements_by_type, point, kPoint, nullptr, none, members.data(),
         members.size());
    call(gmsh, gmsh.model_add_physical_group, 0, &point, std::size_t{1}, point);
    call(gmsh, gmsh.model_set_physical_name, 0, point, set_name.c_str());
  }
  call(gmsh, gmsh.option_set_number, "Mesh.MshFileVersion", version);
  call(gmsh, gmsh.option_set_number, "Mesh.Binary", binary ? 1.0 : 0.0);
  call(gmsh, gmsh.option_set_number, "Mesh.SaveAll", 0.0);
  call(gmsh, gmsh.write, tmp.c_str());
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
  const GmshApi& gmsh = gmsh_api("writing " + name);
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string folder_name = (parent / ".bipo-mesh-XXXXXX").string();
  if (::mkdtemp(folder_name.data()) == nullptr) throw_file_error("write", path, errno);
  const fs::path folder(folder_name);
  const fs::path tmp = folder / "mesh.msh";
  try {
    in_gmsh(gmsh, name, "writing the mesh",
            [&] { write_with_gmsh(gmsh, mesh, tmp, binary, version, node_tags, hex_tags); });
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
