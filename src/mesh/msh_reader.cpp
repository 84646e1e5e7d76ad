#include "mesh/msh_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <clocale>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "core/file_errors.hpp"
#include "core/text_encoding.hpp"
#include "mesh/quality.hpp"

namespace bipo {

namespace {

namespace fs = std::filesystem;

static_assert(sizeof(std::size_t) == 8 && sizeof(double) == 8 && sizeof(int) == 4,
              "binary .msh files are read with the layout of 64-bit Linux");

constexpr int kMaxInt = std::numeric_limits<int>::max();
constexpr std::size_t kMaxSize = std::numeric_limits<std::size_t>::max();

// ---------------------------------------------------------- element types --

struct ElementType {
  int dim;
  int nodes;
  const char* name;  // as Gmsh names it (gmsh::model::mesh::getElementProperties)
};

// Gmsh element types 1 to 31 (GmshDefines.h), in type order.
constexpr std::array<ElementType, 31> kElementTypes = {
    {{1, 2, "Line 2"},          {2, 3, "Triangle 3"},      {2, 4, "Quadrilateral 4"},
     {3, 4, "Tetrahedron 4"},   {3, 8, "Hexahedron 8"},    {3, 6, "Prism 6"},
     {3, 5, "Pyramid 5"},       {1, 3, "Line 3"},          {2, 6, "Triangle 6"},
     {2, 9, "Quadrilateral 9"}, {3, 10, "Tetrahedron 10"}, {3, 27, "Hexahedron 27"},
     {3, 18, "Prism 18"},       {3, 14, "Pyramid 14"},     {0, 1, "Point"},
     {2, 8, "Quadrilateral 8"}, {3, 20, "Hexahedron 20"},  {3, 15, "Prism 15"},
     {3, 13, "Pyramid 13"},     {2, 9, "Triangle 9"},      {2, 10, "Triangle 10"},
     {2, 12, "Triangle 12"},    {2, 15, "Triangle 15"},    {2, 15, "Triangle 15I"},
     {2, 21, "Triangle 21"},    {1, 4, "Line 4"},          {1, 5, "Line 5"},
     {1, 6, "Line 6"},          {3, 20, "Tetrahedron 20"}, {3, 35, "Tetrahedron 35"},
     {3, 56, "Tetrahedron 56"}}};
// The volume elements bipo solves, in the mesh's element order (mesh.hpp):
// Gmsh type and node count of each kind.
constexpr std::array<int, 3> kVolumeType = {5, 6, 4};  // Hexahedron 8, Prism 6, Tetrahedron 4
constexpr std::array<std::size_t, 3> kVolumeNodes = {8, 6, 4};

/// Index of a volume kind in kVolumeType, or -1 for any other type.
int volume_kind(int type) {
  for (std::size_t k = 0; k < kVolumeType.size(); ++k)
    if (kVolumeType[k] == type) return static_cast<int>(k);
  return -1;
}

const ElementType* element_type(long long type) {
  if (type < 1 || type > static_cast<long long>(kElementTypes.size())) return nullptr;
  return &kElementTypes[static_cast<std::size_t>(type - 1)];
}

std::string type_label(long long type) {
  const ElementType* t = element_type(type);
  return std::to_string(type) + " (\"" + (t != nullptr ? t->name : "?") + "\")";
}

const char* const kKnownTypes =
    "bipo knows the Gmsh element types 1 to 31 (points, lines, triangles, quadrangles, "
    "tetrahedra, hexahedra, prisms and pyramids up to second order, and Gmsh's higher-order "
    "lines, triangles and tetrahedra up to 56 nodes)";

// ------------------------------------------------------------ tag indexes --

// Maps tags to their positions in file order: a vector indexed by tag when
// the tags are dense enough (at most 4 n + 1024), a sorted array otherwise,
// so that a single huge tag costs no memory.
class TagIndex {
 public:
  // Indexes `tags`; returns the positions (earlier, later) of a tag listed
  // twice, if there is one.
  std::optional<std::pair<std::size_t, std::size_t>> build(const std::vector<std::size_t>& tags) {
    const std::size_t n = tags.size();
    std::size_t max_tag = 0;
    for (const std::size_t tag : tags) max_tag = std::max(max_tag, tag);
    dense_.clear();
    sorted_.clear();
    dense_mode_ = max_tag <= 4 * n + 1024;
    if (dense_mode_) {
      dense_.assign(max_tag + 1, -1);
      for (std::size_t i = 0; i < n; ++i) {
        int& slot = dense_[tags[i]];
        if (slot >= 0) return std::pair{static_cast<std::size_t>(slot), i};
        slot = static_cast<int>(i);
      }
      return std::nullopt;
    }
    sorted_.reserve(n);
    for (std::size_t i = 0; i < n; ++i) sorted_.emplace_back(tags[i], static_cast<int>(i));
    std::sort(sorted_.begin(), sorted_.end());
    for (std::size_t k = 1; k < n; ++k) {
      if (sorted_[k].first == sorted_[k - 1].first) {
        return std::pair{static_cast<std::size_t>(sorted_[k - 1].second),
                         static_cast<std::size_t>(sorted_[k].second)};
      }
    }
    return std::nullopt;
  }

  // The position of `tag`, or -1.
  [[nodiscard]] int find(std::size_t tag) const {
    if (dense_mode_) return tag < dense_.size() ? dense_[tag] : -1;
    const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::pair{tag, -1});
    return it != sorted_.end() && it->first == tag ? it->second : -1;
  }

 private:
  bool dense_mode_ = true;
  std::vector<int> dense_;
  std::vector<std::pair<std::size_t, int>> sorted_;
};

// ---------------------------------------------------------------- strings --

// `bytes` for a message: at most `limit` bytes, bytes outside printable
// ASCII as \xHH.
std::string printable(std::string_view bytes, std::size_t limit = 48) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size() && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      constexpr char kHex[] = "0123456789ABCDEF";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  if (bytes.size() > limit) out += "...";
  return out;
}

// Whether `s` is valid UTF-8 without control characters (C0, DEL, C1).
bool is_clean_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto [code, length] = decode_utf8(s, i);
    if (length == 0 || code < 0x20 || (code >= 0x7F && code <= 0x9F)) return false;
    i += length;
  }
  return true;
}

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}
bool is_space(char c) {
  return c == '\n' || is_blank(c);
}

// An integer token, entirely (an optional '+' as scanf allows).
enum class Parsed { ok, invalid, out_of_range };
template <class T>
Parsed to_integer(std::string_view token, T& value) {
  const char* begin = token.data();
  const char* end = begin + token.size();
  if (begin != end && *begin == '+') {
    ++begin;
    if (begin != end && *begin == '-') return Parsed::invalid;
  }
  if (begin == end) return Parsed::invalid;
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ptr != end) return Parsed::invalid;
  if (ec == std::errc::result_out_of_range) return Parsed::out_of_range;
  return ec == std::errc{} ? Parsed::ok : Parsed::invalid;
}

// A floating-point token, entirely. Out-of-range values get what strtod
// gives (zero or a subnormal on underflow, infinity on overflow), as Gmsh
// reads them.
bool to_double(std::string_view token, double& value) {
  const char* begin = token.data();
  const char* end = begin + token.size();
  if (begin != end && *begin == '+') {
    ++begin;
    if (begin != end && *begin == '-') return false;
  }
  if (begin == end) return false;
  const auto [ptr, ec] = std::from_chars(begin, end, value, std::chars_format::general);
  if (ptr != end) return false;
  if (ec == std::errc{}) return true;
  if (ec != std::errc::result_out_of_range) return false;
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
  const std::string copy(begin, end);
  char* stop = nullptr;
  value = strtod_l(copy.c_str(), &stop, c_locale);
  return stop == copy.c_str() + copy.size();
}

// Sorts node indices (in [0, n)) and removes repeats; a long list by marking
// the nodes, in time linear in n.
void sort_unique(std::vector<int>& v, std::size_t n, std::vector<char>& mark) {
  if (v.size() < n / 4) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return;
  }
  mark.assign(n, 0);
  for (const int i : v) mark[static_cast<std::size_t>(i)] = 1;
  v.clear();
  for (std::size_t i = 0; i < n; ++i) {
    if (mark[i] != 0) v.push_back(static_cast<int>(i));
  }
}

// ------------------------------------------------------------------ parser --

struct Entity {
  int dim = 0;
  int tag = 0;
  std::vector<int> physicals;    // as Gmsh groups them: |tag|, never 0
  std::vector<int> other_nodes;  // node positions of its elements other than volume elements
  std::array<std::vector<int>, 3> volume;  // its volume elements of each kind (indices into
                                           // the parser's list of that kind)
};

class Parser {
 public:
  Parser(std::string_view bytes, const std::string& file) : in_(bytes), file_(file) {}

  Mesh parse() {
    check_first_line();
    parse_mesh_format();
    sections();
    return assemble();
  }

