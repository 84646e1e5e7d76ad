// Owns the rule for names that bipo turns into file names or output
// identifiers (probe names become probes/<name>.csv; node set and plane names
// become CSV columns and VTK fields). The case reader refuses other names,
// and the output writers check the same rule again, so that no name can make
// a file land outside the results folder whatever the path it came by.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace bipo {

/// Longest safe name, in bytes: long enough for any descriptive name, short
/// enough that <name>.csv.partial stays far below the usual 255-byte limit of
/// a file name.
inline constexpr std::size_t kMaxSafeNameLength = 64;

/// The rule: 1 to kMaxSafeNameLength characters, each an ASCII letter, digit,
/// `_`, `-` or `.`, the first one a letter, digit or `_`. So a safe name has
/// no path separator, is never `.` or `..`, never hidden (leading `.`), never
/// read as a command-line option (leading `-`), and has no NUL, control,
/// space, quote or markup character (nothing to escape in XML, JSON or CSV).
[[nodiscard]] bool is_safe_file_name(std::string_view name);

/// Why `name` breaks the rule, for messages ("contains '/' at position 3,
/// ..."), naming the first offending character; empty if the name is safe.
[[nodiscard]] std::string unsafe_file_name_reason(std::string_view name);

/// The rule in words, for messages and documentation.
inline constexpr const char* kSafeNameRule =
    "1 to 64 characters among letters, digits, '_', '-' and '.', starting with a letter, a digit "
    "or '_'";

}  // namespace bipo
