// Reads a YAML case file into a bipo::Case. With io/case_overrides.cpp (the
// command line's values put into the tree), the only place that knows YAML.
// Every error is an InputError "<file>:<line>: <key.path>: <expected, found>"
// ("<file>: --set <key>=<value>: <key.path>: ..." for what a command-line
// value put there); every key is documented in docs/case-file.md.
#include "io/case_file.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "contact/law/friction_law.hpp"
#include "contact/rigid_plane.hpp"
#include "core/errors.hpp"
#include "core/file_errors.hpp"
#include "core/text_encoding.hpp"
#include "io/case_overrides.hpp"
#include "io/safe_name.hpp"
#include "mesh/msh_reader.hpp"
#include "model/block.hpp"
#include "model/cylinder.hpp"

namespace bipo {

// --- the reader ------------------------------------------------------------------

namespace {

// Limits on what a case file may ask for (docs/case-file.md, "Limits"). They
// keep the memory and time of reading bounded whatever the file holds, and
// are far above what a case needs.
constexpr std::uintmax_t kMaxFileBytes = 16u * 1024u * 1024u;
/// yaml-cpp spends about 500 bytes per value of the tree it builds.
constexpr long long kMaxYamlValues = 1'000'000;
/// yaml-cpp's parser recurses once per level; a case needs 6 levels.
constexpr std::size_t kMaxNesting = 64;
constexpr long long kMaxIncrements = 1'000'000;
constexpr long long kMaxRepeat = 100'000;
/// Segments stored for all the programs of a case, repeat blocks expanded.
constexpr long long kMaxSegments = 1'000'000;

/// A YAML node with where it is: key path and line (1-based).
struct Field {
  YAML::Node node;
  std::string path;
  int line = 0;
};

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  /// What the command line put into the tree: an error at or inside one of
  /// them names it rather than a line of the file; an error at an enclosing
  /// key says it came after them.
  void set_overrides(std::vector<CaseOverride> overrides) { overrides_ = std::move(overrides); }

  [[noreturn]] void fail(const std::string& path, int line, const std::string& what) const {
    std::string after;
    for (auto o = overrides_.rbegin(); o != overrides_.rend(); ++o) {
      if (is_within_key(path, o->scope))
        throw InputError(file_ + ": " + o->named() + ": " + path + ": " + what);
      if (is_within_key(o->scope, path)) after += (after.empty() ? " (after " : ", ") + o->named();
    }
    if (!after.empty()) after += ")";
    throw InputError(file_ + ":" + std::to_string(line) + ": " + path + ": " + what + after);
  }
  [[noreturn]] void fail(const Field& f, const std::string& what) const {
    fail(f.path, f.line, what);
  }

  /// "<file>:<line>: YAML syntax error at column <c>: <what>" (no key path).
  [[noreturn]] void syntax_error(const YAML::Mark& mark, const std::string& what) const {
    if (mark.is_null()) throw InputError(file_ + ":1: YAML syntax error: " + what);
    throw InputError(file_ + ":" + std::to_string(mark.line + 1) +
                     ": YAML syntax error at column " + std::to_string(mark.column + 1) + ": " +
                     what);
  }

  /// Counts `n` more program segments against kMaxSegments (one budget for
  /// the whole case: an alias can make many conditions share one long list).
  void add_segments(const Field& at, long long n) const {
    segments_ += n;
    if (segments_ > kMaxSegments) {
      fail(at, "expected at most " + std::to_string(kMaxSegments) +
                   " segments in all the load programs of the case together (repeat blocks "
                   "count once per repetition), got more");
    }
  }

  /// Records where a value that is checked against the mesh was given (see
  /// Case::key_lines).
  void remember(const std::string& path, int line) const { key_lines_[path] = line; }
  [[nodiscard]] const std::map<std::string, int>& key_lines() const { return key_lines_; }

  [[nodiscard]] const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::vector<CaseOverride> overrides_;
  mutable long long segments_ = 0;
  mutable std::map<std::string, int> key_lines_;
};

int line_of(const YAML::Node& node, int fallback) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? fallback : mark.line + 1;
}

// --- text ---------------------------------------------------------------------------

/// A place in a text where it stops being what a case file may hold.
struct TextProblem {
  std::size_t offset = 0;  ///< of the first offending byte
  std::string what;        ///< what is there, for messages
};

std::string hex_byte(unsigned char byte) {
  char out[8];
  std::snprintf(out, sizeof out, "0x%02X", static_cast<unsigned>(byte));
  return out;
}

/// Control characters (C0 but tab, line feed and carriage return; DEL; C1).
bool is_control(std::uint32_t code) {
  return (code < 0x20 && code != '\t' && code != '\n' && code != '\r') ||
         (code >= 0x7f && code <= 0x9f);
}

/// The first place of `s` that is not UTF-8, a NUL or another control
/// character; nullopt if there is none. Such bytes would pass through to the
/// outputs, where the JSON of summary.json (UTF-8 only) or a terminal fails.
std::optional<TextProblem> text_problem(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto [code, length] = decode_utf8(s, i);
    if (length == 0)
      return TextProblem{i, "byte " + hex_byte(static_cast<unsigned char>(s[i])) + " (not UTF-8)"};
    if (code == 0) return TextProblem{i, "a NUL byte"};
    if (is_control(code)) {
      char name[16];
      std::snprintf(name, sizeof name, "U+%04X", static_cast<unsigned>(code));
      return TextProblem{i, std::string("the control character ") + name};
    }
    i += length;
  }
  return std::nullopt;
}

/// What the user wrote, fit for a one-line message: at most about 60 bytes,
/// control characters and bytes that are not UTF-8 shown as \xNN.
std::string shown(std::string_view s) {
  constexpr std::size_t kLongest = 60;
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (out.size() >= kLongest) return out + "...";
    const auto [code, length] = decode_utf8(s, i);
    if (length == 0 || is_control(code)) {
      for (std::size_t k = 0; k < std::max<std::size_t>(length, 1); ++k)
        out += "\\x" + hex_byte(static_cast<unsigned char>(s[i + k])).substr(2);
      i += std::max<std::size_t>(length, 1);
    } else {
      out.append(s.substr(i, length));
      i += length;
    }
  }
  return out;
}

/// What the user wrote, for messages: the scalar itself or the kind of node.
std::string found(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing (null)";
    case YAML::NodeType::Scalar:
      return node.Scalar().empty() ? std::string("an empty string") : shown(node.Scalar());
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    default:
      return "an undefined value";
  }
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

// --- the YAML document -------------------------------------------------------------

/// Follows the parser's events through one document without building it:
/// enforces the nesting and size limits before yaml-cpp builds a tree (its
/// builder recurses once per level and spends about 500 bytes per value),
/// remembers where the document starts and, for messages, the key path of
/// the last value that starts on a given line.
class EventScan : public YAML::EventHandler {
 public:
  /// `values` counts across the documents of one file.
  EventScan(const Reader& r, long long& values, int watched_line = -1)
      : r_(r), values_(values), watched_line_(watched_line) {}

  /// The key paths of the anchored values and of the aliases: values that
  /// several keys share (see apply_override).
  [[nodiscard]] const std::vector<std::string>& shared_paths() const { return shared_; }

  [[nodiscard]] const std::optional<YAML::Mark>& start() const { return start_; }
  [[nodiscard]] const std::optional<std::string>& watched_path() const { return watched_path_; }

