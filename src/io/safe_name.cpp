#include "io/safe_name.hpp"

#include <cstdio>

namespace bipo {

namespace {

bool is_ascii_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool allowed_first(char c) {
  return is_ascii_alnum(c) || c == '_';
}

bool allowed(char c) {
  return allowed_first(c) || c == '-' || c == '.';
}

/// A character as a message can show it: quoted if printable ASCII, its byte
/// value otherwise (NUL, control characters, bytes of non-ASCII characters).
std::string shown(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7f) return std::string("'") + c + "'";
  char hex[16];
  std::snprintf(hex, sizeof hex, "byte 0x%02X", static_cast<unsigned>(byte));
  return hex;
}

}  // namespace

bool is_safe_file_name(std::string_view name) {
  return unsafe_file_name_reason(name).empty();
}

std::string unsafe_file_name_reason(std::string_view name) {
  if (name.empty()) return "it is empty";
  if (name.size() > kMaxSafeNameLength)
    return "it has " + std::to_string(name.size()) + " characters, more than " +
           std::to_string(kMaxSafeNameLength);
  if (!allowed_first(name[0]))
    return "it starts with " + shown(name[0]) + " (a name starts with a letter, a digit or '_')";
  for (std::size_t i = 1; i < name.size(); ++i)
    if (!allowed(name[i]))
      return "it contains " + shown(name[i]) + " at position " + std::to_string(i + 1);
  return "";
}

}  // namespace bipo
