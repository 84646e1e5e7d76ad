// Owns reading Gmsh .msh files: the checks on the path, and bipo's own strict
// parser of the MSH 2.2 and 4.1 formats (ASCII and binary) into a Mesh.
//
// Why bipo has its own parser instead of the Gmsh SDK's reader: gmsh::open()
// runs any file that does not start with '$' as a Gmsh script (which can run
// shell commands, end the process or sleep), and the SDK's .msh reader trusts
// the counts, tags and dimensions it reads (malformed files crash it or lose
// elements silently). Mesh files come from other people, so no byte of one
// ever reaches the SDK; the SDK is only used to write .msh files (gmsh_io.hpp).
//
// What the parser accepts (meshes/README.md has the user's version):
// - The file starts with the bytes `$MeshFormat` at line 1 (no byte order
//   mark, no leading blank line): anything else is refused before any other
//   byte is looked at. The version is 2.2 or 4.1, file type 0 (ASCII) or 1
//   (binary), data size 8; binary files hold the int 1 in the machine's
//   (little-endian) byte order.
// - $PhysicalNames, $Entities (4.1), $Nodes and $Elements are parsed, each at
//   most once; $Entities comes before $Nodes, $Nodes before $Elements.
//   $PartitionedEntities (a partitioned 4.1 mesh) and $ParametricNodes are
//   refused. Every other section is skipped up to its `$End<name>` line: in
//   ASCII files, and in binary files for sections without binary content
//   ($Comments, $InterpolationScheme, unknown names), the first line that is
//   exactly `$End<name>` (what Gmsh does); in binary files the binary
//   post-processing sections ($NodeData, $ElementData, $ElementNodeData) and,
//   in 4.1, $Periodic and $GhostElements are skipped by their structure (their
//   counts), so that no byte of their data can be mistaken for the end line.
//   $Parametrizations in a binary file is skipped by the line search (its
//   layout depends on Gmsh internals): a false end line inside its data would
//   make the next section header invalid, an error, never a misread mesh.
//   A section without its end line is an error.
// - In ASCII files every record (a node tag, a node's coordinates, an
//   element, an entity, a physical name, a block header) is one line with
//   exactly its values; counts of a section header may be spread over lines,
//   as Gmsh reads them. Numbers must parse entirely and fit their type.
// - Counts equal what is listed (too few or too many entries is an error),
//   dimensions are 0..3, node, element and entity tags are >= 1 and node and
//   element tags unique, element types are known Gmsh types (1 to 31: points,
//   lines, triangles, quadrangles, tetrahedra, hexahedra, prisms and pyramids
//   up to second order, and Gmsh's higher-order lines, triangles and
//   tetrahedra up to 56 nodes), elements refer to defined nodes and (4.1) to
//   entities of their own dimension declared in $Entities (or, in a file
//   without $Entities, by a $Nodes block), node coordinates are finite,
//   physical names are quoted valid UTF-8 without control characters.
// - A count is never trusted for an allocation: it is first checked against
//   the bytes left in the file. The parser does not recurse and never reads
//   outside the buffer.
// Errors are InputError naming the file, the line (ASCII) or the byte offset
// from the start of the file (binary), and what was expected and found.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "mesh/mesh.hpp"

namespace bipo {

/// Largest .msh file read_msh accepts (4 GiB): the file is read into memory
/// whole, and a larger one would be a mesh far beyond what bipo can solve.
inline constexpr std::uintmax_t kMaxMshFileBytes = std::uintmax_t{4} << 30;

/// Reads a .msh file (2.2 or 4.1, ASCII or binary) with parse_msh.
///
/// Before opening it, the path must name a regular file (following symbolic
/// links): a missing file, a directory, a FIFO, a device (/dev/null), a
/// socket, a dangling symbolic link or a symbolic link loop is an InputError
/// saying which, and so is a file larger than kMaxMshFileBytes or one that
/// cannot be opened (the system's reason). The file is opened non-blocking
/// and checked again once open, so that nothing swapped in meanwhile (a FIFO)
/// can block the read.
[[nodiscard]] Mesh read_msh(const std::filesystem::path& path);

/// Why `path` cannot be read as a mesh file, judged without opening it
/// (following symbolic links): "no such file", "it is a directory, not a
/// regular file", "it is a FIFO (named pipe), not a regular file", "it is a
/// device (character device), not a regular file", "symbolic link loop
/// (...)", "it is a symbolic link to a missing file ('target')", too large,
/// or the system's reason; empty for a regular file within the size limit.
/// read_msh refuses with this text; the case reader uses it to say what
/// mesh.file names.
[[nodiscard]] std::string mesh_path_problem(const std::filesystem::path& path);

/// Parses the bytes of a .msh file; `file_name` only names it in messages.
/// This is read_msh without the file system, and the entry point of the
/// .msh fuzz target: for any bytes it returns a Mesh or throws InputError,
/// nothing else.
///
/// - The volume must consist of 8-node hexahedra, 6-node prisms (wedges)
///   and 4-node tetrahedra, in any mix: any other 3D element type is an
///   InputError naming the file, the Gmsh type name (e.g. "Tetrahedron 10")
///   and the count; no volume element at all is an InputError. Elements of
///   lower dimension are only used for physical groups.
/// - Nodes are the nodes of the volume elements, numbered compactly in
///   increasing file tag order; node_tags / hex_tags / wedge_tags / tet_tags
///   keep the file's tags. The elements of each kind come in Gmsh's order: by
///   volume entity tag, then in file order (4.1) or in element tag order
///   (2.2).
/// - Every physical group (of any dimension) becomes a node set: the nodes of
///   the elements of its entities (in 2.2, an entity is an elementary tag of
///   a dimension, and it belongs to the physical groups of its elements, as
///   Gmsh reads it). Its name is the physical name, or
///   `physical_<dim>_<tag>` if unnamed (or named ""); groups sharing a name
///   are merged. A group with nodes outside the volume elements is an InputError. The
///   set `all` (every node) is always defined; a physical group called `all`
///   must contain every node.
/// - The Jacobians are checked (check_element_jacobians).
[[nodiscard]] Mesh parse_msh(std::string_view bytes, const std::string& file_name);

}  // namespace bipo
