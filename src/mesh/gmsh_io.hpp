// Owns writing Gmsh .msh files (2.2 and 4.1, ASCII and binary) through the
// Gmsh SDK's C API, loaded on the first write (gmsh_library.hpp). Gmsh's
// global state is confined to this file: each call initializes Gmsh (silent,
// no configuration files), works under a process-wide lock and finalizes it,
// restoring the OpenMP thread count and the locale that Gmsh changes; errors
// from Gmsh become InputError naming the file. Reading is bipo's own parser
// (msh_reader.hpp): no file bipo reads ever reaches the Gmsh SDK.
#pragma once

#include <filesystem>

#include "mesh/mesh.hpp"
#include "mesh/msh_reader.hpp"  // read_msh, for the callers of both

namespace bipo {

/// Writes `mesh` as a .msh file, version 4.1 or 2.2, ASCII or binary, so that
/// read_msh gives back the same nodes (bit for bit in binary; ASCII has 16
/// significant digits), the same hexahedra and the same node sets:
/// - one discrete volume entity holding every node and hexahedron, in the
///   physical volume `all`;
/// - each other node set as a discrete point entity of "Point 1" elements,
///   in a physical point group of the set's name.
/// Node and hexahedron tags are node_tags / hex_tags (1..n when absent).
/// Only hexahedral meshes: a mesh with wedges or tetrahedra is an InputError.
/// Version 2.2 renumbers them consecutively in the mesh's order (hexahedra
/// after the point elements): tags survive only with 4.1.
/// `path` must be a regular file or a new path: anything else there (a
/// device, a FIFO, a folder, a socket, a symbolic link) is refused with an
/// InputError naming it. The file appears atomically: Gmsh writes it in a
/// fresh private folder next to `path` (`.bipo-mesh-XXXXXX`, created
/// exclusively), and it is renamed to `path`.
/// Throws InputError for an unsupported version, an empty or malformed set
/// (names must be non-empty without quotes, line breaks or NUL), a set `all`
/// that is not every node, duplicate tags, or a path that cannot be written;
/// a SystemError when the system refuses the write (full disk, permission)
/// or the Gmsh library cannot be loaded (the message names it).
void write_msh(const Mesh& mesh, const std::filesystem::path& path, bool binary = false,
               double version = 4.1);

}  // namespace bipo
