// Owns the values given on the command line in place of a case file's
// (`bipo run --set KEY=VALUE`, `--sweep KEY=V1,V2,...`; docs/case-file.md,
// "The command line"): the key path syntax, the checks on a value's text
// (hostile input: size, encoding, no YAML tags, anchors or aliases) and the
// edit of the case's YAML tree, which the case reader (io/case_file.hpp) then
// validates exactly like the file.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/case.hpp"

namespace YAML {
class Node;
}

namespace bipo {

/// The largest value of one --set or --sweep argument, in bytes.
inline constexpr std::size_t kMaxOverrideBytes = 65536;
/// The most values one --sweep may take.
inline constexpr std::size_t kMaxSweepValues = 1000;

/// `argument` ("KEY=VALUE") of `option` ("--set") split and checked: KEY a
/// key path of names ([A-Za-z0-9_]) and list indices ("contact[0].friction.mu1"),
/// VALUE one YAML scalar or flow collection on one line. Throws InputError
/// naming the option, the argument and what was expected.
[[nodiscard]] CaseOverride parse_override(std::string_view argument, const std::string& option);

/// The key and values of a --sweep argument "KEY=V1,V2,...": the values are
/// separated by the commas outside brackets, braces and quotes, each
/// checked like a --set value. Throws InputError naming the argument.
struct SweepValues {
  std::string key;
  std::vector<std::string> values;
};
[[nodiscard]] SweepValues parse_sweep(std::string_view argument);

/// For the case reader only: puts `o` into the document `root` (a map),
/// adding the maps and list items on its way (an index one past the end of
/// a list appends an item), and sets o.scope. A relative path given for
/// mesh.file or output.directory is made absolute against the working
/// directory (docs/case-file.md, "Relative paths"). `shared` lists the key
/// paths of the file's YAML anchors and aliases: a value shared between
/// keys cannot be changed through one of them. Throws InputError starting
/// with `file`: and o.named().
void apply_override(YAML::Node& root, CaseOverride& o, const std::vector<std::string>& shared,
                    const std::string& file);

}  // namespace bipo