  void OnDocumentStart(const YAML::Mark& mark) override { start_ = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    shared(anchor, value(mark, nullptr));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { shared(1, value(mark, nullptr)); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& text) override {
    shared(anchor, value(mark, &text));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, false, anchor);
  }
  void OnSequenceEnd() override { frames_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, true, anchor);
  }
  void OnMapEnd() override { frames_.pop_back(); }

 private:
  struct Frame {
    bool map = false;
    bool key_next = true;  ///< in a map: the next value is a key
    std::string key;       ///< in a map: the current key
    long long index = 0;   ///< in a list: the next item's index
    std::string path;
  };

  /// Counts a value starting at `mark` and returns its key path (a key's
  /// path is that of its value).
  std::string value(const YAML::Mark& mark, const std::string* scalar) {
    std::string path;
    if (!frames_.empty()) {
      Frame& f = frames_.back();
      if (!f.map) {
        path = f.path + "[" + std::to_string(f.index++) + "]";
      } else {
        if (f.key_next) f.key = scalar != nullptr ? shown(*scalar) : "?";
        f.key_next = !f.key_next;
        path = f.path.empty() ? f.key : f.path + "." + f.key;
      }
    }
    const std::string shown_path = path.empty() ? "(top level)" : path;
    if (++values_ > kMaxYamlValues) {
      r_.fail(shown_path, mark.line + 1,
              "expected at most " + std::to_string(kMaxYamlValues) +
                  " YAML values (scalars, lists and maps, keys included) in the case file, got "
                  "more");
    }
    if (mark.line == watched_line_) watched_path_ = shown_path;
    return path;
  }

  void shared(YAML::anchor_t anchor, const std::string& path) {
    if (anchor != YAML::NullAnchor) shared_.push_back(path);
  }

  void open(const YAML::Mark& mark, bool map, YAML::anchor_t anchor) {
    std::string path = value(mark, nullptr);
    shared(anchor, path);
    if (frames_.size() >= kMaxNesting) {
      // The path of the innermost value is as long as the nesting is deep.
      if (path.size() > 60) path = path.substr(0, path.find_last_of("[.", 60)) + "...";
      r_.fail(path, mark.line + 1,
              "expected lists and maps nested at most " + std::to_string(kMaxNesting) +
                  " levels deep, got deeper");
    }
    frames_.push_back(Frame{map, true, "", 0, std::move(path)});
  }

  const Reader& r_;
  long long& values_;
  int watched_line_;
  std::optional<YAML::Mark> start_;
  std::optional<std::string> watched_path_;
  std::vector<Frame> frames_;
  std::vector<std::string> shared_;
};

/// The character at a parser mark (whose line and column count bytes), for
/// messages.
std::string character_at(const std::string& content, const YAML::Mark& mark) {
  std::size_t offset = 0;
  for (int line = 0; line < mark.line && offset < content.size(); ++line) {
    offset = content.find('\n', offset);
    if (offset == std::string::npos) return "";
    ++offset;
  }
  // yaml-cpp does not count a leading byte order mark.
  if (mark.line == 0 && content.rfind("\xEF\xBB\xBF", 0) == 0) offset += 3;
  offset += static_cast<std::size_t>(std::max(mark.column, 0));
  if (offset >= content.size()) return "";
  return "'" + shown(content.substr(offset, 1)) + "'";
}

/// The first document of `content`, after checking that it is the only one.
/// Not YAML::LoadAll: yaml-cpp 0.7 ends a document at a token it cannot use
/// (a stray ',', ']' or '}') without consuming it, so LoadAll finds an empty
/// document there again and again and never ends (the file `,` makes it grow
/// without bound). Here the parser is asked for at most three documents, and
/// a document that starts where the previous one started is that stray token.
/// `shared` receives the key paths of its anchors and aliases.
YAML::Node parse_document(const Reader& r, const std::string& content,
                          std::vector<std::string>& shared) {
  long long values = 0;
  std::istringstream in(content);
  YAML::Parser parser(in);
  EventScan first(r, values);
  try {
    if (!parser.HandleNextDocument(first))
      r.fail("(top level)", 1, "expected a map of case keys, got an empty file");
  } catch (const YAML::Exception& e) {
    r.syntax_error(e.mark, e.msg);
  }
  const auto stray = [&](const YAML::Mark& at) {
    const std::string c = character_at(content, at);
    r.syntax_error(at, c.empty() ? "unexpected token" : "unexpected " + c);
  };
  // A second document's start, if any; its content does not matter (a
  // syntax error in it is an error of having it).
  const auto next_start = [&]() -> std::optional<YAML::Mark> {
    EventScan next(r, values);
    try {
      if (!parser.HandleNextDocument(next)) return std::nullopt;
    } catch (const YAML::Exception& e) {
      if (!next.start()) r.syntax_error(e.mark, e.msg);
    }
    return next.start();
  };
  if (const auto second = next_start()) {
    if (first.start() && second->pos == first.start()->pos) stray(*first.start());
    if (const auto third = next_start(); third && third->pos == second->pos) stray(*second);
    r.fail("(top level)", second->line + 1,
           "expected a single YAML document, got a second one starting on line " +
               std::to_string(second->line + 1));
  }
  shared = first.shared_paths();
  // The checked document again, now built (yaml-cpp's builder, unlike the
  // scan, records each value's position).
  try {
    return YAML::Load(content);
  } catch (const YAML::Exception& e) {
    r.syntax_error(e.mark, e.msg);
  }
}

/// Refuses text that is not UTF-8 or holds control characters, naming the
/// line and, when the parser gets that far, the key.
void check_encoding(const Reader& r, const std::string& content) {
  const auto problem = text_problem(content);
  if (!problem) return;
  const std::string_view before(content.data(), problem->offset);
  const int line = static_cast<int>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t line_start =
      before.rfind('\n') == std::string_view::npos ? 0 : before.rfind('\n') + 1;
  std::size_t column = 1;  // in characters: the line is valid UTF-8 up to here
  for (std::size_t i = line_start; i < problem->offset; ++i)
    if ((static_cast<unsigned char>(content[i]) & 0xc0u) != 0x80u) ++column;
  // The parser only sees the valid text before the problem; the key of the
  // last value it finds on the problem's line is the key the problem is in.
  long long values = 0;
  EventScan scan(r, values, line);
  try {
    std::istringstream in{std::string(before)};
    YAML::Parser parser(in);
    (void)parser.HandleNextDocument(scan);
  } catch (const std::exception&) {
    // The text is cut short: any error of the parser is expected.
  }
  const std::string what =
      "expected UTF-8 text without control characters (tab and line "
      "breaks excepted), got " +
      problem->what + " at column " + std::to_string(column);
  if (scan.watched_path()) r.fail(*scan.watched_path(), line + 1, what);
  throw InputError(r.file() + ":" + std::to_string(line + 1) + ": " + what);
}

// --- values ------------------------------------------------------------------------

/// A YAML map checked against its allowed keys: unknown and duplicate keys are
/// errors. Children are looked up by name.
class Map {
 public:
  Map(const Reader& r, const Field& f, std::vector<std::string> allowed,
      const std::string& expected = "")
      : r_(r), f_(f), allowed_(std::move(allowed)) {
    if (!f.node.IsMap()) {
      r.fail(f, "expected " + (expected.empty() ? "a map with keys " + join(allowed_) : expected) +
                    ", got " + found(f.node));
    }
    for (auto it = f.node.begin(); it != f.node.end(); ++it) {
      const int key_line = line_of(it->first, f.line);
      if (!it->first.IsScalar())
        r.fail(f.path, key_line, "expected a key name, got " + found(it->first));
      const std::string key = it->first.Scalar();
      if (std::find(allowed_.begin(), allowed_.end(), key) == allowed_.end()) {
        r.fail(child_path(shown(key)), key_line,
               "unknown key '" + shown(key) + "'; allowed keys: " + join(allowed_));
      }
      const std::string path = child_path(key);
      if (children_.count(key) != 0) {
        r.fail(path, key_line,
               "duplicate key '" + key + "' (first given on line " +
                   std::to_string(children_.at(key).line) + ")");
      }
      // A null value's mark points past the key: report the key's line.
      const int value_line = it->second.IsNull() ? key_line : line_of(it->second, key_line);
      children_[key] = Field{it->second, path, value_line};
    }
  }

  [[nodiscard]] bool has(const std::string& key) const { return children_.count(key) != 0; }

  [[nodiscard]] std::optional<Field> get(const std::string& key) const {
    const auto it = children_.find(key);
    if (it == children_.end()) return std::nullopt;
    return it->second;
  }

