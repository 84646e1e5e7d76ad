// The values of `bipo run --set` and `--sweep`: their syntax and checks, and
// their place in the case's YAML tree (see case_overrides.hpp).
#include "io/case_overrides.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>

#include "core/errors.hpp"
#include "core/text_encoding.hpp"

namespace bipo {

namespace {

/// The longest key path: far above the deepest key of a case.
constexpr std::size_t kMaxKeyBytes = 256;
/// Scalars, lists and maps in one value; nesting of one value.
constexpr long long kMaxValueNodes = 100'000;
constexpr int kMaxValueNesting = 64;

/// One step of a key path: a map key or a list index.
struct Step {
  std::string key;
  std::size_t index = 0;
  bool is_index = false;
};

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// The steps of `key` ("contact[0].friction.mu1"), nullopt if it is not a
/// key path: a name, then names after '.' and indices in '[...]'.
std::optional<std::vector<Step>> key_steps(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeyBytes) return std::nullopt;
  std::vector<Step> steps;
  std::size_t i = 0;
  while (i < key.size()) {
    if (key[i] == '[') {
      const std::size_t close = key.find(']', i);
      const std::string_view digits =
          key.substr(i + 1, close == std::string_view::npos ? 0 : close - i - 1);
      if (steps.empty() || digits.empty() || digits.size() > 9) return std::nullopt;
      Step s;
      s.is_index = true;
      for (char c : digits) {
        if (c < '0' || c > '9') return std::nullopt;
        s.index = 10 * s.index + static_cast<std::size_t>(c - '0');
      }
      steps.push_back(s);
      i = close + 1;
      continue;
    }
    if (!steps.empty()) {
      if (key[i] != '.') return std::nullopt;
      ++i;
    }
    const std::size_t begin = i;
    while (i < key.size() && is_name_char(key[i])) ++i;
    if (i == begin) return std::nullopt;
    steps.push_back(Step{std::string(key.substr(begin, i - begin)), 0, false});
  }
  return steps;
}

std::string after(const std::string& path, const Step& s) {
  if (s.is_index) return path + "[" + std::to_string(s.index) + "]";
  return path.empty() ? s.key : path + "." + s.key;
}

/// "<option> <argument>: " for messages, the argument made printable and
/// cut short.
std::string argument_prefix(const std::string& option, std::string_view argument) {
  std::string shown = printable(argument.substr(0, 100));
  if (argument.size() > 100) shown += "...";
  return option + " " + shown + ": ";
}

/// Why `value` cannot be a command-line value ("" if it can): too long, not
/// UTF-8, or holding a control character (a value is one line).
std::string text_problem(std::string_view value) {
  if (value.size() > kMaxOverrideBytes)
    return "expected a value of at most " + std::to_string(kMaxOverrideBytes) + " bytes, got " +
           std::to_string(value.size());
  for (std::size_t i = 0; i < value.size();) {
    const auto [code, length] = decode_utf8(value, i);
    char what[64];
    if (length == 0) {
      std::snprintf(what, sizeof what, "byte 0x%02X (not UTF-8)",
                    static_cast<unsigned>(static_cast<unsigned char>(value[i])));
    } else if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) {
      std::snprintf(what, sizeof what, "the control character U+%04X", static_cast<unsigned>(code));
    } else {
      i += length;
      continue;
    }
    return "expected one line of UTF-8 text without control characters, got " + std::string(what) +
           " at byte " + std::to_string(i + 1);
  }
  return "";
}