 private:
  // --------------------------------------------------------- messages --

  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    throw InputError(file_ + ": " + where(at) + ": " + what);
  }

  [[nodiscard]] std::string where(std::size_t at) const {
    at = std::min(at, in_.size());
    if (binary_) return "byte offset " + std::to_string(at);
    const auto lines = std::count(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    return "line " + std::to_string(lines + 1);
  }

  // The rest of the line at `at`, for a message.
  [[nodiscard]] std::string found_at(std::size_t at) const {
    if (at >= in_.size()) return "the end of the file";
    std::size_t end = at;
    while (end < in_.size() && in_[end] != '\n' && end - at < 64) ++end;
    while (end > at && is_blank(in_[end - 1])) --end;
    const bool cut = end < in_.size() && in_[end] != '\n' && !is_blank(in_[end]);
    return "'" + printable(in_.substr(at, end - at)) + (cut ? "...'" : "'");
  }

  // "<section>: " or "<section> block <n>: ", the context of messages.
  [[nodiscard]] std::string ctx() const { return context_ + ": "; }

  // ------------------------------------------------------ ASCII tokens --

  [[nodiscard]] bool at_end() const { return pos_ >= in_.size(); }
  void skip_space() {
    while (pos_ < in_.size() && is_space(in_[pos_])) ++pos_;
  }
  void skip_blanks() {
    while (pos_ < in_.size() && is_blank(in_[pos_])) ++pos_;
  }
  std::string_view take_token() {
    const std::size_t begin = pos_;
    while (pos_ < in_.size() && !is_space(in_[pos_])) ++pos_;
    return in_.substr(begin, pos_ - begin);
  }
  // After skipping white space (lines too): whether a '$' line comes next,
  // i.e. a list ended before its declared count.
  bool next_is_marker() {
    skip_space();
    return pos_ < in_.size() && in_[pos_] == '$';
  }

  // The next token on the current line; fails naming `what` if the line
  // (or the file) ends first.
  std::string_view line_token(const char* what) {
    skip_blanks();
    if (at_end() || in_[pos_] == '\n') {
      fail(pos_,
           ctx() + "expected " + what + ", found the end of the " + (at_end() ? "file" : "line"));
    }
    return take_token();
  }
  // The next token, on this line or a later one.
  std::string_view any_token(const char* what) {
    skip_space();
    if (at_end()) fail(pos_, ctx() + "expected " + what + ", found the end of the file");
    return take_token();
  }

  template <class T>
  T checked_integer(std::string_view token, std::size_t at, const char* what, T lo, T hi) {
    T value{};
    const Parsed parsed = to_integer(token, value);
    if (parsed == Parsed::invalid) {
      fail(at, ctx() + "expected " + what + " (an integer" +
                   (std::is_unsigned_v<T> ? std::string(" >= 0") : std::string()) + "), found '" +
                   printable(token) + "'");
    }
    if (parsed == Parsed::out_of_range || value < lo || value > hi) {
      fail(at, ctx() + what + " must be between " + std::to_string(lo) + " and " +
                   std::to_string(hi) + ", found " + printable(token));
    }
    return value;
  }
  template <class T>
  T line_integer(const char* what, T lo, T hi) {
    const std::string_view token = line_token(what);
    return checked_integer(token, pos_ - token.size(), what, lo, hi);
  }
  template <class T>
  T any_integer(const char* what, T lo, T hi) {
    const std::string_view token = any_token(what);
    return checked_integer(token, pos_ - token.size(), what, lo, hi);
  }
  double line_double(const char* what) {
    const std::string_view token = line_token(what);
    double value = 0.0;
    if (!to_double(token, value)) {
      fail(pos_ - token.size(),
           ctx() + "expected " + what + " (a number), found '" + printable(token) + "'");
    }
    return value;
  }
  // A node coordinate: a finite number.
  double coordinate(const char* what, std::size_t node_tag) {
    const std::string_view token = line_token(what);
    double value = 0.0;
    if (!to_double(token, value)) {
      fail(pos_ - token.size(),
           ctx() + "expected " + what + " (a number), found '" + printable(token) + "'");
    }
    if (!std::isfinite(value)) {
      fail(pos_ - token.size(), ctx() + "node " + std::to_string(node_tag) +
                                    " has a non-finite coordinate (" + printable(token) + ")");
    }
    return value;
  }

  // The header of a 4.1 block at pos_: exactly four values on one line.
  // `b` is the block's index (for a hint when the block before listed more
  // entries than it declared).
  std::array<std::string_view, 4> block_header(const char* layout, std::size_t b) {
    const std::size_t at = begin_record();
    std::array<std::string_view, 4> fields{};
    std::size_t n = 0;
    while (true) {
      skip_blanks();
      if (at_end() || in_[pos_] == '\n') break;
      const std::string_view token = take_token();
      if (n < 4) fields[n] = token;
      ++n;
    }
    if (n != 4) {
      fail(at, ctx() + "expected the block header (" + layout + "), found " + found_at(at) +
                   (n > 4 && b > 0 ? " (does the block before list more than it declares?)" : ""));
    }
    if (!at_end()) ++pos_;
    return fields;
  }
  [[nodiscard]] std::size_t offset(std::string_view token) const {
    return static_cast<std::size_t>(token.data() - in_.data());
  }
  template <class T>
  T field_integer(std::string_view token, const char* what, T lo, T hi) {
    return checked_integer(token, offset(token), what, lo, hi);
  }

  // Starts a one-line record (skipping blank lines); returns where it starts.
  std::size_t begin_record() {
    skip_space();
    return pos_;
  }
  // Ends a one-line record: nothing but blanks may follow on its line.
  void end_record(const std::string& what) {
    skip_blanks();
    if (at_end()) return;
    if (in_[pos_] != '\n') {
      fail(pos_, ctx() + "unexpected " + found_at(pos_) + " after " + what +
                     " (one record per line, with exactly its values)");
    }
    ++pos_;
  }

  // In a binary file: the ASCII line at pos_ up to its '\n', which is
  // consumed and nothing after it (binary data may follow).
  std::string_view binary_file_line(const char* what) {
    const std::size_t begin = pos_;
    const void* nl = std::memchr(in_.data() + begin, '\n', in_.size() - begin);
    if (nl == nullptr)
      fail(begin, ctx() + "expected " + what + " on a line, found the end of the file");
    const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(nl) - in_.data());
    pos_ = end + 1;
    std::string_view line = in_.substr(begin, end - begin);
    while (!line.empty() && is_blank(line.front())) line.remove_prefix(1);
    while (!line.empty() && is_blank(line.back())) line.remove_suffix(1);
    return line;
  }
  template <class T>
  T binary_file_line_integer(const char* what, T lo, T hi) {
    const std::size_t at = pos_;
    return checked_integer(binary_file_line(what), at, what, lo, hi);
  }

  // ------------------------------------------------------ binary values --

  [[nodiscard]] std::size_t left() const { return in_.size() - pos_; }

  template <class T>
  T binary(const char* what) {
    if (left() < sizeof(T)) {
      fail(pos_, ctx() + "expected " + what + " (" + std::to_string(sizeof(T)) +
                     " bytes), found the end of the file");
    }
    T value;
    std::memcpy(&value, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  int binary_int(const char* what, int lo, int hi) {
    const std::size_t at = pos_;
    const int value = binary<int>(what);
    if (value < lo || value > hi) {
      fail(at, ctx() + what + " must be between " + std::to_string(lo) + " and " +
                   std::to_string(hi) + ", found " + std::to_string(value));
    }
    return value;
  }
  // Fails unless `count` items of `each` bytes fit in what is left.
  void need(std::size_t count, std::size_t each, const std::string& what, std::size_t at) const {
    if (each != 0 && count > left() / each) {
      fail(at, ctx() + "declares " + std::to_string(count) + " " + what + " (" +
                   std::to_string(each) + " bytes each), but only " + std::to_string(left()) +
                   " bytes are left in the file");
    }
  }
  // In ASCII, fails unless `count` items of at least `each` bytes fit.
  void need_ascii(std::size_t count, std::size_t each, const std::string& what,
                  std::size_t at) const {
    if (count > left() / each) {
      fail(at, ctx() + "declares " + std::to_string(count) + " " + what + ", more than the " +
                   std::to_string(left()) + " bytes left in the file can hold");
    }
  }

  // ---------------------------------------------------------- sections --

  void check_first_line() {
    constexpr std::string_view kHeader = "$MeshFormat";
    std::size_t end = 0;
    bool ok = in_.substr(0, kHeader.size()) == kHeader;
    if (ok) {
      end = kHeader.size();
      while (end < in_.size() && is_blank(in_[end])) ++end;
      ok = end == in_.size() || in_[end] == '\n';
    }
    if (!ok) {
      std::string got = in_.empty() ? std::string("an empty file") : found_at(0);
      if (in_.substr(0, 3) == "\xEF\xBB\xBF") got += " (a UTF-8 byte order mark precedes it)";
      throw InputError(file_ +
                       ": not a Gmsh mesh file (expected a $MeshFormat section at line 1, got " +
                       got + ")");
    }
    pos_ = end < in_.size() ? end + 1 : end;
  }

  void parse_mesh_format() {
    context_ = "$MeshFormat";
    const std::size_t line_at = begin_record();
    const std::string_view version = line_token("the MSH version (2.2 or 4.1)");
    double v = 0.0;
    if (!to_double(version, v) || (v != 2.2 && v != 4.1)) {
      fail(line_at,
           "MSH version '" + printable(version) +
               "' is not supported: bipo reads MSH versions 2.2 and 4.1 (ASCII or binary)");
    }
    version_ = v == 2.2 ? 22 : 41;
    const int type = line_integer<int>("the file type (0 for ASCII, 1 for binary)", 0, 1);
    const std::size_t size_at = pos_;
    const int size = line_integer<int>("the data size", std::numeric_limits<int>::min(), kMaxInt);
    if (size != 8) {
      fail(size_at, ctx() + "the data size must be 8 (the size of size_t and double), found " +
                        std::to_string(size));
    }
    end_record("the format line");
    if (type == 1) {
      binary_ = true;
      const std::size_t at = pos_;
      const int one = binary<int>("the binary endianness marker (the int 1)");
      if (one == 0x01000000) {
        fail(at, ctx() + "the binary data are big-endian; bipo reads little-endian files only");
      }
      if (one != 1) {
        fail(at, ctx() + "expected the binary endianness marker (the int 1), found " +
                     std::to_string(one));
      }
    }
    expect_end("MeshFormat", "the format line");
  }

  // The `$End<name>` line closing a section at pos_ (after white space).
  // `listed` says what the section held, for the message when more follows.
  void expect_end(const std::string& name, const std::string& listed) {
    skip_space();
    const std::string end = "$End" + name;
    if (in_.substr(pos_, end.size()) == end) {
      const std::size_t save = pos_;
      pos_ += end.size();
      skip_blanks();
      if (at_end() || in_[pos_] == '\n') {
        if (!at_end()) ++pos_;
        return;
      }
      pos_ = save;
    }
    if (at_end()) {
      fail(pos_, ctx() + "expected " + end + " after " + listed + ", found the end of the file");
    }
    const char c = in_[pos_];
    const bool number = std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '+';
    fail(pos_, ctx() + "expected " + end + " after " + listed + ", found " + found_at(pos_) +
                   (number && !binary_ ? " (the section lists more than it declares)" : ""));
  }

  void sections() {
    while (true) {
      skip_space();
      if (at_end()) break;
      const std::size_t at = pos_;
      if (in_[pos_] != '$') {
        fail(at, "expected a section header such as $Nodes, found " + found_at(at));
      }
      ++pos_;
      const std::size_t name_begin = pos_;
      while (pos_ < in_.size() &&
             (std::isalnum(static_cast<unsigned char>(in_[pos_])) != 0 || in_[pos_] == '_')) {
        ++pos_;
      }
      const std::string name(in_.substr(name_begin, pos_ - name_begin));
      skip_blanks();
      if (name.empty() || (!at_end() && in_[pos_] != '\n')) {
        fail(at, "expected a section header such as $Nodes, found " + found_at(at));
      }
      if (!at_end()) ++pos_;
      section(name, at);
    }
    if (!have_nodes_) fail(in_.size(), "the file has no $Nodes section");
    if (!have_elements_) fail(in_.size(), "the file has no $Elements section");
  }

  void once(bool& seen, const std::string& name, std::size_t at) {
    if (seen) fail(at, "a second $" + name + " section (each may appear once)");
    seen = true;
  }

  void section(const std::string& name, std::size_t at) {
    context_ = "$" + name;
    if (name == "MeshFormat") {
      fail(at, "a second $MeshFormat section");
    } else if (name == "PhysicalNames") {
      once(have_names_, name, at);
      parse_physical_names();
    } else if (name == "Entities" && version_ == 41) {
      once(have_entities_, name, at);
      if (have_nodes_ || have_elements_) {
        fail(at, "$Entities must come before $Nodes and $Elements");
      }
      parse_entities();
    } else if (name == "PartitionedEntities") {
      fail(at,
           "partitioned meshes ($PartitionedEntities) are not supported: bipo reads the whole "
           "mesh from one file; save the mesh unpartitioned");
    } else if (name == "ParametricNodes") {
      fail(at, "$ParametricNodes sections are not supported; save the mesh with $Nodes");
    } else if (name == "Nodes") {
      once(have_nodes_, name, at);  // and so before $Elements, which needs it
      if (version_ == 41) {
        binary_ ? nodes41_binary() : nodes41_ascii();
      } else {
        binary_ ? nodes22_binary() : nodes22_ascii();
      }
      index_nodes();
    } else if (name == "Elements") {
      once(have_elements_, name, at);
      if (!have_nodes_) fail(at, "$Elements comes before $Nodes; the nodes must be defined first");
      if (version_ == 41) {
        binary_ ? elements41_binary() : elements41_ascii();
      } else {
        binary_ ? elements22_binary() : elements22_ascii();
      }
      check_element_tags();
    } else if (name.rfind("End", 0) == 0) {
      fail(at, "unexpected $" + name + ": no $" + name.substr(3) + " section is open");
    } else if (binary_ &&
               (name == "NodeData" || name == "ElementData" || name == "ElementNodeData")) {
      skip_post_processing_binary(name);
    } else if (binary_ && version_ == 41 && name == "Periodic") {
      skip_periodic_binary();
    } else if (binary_ && version_ == 41 && name == "GhostElements") {
      skip_ghost_elements_binary();
    } else {
      skip_to_end_line(name, at);
    }
  }

  // Skips to the first line that is exactly `$End<name>` (blanks around
  // allowed), as Gmsh skips a section it does not read.
  void skip_to_end_line(const std::string& name, std::size_t header_at) {
    const std::string end = "$End" + name;
    std::size_t line = pos_;
    while (line < in_.size()) {
      const void* nl = std::memchr(in_.data() + line, '\n', in_.size() - line);
      const std::size_t stop =
          nl == nullptr ? in_.size()
                        : static_cast<std::size_t>(static_cast<const char*>(nl) - in_.data());
      std::string_view text = in_.substr(line, stop - line);
      while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
      while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
      if (text == end) {
        pos_ = stop < in_.size() ? stop + 1 : stop;
        return;
      }
      line = stop + 1;
    }
    fail(header_at, "section $" + name + " is not closed: no " + end + " line follows");
  }

  // -------------------------------------------------- physical names --

  void parse_physical_names() {
    const std::size_t count_at = pos_;
    const int count = any_integer<int>("the number of physical names", 0, kMaxInt);
    need_ascii(static_cast<std::size_t>(count), 7, "physical names", count_at);
    std::map<std::pair<int, int>, std::size_t> line_of;
    for (int i = 0; i < count; ++i) {
      if (next_is_marker()) {
        fail(pos_, ctx() + "declares " + std::to_string(count) + " physical names, but lists " +
                       std::to_string(i) + " (found " + found_at(pos_) + ")");
      }
      const std::size_t at = begin_record();
      const std::string item = "physical name " + std::to_string(i + 1);
      const std::string dim_what = "the dimension of " + item;
      const std::string tag_what = "the tag of " + item;
      const int dim = line_integer<int>(dim_what.c_str(), 0, 3);
      const int tag = line_integer<int>(tag_what.c_str(), 1, kMaxInt);
      skip_blanks();
      if (at_end() || in_[pos_] != '"') {
        fail(pos_, ctx() + "expected the quoted name of " + item + ", found " + found_at(pos_));
      }
      const std::size_t open = pos_++;
      std::size_t close = pos_;
      while (close < in_.size() && in_[close] != '"' && in_[close] != '\n') ++close;
      if (close >= in_.size() || in_[close] != '"') {
        fail(open, ctx() + "the name of " + item + " has no closing double quote on its line");
      }
      const std::string_view name = in_.substr(pos_, close - pos_);
      if (!is_clean_utf8(name)) {
        fail(open, ctx() + "the name of " + item + " (\"" + printable(name) +
                       "\") is not valid UTF-8 text without control characters");
      }
      pos_ = close + 1;
      end_record("the name of " + item);
      const auto [it, inserted] = line_of.emplace(std::pair{dim, tag}, at);
      if (!inserted) {
        fail(at, ctx() + "the physical group of dimension " + std::to_string(dim) + " and tag " +
                     std::to_string(tag) + " is named twice (first at " + where(it->second) + ")");
      }
      names_[{dim, tag}] = std::string(name);
    }
    expect_end("PhysicalNames", "the " + std::to_string(count) + " declared physical names");
  }

  // ---------------------------------------------------------- entities --

  int add_entity(int dim, int tag, std::size_t at, const char* how) {
    const auto [it, inserted] =
        entity_of_.emplace(std::pair{dim, tag}, static_cast<int>(entities_.size()));
    if (!inserted) {
      fail(at, ctx() + "entity " + std::to_string(tag) + " of dimension " + std::to_string(dim) +
                   " is " + how + " twice");
    }
    Entity e;
    e.dim = dim;
    e.tag = tag;
    entities_.push_back(std::move(e));
    return it->second;
  }
  // Repeats are removed when the groups are built (a search here would be
  // quadratic in the tags of one entity).
  static void add_physical(Entity& e, long long physical) {
    const int p = static_cast<int>(physical < 0 ? -physical : physical);
    if (e.physicals.empty() || e.physicals.back() != p) e.physicals.push_back(p);
  }

  void parse_entities() {
    std::array<std::size_t, 4> counts{};
    const std::size_t at = pos_;
    constexpr std::array<const char*, 4> kCount = {"the number of points", "the number of curves",
                                                   "the number of surfaces",
                                                   "the number of volumes"};
    constexpr std::array<const char*, 4> kKind = {"points", "curves", "surfaces", "volumes"};
    for (int d = 0; d < 4; ++d) {
      counts[d] = binary_ ? binary<std::size_t>(kCount[d])
                          : any_integer<std::size_t>(kCount[d], 0, kMaxSize);
    }
    for (int d = 0; d < 4; ++d) {
      // The smallest record: ASCII "1 0 0 0 0\n", binary tag + box + count.
      const std::size_t smallest = binary_ ? (d == 0 ? 36u : 68u) : 10u;
      binary_ ? need(counts[d], smallest, kKind[d], at)
              : need_ascii(counts[d], smallest, kKind[d], at);
    }
    for (int d = 0; d < 4; ++d) {
      for (std::size_t i = 0; i < counts[d]; ++i) {
        context_ = "$Entities (" + std::string(kKind[d]) + ")";
        binary_ ? entity_binary(d) : entity_ascii(d, counts[d], i);
      }
    }
    context_ = "$Entities";
    expect_end("Entities", "the declared entities");
  }

  void entity_ascii(int dim, std::size_t count, std::size_t i) {
    if (next_is_marker()) {
      fail(pos_, ctx() + "declares " + std::to_string(count) + ", but lists " + std::to_string(i) +
                     " (found " + found_at(pos_) + ")");
    }
    const std::size_t at = begin_record();
    const int tag = line_integer<int>("an entity tag", 1, kMaxInt);
    Entity& e = entities_[static_cast<std::size_t>(add_entity(dim, tag, at, "declared"))];
    for (int k = 0; k < (dim == 0 ? 3 : 6); ++k) (void)line_double("a bounding box coordinate");
    const auto n_physicals = line_integer<std::size_t>("the number of physical tags", 0, kMaxSize);
    for (std::size_t k = 0; k < n_physicals; ++k) {
      const std::size_t p_at = pos_;
      const int p = line_integer<int>("a physical tag", -kMaxInt, kMaxInt);
      if (p == 0) fail(p_at, ctx() + "physical tag 0 of entity " + std::to_string(tag));
      add_physical(e, p);
    }
    if (dim > 0) {
      const auto n_bounding =
          line_integer<std::size_t>("the number of bounding entities", 0, kMaxSize);
      for (std::size_t k = 0; k < n_bounding; ++k) {
        (void)line_integer<int>("a bounding entity tag", std::numeric_limits<int>::min(), kMaxInt);
      }
    }
    end_record("entity " + std::to_string(tag));
  }

  void entity_binary(int dim) {
    const std::size_t at = pos_;
    const int tag = binary_int("an entity tag", 1, kMaxInt);
    Entity& e = entities_[static_cast<std::size_t>(add_entity(dim, tag, at, "declared"))];
    const std::size_t box = dim == 0 ? 3 : 6;
    need(box, 8, "bounding box coordinates", pos_);
    pos_ += 8 * box;
    const std::size_t count_at = pos_;
    const auto n_physicals = binary<std::size_t>("the number of physical tags");
    need(n_physicals, 4, "physical tags", count_at);
    for (std::size_t k = 0; k < n_physicals; ++k) {
      const std::size_t p_at = pos_;
      const int p = binary<int>("a physical tag");
      if (p == 0 || p == std::numeric_limits<int>::min()) {
        fail(p_at, ctx() + "invalid physical tag " + std::to_string(p) + " of entity " +
                       std::to_string(tag));
      }
      add_physical(e, p);
    }
    if (dim > 0) {
      const std::size_t b_at = pos_;
      const auto n_bounding = binary<std::size_t>("the number of bounding entities");
      need(n_bounding, 4, "bounding entities", b_at);
      pos_ += 4 * n_bounding;
    }
  }

  // The entity of a $Nodes block: declared in $Entities, or, in a file
  // without $Entities, declared by the block (Gmsh creates it).
  void node_block_entity(int dim, int tag, std::size_t at) {
    if (entity_of_.count({dim, tag}) != 0) return;
    if (have_entities_) {
      fail(at, ctx() + "refers to entity " + std::to_string(tag) + " of dimension " +
                   std::to_string(dim) + ", which $Entities does not declare");
    }
    (void)add_entity(dim, tag, at, "declared");
  }
  int element_block_entity(int dim, int tag, std::size_t at) {
    const auto it = entity_of_.find({dim, tag});
    if (it == entity_of_.end()) {
      fail(at, ctx() + "refers to entity " + std::to_string(tag) + " of dimension " +
                   std::to_string(dim) + ", which " +
                   (have_entities_ ? "$Entities does not declare"
                                   : "no $Nodes block declares (the file has no $Entities)"));
    }
    return it->second;
  }

  // ------------------------------------------------------------- nodes --

  void add_node(std::size_t tag, double x, double y, double z, std::size_t at) {
    node_tag_.push_back(tag);
    node_at_.push_back(at);
    node_xyz_.insert(node_xyz_.end(), {x, y, z});
  }
  void reserve_nodes(std::size_t count) {
    node_tag_.reserve(count);
    node_at_.reserve(count);
    node_xyz_.reserve(3 * count);
  }

  void nodes22_ascii() {
    const std::size_t at = pos_;
    const int count = any_integer<int>("the number of nodes", 0, kMaxInt);
    need_ascii(static_cast<std::size_t>(count), 8, "nodes", at);
    reserve_nodes(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
      if (next_is_marker()) {
        fail(pos_, ctx() + "declares " + std::to_string(count) + " nodes, but lists " +
                       std::to_string(i) + " (found " + found_at(pos_) + ")");
      }
      const std::size_t node_at = begin_record();
      const auto tag = line_integer<int>("a node tag", 1, kMaxInt);
      const auto t = static_cast<std::size_t>(tag);
      const double x = coordinate("the x coordinate", t);
      const double y = coordinate("the y coordinate", t);
      const double z = coordinate("the z coordinate", t);
      end_record("node " + std::to_string(tag));
      add_node(t, x, y, z, node_at);
    }
    expect_end("Nodes", "the " + std::to_string(count) + " declared nodes");
  }

  void nodes22_binary() {
    const int count = binary_file_line_integer<int>("the number of nodes", 0, kMaxInt);
    const std::size_t at = pos_;
    need(static_cast<std::size_t>(count), 28, "nodes", at);
    reserve_nodes(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
      const std::size_t node_at = pos_;
      const int tag = binary_int("a node tag", 1, kMaxInt);
      std::array<double, 3> x{};
      std::memcpy(x.data(), in_.data() + pos_, sizeof x);
      check_finite(x, static_cast<std::size_t>(tag), pos_);
      pos_ += sizeof x;
      add_node(static_cast<std::size_t>(tag), x[0], x[1], x[2], node_at);
    }
    expect_end("Nodes", "the " + std::to_string(count) + " declared nodes");
  }

  void check_finite(const std::array<double, 3>& x, std::size_t tag, std::size_t at) const {
    for (int k = 0; k < 3; ++k) {
      if (!std::isfinite(x[k])) {
        fail(at + 8 * static_cast<std::size_t>(k), ctx() + "node " + std::to_string(tag) +
                                                       " has a non-finite coordinate (" +
                                                       std::to_string(x[k]) + ")");
      }
    }
  }

  // The four numbers heading a 4.1 $Nodes or $Elements section.
  std::array<std::size_t, 4> section_counts(const std::array<const char*, 4>& what) {
    std::array<std::size_t, 4> values{};
    for (std::size_t k = 0; k < 4; ++k) {
      values[k] =
          binary_ ? binary<std::size_t>(what[k]) : any_integer<std::size_t>(what[k], 0, kMaxSize);
    }
    return values;
  }

  void nodes41_ascii() {
    const std::size_t at = pos_;
    const auto [n_blocks, total, min_tag, max_tag] =
        section_counts({"the number of entity blocks", "the number of nodes",
                        "the smallest node tag", "the largest node tag"});
    need_ascii(n_blocks, 8, "entity blocks", at);
    need_ascii(total, 8, "nodes", at);
    reserve_nodes(total);
    std::size_t read = 0;
    for (std::size_t b = 0; b < n_blocks; ++b) {
      context_ = "$Nodes";
      if (next_is_marker()) {
        fail(pos_, ctx() + "declares " + std::to_string(n_blocks) + " entity blocks, but lists " +
                       std::to_string(b) + " (found " + found_at(pos_) + ")");
      }
      context_ = "$Nodes block " + std::to_string(b + 1);
      const auto header = block_header("entityDim entityTag parametric numNodesInBlock", b);
      const std::size_t block_at = offset(header[0]);
      const int dim = field_integer<int>(header[0], "the entity dimension", 0, 3);
      const int tag = field_integer<int>(header[1], "the entity tag", 1, kMaxInt);
      const int parametric = field_integer<int>(header[2], "the parametric flag", 0, 1);
      const auto n =
          field_integer<std::size_t>(header[3], "the number of nodes in the block", 0, kMaxSize);
      block_fits(n, total, read, "nodes", block_at);
      node_block_entity(dim, tag, block_at);
      const std::size_t first = node_tag_.size();
      for (std::size_t j = 0; j < n; ++j) {
        if (next_is_marker()) list_ended(j, n, "node tags", pos_);
        const std::size_t tag_at = begin_record();
        node_tag_.push_back(line_integer<std::size_t>("a node tag", 1, kMaxSize));
        node_at_.push_back(tag_at);
        end_record("node tag " + std::to_string(node_tag_.back()));
      }
      const int extra = parametric != 0 ? dim : 0;
      for (std::size_t j = 0; j < n; ++j) {
        if (next_is_marker()) list_ended(j, n, "node coordinate lines", pos_);
        (void)begin_record();
        const std::size_t t = node_tag_[first + j];
        const double x = coordinate("the x coordinate", t);
        const double y = coordinate("the y coordinate", t);
        const double z = coordinate("the z coordinate", t);
        for (int k = 0; k < extra; ++k) (void)line_double("a parametric coordinate");
        end_record("the coordinates of node " + std::to_string(t));
        node_xyz_.insert(node_xyz_.end(), {x, y, z});
      }
      read += n;
    }
    context_ = "$Nodes";
    section_total(read, total, "nodes");
    (void)min_tag;  // Gmsh only warns when these disagree with the tags
    (void)max_tag;
    expect_end("Nodes", "the " + std::to_string(n_blocks) + " declared entity blocks");
  }

  void nodes41_binary() {
    const std::size_t at = pos_;
    const auto [n_blocks, total, min_tag, max_tag] =
        section_counts({"the number of entity blocks", "the number of nodes",
                        "the smallest node tag", "the largest node tag"});
    need(n_blocks, 20, "entity blocks", at);
    need(total, 32, "nodes", at);
    reserve_nodes(total);
    std::size_t read = 0;
    for (std::size_t b = 0; b < n_blocks; ++b) {
      const std::size_t block_at = pos_;
      context_ = "$Nodes block " + std::to_string(b + 1);
      const int dim = binary_int("the entity dimension", 0, 3);
      const int tag = binary_int("the entity tag", 1, kMaxInt);
      const int parametric = binary_int("the parametric flag", 0, 1);
      const auto n = binary<std::size_t>("the number of nodes in the block");
      block_fits(n, total, read, "nodes", block_at);
      node_block_entity(dim, tag, block_at);
      const std::size_t per_node = 3 + static_cast<std::size_t>(parametric != 0 ? dim : 0);
      need(n, 8 + 8 * per_node, "nodes", block_at);
      // An entity without nodes is legal; copying its zero bytes from an
      // empty vector's data() (null) would not be (found by the fuzzer).
      if (n == 0) continue;
      const std::size_t tags_at = pos_;
      const std::size_t first = node_tag_.size();
      node_tag_.resize(first + n);
      std::memcpy(node_tag_.data() + first, in_.data() + pos_, 8 * n);
      pos_ += 8 * n;
      for (std::size_t j = 0; j < n; ++j) {
        if (node_tag_[first + j] == 0)
          fail(tags_at + 8 * j, ctx() + "node tag 0 (tags start at 1)");
        node_at_.push_back(tags_at + 8 * j);
      }
      if (per_node == 3) {
        const std::size_t x0 = node_xyz_.size();
        node_xyz_.resize(x0 + 3 * n);
        std::memcpy(node_xyz_.data() + x0, in_.data() + pos_, 24 * n);
        for (std::size_t j = 0; j < n; ++j) {
          check_finite(
              {node_xyz_[x0 + 3 * j], node_xyz_[x0 + 3 * j + 1], node_xyz_[x0 + 3 * j + 2]},
              node_tag_[first + j], pos_ + 24 * j);
        }
        pos_ += 24 * n;
      } else {
        for (std::size_t j = 0; j < n; ++j) {
          std::array<double, 3> x{};
          std::memcpy(x.data(), in_.data() + pos_, sizeof x);
          check_finite(x, node_tag_[first + j], pos_);
          node_xyz_.insert(node_xyz_.end(), x.begin(), x.end());
          pos_ += 8 * per_node;
        }
      }
      read += n;
    }
    context_ = "$Nodes";
    section_total(read, total, "nodes");
    (void)min_tag;
    (void)max_tag;
    expect_end("Nodes", "the " + std::to_string(n_blocks) + " declared entity blocks");
  }

  // A 4.1 block of n entries must fit in the section's declared total.
  void block_fits(std::size_t n, std::size_t total, std::size_t read, const char* what,
                  std::size_t at) const {
    if (n > total - read) {
      fail(at, ctx() + "declares " + std::to_string(n) + " " + what + ", but the section header " +
                   "declares " + std::to_string(total) + " in all and the blocks before hold " +
                   std::to_string(read));
    }
  }
  void section_total(std::size_t read, std::size_t total, const char* what) const {
    if (read != total) {
      fail(pos_, ctx() + "the header declares " + std::to_string(total) + " " + what +
                     ", but the blocks hold " + std::to_string(read));
    }
  }
  [[noreturn]] void list_ended(std::size_t listed, std::size_t declared, const char* what,
                               std::size_t at) const {
    fail(at, ctx() + "declares " + std::to_string(declared) + " " + what + ", but lists " +
                 std::to_string(listed) + " (found " + found_at(at) + ")");
  }

  void index_nodes() {
    if (node_tag_.size() > static_cast<std::size_t>(kMaxInt)) {
      fail(pos_, "too many nodes (" + std::to_string(node_tag_.size()) + ")");
    }
    const auto duplicate = nodes_.build(node_tag_);
    if (duplicate) {
      fail(node_at_[duplicate->second],
           "$Nodes: node tag " + std::to_string(node_tag_[duplicate->second]) +
               " is defined twice (first at " + where(node_at_[duplicate->first]) + ")");
    }
  }

  // ---------------------------------------------------------- elements --

  // One element: its tag, type and node positions; `at` where it starts.
  void add_element(std::size_t tag, int type, int entity, const int* nodes, std::size_t at) {
    element_tag_.push_back(tag);
    element_at_.push_back(at);
    Entity& e = entities_[static_cast<std::size_t>(entity)];
    const int kind = volume_kind(type);
    if (kind >= 0) {
      VolumeElements& v = volume_[static_cast<std::size_t>(kind)];
      e.volume[static_cast<std::size_t>(kind)].push_back(static_cast<int>(v.tag.size()));
      v.tag.push_back(tag);
      v.entity.push_back(entity);
      v.nodes.insert(v.nodes.end(), nodes, nodes + kVolumeNodes[static_cast<std::size_t>(kind)]);
      return;
    }
    const ElementType* t = element_type(type);
    if (t->dim == 3) ++other_volume_[type];
    e.other_nodes.insert(e.other_nodes.end(), nodes, nodes + t->nodes);
  }

  int node_position(std::size_t tag, std::size_t element_tag, std::size_t at) const {
    const int p = nodes_.find(tag);
    if (p < 0) {
      fail(at, ctx() + "element " + std::to_string(element_tag) + " refers to node " +
                   std::to_string(tag) + ", which $Nodes does not define");
    }
    return p;
  }

  const ElementType& known_type(long long type, std::size_t at) const {
    const ElementType* t = element_type(type);
    if (t == nullptr) {
      fail(at, ctx() + "element type " + std::to_string(type) +
                   " is not supported: " + kKnownTypes +
                   ", and accepts only 8-node hexahedra, 6-node prisms and 4-node tetrahedra in "
                   "the volume");
    }
    return *t;
  }

  // The 2.2 tags of an element (after its type): physical, elementary, and
  // the partition tags, which are ignored. Gmsh reads further tags as parent
  // or domain elements, differently in ASCII and binary: refused.
  void check_tags22(const std::vector<long long>& tags, std::size_t element_tag,
                    std::size_t at) const {
    const std::size_t n = tags.size();
    const std::string element = "element " + std::to_string(element_tag);
    if (n >= 2 && tags[1] < 0) {
      fail(at, ctx() + element + " has the negative elementary tag " + std::to_string(tags[1]));
    }
    if (n == 3 && tags[2] != 0) {
      fail(at, ctx() + element + " has 3 tags, and its third tag (" + std::to_string(tags[2]) +
                   ") is not 0: bipo reads the physical and elementary tags, then optionally the " +
                   "number of partitions followed by the partitions");
    }
    if (n >= 4 && (tags[2] < 1 || static_cast<long long>(n) != 3 + tags[2])) {
      fail(at, ctx() + element + " has " + std::to_string(n) + " tags, but " +
                   "physical, elementary, the number of partitions (" + std::to_string(tags[2]) +
                   ") and the partitions make " +
                   (tags[2] < 1 ? std::string("no valid list")
                                : std::to_string(3 + tags[2]) + " tags") +
                   " (parent and domain tags are not supported)");
    }
  }

  // The entity of a 2.2 element: (its dimension, its elementary tag).
  int entity22(int dim, int elementary, int physical) {
    auto it = entity_of_.find({dim, elementary});
    if (it == entity_of_.end()) {
      it = entity_of_.emplace(std::pair{dim, elementary}, static_cast<int>(entities_.size())).first;
      Entity e;
      e.dim = dim;
      e.tag = elementary;
      entities_.push_back(std::move(e));
    }
    if (physical != 0) add_physical(entities_[static_cast<std::size_t>(it->second)], physical);
    return it->second;
  }

  void elements22_ascii() {
    const std::size_t at = pos_;
    const int count = any_integer<int>("the number of elements", 0, kMaxInt);
    need_ascii(static_cast<std::size_t>(count), 8, "elements", at);
    element_tag_.reserve(static_cast<std::size_t>(count));
    element_at_.reserve(static_cast<std::size_t>(count));
    std::vector<long long> tags;
    std::vector<int> nodes;
    for (int i = 0; i < count; ++i) {
      if (next_is_marker()) {
        fail(pos_, ctx() + "declares " + std::to_string(count) + " elements, but lists " +
                       std::to_string(i) + " (found " + found_at(pos_) + ")");
      }
      const std::size_t element_at = begin_record();
      const auto tag = static_cast<std::size_t>(line_integer<int>("an element tag", 1, kMaxInt));
      const std::size_t type_at = pos_;
      const int type =
          line_integer<int>("an element type", std::numeric_limits<int>::min(), kMaxInt);
      const ElementType& t = known_type(type, type_at);
      const int n_tags = line_integer<int>("the number of tags", 0, kMaxInt);
      tags.clear();
      for (int k = 0; k < n_tags; ++k) {
        tags.push_back(line_integer<int>("a tag", -kMaxInt, kMaxInt));
      }
      check_tags22(tags, tag, element_at);
      nodes.clear();
      for (int k = 0; k < t.nodes; ++k) {
        skip_blanks();
        if (at_end() || in_[pos_] == '\n') {
          fail(pos_, ctx() + "element " + std::to_string(tag) + " lists " + std::to_string(k) +
                         " nodes, but type " + type_label(type) + " has " +
                         std::to_string(t.nodes));
        }
        const std::size_t node_at = pos_;
        const auto node = line_integer<int>("a node tag", 1, kMaxInt);
        nodes.push_back(node_position(static_cast<std::size_t>(node), tag, node_at));
      }
      skip_blanks();
      if (!at_end() && in_[pos_] != '\n') {
        fail(pos_, ctx() + "element " + std::to_string(tag) + " lists more than the " +
                       std::to_string(t.nodes) + " nodes of type " + type_label(type) + ": found " +
                       found_at(pos_));
      }
      end_record("element " + std::to_string(tag));
      const int physical = n_tags > 0 ? static_cast<int>(tags[0]) : 0;
      const int elementary = n_tags > 1 ? static_cast<int>(tags[1]) : 0;
      add_element(tag, type, entity22(t.dim, elementary, physical), nodes.data(), element_at);
    }
    expect_end("Elements", "the " + std::to_string(count) + " declared elements");
  }

  void elements22_binary() {
    const int count = binary_file_line_integer<int>("the number of elements", 0, kMaxInt);
    need(static_cast<std::size_t>(count), 8, "elements", pos_);
    element_tag_.reserve(static_cast<std::size_t>(count));
    element_at_.reserve(static_cast<std::size_t>(count));
    std::vector<long long> tags;
    std::vector<int> nodes;
    int read = 0;
    while (read < count) {
      const std::size_t block_at = pos_;
      const int type = binary<int>("an element type");
      const ElementType& t = known_type(type, block_at);
      const int n = binary_int("the number of elements of the block", 1, count - read);
      const int n_tags = binary_int("the number of tags", 0, kMaxInt);
      const std::size_t per_element =
          4 * (1 + static_cast<std::size_t>(n_tags) + static_cast<std::size_t>(t.nodes));
      need(static_cast<std::size_t>(n), per_element, "elements", block_at);
      for (int i = 0; i < n; ++i) {
        const std::size_t element_at = pos_;
        const int tag = binary_int("an element tag", 1, kMaxInt);
        tags.clear();
        for (int k = 0; k < n_tags; ++k) {
          const int value = binary<int>("a tag");
          if (value == std::numeric_limits<int>::min()) {
            fail(pos_ - 4, ctx() + "tag " + std::to_string(value) + " is out of range");
          }
          tags.push_back(value);
        }
        check_tags22(tags, static_cast<std::size_t>(tag), element_at);
        nodes.clear();
        for (int k = 0; k < t.nodes; ++k) {
          const std::size_t node_at = pos_;
          const int node = binary<int>("a node tag");
          if (node < 1) {
            fail(node_at, ctx() + "element " + std::to_string(tag) + " refers to node " +
                              std::to_string(node) + " (node tags start at 1)");
          }
          nodes.push_back(node_position(static_cast<std::size_t>(node),
                                        static_cast<std::size_t>(tag), node_at));
        }
        const int physical = n_tags > 0 ? static_cast<int>(tags[0]) : 0;
        const int elementary = n_tags > 1 ? static_cast<int>(tags[1]) : 0;
        add_element(static_cast<std::size_t>(tag), type, entity22(t.dim, elementary, physical),
                    nodes.data(), element_at);
      }
      read += n;
    }
    expect_end("Elements", "the " + std::to_string(count) + " declared elements");
  }

  void elements41_ascii() {
    const std::size_t at = pos_;
    const auto [n_blocks, total, min_tag, max_tag] =
        section_counts({"the number of entity blocks", "the number of elements",
                        "the smallest element tag", "the largest element tag"});
    need_ascii(n_blocks, 8, "entity blocks", at);
    need_ascii(total, 4, "elements", at);
    element_tag_.reserve(total);
    element_at_.reserve(total);
    std::vector<int> nodes;
    std::size_t read = 0;
    for (std::size_t b = 0; b < n_blocks; ++b) {
      context_ = "$Elements";
      if (next_is_marker()) {
        fail(pos_, ctx() + "declares " + std::to_string(n_blocks) + " entity blocks, but lists " +
                       std::to_string(b) + " (found " + found_at(pos_) + ")");
      }
      read += element_block41_ascii(b, total, read, nodes);
    }
    context_ = "$Elements";
    section_total(read, total, "elements");
    (void)min_tag;
    (void)max_tag;
    expect_end("Elements", "the " + std::to_string(n_blocks) + " declared entity blocks");
  }

  /// Reads entity block `b` (from 0) of an ASCII 4.1 $Elements section of
  /// `total` elements, `read` of them in the blocks before; returns its
  /// number of elements. `nodes` is scratch space.
  std::size_t element_block41_ascii(std::size_t b, std::size_t total, std::size_t read,
                                    std::vector<int>& nodes) {
    context_ = "$Elements block " + std::to_string(b + 1);
    const auto header = block_header("entityDim entityTag elementType numElementsInBlock", b);
    const std::size_t block_at = offset(header[0]);
    const int dim = field_integer<int>(header[0], "the entity dimension", 0, 3);
    const int tag = field_integer<int>(header[1], "the entity tag", 1, kMaxInt);
    const int type =
        field_integer<int>(header[2], "the element type", std::numeric_limits<int>::min(), kMaxInt);
    const auto n =
        field_integer<std::size_t>(header[3], "the number of elements in the block", 0, kMaxSize);
    const ElementType& t = known_type(type, offset(header[2]));
    check_block_dim(t, type, dim, tag, block_at);
    block_fits(n, total, read, "elements", block_at);
    const int entity = element_block_entity(dim, tag, block_at);
    for (std::size_t j = 0; j < n; ++j) {
      if (next_is_marker()) list_ended(j, n, "elements", pos_);
      element41_ascii(t, type, entity, nodes);
    }
    return n;
  }

  /// Reads one element line of an ASCII 4.1 entity block of elements of
  /// type `t` (numbered `type`) in entity `entity`: its tag, then exactly its
  /// type's number of node tags. `nodes` is scratch space.
  void element41_ascii(const ElementType& t, int type, int entity, std::vector<int>& nodes) {
    const std::size_t element_at = begin_record();
    const auto element = line_integer<std::size_t>("an element tag", 1, kMaxSize);
    nodes.clear();
    for (int k = 0; k < t.nodes; ++k) {
      skip_blanks();
      if (at_end() || in_[pos_] == '\n') {
        fail(pos_, ctx() + "element " + std::to_string(element) + " lists " + std::to_string(k) +
                       " nodes, but type " + type_label(type) + " has " + std::to_string(t.nodes));
      }
      const std::size_t node_at = pos_;
      const auto node = line_integer<std::size_t>("a node tag", 1, kMaxSize);
      nodes.push_back(node_position(node, element, node_at));
    }
    skip_blanks();
    if (!at_end() && in_[pos_] != '\n') {
      fail(pos_, ctx() + "element " + std::to_string(element) + " lists more than the " +
                     std::to_string(t.nodes) + " nodes of type " + type_label(type) + ": found " +
                     found_at(pos_));
    }
    end_record("element " + std::to_string(element));
    add_element(element, type, entity, nodes.data(), element_at);
  }

  void elements41_binary() {
    const std::size_t at = pos_;
    const auto [n_blocks, total, min_tag, max_tag] =
        section_counts({"the number of entity blocks", "the number of elements",
                        "the smallest element tag", "the largest element tag"});
    need(n_blocks, 20, "entity blocks", at);
    need(total, 16, "elements", at);
    element_tag_.reserve(total);
    element_at_.reserve(total);
    std::vector<int> nodes;
    std::size_t read = 0;
    for (std::size_t b = 0; b < n_blocks; ++b) {
      const std::size_t block_at = pos_;
      context_ = "$Elements block " + std::to_string(b + 1);
      const int dim = binary_int("the entity dimension", 0, 3);
      const int tag = binary_int("the entity tag", 1, kMaxInt);
      const int type = binary<int>("the element type");
      const auto n = binary<std::size_t>("the number of elements in the block");
      const ElementType& t = known_type(type, block_at);
      check_block_dim(t, type, dim, tag, block_at);
      block_fits(n, total, read, "elements", block_at);
      const int entity = element_block_entity(dim, tag, block_at);
      const std::size_t per_element = 8 * (1 + static_cast<std::size_t>(t.nodes));
      need(n, per_element, "elements", block_at);
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t element_at = pos_;
        const auto element = binary<std::size_t>("an element tag");
        if (element == 0) fail(element_at, ctx() + "element tag 0 (tags start at 1)");
        nodes.clear();
        for (int k = 0; k < t.nodes; ++k) {
          const std::size_t node_at = pos_;
          nodes.push_back(node_position(binary<std::size_t>("a node tag"), element, node_at));
        }
        add_element(element, type, entity, nodes.data(), element_at);
      }
      read += n;
    }
    context_ = "$Elements";
    section_total(read, total, "elements");
    (void)min_tag;
    (void)max_tag;
    expect_end("Elements", "the " + std::to_string(n_blocks) + " declared entity blocks");
  }

  void check_block_dim(const ElementType& t, int type, int dim, int tag, std::size_t at) const {
    if (t.dim != dim) {
      fail(at, ctx() + "elements of type " + type_label(type) + " (dimension " +
                   std::to_string(t.dim) + ") in entity " + std::to_string(tag) + " of dimension " +
                   std::to_string(dim));
    }
  }

  void check_element_tags() {
    if (element_tag_.size() > static_cast<std::size_t>(kMaxInt)) {
      fail(pos_, "too many elements (" + std::to_string(element_tag_.size()) + ")");
    }
    TagIndex index;
    const auto duplicate = index.build(element_tag_);
    if (duplicate) {
      fail(element_at_[duplicate->second],
           "$Elements: element tag " + std::to_string(element_tag_[duplicate->second]) +
               " is used twice (first at " + where(element_at_[duplicate->first]) + ")");
    }
  }

  // ------------------------------------------- skipped binary sections --

  // $NodeData, $ElementData, $ElementNodeData of a binary file: ASCII tags
  // (one per line), then per entity an int tag, for $ElementNodeData an int
  // number of nodes, and the values (doubles).
  void skip_post_processing_binary(const std::string& name) {
    const int n_strings = binary_file_line_integer<int>("the number of string tags", 0, kMaxInt);
    for (int i = 0; i < n_strings; ++i) (void)binary_file_line("a string tag");
    const int n_reals = binary_file_line_integer<int>("the number of real tags", 0, kMaxInt);
    for (int i = 0; i < n_reals; ++i) (void)binary_file_line("a real tag");
    const int n_ints = binary_file_line_integer<int>("the number of integer tags", 0, kMaxInt);
    std::array<long long, 3> ints{};
    for (int i = 0; i < n_ints; ++i) {
      const long long value = binary_file_line_integer<long long>(
          "an integer tag", std::numeric_limits<long long>::min(),
          std::numeric_limits<long long>::max());
      if (i < 3) ints[static_cast<std::size_t>(i)] = value;
    }
    if (n_ints < 3) {
      fail(pos_, ctx() + "binary data need at least 3 integer tags (time step, number of " +
                     "components, number of entities), found " + std::to_string(n_ints));
    }
    const long long components = ints[1];
    const long long count = ints[2];
    if (components < 1 || components > kMaxInt || count < 0) {
      fail(pos_, ctx() + "invalid number of components (" + std::to_string(components) +
                     ") or of entities (" + std::to_string(count) + ")");
    }
    const bool per_node = name == "ElementNodeData";
    const std::size_t at = pos_;
    need(static_cast<std::size_t>(count),
         per_node ? 8 : 4 + 8 * static_cast<std::size_t>(components), "entities", at);
    for (long long i = 0; i < count; ++i) {
      (void)binary<int>("an entity tag");
      std::size_t values = static_cast<std::size_t>(components);
      if (per_node) {
        const auto nodes =
            static_cast<std::size_t>(binary_int("the number of nodes per element", 0, kMaxInt));
        need(nodes, 8 * values, "nodes with values", pos_);
        values *= nodes;
      }
      need(values, 8, "values", pos_);
      pos_ += 8 * values;
    }
    expect_end(name, "the " + std::to_string(count) + " declared entities");
  }

  void skip_periodic_binary() {
    const std::size_t at = pos_;
    const auto links = binary<std::size_t>("the number of periodic links");
    need(links, 28, "periodic links", at);
    for (std::size_t i = 0; i < links; ++i) {
      need(3, 4, "entity tags", pos_);
      pos_ += 12;
      const std::size_t affine_at = pos_;
      const auto affine = binary<std::size_t>("the number of affine values");
      need(affine, 8, "affine values", affine_at);
      pos_ += 8 * affine;
      const std::size_t nodes_at = pos_;
      const auto pairs = binary<std::size_t>("the number of corresponding nodes");
      need(pairs, 16, "node pairs", nodes_at);
      pos_ += 16 * pairs;
    }
    expect_end("Periodic", "the " + std::to_string(links) + " declared periodic links");
  }

  void skip_ghost_elements_binary() {
    const std::size_t at = pos_;
    const auto count = binary<std::size_t>("the number of ghost elements");
    need(count, 20, "ghost elements", at);
    for (std::size_t i = 0; i < count; ++i) {
      need(1, 12, "ghost element", pos_);
      pos_ += 12;
      const std::size_t n_at = pos_;
      const auto n = binary<std::size_t>("the number of ghost partitions");
      need(n, 4, "ghost partitions", n_at);
      pos_ += 4 * n;
    }
    expect_end("GhostElements", "the " + std::to_string(count) + " declared ghost elements");
  }

  // ---------------------------------------------------------- the mesh --

  /// Gmsh's order of the volume elements of one kind: by volume entity tag,
  /// then file order (4.1) or element tag order (2.2).
  [[nodiscard]] std::vector<int> volume_order(const std::vector<std::size_t>& tags,
                                              const std::vector<int>& entities) const {
    std::vector<int> order(tags.size());
    for (std::size_t h = 0; h < order.size(); ++h) order[h] = static_cast<int>(h);
    const auto entity_tag = [&](int h) {
      return entities_[static_cast<std::size_t>(entities[static_cast<std::size_t>(h)])].tag;
    };
    if (version_ == 41) {
      const auto by_entity = [&](int a, int b) { return entity_tag(a) < entity_tag(b); };
      if (!std::is_sorted(order.begin(), order.end(), by_entity)) {
        std::stable_sort(order.begin(), order.end(), by_entity);
      }
    } else {
      const auto by_entity_and_tag = [&](int a, int b) {
        return std::pair{entity_tag(a), tags[static_cast<std::size_t>(a)]} <
               std::pair{entity_tag(b), tags[static_cast<std::size_t>(b)]};
      };
      if (!std::is_sorted(order.begin(), order.end(), by_entity_and_tag)) {
        std::sort(order.begin(), order.end(), by_entity_and_tag);
      }
    }
    return order;
  }

  /// A mesh of the volume elements' nodes, numbered compactly in increasing
  /// tag order; `compact` maps file node indices to them (-1: in no volume
  /// element).
  [[nodiscard]] Mesh nodes_in_tag_order(std::vector<int>& compact) const {
    compact.assign(node_tag_.size(), -1);
    for (const VolumeElements& v : volume_)
      for (const int p : v.nodes) compact[static_cast<std::size_t>(p)] = 0;
    std::vector<int> used;
    for (std::size_t p = 0; p < compact.size(); ++p) {
      if (compact[p] == 0) used.push_back(static_cast<int>(p));
    }
    const auto by_tag = [&](int a, int b) {
      return node_tag_[static_cast<std::size_t>(a)] < node_tag_[static_cast<std::size_t>(b)];
    };
    if (!std::is_sorted(used.begin(), used.end(), by_tag)) {
      std::sort(used.begin(), used.end(), by_tag);
    }
    Mesh mesh;
    mesh.nodes.reserve(used.size());
    mesh.node_tags.reserve(used.size());
    for (std::size_t i = 0; i < used.size(); ++i) {
      const auto p = static_cast<std::size_t>(used[i]);
      compact[p] = static_cast<int>(i);
      mesh.nodes.emplace_back(node_xyz_[3 * p], node_xyz_[3 * p + 1], node_xyz_[3 * p + 2]);
      mesh.node_tags.push_back(node_tag_[p]);
    }
    return mesh;
  }

  /// The elements of one volume kind, in Gmsh's order, as mesh indices.
  template <std::size_t N>
  void volume_elements(std::size_t kind, const std::vector<int>& compact,
                       std::vector<std::array<int, N>>& elements,
                       std::vector<std::size_t>& tags) const {
    const VolumeElements& v = volume_[kind];
    const std::vector<int> order = volume_order(v.tag, v.entity);
    elements.resize(order.size());
    tags.resize(order.size());
    for (std::size_t e = 0; e < order.size(); ++e) {
      const auto h = static_cast<std::size_t>(order[e]);
      tags[e] = v.tag[h];
      for (std::size_t a = 0; a < N; ++a) {
        elements[e][a] = compact[static_cast<std::size_t>(v.nodes[N * h + a])];
      }
    }
  }

  Mesh assemble() {
    if (!other_volume_.empty()) {
      std::string others;
      for (const auto& [type, count] : other_volume_) {
        others += (others.empty() ? "" : ", ") + std::to_string(count) + " elements of type \"" +
                  element_type(type)->name + "\"";
      }
      throw InputError(file_ + ": the volume mesh contains " + others +
                       "; bipo accepts only 8-node hexahedra (\"Hexahedron 8\"), 6-node prisms "
                       "(\"Prism 6\") and 4-node tetrahedra (\"Tetrahedron 4\")");
    }
    if (volume_[0].tag.empty() && volume_[1].tag.empty() && volume_[2].tag.empty()) {
      throw InputError(file_ + ": the mesh has no volume elements (8-node hexahedra, 6-node " +
                       "prisms or 4-node tetrahedra); bipo needs a volume mesh");
    }

    std::vector<int> compact;
    Mesh mesh = nodes_in_tag_order(compact);
    volume_elements(0, compact, mesh.hexes, mesh.hex_tags);
    volume_elements(1, compact, mesh.wedges, mesh.wedge_tags);
    volume_elements(2, compact, mesh.tets, mesh.tet_tags);

    node_sets(mesh, compact);
    check_element_jacobians(mesh, file_);
    return mesh;
  }

  // Every physical group becomes a node set: the nodes of the elements of
  // its entities (Gmsh's getNodesForPhysicalGroup).
  using PhysicalGroups = std::map<std::pair<int, int>, std::vector<std::size_t>>;

  static std::size_t volume_references(const Entity& e) {
    std::size_t n = 0;
    for (std::size_t k = 0; k < kVolumeNodes.size(); ++k) n += kVolumeNodes[k] * e.volume[k].size();
    return n;
  }

  /// The physical groups, (dim, tag) -> the entities in them. An entity in
  /// many groups is copied into each: bounded, so that a small file cannot
  /// ask for a huge output.
  [[nodiscard]] PhysicalGroups physical_groups() const {
    PhysicalGroups groups;
    std::size_t references = 0;
    for (std::size_t i = 0; i < entities_.size(); ++i) {
      const Entity& e = entities_[i];
      references += e.other_nodes.size() + volume_references(e);
      std::vector<int> physicals = e.physicals;
      std::sort(physicals.begin(), physicals.end());
      physicals.erase(std::unique(physicals.begin(), physicals.end()), physicals.end());
      for (const int p : physicals) groups[{e.dim, p}].push_back(i);
    }
    std::size_t work = 0;
    for (const auto& [key, members] : groups) {
      for (const std::size_t i : members) {
        work += entities_[i].other_nodes.size() + volume_references(entities_[i]);
      }
    }
    const std::size_t limit = 64 * references + (std::size_t{1} << 20);
    if (work > limit) {
      throw InputError(file_ + ": the " + std::to_string(groups.size()) +
                       " physical groups would list " + std::to_string(work) +
                       " node references, more than 64 times the " + std::to_string(references) +
                       " of the elements: entities belong to too many physical groups");
    }
    return groups;
  }

  /// The nodes of a group's entities as mesh indices (`list`, unsorted),
  /// and those that belong to no volume element (`outside`, file indices).
  void group_nodes(const std::vector<std::size_t>& members, const std::vector<int>& compact,
                   std::vector<int>& list, std::vector<int>& outside) const {
    list.clear();
    outside.clear();
    for (const std::size_t i : members) {
      const Entity& e = entities_[i];
      for (const int p : e.other_nodes) {
        const int c = compact[static_cast<std::size_t>(p)];
        if (c >= 0) {
          list.push_back(c);
        } else {
          outside.push_back(p);
        }
      }
      for (std::size_t k = 0; k < kVolumeNodes.size(); ++k) {
        const std::size_t n = kVolumeNodes[k];
        for (const int h : e.volume[k]) {
          for (std::size_t a = 0; a < n; ++a) {
            list.push_back(compact[static_cast<std::size_t>(
                volume_[k].nodes[n * static_cast<std::size_t>(h) + a])]);
          }
        }
      }
    }
  }

  [[noreturn]] void throw_nodes_outside(const std::string& set_name, int dim, int tag,
                                        const std::vector<int>& outside) const {
    std::vector<std::size_t> tags;
    tags.reserve(outside.size());
    for (const int p : outside) tags.push_back(node_tag_[static_cast<std::size_t>(p)]);
    std::sort(tags.begin(), tags.end());
    tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
    throw InputError(file_ + ": physical group '" + set_name + "' (dimension " +
                     std::to_string(dim) + ", tag " + std::to_string(tag) + ") has " +
                     std::to_string(tags.size()) +
                     " nodes that belong to no volume element (first: node " +
                     std::to_string(tags.front()) + ")");
  }

  void node_sets(Mesh& mesh, const std::vector<int>& compact) const {
    const PhysicalGroups groups = physical_groups();
    const std::size_t n = mesh.nodes.size();
    std::vector<char> mark;
    std::vector<int> outside, list;
    std::set<std::string> merged;  // names given by more than one group
    for (const auto& [key, members] : groups) {
      const auto [dim, tag] = key;
      const auto named = names_.find(key);
      const std::string set_name =
          named != names_.end() && !named->second.empty()
              ? named->second
              : "physical_" + std::to_string(dim) + "_" + std::to_string(tag);
      group_nodes(members, compact, list, outside);
      if (!outside.empty()) throw_nodes_outside(set_name, dim, tag, outside);
      const auto [it, inserted] = mesh.node_sets.try_emplace(set_name);
      if (inserted) {
        sort_unique(list, n, mark);
        it->second = list;
      } else {
        it->second.insert(it->second.end(), list.begin(), list.end());
        merged.insert(set_name);
      }
    }
    for (const std::string& set_name : merged) sort_unique(mesh.node_sets[set_name], n, mark);
    const auto all = mesh.node_sets.find("all");
    if (all != mesh.node_sets.end() && all->second.size() != mesh.nodes.size()) {
      throw InputError(file_ + ": physical group 'all' has " + std::to_string(all->second.size()) +
                       " of the " + std::to_string(mesh.nodes.size()) +
                       " nodes; the name 'all' is reserved for every node");
    }
    std::vector<int> every(mesh.nodes.size());
    for (std::size_t i = 0; i < every.size(); ++i) every[i] = static_cast<int>(i);
    mesh.node_sets["all"] = std::move(every);
  }

  // ------------------------------------------------------------- state --

  std::string_view in_;
  const std::string& file_;
  std::size_t pos_ = 0;
  bool binary_ = false;
  int version_ = 0;  // 22 or 41
  std::string context_;
  bool have_names_ = false, have_entities_ = false, have_nodes_ = false, have_elements_ = false;

  std::map<std::pair<int, int>, std::string> names_;  // (dim, tag) -> physical name
  std::vector<Entity> entities_;
  std::map<std::pair<int, int>, int> entity_of_;  // (dim, tag) -> index in entities_

  std::vector<std::size_t> node_tag_;  // file order
  std::vector<std::size_t> node_at_;   // where each node is defined
  std::vector<double> node_xyz_;
  TagIndex nodes_;

  std::vector<std::size_t> element_tag_;  // every element, file order
  std::vector<std::size_t> element_at_;
  struct VolumeElements {
    std::vector<std::size_t> tag;  // file order
    std::vector<int> entity;
    std::vector<int> nodes;  // kVolumeNodes[kind] node positions per element
  };
  std::array<VolumeElements, 3> volume_;  // hexahedra, prisms, tetrahedra

  std::map<int, std::size_t> other_volume_;  // volume element type -> count
};