  [[nodiscard]] Field required(const std::string& key, const std::string& expected) const {
    const auto it = children_.find(key);
    if (it == children_.end())
      r_.fail(child_path(key), f_.line, "missing required key; expected " + expected);
    return it->second;
  }

  [[nodiscard]] const Field& field() const { return f_; }

 private:
  [[nodiscard]] std::string child_path(const std::string& key) const {
    return f_.path.empty() ? key : f_.path + "." + key;
  }

  const Reader& r_;
  Field f_;
  std::vector<std::string> allowed_;
  std::map<std::string, Field> children_;
};

/// Whether a map has the key (without touching the node).
bool has_key(const YAML::Node& node, const std::string& key) {
  if (!node.IsMap()) return false;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return true;
  }
  return false;
}

/// The items of a YAML list.
std::vector<Field> list(const Reader& r, const Field& f, const std::string& expected) {
  if (!f.node.IsSequence()) r.fail(f, "expected " + expected + ", got " + found(f.node));
  std::vector<Field> items;
  std::size_t i = 0;
  for (auto it = f.node.begin(); it != f.node.end(); ++it, ++i) {
    items.push_back(Field{*it, f.path + "[" + std::to_string(i) + "]", line_of(*it, f.line)});
  }
  return items;
}

/// A closed range of a number key, with its words for messages.
struct Range {
  double lo;
  double hi;
  const char* text;  ///< e.g. "a number in [1e-6, 1e15]"
};

// Lengths (coordinates, displacements, sizes) and forces: the units are
// free, so the bounds are far beyond any body in any usual unit (1e9 mm is
// 1000 km); within them, the sums, products and squares that the solver
// forms over millions of nodes stay far from the double range's ends.
constexpr Range kCoordinate{-1e9, 1e9, "a number in [-1e9, 1e9]"};
constexpr Range kForce{-1e20, 1e20, "a number in [-1e20, 1e20]"};

/// A finite number in `range`.
double number(const Reader& r, const Field& f, const Range& range) {
  if (f.node.IsScalar()) {
    double v = 0.0;
    bool ok = true;
    try {
      v = f.node.as<double>();
    } catch (const YAML::Exception&) {
      ok = false;
    }
    if (ok && std::isfinite(v) && v >= range.lo && v <= range.hi) return v;
  }
  r.fail(f, std::string("expected ") + range.text + ", got " + found(f.node));
}

/// An integer written in decimal digits (an optional sign, no exponent, no
/// leading "0x" or octal reading of a leading 0) in [lo, hi].
long long integer(const Reader& r, const Field& f, long long lo, long long hi,
                  const std::string& expected_in = "") {
  const std::string expected =
      expected_in.empty() ? "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]"
                          : expected_in;
  if (f.node.IsScalar()) {
    std::string_view s = f.node.Scalar();
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    long long v = 0;
    const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (!s.empty() && error == std::errc() && end == s.data() + s.size() && v >= lo && v <= hi)
      return v;
  }
  r.fail(f, "expected " + expected + ", got " + found(f.node));
}

int small_integer(const Reader& r, const Field& f, int lo, int hi,
                  const std::string& expected = "") {
  return static_cast<int>(integer(r, f, lo, hi, expected));
}

/// A string of UTF-8 text without control characters other than tab and line
/// breaks (YAML escapes such as "\0" or "\x1b" can write them).
std::string text(const Reader& r, const Field& f, const std::string& expected, bool allow_empty) {
  if (!f.node.IsScalar() || (!allow_empty && f.node.Scalar().empty())) {
    r.fail(f, "expected " + expected + ", got " + found(f.node));
  }
  const std::string& s = f.node.Scalar();
  if (const auto problem = text_problem(s)) {
    r.fail(f, "expected " + expected + " of UTF-8 text without control characters, got " +
                  problem->what + " at byte " + std::to_string(problem->offset + 1));
  }
  return s;
}

/// A name that becomes a file name or an output identifier (io/safe_name.hpp).
std::string safe_name(const Reader& r, const Field& f, const std::string& what) {
  if (!f.node.IsScalar()) r.fail(f, "expected " + what + ", got " + found(f.node));
  const std::string& s = f.node.Scalar();
  if (const std::string why = unsafe_file_name_reason(s); !why.empty()) {
    r.fail(f, "expected " + what + " of " + kSafeNameRule + ", got '" + shown(s) + "': " + why);
  }
  return s;
}

bool boolean(const Reader& r, const Field& f) {
  if (f.node.IsScalar()) {
    try {
      return f.node.as<bool>();
    } catch (const YAML::Exception&) {
    }
  }
  r.fail(f, "expected true or false, got " + found(f.node));
}

Eigen::Vector3d vec3(const Reader& r, const Field& f, const Range& range) {
  const std::string expected = "a list of 3 numbers [x, y, z]";
  if (!f.node.IsSequence() || f.node.size() != 3) {
    std::string got = found(f.node);
    if (f.node.IsSequence()) got = "a list of " + std::to_string(f.node.size()) + " items";
    r.fail(f, "expected " + expected + ", got " + got);
  }
  Eigen::Vector3d v;
  const auto items = list(r, f, expected);
  for (int i = 0; i < 3; ++i) v[i] = number(r, items[static_cast<std::size_t>(i)], range);
  return v;
}

/// `v`, scaled by its largest component when its norm would overflow (1e200)
/// or lose its digits to underflow (1e-320), so that any finite non-zero `v`
/// can be normalized. Other vectors are returned as they are, so that their
/// unit vectors do not change in the last bit.
Eigen::Vector3d normalizable(const Eigen::Vector3d& v) {
  const double norm = v.norm();
  if (norm >= 1e-150 && norm <= 1e150) return v;
  return v / v.cwiseAbs().maxCoeff();
}

// --- sections ---------------------------------------------------------------------

const char* const kProgramItem =
    "a segment {to: <factor>, increments: <n>} or a repeat block {repeat: <n>, segments: [...]}";

LoadSegment segment(const Reader& r, const Field& f, int cycle) {
  const Map m(r, f, {"to", "increments"}, kProgramItem);
  LoadSegment s;
  // The factor multiplies values at factor 1: 1e6 leaves every product with
  // a coordinate-sized value finite.
  s.target = number(r, m.required("to", "the factor reached at the end of the segment (a number)"),
                    {-1e6, 1e6, "a number in [-1e6, 1e6] (the factor at the end of the segment)"});
  s.n_increments = small_integer(r, m.required("increments", "an integer >= 1"), 1,
                                 static_cast<int>(kMaxIncrements));
  s.cycle = cycle;
  return s;
}

LoadProgram program(const Reader& r, const Field& f) {
  const std::string expected = "a non-empty list of " + std::string(kProgramItem);
  const auto items = list(r, f, expected);
  if (items.empty()) r.fail(f, "expected " + expected + ", got an empty list");
  LoadProgram p;
  int cycles = 0;       // cycles numbered so far (repeat blocks continue the numbering)
  long long total = 0;  // increments so far; at most 1e6 + 1e5 * 1e6 * 1e6: no overflow
  const auto check_total = [&](const Field& at) {
    if (total > kMaxIncrements) {
      r.fail(at, "expected at most " + std::to_string(kMaxIncrements) +
                     " increments in the whole program, got " + std::to_string(total) +
                     " up to here");
    }
  };
  for (const auto& item : items) {
    if (has_key(item.node, "repeat")) {
      const Map m(r, item, {"repeat", "segments"}, kProgramItem);
      const int n =
          small_integer(r, m.required("repeat", "the number of repetitions (an integer >= 1)"), 1,
                        static_cast<int>(kMaxRepeat));
      const Field segs_field =
          m.required("segments", "a non-empty list of segments {to, increments}");
      const auto segs = list(r, segs_field, "a non-empty list of segments {to, increments}");
      if (segs.empty()) {
        r.fail(segs_field,
               "expected a non-empty list of segments {to, increments}, got an empty list");
      }
      r.add_segments(segs_field, static_cast<long long>(segs.size()));
      std::vector<LoadSegment> block;
      for (const auto& s : segs) {
        if (has_key(s.node, "repeat")) {
          r.fail(s.path + ".repeat", s.line,
                 "repeat blocks cannot be nested; expected a segment {to, increments}");
        }
        block.push_back(segment(r, s, 0));
      }
      long long block_increments = 0;
      for (const auto& s : block) block_increments += s.n_increments;
      total += static_cast<long long>(n) * block_increments;
      check_total(item);
      // The block was counted once above, as it was read.
      r.add_segments(item, static_cast<long long>(n - 1) * static_cast<long long>(block.size()));
      for (int k = 1; k <= n; ++k) {
        for (auto s : block) {
          s.cycle = cycles + k;
          p.segments.push_back(s);
        }
      }
      cycles += n;
    } else {
      r.add_segments(item, 1);
      p.segments.push_back(segment(r, item, 0));
      total += p.segments.back().n_increments;
      check_total(item);
    }
  }
  return p;
}

