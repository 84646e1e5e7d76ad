// Owns reading and writing Gmsh .msh files (2.2 and 4.1, ASCII and binary)
// through the Gmsh SDK. Gmsh's global state is confined to this file: each
// call initializes Gmsh (silent, no configuration files), works under a
// process-wide lock and finalizes it, restoring the OpenMP thread count and
// the locale that Gmsh changes; errors from Gmsh become InputError naming the
// file.
#pragma once

#include <filesystem>

#include "mesh/mesh.hpp"

namespace bipo {

/// Reads a .msh file (2.2 or 4.1, ASCII or binary).
///
/// - The volume must consist of 8-node hexahedra only: any other 3D element
///   type is an InputError naming the file, the Gmsh type name (e.g.
///   "Tetrahedron 4") and the count; no hexahedra at all is an InputError.
///   Elements of lower dimension are only used for physical groups.
/// - Nodes are the nodes of the hexahedra, numbered compactly in increasing
///   file tag order; node_tags / hex_tags keep the file's tags.
/// - Every physical group (of any dimension) becomes a node set: the nodes of
///   its elements. Its name is the physical name, or `physical_<dim>_<tag>`
///   if unnamed; groups sharing a name are merged. A group with nodes outside
///   the hexahedra is an InputError. The set `all` (every node) is always
///   defined; a physical group called `all` must contain every node.
/// - The Jacobians are checked (check_hex_jacobians).
/// A missing or unreadable file is an InputError naming the path.
[[nodiscard]] Mesh read_msh(const std::filesystem::path& path);

/// Writes `mesh` as a .msh file, version 4.1 or 2.2, ASCII or binary, so that
/// read_msh gives back the same nodes (bit for bit in binary; ASCII has 16
/// significant digits), the same hexahedra and the same node sets:
/// - one discrete volume entity holding every node and hexahedron, in the
///   physical volume `all`;
/// - each other node set as a discrete point entity of "Point 1" elements,
///   in a physical point group of the set's name.
/// Node and hexahedron tags are node_tags / hex_tags (1..n when absent).
/// Version 2.2 renumbers them consecutively in the mesh's order (hexahedra
/// after the point elements): tags survive only with 4.1.
/// `path` must be a regular file or a new path: anything else there (a
/// device, a FIFO, a folder, a socket, a symbolic link) is refused with an
/// InputError naming it. The file appears atomically: Gmsh writes it in a
/// fresh private folder next to `path` (`.bipo-mesh-XXXXXX`, created
/// exclusively), and it is renamed to `path`.
/// Throws InputError for an unsupported version, an empty or malformed set
/// (names must be non-empty without quotes or line breaks), a set `all` that
/// is not every node, duplicate tags, or a path that cannot be written; a
/// SystemError when the system refuses the write (full disk, permission).
void write_msh(const Mesh& mesh, const std::filesystem::path& path, bool binary = false,
               double version = 4.1);

}  // namespace bipo