/// Follows the parser's events through a value without building it: refuses
/// tags, anchors and aliases (a value stands for itself) and bounds its size
/// and nesting before yaml-cpp builds a tree (its builder recurses once per
/// level).
class ValueScan : public YAML::EventHandler {
 public:
  explicit ValueScan(std::string prefix) : prefix_(std::move(prefix)) {}
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override { node("?", anchor); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { refuse("a YAML alias (*name)"); }
  void OnScalar(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                const std::string&) override {
    node(tag, anchor);
  }
  void OnSequenceStart(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(tag, anchor);
  }
  void OnSequenceEnd() override { --depth_; }
  void OnMapStart(const YAML::Mark&, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(tag, anchor);
  }
  void OnMapEnd() override { --depth_; }

 private:
  [[noreturn]] void refuse(const std::string& what) const {
    throw InputError(prefix_ +
                     "expected a plain YAML value (a scalar, [list] or {map} without "
                     "tags, anchors or aliases), got " +
                     what);
  }
  void node(const std::string& tag, YAML::anchor_t anchor) {
    // yaml-cpp gives "?" for a plain node without a tag, "!" for a quoted one.
    if (tag != "?" && tag != "!" && !tag.empty()) refuse("the YAML tag " + printable(tag));
    if (anchor != YAML::NullAnchor) refuse("a YAML anchor (&name)");
    if (++nodes_ > kMaxValueNodes)
      refuse("more than " + std::to_string(kMaxValueNodes) + " scalars, lists and maps");
  }
  void open(const std::string& tag, YAML::anchor_t anchor) {
    node(tag, anchor);
    if (++depth_ > kMaxValueNesting)
      refuse("lists and maps nested more than " + std::to_string(kMaxValueNesting) + " deep");
  }

  std::string prefix_;
  long long nodes_ = 0;
  int depth_ = 0;
};

/// `value` as a YAML node, after the checks of ValueScan; InputError starting
/// with `prefix` otherwise.
YAML::Node value_node(const std::string& value, const std::string& prefix) {
  if (const std::string problem = text_problem(value); !problem.empty())
    throw InputError(prefix + problem);
  const auto syntax = [&](const YAML::Exception& e) {
    throw InputError(prefix + "YAML syntax error at column " + std::to_string(e.mark.column + 1) +
                     " of the value: " + e.msg);
  };
  std::istringstream in(value);
  YAML::Parser parser(in);
  ValueScan scan(prefix);
  try {
    (void)parser.HandleNextDocument(scan);
    // At most one more call: a stray token (',', ']', '}') starts a document
    // again and again in yaml-cpp 0.7 without being consumed.
    if (parser.HandleNextDocument(scan))
      throw InputError(prefix +
                       "expected one YAML value, got more (a '---' or a stray ',', ']' "
                       "or '}'; quote a value that holds them)");
  } catch (const YAML::Exception& e) {
    syntax(e);
  }
  try {
    return YAML::Load(value);
  } catch (const YAML::Exception& e) {
    syntax(e);
  }
  return {};
}

/// The keys whose relative paths are relative to where they are written.
const std::vector<std::vector<std::string>> kPathKeys{{"mesh", "file"}, {"output", "directory"}};

/// A relative path given on the command line made absolute against the
/// working directory (docs/case-file.md, "Relative paths").
YAML::Node absolute_path(const YAML::Node& scalar) {
  if (!scalar.IsScalar() || scalar.Scalar().empty()) return scalar;
  const std::filesystem::path p = scalar.Scalar();
  if (p.is_absolute()) return scalar;
  return YAML::Node((std::filesystem::current_path() / p).lexically_normal().string());
}

/// `value`, given for the key path `steps`, with the paths it holds for
/// mesh.file and output.directory made absolute.
YAML::Node with_absolute_paths(YAML::Node value, const std::vector<Step>& steps) {
  for (const auto& key : kPathKeys) {
    if (steps.size() > key.size()) continue;
    bool prefix = true;
    for (std::size_t i = 0; i < steps.size(); ++i)
      prefix = prefix && !steps[i].is_index && steps[i].key == key[i];
    if (!prefix) continue;
    if (steps.size() == key.size()) {
      value = absolute_path(value);
      continue;
    }
    // Down the value's maps to the parent of the path key.
    YAML::Node parent(value);
    for (std::size_t i = steps.size(); parent.IsMap() && i + 1 < key.size(); ++i) {
      const YAML::Node& const_parent = parent;
      parent.reset(const_parent[key[i]]);
    }
    const YAML::Node& const_parent = parent;
    if (parent.IsMap() && const_parent[key.back()].IsDefined())
      parent[key.back()] = absolute_path(const_parent[key.back()]);
  }
  return value;
}

std::string kind(const YAML::Node& node) {
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  if (node.IsScalar()) return "the value '" + printable(node.Scalar().substr(0, 60)) + "'";
  return "nothing (null)";
}

}  // namespace

namespace {

/// The key path before the '=' of `argument`; InputError starting with
/// `prefix` if there is no '=' or no key path there.
std::string key_of(std::string_view argument, const std::string& prefix, const char* example) {
  const std::size_t equals = argument.find('=');
  if (equals == std::string_view::npos) throw InputError(prefix + "expected " + example);
  const std::string_view key = argument.substr(0, equals);
  if (!key_steps(key))
    throw InputError(prefix +
                     "expected a key path of names and list indices before '=', such as "
                     "contact[0].friction.mu1 or output.directory, got '" +
                     printable(key.substr(0, kMaxKeyBytes)) + "'");
  return std::string(key);
}

}  // namespace

CaseOverride parse_override(std::string_view argument, const std::string& option) {
  const std::string prefix = argument_prefix(option, argument);
  const std::string key = key_of(argument, prefix, "KEY=VALUE, e.g. contact[0].friction.mu1=0.25");
  CaseOverride o{option, key, std::string(argument.substr(key.size() + 1)), ""};
  (void)value_node(o.value, prefix + o.key + ": ");
  return o;
}