/// An optional own program, checked against the case's number of increments.
std::optional<LoadProgram> own_program(const Reader& r, const Map& m, const LoadProgram& main) {
  const auto f = m.get("program");
  if (!f) return std::nullopt;
  LoadProgram p = program(r, *f);
  if (p.n_increments() != main.n_increments()) {
    r.fail(*f, "expected " + std::to_string(main.n_increments()) +
                   " increments in total (as load_program), got " +
                   std::to_string(p.n_increments()));
  }
  return p;
}

/// What a file system entry is, for messages.
std::string kind_of(const std::filesystem::file_status& status) {
  switch (status.type()) {
    case std::filesystem::file_type::directory:
      return "a directory";
    case std::filesystem::file_type::fifo:
      return "a FIFO (named pipe)";
    case std::filesystem::file_type::socket:
      return "a socket";
    case std::filesystem::file_type::block:
      return "a block device";
    case std::filesystem::file_type::character:
      return "a character device";
    default:
      return "not a regular file";
  }
}

/// Three values of one kind, [x, y, z].
template <class Read>
auto triple(const Reader& r, const Field& f, const std::string& what, Read read) {
  const std::string expected = "a list of 3 " + what + " [x, y, z]";
  if (!f.node.IsSequence() || f.node.size() != 3) {
    const std::string got = f.node.IsSequence()
                                ? "a list of " + std::to_string(f.node.size()) + " items"
                                : found(f.node);
    r.fail(f, "expected " + expected + ", got " + got);
  }
  const auto items = list(r, f, expected);
  std::array<decltype(read(items[0])), 3> out{};
  for (std::size_t i = 0; i < 3; ++i) out[i] = read(items[i]);
  return out;
}

/// mesh.block (docs/case-file.md, `mesh`): the bounds of model/block.hpp.
BlockParams block_params(const Reader& r, const Field& f) {
  const Map b(r, f, {"size", "elements", "grading", "symmetry"});
  BlockParams bp;
  constexpr Range size{kMinCylinderLength, kMaxCylinderLength, "a number in [1e-9, 1e9]"};
  constexpr Range grading{1.0, kMaxBlockGrading, "a number in [1, 10000]"};
  if (const auto x = b.get("size"))
    bp.size = triple(r, *x, "lengths", [&](const Field& v) { return number(r, v, size); });
  if (const auto x = b.get("elements"))
    bp.elements = triple(r, *x, "element counts", [&](const Field& v) {
      return small_integer(r, v, 1, kMaxCylinderDivisions);
    });
  if (const auto x = b.get("grading"))
    bp.grading = triple(r, *x, "gradings", [&](const Field& v) { return number(r, v, grading); });
  if (const auto x = b.get("symmetry")) {
    const std::string kind = text(r, *x, "none, half or quarter", false);
    if (kind == "half")
      bp.symmetry = BlockParams::Symmetry::half;
    else if (kind == "quarter")
      bp.symmetry = BlockParams::Symmetry::quarter;
    else if (kind != "none")
      r.fail(*x, "expected none, half or quarter, got " + shown(kind));
  }
  if (block_node_count(bp) > kMaxGeneratedNodes) {
    r.fail(f, "expected a mesh of at most " + std::to_string(kMaxGeneratedNodes) +
                  " nodes, got elements which make " + std::to_string(block_node_count(bp)) +
                  " nodes ((nx + 1) (ny + 1) (nz + 1))");
  }
  for (int d = 0; d < 2; ++d) {
    if (block_is_centred(bp, d) && bp.grading[d] != 1.0 && bp.elements[d] % 2 != 0) {
      r.fail(*b.get("elements"),
             std::string("expected an even number of elements along ") + (d == 0 ? "x" : "y") +
                 " (graded from the centre out both ways), got " + std::to_string(bp.elements[d]));
    }
  }
  return bp;
}

MeshSource mesh_source(const Reader& r, const Field& f, const std::filesystem::path& folder) {
  const Map m(r, f, {"file", "cylinder", "block"});
  const int given = int{m.has("file")} + int{m.has("cylinder")} + int{m.has("block")};
  if (given != 1) {
    r.fail(f, std::string("expected exactly one of the keys file, cylinder, block, got ") +
                  (given == 0 ? "none" : std::to_string(given) + " of them"));
  }
  MeshSource src;
  if (const auto b = m.get("block")) src.block = block_params(r, *b);
  if (const auto file = m.get("file")) {
    const std::filesystem::path p = text(r, *file, "a path to a Gmsh .msh file", false);
    const std::filesystem::path abs = (p.is_absolute() ? p : folder / p).lexically_normal();
    if (const std::string problem = mesh_path_problem(abs); !problem.empty()) {
      r.fail(*file, "expected an existing mesh file (relative to the case file's folder), got " +
                        shown(p.string()) + " (" + printable(abs.string()) + ": " + problem + ")");
    }
    src.file = abs;
  }
  if (const auto cyl = m.get("cylinder")) {
    const Map c(
        r, *cyl,
        {"radius", "height", "core", "ring", "layers", "rim_grading", "bottom_grading", "sector"});
    CylinderParams cp;
    constexpr Range size{kMinCylinderLength, kMaxCylinderLength, "a number in [1e-9, 1e9]"};
    if (const auto x = c.get("radius")) cp.radius = number(r, *x, size);
    if (const auto x = c.get("height")) cp.height = number(r, *x, size);
    const int divisions = kMaxCylinderDivisions;
    if (const auto x = c.get("core")) cp.core = small_integer(r, *x, 1, divisions);
    if (const auto x = c.get("ring")) cp.ring = small_integer(r, *x, 1, divisions);
    if (const auto x = c.get("layers")) cp.layers = small_integer(r, *x, 1, divisions);
    // With q = 10 and 8 rings the outermost ring is already 1e-9 of the
    // block's width: larger gradings only make degenerate elements.
    constexpr Range grading{1.0, kMaxCylinderGrading, "a number in [1, 10]"};
    if (const auto x = c.get("rim_grading")) cp.rim_grading = number(r, *x, grading);
    if (const auto x = c.get("bottom_grading")) cp.bottom_grading = number(r, *x, grading);
    // The node count of generate_cylinder, before anything is allocated.
    const long long nodes = cylinder_node_count(cp);
    if (nodes > kMaxGeneratedNodes) {
      r.fail(*cyl, "expected a mesh of at most " + std::to_string(kMaxGeneratedNodes) +
                       " nodes, got core " + std::to_string(cp.core) + ", ring " +
                       std::to_string(cp.ring) + " and layers " + std::to_string(cp.layers) +
                       ", which make " + std::to_string(nodes) +
                       " nodes ((layers + 1) ((core + 1)^2 + 4 core ring))");
    }
    if (const auto x = c.get("sector")) {
      const std::string sector = text(r, *x, "full or quarter", false);
      if (sector == "quarter")
        cp.sector = CylinderParams::Sector::quarter;
      else if (sector != "full")
        r.fail(*x, "expected full or quarter, got " + shown(sector));
      if (cp.sector == CylinderParams::Sector::quarter && cp.core % 2 != 0)
        r.fail(*x, "a quarter sector needs an even core (grid lines on the axes), got core " +
                       std::to_string(cp.core));
    }
    src.cylinder = cp;
  }
  return src;
}

