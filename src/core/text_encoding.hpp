// Owns how the names and texts of a case (titles, node set names, probe
// names, file paths: any bytes at all) are written into bipo's text outputs:
// XML (.vtu, .pvd), CSV headers and error messages. Every output is valid
// UTF-8 and well-formed in its format, whatever the input bytes were.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace bipo {

/// The code point of the UTF-8 sequence that starts at s[i] and its length
/// in bytes; length 0 if the sequence there is not valid UTF-8 (overlong
/// forms, surrogates and code points above U+10FFFF included). The one
/// decoder of the readers that refuse bad text (case file, .msh names).
[[nodiscard]] std::pair<std::uint32_t, std::size_t> decode_utf8(std::string_view s, std::size_t i);

/// `text` as valid UTF-8: each maximal ill-formed subsequence (a stray
/// continuation byte, a truncated, overlong or surrogate sequence, a code
/// point above U+10FFFF, a byte 0xF5..0xFF) becomes U+FFFD, the Unicode
/// replacement character; valid text is returned unchanged.
[[nodiscard]] std::string valid_utf8(std::string_view text);

/// `text` for an XML 1.0 attribute value or character data: valid_utf8(),
/// with & < > " ' as entity references and tab, line feed and carriage
/// return as character references (so that attribute normalization keeps
/// them); the other control characters, which XML 1.0 does not allow at all,
/// become U+FFFD. An XML parser reads the original text back when it was
/// valid UTF-8 without such control characters.
[[nodiscard]] std::string xml_escaped(std::string_view text);

/// `text` as one CSV field (RFC 4180): valid_utf8(), enclosed in double
/// quotes, with quotes doubled, when it holds a comma, a double quote, a
/// carriage return or a line feed.
[[nodiscard]] std::string csv_field(std::string_view text);

/// `text` for an error message on a terminal: printable ASCII and valid
/// UTF-8 as they are, control characters and invalid bytes as \xNN (a
/// backslash as \\), so that a name with a NUL byte or an escape sequence
/// shows what it holds.
[[nodiscard]] std::string printable(std::string_view text);

}  // namespace bipo
