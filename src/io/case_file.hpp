// Owns reading a YAML case file into the model's Case (model/case.hpp):
// read_case() and the command-line values it puts into the tree
// (io/case_overrides.hpp) are the only places in bipo that know YAML. Every key is
// documented in docs/case-file.md.
#pragma once

#include <filesystem>
#include <vector>

#include "model/case.hpp"

namespace bipo {

/// Reads and validates a case file. Throws InputError naming the file, the key
/// path and the line for unknown keys, wrong types, missing required keys and
/// out-of-range values; nothing is silently ignored. Whatever the bytes of the
/// file, it throws nothing but InputError for its content (the size limits of
/// docs/case-file.md keep memory and time bounded), and returns only names
/// that pass is_safe_file_name (io/safe_name.hpp) and strings that are UTF-8
/// without control characters other than tab and line breaks.
///
/// `overrides` (from io/case_overrides.hpp's parse_override) are put into
/// the file's YAML tree, in order, before it is read: their values are
/// validated exactly like the file's, errors in them name the option and the
/// key path, and the returned Case lists them.
[[nodiscard]] Case read_case(const std::filesystem::path& file,
                             std::vector<CaseOverride> overrides = {});

}  // namespace bipo