Material material(const Reader& r, const Field& f) {
  const Map m(r, f, {"young", "poisson"});
  Material mat;
  // Any solid in any usual unit (a gel's 1 kPa in GPa, diamond's 1.2e12 in
  // Pa) is inside; the bounds keep E times the stiffness's geometric factors
  // far from underflow (5e-324 is a denormal) and overflow.
  mat.young = number(r, m.required("young", "Young's modulus E, a number in [1e-6, 1e15]"),
                     {1e-6, 1e15, "a number in [1e-6, 1e15]"});
  // The stiffness divides by 1 + nu and 1 - 2 nu: nu within 1e-5 of the
  // limits (-1, 0.5) keeps both divisors >= 1e-5, so that the ratio of the
  // bulk and shear moduli stays below about 1e5 (or above 1e-5).
  mat.poisson = number(r, m.required("poisson", "Poisson's ratio, a number in [-0.99999, 0.49999]"),
                       {-0.99999, 0.49999, "a number in [-0.99999, 0.49999]"});
  return mat;
}

DirichletCondition dirichlet(const Reader& r, const Field& f, const LoadProgram& main) {
  const Map m(r, f, {"set", "displacement", "program"});
  DirichletCondition bc;
  const Field set = m.required("set", "the name of a node set of the mesh");
  bc.set = safe_name(r, set, "a node set name");
  r.remember(set.path, set.line);
  const Field disp = m.required("displacement", "a map with any of the keys x, y, z");
  const Map d(r, disp, {"x", "y", "z"});
  const char* const names[3] = {"x", "y", "z"};
  bool any = false;
  for (std::size_t i = 0; i < 3; ++i) {
    if (const auto v = d.get(names[i])) {
      bc.value[i] = number(r, *v, kCoordinate);
      any = true;
    }
  }
  if (!any) r.fail(disp, "expected at least one of the keys x, y, z, got an empty map");
  bc.program = own_program(r, m, main);
  return bc;
}

NodalLoad nodal_load(const Reader& r, const Field& f, const LoadProgram& main) {
  const Map m(r, f, {"set", "force_per_node", "program"});
  NodalLoad load;
  const Field set = m.required("set", "the name of a node set of the mesh");
  load.set = safe_name(r, set, "a node set name");
  r.remember(set.path, set.line);
  load.force_per_node =
      vec3(r, m.required("force_per_node", "a list of 3 numbers [fx, fy, fz]"), kForce);
  load.program = own_program(r, m, main);
  return load;
}

FrictionParams friction(const Reader& r, const Field& f) {
  const Map m(
      r, f, {"mu", "p", "mu1", "mu2", "p1", "p2"},
      "a map {mu: <coefficient>} (isotropic, optional p) or {mu1, mu2, p1, p2} (orthotropic)");
  const bool iso = m.has("mu") || m.has("p");
  const bool ortho = m.has("mu1") || m.has("mu2") || m.has("p1") || m.has("p2");
  if (iso && ortho) {
    r.fail(f,
           "expected either {mu, p} (isotropic) or {mu1, mu2, p1, p2} (orthotropic), got keys of "
           "both");
  }
  // Measured coefficients are below about 2; up to 1e6 a contact meant to
  // stick can say so (the contact solver is tested from 0 to 1e6). The law
  // divides p by mu: a positive coefficient below 1e-6 (in effect
  // frictionless, and 0 says so) would make that ratio huge.
  const auto coefficient = [&](const Field& x) {
    const double v = number(r, x, {0.0, 1e6, "0 or a number in [1e-6, 1e6]"});
    if (v != 0.0 && v < 1e-6)
      r.fail(x, "expected 0 or a number in [1e-6, 1e6], got " + found(x.node));
    return v;
  };
  FrictionParams fp;
  std::optional<Field> p1_field, p2_field;
  if (ortho) {
    fp.mu1 = coefficient(m.required("mu1", "a friction coefficient >= 0"));
    fp.mu2 = coefficient(m.required("mu2", "a friction coefficient >= 0"));
    p1_field = m.get("p1");
    p2_field = m.get("p2");
  } else {
    fp.mu1 = fp.mu2 = coefficient(m.required("mu", "a friction coefficient >= 0"));
    p1_field = p2_field = m.get("p");
  }
  fp.p1 = p1_field ? coefficient(*p1_field) : fp.mu1;
  fp.p2 = p2_field ? coefficient(*p2_field) : fp.mu2;

  // The rules of the law itself (contact/law/friction_law.hpp), reported at
  // the key of the coefficient at fault.
  if (const auto problem = friction_parameters_problem(fp.mu1, fp.mu2, fp.p1, fp.p2)) {
    const FrictionCoefficient c = problem->coefficient;
    if (c == FrictionCoefficient::mu1 || c == FrictionCoefficient::mu2)
      r.fail(m.required(ortho ? coefficient_name(c) : "mu", ""), "expected " + problem->expected +
                                                                     ", got mu1 = " + fmt(fp.mu1) +
                                                                     ", mu2 = " + fmt(fp.mu2));
    const std::optional<Field>& p_field = c == FrictionCoefficient::p1 ? p1_field : p2_field;
    // Without a p key, p = mu, which the rules accept.
    r.fail(p_field ? *p_field : f, "expected " + problem->expected + ", got " +
                                       (p_field ? found(p_field->node) : std::string("none")));
  }
  return fp;
}

/// contact[i].friction_program: the plane's law changes, each from an
/// increment of the load program (2 to its last, strictly ascending; the
/// `friction` key is the law from increment 1).
std::vector<FrictionChange> friction_program(const Reader& r, const Field& f,
                                             const LoadProgram& main) {
  const std::string item_text = "a change {from_increment: <n>, friction: {...}}";
  const auto items = list(r, f, "a non-empty list of " + item_text);
  if (items.empty()) r.fail(f, "expected a non-empty list of " + item_text + ", got an empty list");
  const int last = main.n_increments();
  std::vector<FrictionChange> changes;
  for (const Field& item : items) {
    const Map m(r, item, {"from_increment", "friction"}, item_text);
    const Field from = m.required("from_increment", "the first increment of the new law");
    const int earliest = changes.empty() ? 2 : changes.back().from_increment + 1;
    if (earliest > last)
      r.fail(from, "expected no further change: the load program has " + std::to_string(last) +
                       " increments and the law already changes at increment " +
                       std::to_string(earliest - 1) + " (or there is only one increment)");
    const std::string expected =
        "an integer in [" + std::to_string(earliest) + ", " + std::to_string(last) +
        "] (an increment of load_program, 1-based, after the previous change; the law of "
        "increment 1 is the key friction)";
    FrictionChange change;
    change.from_increment = small_integer(r, from, earliest, last, expected);
    change.friction =
        friction(r, m.required("friction", "a map {mu: <coefficient>} or {mu1, mu2, p1, p2}"));
    changes.push_back(change);
  }
  return changes;
}

/// A direction given by its components: any finite numbers, as only its
/// direction counts.
constexpr Range kDirectionComponent{-std::numeric_limits<double>::max(),
                                    std::numeric_limits<double>::max(), "a finite number"};