SweepValues parse_sweep(std::string_view argument) {
  const std::string prefix = argument_prefix("--sweep", argument);
  SweepValues sweep{key_of(argument, prefix, "KEY=V1,V2,..., e.g. contact[0].friction.mu=0.1,0.2"),
                    {}};
  const std::string_view values = argument.substr(sweep.key.size() + 1);
  // Commas inside brackets, braces or quotes belong to a value.
  int depth = 0;
  char quote = 0;
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= values.size(); ++i) {
    if (i < values.size()) {
      const char c = values[i];
      if (quote != 0) {
        if (c == '\\' && quote == '"' && i + 1 < values.size())
          ++i;
        else if (c == quote)
          quote = 0;
        continue;
      }
      if (c == '"' || c == '\'') quote = c;
      if (c == '[' || c == '{') ++depth;
      if ((c == ']' || c == '}') && depth > 0) --depth;
      if (c != ',' || depth > 0) continue;
    }
    std::string_view v = values.substr(begin, i - begin);
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
    if (v.empty())
      throw InputError(prefix + sweep.key +
                       ": expected values separated by commas, got an empty "
                       "value (value " +
                       std::to_string(sweep.values.size() + 1) + ")");
    if (sweep.values.size() == kMaxSweepValues)
      throw InputError(prefix + sweep.key + ": expected at most " +
                       std::to_string(kMaxSweepValues) + " values, got more");
    (void)value_node(std::string(v), prefix + sweep.key + ": value " +
                                         std::to_string(sweep.values.size() + 1) + ": ");
    sweep.values.emplace_back(v);
    begin = i + 1;
  }
  return sweep;
}

namespace {

/// Refuses (InputError starting with `prefix`) a step `s` that `current`,
/// the node at `path`, cannot take.
void check_step(const YAML::Node& current, const Step& s, const std::string& path,
                const std::string& here, const std::string& prefix) {
  if (s.is_index && !current.IsSequence())
    throw InputError(prefix + here + ": expected a list at " + path + " to take an index, " +
                     "the case file has " + kind(current));
  if (s.is_index && s.index > current.size())
    throw InputError(prefix + here + ": expected an index in [0, " +
                     std::to_string(current.size()) + "] (" + path + " has " +
                     std::to_string(current.size()) + (current.size() == 1 ? " item" : " items") +
                     "; the index " + std::to_string(current.size()) + " appends one), got " +
                     std::to_string(s.index));
  if (!s.is_index && !current.IsMap())
    throw InputError(prefix + here + ": expected a map at " + path + " to hold the key '" + s.key +
                     "', the case file has " + kind(current));
}

/// The child of `current` at step `s` (undefined or null if absent).
// Node handles are only ever copied or reset here: yaml-cpp's operator=
// between handles would overwrite the node itself.
YAML::Node child(const YAML::Node& current, const Step& s) {
  if (s.is_index) return s.index < current.size() ? current[s.index] : YAML::Node();
  return current[s.key];
}

/// Puts `node` at step `s` of `current` (replacing or appending).
void put(YAML::Node& current, const Step& s, const YAML::Node& node) {
  if (s.is_index && s.index == current.size())
    current.push_back(node);
  else if (s.is_index)
    current[s.index] = node;
  else
    current[s.key] = node;
}

}  // namespace

void apply_override(YAML::Node& root, CaseOverride& o, const std::vector<std::string>& shared,
                    const std::string& file) {
  const std::string prefix = file + ": " + o.named() + ": ";
  for (const std::string& path : shared) {
    if (is_within_key(o.key, path))
      throw InputError(prefix + o.key + ": the case file gives " + path +
                       " through a YAML anchor or alias, so other keys share its value; a "
                       "command-line value cannot change one of them alone: write the value out "
                       "in the case file");
  }
  const std::vector<Step> steps = *key_steps(o.key);
  const YAML::Node value = with_absolute_paths(value_node(o.value, prefix + o.key + ": "), steps);
  YAML::Node current(root);
  std::string path;
  o.scope.clear();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const bool last = i + 1 == steps.size();
    const std::string here = after(path, s);
    check_step(current, s, path, here, prefix);
    const YAML::Node before = child(current, s);
    const bool absent = !before.IsDefined() || before.IsNull();
    if (absent && o.scope.empty()) o.scope = here;  // the override adds what is here
    if (last)
      put(current, s, value);
    else if (absent)
      put(current, s,
          YAML::Node(steps[i + 1].is_index ? YAML::NodeType::Sequence : YAML::NodeType::Map));
    current.reset(child(current, s));
    path = here;
  }
  if (o.scope.empty()) o.scope = o.key;
}

}  // namespace bipo