// ------------------------------------------------------------ the file --

[[noreturn]] void refuse(const std::string& name, const std::string& why) {
  throw InputError("cannot read mesh file '" + name + "': " + why);
}

std::string system_reason(int error) {
  return std::generic_category().message(error);
}

// What a stat() says about a path that is not a regular file.
std::string not_regular(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return "it is a directory, not a regular file";
  if (S_ISFIFO(st.st_mode)) return "it is a FIFO (named pipe), not a regular file";
  if (S_ISCHR(st.st_mode)) return "it is a device (character device), not a regular file";
  if (S_ISBLK(st.st_mode)) return "it is a device (block device), not a regular file";
  if (S_ISSOCK(st.st_mode)) return "it is a socket, not a regular file";
  return "it is not a regular file";
}

std::string too_large(const struct stat& st) {
  return "it is " + std::to_string(st.st_size) + " bytes, more than the limit of " +
         std::to_string(kMaxMshFileBytes) + " bytes (4 GiB) for a mesh file";
}

std::string read_mesh_bytes(const fs::path& path) {
  const std::string name = path.string();
  const std::string problem = mesh_path_problem(path);
  if (!problem.empty()) refuse(name, problem);
  struct stat st {};
  // O_NONBLOCK: should a FIFO replace the file after the check, opening it
  // must not wait for a writer.
  const int fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  // A path problem (no such file, a loop) is the user's input error; a
  // refused permission or an I/O error is a system error (exit 1).
  if (fd < 0) throw_file_error("open the mesh file", path, errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0) refuse(name, system_reason(errno));
  if (!S_ISREG(st.st_mode)) refuse(name, not_regular(st));
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxMshFileBytes) refuse(name, too_large(st));
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t size = 0;
  while (true) {
    if (size == bytes.size()) {
      // The file grew since fstat: read on, within the limit.
      if (bytes.size() > kMaxMshFileBytes) {
        refuse(name, "it grew beyond the limit of " + std::to_string(kMaxMshFileBytes) +
                         " bytes while being read");
      }
      bytes.resize(bytes.size() + 65536);
    }
    const ssize_t got = ::read(fd, bytes.data() + size, bytes.size() - size);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw_file_error("read the mesh file", path, errno);
    }
    if (got == 0) break;
    size += static_cast<std::size_t>(got);
  }
  bytes.resize(size);
  return bytes;
}

}  // namespace

std::string mesh_path_problem(const fs::path& path) {
  const std::string name = path.string();
  struct stat st {};
  if (::stat(name.c_str(), &st) != 0) {
    const int error = errno;
    struct stat link {};
    if (error == ENOENT && ::lstat(name.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      std::error_code ec;
      const fs::path target = fs::read_symlink(path, ec);
      return "it is a symbolic link to a missing file" +
             (ec ? std::string() : " ('" + target.string() + "')");
    }
    if (error == ENOENT) return "no such file";
    if (error == ELOOP) return "symbolic link loop (too many levels of symbolic links)";
    if (error == ENOTDIR) return "a component of the path is not a directory";
    return system_reason(error);
  }
  if (!S_ISREG(st.st_mode)) return not_regular(st);
  if (static_cast<std::uintmax_t>(st.st_size) > kMaxMshFileBytes) return too_large(st);
  return {};
}

Mesh parse_msh(std::string_view bytes, const std::string& file_name) {
  return Parser(bytes, file_name).parse();
}

Mesh read_msh(const fs::path& path) {
  const std::string bytes = read_mesh_bytes(path);
  return parse_msh(bytes, path.string());
}

}  // namespace bipo