Eigen::Vector3d direction(const Reader& r, const std::optional<Field>& f,
                          const Eigen::Vector3d& n) {
  if (!f) return reference_direction(n);
  const Map m(r, *f, {"angle", "vector"}, "a map {angle: <degrees>} or {vector: [x, y, z]}");
  if (m.has("angle") == m.has("vector")) {
    r.fail(*f, std::string("expected exactly one of the keys angle, vector, got ") +
                   (m.has("angle") ? "both" : "neither"));
  }
  if (const auto a = m.get("angle")) {
    // A turn and more is a mistake rather than an angle; larger values
    // would also lose the angle's digits in the conversion to radians.
    const double deg = number(r, *a, {-360.0, 360.0, "an angle in degrees in [-360, 360]"});
    return direction_at_angle(n, deg);
  }
  const Field vf = *m.get("vector");
  const Eigen::Vector3d v = vec3(r, vf, kDirectionComponent);
  if (v.cwiseAbs().maxCoeff() == 0.0) r.fail(vf, "expected a non-zero vector, got [0, 0, 0]");
  const Eigen::Vector3d u = normalizable(v);
  const std::optional<Eigen::Vector3d> t = direction_along(n, u);
  if (!t) {
    r.fail(vf, "expected a vector not parallel to the plane's normal, got [" + fmt(v.x()) + ", " +
                   fmt(v.y()) + ", " + fmt(v.z()) + "] (its projection onto the plane is zero)");
  }
  return *t;
}

/// An indenter's friction direction as given (docs/case-file.md,
/// `contact`): projected at each node when the contact is set up.
void indenter_direction(const Reader& r, const std::optional<Field>& f, ContactPlane& c) {
  c.direction_angle = 0.0;
  if (!f) return;
  r.remember(f->path, f->line);  // for the checks against the mesh's nodes
  const Map m(r, *f, {"angle", "vector"}, "a map {angle: <degrees>} or {vector: [x, y, z]}");
  if (m.has("angle") == m.has("vector")) {
    r.fail(*f, std::string("expected exactly one of the keys angle, vector, got ") +
                   (m.has("angle") ? "both" : "neither"));
  }
  if (const auto a = m.get("angle")) {
    c.direction_angle = number(r, *a, {-360.0, 360.0, "an angle in degrees in [-360, 360]"});
    return;
  }
  const Field vf = *m.get("vector");
  const Eigen::Vector3d v = vec3(r, vf, kDirectionComponent);
  if (v.cwiseAbs().maxCoeff() == 0.0) r.fail(vf, "expected a non-zero vector, got [0, 0, 0]");
  c.direction_angle.reset();
  c.direction = normalizable(v).normalized();
}

/// A non-zero vector, normalized.
Eigen::Vector3d unit_vector(const Reader& r, const Field& f, const std::string& what) {
  const Eigen::Vector3d v = vec3(r, f, kDirectionComponent);
  if (v.cwiseAbs().maxCoeff() == 0.0) r.fail(f, "expected a non-zero " + what + ", got [0, 0, 0]");
  return normalizable(v).normalized();
}

/// The plane of `contact[i]` (docs/physics.md section 2).
void contact_plane_surface(const Reader& r, const Field& f, ContactPlane& c) {
  const Map plane(r, f, {"point", "normal"}, "a map {point: [x, y, z], normal: [x, y, z]}");
  c.point = vec3(r, plane.required("point", "a point of the plane [x, y, z]"), kCoordinate);
  const Field nf = plane.required("normal", "the plane's normal [x, y, z], pointing into the body");
  c.normal = unit_vector(r, nf, "normal");
}

/// The sphere or cylinder of `contact[i]` (docs/physics.md section 2.1).
void contact_indenter_surface(const Reader& r, const Field& f, ContactShape shape,
                              ContactPlane& c) {
  c.shape = shape;
  r.remember(f.path, f.line);  // for the checks against the mesh's nodes
  const bool sphere = c.shape == ContactShape::sphere;
  const Map m(r, f,
              sphere ? std::vector<std::string>{"center", "radius"}
                     : std::vector<std::string>{"point", "axis", "radius"},
              sphere ? "a map {center: [x, y, z], radius: R}"
                     : "a map {point: [x, y, z], axis: [x, y, z], radius: R}");
  c.point = vec3(r,
                 m.required(sphere ? "center" : "point", sphere ? "the sphere's centre [x, y, z]"
                                                                : "a point of the axis [x, y, z]"),
                 kCoordinate);
  if (!sphere) c.axis = unit_vector(r, m.required("axis", "the axis' direction [x, y, z]"), "axis");
  c.radius = number(r, m.required("radius", "the radius, a length > 0"),
                    {std::numeric_limits<double>::min(), 1e9, "a length in (0, 1e9]"});
}

/// The rigid surface of `contact[i]`: exactly one of plane, sphere, cylinder.
void contact_surface(const Reader& r, const Map& m, ContactPlane& c) {
  const int given = int{m.has("plane")} + int{m.has("sphere")} + int{m.has("cylinder")};
  if (given == 0) {
    (void)m.required("plane",
                     "a map {point: [x, y, z], normal: [x, y, z]}, or instead a rigid indenter "
                     "sphere: {center, radius} or cylinder: {point, axis, radius}");
  }
  if (given > 1) {
    r.fail(m.field(),
           "expected exactly one of the keys plane, sphere, cylinder (the rigid "
           "surface), got more than one");
  }
  if (const auto x = m.get("plane")) return contact_plane_surface(r, *x, c);
  if (const auto x = m.get("sphere"))
    return contact_indenter_surface(r, *x, ContactShape::sphere, c);
  contact_indenter_surface(r, *m.get("cylinder"), ContactShape::cylinder, c);
}

ContactPlane contact(const Reader& r, const Field& f, std::size_t index, const LoadProgram& main) {
  const Map m(r, f,
              {"name", "set", "plane", "sphere", "cylinder", "friction", "friction_program",
               "direction", "rho", "motion"});
  ContactPlane c;
  c.name = "plane_" + std::to_string(index);
  if (const auto x = m.get("name")) c.name = safe_name(r, *x, "a plane name");
  const Field set = m.required("set", "the name of the contact node set of the mesh");
  c.set = safe_name(r, set, "a node set name");
  r.remember(set.path, set.line);
  contact_surface(r, m, c);

  c.friction =
      friction(r, m.required("friction", "a map {mu: <coefficient>} or {mu1, mu2, p1, p2}"));
  if (const auto x = m.get("friction_program")) c.friction_program = friction_program(r, *x, main);
  if (c.shape == ContactShape::plane)
    c.direction = direction(r, m.get("direction"), c.normal);
  else
    indenter_direction(r, m.get("direction"), c);

  if (const auto x = m.get("rho")) {
    if (!(x->node.IsScalar() && x->node.Scalar() == "auto")) {
      // rho is a stiffness [force / length]: the bounds only keep its
      // products with forces and displacements inside the double range.
      c.rho = number(r, *x, {1e-30, 1e30, "auto or a number in [1e-30, 1e30]"});
    }
  }
  if (const auto x = m.get("motion")) {
    const Map mo(r, *x, {"displacement", "program"});
    c.motion = vec3(
        r, mo.required("displacement", "the plane's rigid displacement at factor 1 [dx, dy, dz]"),
        kCoordinate);
    c.motion_program = own_program(r, mo, main);
  }
  return c;
}

// solver.linear and solver.petsc (docs/case-file.md): which backend solves
// K_ff, and PETSc's method. Only vetted methods: no PETSc option passes.
void linear_solver_settings(const Reader& r, const Map& m, SolverSettings& s) {
  if (const auto x = m.get("linear")) {
    const std::string kind = text(r, *x, "auto, cholmod or petsc", false);
    if (kind == "cholmod")
      s.linear = LinearSolverChoice::cholmod;
    else if (kind == "petsc")
      s.linear = LinearSolverChoice::petsc;
    else if (kind != "auto" && kind != "automatic")
      r.fail(*x, "expected auto, cholmod or petsc, got " + shown(kind));
  }
  const auto x = m.get("petsc");
  if (!x) return;
  const Map p(r, *x, {"method", "relative_tolerance", "max_iterations"});
  if (const auto y = p.get("method")) {
    const std::string kind = text(r, *y, "direct, cg_gamg or cg_hypre", false);
    if (kind == "direct")
      s.petsc.method = PetscMethod::direct;
    else if (kind == "cg_gamg")
      s.petsc.method = PetscMethod::cg_gamg;
    else if (kind == "cg_hypre")
      s.petsc.method = PetscMethod::cg_hypre;
    else
      r.fail(*y, "expected direct, cg_gamg or cg_hypre, got " + shown(kind));
  }
  if (const auto y = p.get("relative_tolerance")) {
    s.petsc.relative_tolerance = number(r, *y, {1e-15, 1.0, "a number in [1e-15, 1]"});
    s.petsc.relative_tolerance_given = true;
  }
  if (const auto y = p.get("max_iterations"))
    s.petsc.max_iterations = small_integer(r, *y, 1, 1'000'000);
}

