#include "core/text_encoding.hpp"

#include <cstdint>
#include <cstdio>

namespace bipo {

namespace {

constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

/// Length of the well-formed UTF-8 sequence at text[at], or 0 if the
/// sequence there is ill-formed; then `*bad` is the length of its maximal
/// ill-formed subpart (at least 1), which one U+FFFD replaces (Unicode's
/// recommended practice, also that of the WHATWG decoder).
std::size_t sequence_length(std::string_view text, std::size_t at, std::size_t* bad) {
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(text[i]); };
  const std::uint8_t lead = byte(at);
  *bad = 1;
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  std::uint8_t low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  for (std::size_t k = 1; k < length; ++k) {
    if (at + k >= text.size()) return 0;
    const std::uint8_t b = byte(at + k);
    const bool ok = k == 1 ? (b >= low && b <= high) : (b >= 0x80 && b <= 0xBF);
    if (!ok) return 0;
    *bad = k + 1;
  }
  return length;
}

}  // namespace

std::pair<std::uint32_t, std::size_t> decode_utf8(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return {c, 1};
  std::size_t length = 0;
  std::uint32_t code = 0, smallest = 0;
  if (c >= 0xc2 && c <= 0xdf) {
    length = 2, code = c & 0x1fu, smallest = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    length = 3, code = c & 0x0fu, smallest = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    length = 4, code = c & 0x07u, smallest = 0x10000;
  }
  if (length == 0 || i + length > s.size()) return {0, 0};
  for (std::size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(s[i + k]);
    if ((next & 0xc0u) != 0x80u) return {0, 0};
    code = (code << 6) | (next & 0x3fu);
  }
  if (code < smallest || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return {0, 0};
  return {code, length};
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    std::size_t bad = 0;
    const std::size_t n = sequence_length(text, at, &bad);
    if (n == 0) {
      // The byte that broke the sequence starts the next one.
      out += replacement;
      at += bad;
    } else {
      out.append(text, at, n);
      at += n;
    }
  }
  return out;
}

std::string xml_escaped(std::string_view text) {
  const std::string utf8 = valid_utf8(text);
  std::string out;
  out.reserve(utf8.size());
  for (const char ch : utf8) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      case '\t':
        out += "&#9;";
        break;
      case '\n':
        out += "&#10;";
        break;
      case '\r':
        out += "&#13;";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20)
          out += replacement;
        else
          out += ch;
    }
  }
  return out;
}

std::string csv_field(std::string_view text) {
  std::string utf8 = valid_utf8(text);
  if (utf8.find_first_of(",\"\r\n") == std::string::npos) return utf8;
  std::string out = "\"";
  for (const char ch : utf8) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string printable(std::string_view text) {
  std::string out;
  const auto hex = [&](unsigned char b) {
    char buffer[5];
    std::snprintf(buffer, sizeof buffer, "\\x%02X", static_cast<unsigned>(b));
    out += buffer;
  };
  for (std::size_t at = 0; at < text.size();) {
    const auto b = static_cast<unsigned char>(text[at]);
    std::size_t bad = 0;
    const std::size_t n = sequence_length(text, at, &bad);
    if (b == '\\') {
      out += "\\\\";
      ++at;
    } else if (n == 0 || b < 0x20 || b == 0x7F) {
      hex(b);
      ++at;
    } else {
      out.append(text, at, n);
      at += n;
    }
  }
  return out;
}

}  // namespace bipo