SolverSettings solver(const Reader& r, const Field& f) {
  const Map m(r, f,
              {"force_tolerance", "law_tolerance", "max_iterations", "max_cuts", "blas_threads",
               "contact_solver", "sparse_preconditioner", "linear", "petsc"});
  SolverSettings s;
  // Relative tolerances: below 1e-15 they ask for less than the round-off of
  // a double (2.2e-16 relative) can give; above 1 they accept anything.
  constexpr Range tolerance{1e-15, 1.0, "a number in [1e-15, 1]"};
  if (const auto x = m.get("force_tolerance")) s.force_tolerance = number(r, *x, tolerance);
  if (const auto x = m.get("law_tolerance")) s.law_tolerance = number(r, *x, tolerance);
  if (const auto x = m.get("max_iterations")) s.max_iterations = small_integer(r, *x, 1, 1'000'000);
  // Each cut halves the increment: after 30 the step is 1e-9 of an increment,
  // and positions k + j 2^-30 are still exact in a double for 1e6 increments.
  if (const auto x = m.get("max_cuts")) s.max_cuts = small_integer(r, *x, 0, 30);
  if (const auto x = m.get("blas_threads")) {
    if (!(x->node.IsScalar() && x->node.Scalar() == "auto"))
      s.blas_threads = small_integer(r, *x, 1, 1024, "auto or an integer in [1, 1024]");
  }
  if (const auto x = m.get("contact_solver")) {
    const std::string kind = text(r, *x, "auto, dense or sparse", false);
    if (kind == "dense")
      s.contact_solver = ContactSolverChoice::dense;
    else if (kind == "sparse")
      s.contact_solver = ContactSolverChoice::sparse;
    else if (kind != "auto")
      r.fail(*x, "expected auto, dense or sparse, got " + shown(kind));
  }
  if (const auto x = m.get("sparse_preconditioner")) {
    const std::string kind = text(r, *x, "auto, own_factor or stiffness_factor", false);
    if (kind == "own_factor")
      s.sparse_preconditioner = SparsePreconditionerChoice::own_factor;
    else if (kind == "stiffness_factor")
      s.sparse_preconditioner = SparsePreconditionerChoice::stiffness_factor;
    else if (kind != "auto")
      r.fail(*x, "expected auto, own_factor or stiffness_factor, got " + shown(kind));
  }
  linear_solver_settings(r, m, s);
  return s;
}

WearSettings wear(const Reader& r, const Field& f, const Case& c) {
  const Map m(r, f, {"law", "coefficient", "cycle_jump", "max_cycles", "max_depth", "contact"});
  WearSettings w;
  const Field law = m.required("law", "archard or energy");
  const std::string kind = text(r, law, "archard or energy", false);
  if (kind == "energy")
    w.law = WearLawChoice::energy;
  else if (kind != "archard")
    r.fail(law, "expected archard or energy, got " + shown(kind));
  // [1 / pressure]: Archard coefficients of metals are 1e-9..1e-3 mm^2/N.
  w.coefficient = number(r, m.required("coefficient", "the wear coefficient [1 / pressure]"),
                         {0.0, 1e10, "a number in [0, 1e10]"});
  if (const auto x = m.get("cycle_jump")) w.cycle_jump = small_integer(r, *x, 1, 1'000'000);
  if (const auto x = m.get("max_cycles")) w.max_cycles = integer(r, *x, 1, 1'000'000'000'000);
  if (const auto x = m.get("max_depth"))
    w.max_depth = number(r, *x, {1e-30, 1e9, "a number in [1e-30, 1e9]"});
  if (const auto x = m.get("contact")) {
    w.contact = safe_name(r, *x, "a contact plane name");
    const auto named = [&](const ContactPlane& cp) { return cp.name == w.contact; };
    if (std::none_of(c.contacts.begin(), c.contacts.end(), named))
      r.fail(*x, "expected the name of a contact plane of `contact`, got " + shown(w.contact));
  }
  if (cycle_program(c).n_cycles() == 0)
    r.fail(f, "expected cycles: the program of `cycles.program` (" + c.cycles.text +
                  ") has no repeat block, and wear is applied at the end of each cycle");
  return w;
}

const std::vector<std::string> kOutputFields{"displacement", "stress", "von_mises", "sets",
                                             "contact"};

OutputSettings output(const Reader& r, const std::optional<Field>& f,
                      const std::filesystem::path& folder, const std::filesystem::path& stem) {
  OutputSettings o;
  o.directory = (std::filesystem::current_path() / "results" / stem).lexically_normal();
  if (!f) return o;
  const Map m(r, *f, {"directory", "fields", "every", "vtk", "vtu_compression", "cycle_every"});
  if (const auto x = m.get("directory")) {
    const std::filesystem::path p = text(r, *x, "a directory path", false);
    o.directory = (p.is_absolute() ? p : folder / p).lexically_normal();
  }
  if (const auto x = m.get("fields")) {
    const std::string expected = "a list of field names among " + join(kOutputFields);
    o.fields.clear();
    for (const auto& item : list(r, *x, expected)) {
      const std::string name = text(r, item, "one of " + join(kOutputFields), false);
      if (std::find(kOutputFields.begin(), kOutputFields.end(), name) == kOutputFields.end()) {
        r.fail(item, "expected one of " + join(kOutputFields) + ", got " + shown(name));
      }
      if (std::find(o.fields.begin(), o.fields.end(), name) != o.fields.end()) {
        r.fail(item, "expected each field once, got " + name + " twice");
      }
      o.fields.push_back(name);
    }
  }
  if (const auto x = m.get("every"))
    o.every = small_integer(r, *x, 1, static_cast<int>(kMaxIncrements));
  if (const auto x = m.get("vtk")) o.vtk = boolean(r, *x);
  if (const auto x = m.get("cycle_every")) o.cycle_every = small_integer(r, *x, 1, 1000000);
  if (const auto x = m.get("vtu_compression")) {
    const std::string kind = text(r, *x, "zlib, lz4, lzma or none", false);
    if (kind == "zlib")
      o.vtu_compression = VtuCompressionChoice::zlib;
    else if (kind == "lz4")
      o.vtu_compression = VtuCompressionChoice::lz4;
    else if (kind == "lzma")
      o.vtu_compression = VtuCompressionChoice::lzma;
    else if (kind == "none")
      o.vtu_compression = VtuCompressionChoice::none;
    else
      r.fail(*x, "expected zlib, lz4, lzma or none, got " + shown(kind));
  }
  return o;
}

/// Reads the whole file, at most kMaxFileBytes of it; InputError naming the
/// path if it cannot.
std::string slurp(const std::filesystem::path& file) {
  const std::string name = file.string();
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(file, ec);
  if (status.type() == std::filesystem::file_type::not_found)
    throw InputError(name + ": case file not found");
  if (ec) throw InputError(name + ": cannot read the case file: " + ec.message());
  // A FIFO or a device would block or never end; a directory cannot be read.
  if (status.type() != std::filesystem::file_type::regular)
    throw InputError(name + ": expected a case file, got " + kind_of(status));
  const std::string too_large = name + ": expected a case file of at most " +
                                std::to_string(kMaxFileBytes) + " bytes (16 MiB), got more";
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  if (!ec && size > kMaxFileBytes) throw InputError(too_large);
  errno = 0;
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    // A refused permission or an I/O error is a system error (exit 1), a
    // path problem the user's input error (throw_file_error decides).
    if (errno != 0) throw_file_error("open the case file", file, errno);
    throw InputError(name + ": cannot open the case file for reading");
  }
  // Read by blocks up to the limit: the file may grow after its size was read.
  std::string content;
  std::vector<char> block(1 << 16);
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    content.append(block.data(), static_cast<std::size_t>(in.gcount()));
    if (content.size() > kMaxFileBytes) throw InputError(too_large);
  }
  if (in.bad()) throw InputError(name + ": error while reading the case file");
  return content;
}

/// The `contact` list: rigid planes with unique names.
std::vector<ContactPlane> contact_planes(const Reader& r, const Field& x,
                                         const LoadProgram& main_program) {
  std::vector<ContactPlane> out;
  std::set<std::string> names;
  const auto items = list(r, x, "a list of rigid planes {name, set, plane, friction, ...}");
  for (std::size_t i = 0; i < items.size(); ++i) {
    out.push_back(contact(r, items[i], i, main_program));
    if (!names.insert(out.back().name).second) {
      r.fail(items[i].path + ".name", items[i].line,
             "expected a unique plane name, got '" + out.back().name + "' twice");
    }
  }
  return out;
}

/// The `probes` list. Each probe's `set` defaults to the first contact
/// plane's (`contacts`); the probe marked point_p: true names `probe_p`.
/// `cycles: {program: <ref>}`: which program defines the cycles
/// (docs/case-file.md, `cycles`).
CycleProgramRef cycle_program_ref(const Reader& r, const Field& f, const Case& c) {
  const Map m(r, f, {"program"});
  const Field pf = m.required(
      "program", "load_program, contact.<name>.motion, boundary_conditions[<i>] or loads[<i>]");
  const std::string ref = text(r, pf, "a program reference", false);
  CycleProgramRef out;
  out.text = ref;
  if (ref == "load_program") return out;
  const std::string expected =
      "load_program, contact.<name>.motion (a named contact), boundary_conditions[<i>] or "
      "loads[<i>] (an index into that list)";
  const auto indexed = [&](const std::string& list_key, std::size_t n) {
    const std::string head = list_key + "[";
    if (ref.size() <= head.size() + 1 || ref.compare(0, head.size(), head) != 0 ||
        ref.back() != ']')
      return -1;
    const std::string digits = ref.substr(head.size(), ref.size() - head.size() - 1);
    if (digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
    const int i = std::stoi(digits);
    if (static_cast<std::size_t>(i) >= n) {
      r.fail(pf, "expected " + expected + ", got '" + printable(ref) + "': the case has " +
                     std::to_string(n) + " " + list_key);
    }
    return i;
  };
  if (const int i = indexed("boundary_conditions", c.dirichlet.size()); i >= 0) {
    out.kind = CycleProgramRef::Kind::boundary_condition;
    out.index = i;
  } else if (const int j = indexed("loads", c.loads.size()); j >= 0) {
    out.kind = CycleProgramRef::Kind::load;
    out.index = j;
  } else if (ref.size() > 15 && ref.compare(0, 8, "contact.") == 0 &&
             ref.compare(ref.size() - 7, 7, ".motion") == 0) {
    const std::string name = ref.substr(8, ref.size() - 15);
    for (std::size_t k = 0; k < c.contacts.size(); ++k)
      if (c.contacts[k].name == name) out.index = static_cast<int>(k);
    if (out.index < 0)
      r.fail(pf, "expected " + expected + ", got '" + printable(ref) + "': no contact is named '" +
                     printable(name) + "'");
    out.kind = CycleProgramRef::Kind::contact_motion;
  } else {
    r.fail(pf, "expected " + expected + ", got '" + printable(ref) + "'");
  }
  return out;
}

std::vector<Probe> probes(const Reader& r, const Field& x,
                          const std::vector<ContactPlane>& contacts, std::string& probe_p) {
  std::vector<Probe> out;
  // Probe names become file names: unique also where file names ignore
  // case (the default file systems of macOS and Windows).
  std::map<std::string, std::string> names;  // lower case -> as written
  std::optional<Field> marked;
  for (const auto& item : list(r, x, "a list of probes {name, point, set, point_p}")) {
    const Map pm(r, item, {"name", "point", "set", "point_p"});
    Probe p;
    const Field name = pm.required("name", "a non-empty name");
    p.name = safe_name(r, name, "a probe name");
    std::string folded = p.name;
    std::transform(folded.begin(), folded.end(), folded.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (const auto [at, inserted] = names.emplace(folded, p.name); !inserted) {
      r.fail(name,
             "expected a unique probe name (probe names become file names, compared "
             "ignoring case), got '" +
                 p.name + "' after '" + at->second + "'");
    }
    p.point =
        vec3(r, pm.required("point", "a point [x, y, z] (the nearest node of the set is followed)"),
             kCoordinate);
    if (const auto s = pm.get("set")) {
      p.set = safe_name(r, *s, "a node set name");
      r.remember(s->path, s->line);
    } else if (!contacts.empty()) {
      p.set = contacts.front().set;
      r.remember(item.path + ".set", item.line);
    } else {
      r.fail(item.path + ".set", item.line,
             "missing required key (there is no contact plane to take the set from); expected a "
             "node set name");
    }
    if (const auto pp = pm.get("point_p"); pp && boolean(r, *pp)) {
      if (marked) {
        r.fail(*pp,
               "expected at most one probe with point_p: true, got a second one (the first is on "
               "line " +
                   std::to_string(marked->line) + ")");
      }
      marked = *pp;
      probe_p = p.name;
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace

Case read_case(const std::filesystem::path& file, std::vector<CaseOverride> overrides) {
  Reader r(file.string());
  const std::string content = slurp(file);
  check_encoding(r, content);
  std::vector<std::string> shared;
  YAML::Node document = parse_document(r, content, shared);

  const Field root{document, "", line_of(document, 1)};
  if (!root.node.IsMap()) {
    r.fail("(top level)", root.line, "expected a map of case keys, got " + found(root.node));
  }
  // The command line's values go into the tree, which is then read exactly
  // like a file that held them.
  for (CaseOverride& o : overrides) apply_override(document, o, shared, r.file());
  r.set_overrides(overrides);
  const Map m(r, root,
              {"title", "mesh", "material", "load_program", "boundary_conditions", "loads",
               "contact", "probes", "solver", "output", "cycles", "wear"});

  const std::filesystem::path abs = std::filesystem::absolute(file).lexically_normal();
  const std::filesystem::path folder = abs.parent_path();

  Case c;
  c.source = abs;
  if (const auto x = m.get("title")) c.title = text(r, *x, "a string", true);
  c.mesh = mesh_source(r, m.required("mesh", "a map with one of the keys file, cylinder, block"),
                       folder);
  c.material = material(r, m.required("material", "a map {young, poisson}"));
  c.program =
      program(r, m.required("load_program", "a non-empty list of segments {to, increments}"));

  if (const auto x = m.get("boundary_conditions")) {
    for (const auto& item : list(r, *x, "a list of {set, displacement, program}")) {
      c.dirichlet.push_back(dirichlet(r, item, c.program));
    }
  }
  if (const auto x = m.get("loads")) {
    for (const auto& item : list(r, *x, "a list of {set, force_per_node, program}")) {
      c.loads.push_back(nodal_load(r, item, c.program));
    }
  }
  if (const auto x = m.get("contact")) c.contacts = contact_planes(r, *x, c.program);
  if (const auto x = m.get("probes")) c.probes = probes(r, *x, c.contacts, c.probe_p);
  if (const auto x = m.get("cycles")) c.cycles = cycle_program_ref(r, *x, c);
  if (const auto x = m.get("solver")) c.solver = solver(r, *x);
  if (const auto x = m.get("wear")) c.wear = wear(r, *x, c);
  c.output = output(r, m.get("output"), folder, abs.stem());
  c.key_lines = r.key_lines();
  c.overrides = std::move(overrides);
  return c;
}

}  // namespace bipo
