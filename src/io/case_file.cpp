// Reads a YAML case file into a bipo::Case. The only place that knows YAML.
// Every error is an InputError "<file>:<line>: <key.path>: <expected, found>";
// every key is documented in docs/case-file.md.
#include "io/case_file.hpp"

#include <yaml-cpp/yaml.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <numbers>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "io/errors.hpp"
#include "mesh/msh_reader.hpp"

namespace bipo {

// --- LoadProgram --------------------------------------------------------------

int LoadProgram::n_increments() const {
  int n = 0;
  for (const auto& s : segments) n += s.n_increments;
  return n;
}

double LoadProgram::factor(double k) const {
  const int n = n_increments();
  if (!(k >= 0.0) || k > static_cast<double>(n)) {
    throw std::out_of_range("LoadProgram::factor: increment " + std::to_string(k) +
                            " outside [0, " + std::to_string(n) + "]");
  }
  double start = 0.0;  // factor at the beginning of the segment
  int first = 0;       // increments before the segment
  for (const auto& s : segments) {
    const int last = first + s.n_increments;
    if (k <= static_cast<double>(last)) {
      const double t = (k - static_cast<double>(first)) / static_cast<double>(s.n_increments);
      return k == static_cast<double>(last) ? s.target : start + t * (s.target - start);
    }
    start = s.target;
    first = last;
  }
  return start;  // k == 0 with no segments
}

int LoadProgram::cycle(int k) const {
  if (k == 0) return 0;
  int last = 0;
  for (const auto& s : segments) {
    last += s.n_increments;
    if (k >= 1 && k <= last) return s.cycle;
  }
  throw std::out_of_range("LoadProgram::cycle: increment " + std::to_string(k) + " outside [0, " +
                          std::to_string(n_increments()) + "]");
}

int LoadProgram::n_cycles() const {
  int n = 0;
  for (const auto& s : segments) n = std::max(n, s.cycle);
  return n;
}

// --- the reader ------------------------------------------------------------------

namespace {

/// A YAML node with where it is: key path and line (1-based).
struct Field {
  YAML::Node node;
  std::string path;
  int line = 0;
};

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& path, int line, const std::string& what) const {
    throw InputError(file_ + ":" + std::to_string(line) + ": " + path + ": " + what);
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

 private:
  std::string file_;
};

int line_of(const YAML::Node& node, int fallback) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? fallback : mark.line + 1;
}

/// What the user wrote, for messages: the scalar itself or the kind of node.
std::string found(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing (null)";
    case YAML::NodeType::Scalar:
      return node.Scalar().empty() ? std::string("an empty string") : node.Scalar();
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
      const std::string path = child_path(key);
      if (std::find(allowed_.begin(), allowed_.end(), key) == allowed_.end()) {
        r.fail(path, key_line, "unknown key '" + key + "'; allowed keys: " + join(allowed_));
      }
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
  for (std::size_t i = 0; i < f.node.size(); ++i) {
    const YAML::Node item = f.node[i];
    items.push_back(Field{item, f.path + "[" + std::to_string(i) + "]", line_of(item, f.line)});
  }
  return items;
}

/// A finite number; `expected` describes the range for messages.
double number(const Reader& r, const Field& f, const std::string& expected) {
  if (f.node.IsScalar()) {
    double v = 0.0;
    try {
      v = f.node.as<double>();
    } catch (const YAML::Exception&) {
      r.fail(f, "expected " + expected + ", got " + found(f.node));
    }
    if (std::isfinite(v)) return v;
  }
  r.fail(f, "expected " + expected + ", got " + found(f.node));
}

/// A number satisfying `ok`.
double number(const Reader& r, const Field& f, const std::string& expected,
              const std::function<bool(double)>& ok) {
  const double v = number(r, f, expected);
  if (!ok(v)) r.fail(f, "expected " + expected + ", got " + found(f.node));
  return v;
}

int integer(const Reader& r, const Field& f, const std::string& expected, int min) {
  if (f.node.IsScalar()) {
    long long v = 0;
    bool ok = true;
    try {
      v = f.node.as<long long>();
    } catch (const YAML::Exception&) {
      ok = false;
    }
    if (ok && v >= min && v <= 1'000'000'000) return static_cast<int>(v);
  }
  r.fail(f, "expected " + expected + ", got " + found(f.node));
}

std::string text(const Reader& r, const Field& f, const std::string& expected, bool allow_empty) {
  if (!f.node.IsScalar() || (!allow_empty && f.node.Scalar().empty())) {
    r.fail(f, "expected " + expected + ", got " + found(f.node));
  }
  return f.node.Scalar();
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

Eigen::Vector3d vec3(const Reader& r, const Field& f) {
  const std::string expected = "a list of 3 numbers [x, y, z]";
  if (!f.node.IsSequence() || f.node.size() != 3) {
    std::string got = found(f.node);
    if (f.node.IsSequence()) got = "a list of " + std::to_string(f.node.size()) + " items";
    r.fail(f, "expected " + expected + ", got " + got);
  }
  Eigen::Vector3d v;
  const auto items = list(r, f, expected);
  for (int i = 0; i < 3; ++i) v[i] = number(r, items[static_cast<std::size_t>(i)], "a number");
  return v;
}

// --- sections ---------------------------------------------------------------------

/// Bound on a program's total increments (and so on its number of segments).
constexpr long long kMaxIncrements = 10'000'000;

const char* const kProgramItem =
    "a segment {to: <factor>, increments: <n>} or a repeat block {repeat: <n>, segments: [...]}";

LoadSegment segment(const Reader& r, const Field& f, int cycle) {
  const Map m(r, f, {"to", "increments"}, kProgramItem);
  LoadSegment s;
  s.target = number(r, m.required("to", "the factor reached at the end of the segment (a number)"),
                    "a number (the factor at the end of the segment)");
  s.n_increments = integer(r, m.required("increments", "an integer >= 1"), "an integer >= 1", 1);
  s.cycle = cycle;
  return s;
}

LoadProgram program(const Reader& r, const Field& f) {
  const std::string expected = "a non-empty list of " + std::string(kProgramItem);
  const auto items = list(r, f, expected);
  if (items.empty()) r.fail(f, "expected " + expected + ", got an empty list");
  LoadProgram p;
  int cycles = 0;       // cycles numbered so far (repeat blocks continue the numbering)
  long long total = 0;  // increments so far
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
      const int n = integer(r, m.required("repeat", "the number of repetitions (an integer >= 1)"),
                            "an integer >= 1", 1);
      const Field segs_field =
          m.required("segments", "a non-empty list of segments {to, increments}");
      const auto segs = list(r, segs_field, "a non-empty list of segments {to, increments}");
      if (segs.empty()) {
        r.fail(segs_field,
               "expected a non-empty list of segments {to, increments}, got an empty list");
      }
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
      for (int k = 1; k <= n; ++k) {
        for (auto s : block) {
          s.cycle = cycles + k;
          p.segments.push_back(s);
        }
      }
      cycles += n;
    } else {
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

MeshSource mesh_source(const Reader& r, const Field& f, const std::filesystem::path& folder) {
  const Map m(r, f, {"file", "cylinder"});
  if (m.has("file") == m.has("cylinder")) {
    r.fail(f, std::string("expected exactly one of the keys file, cylinder, got ") +
                  (m.has("file") ? "both" : "neither"));
  }
  MeshSource src;
  if (const auto file = m.get("file")) {
    const std::filesystem::path p = text(r, *file, "a path to a Gmsh .msh file", false);
    const std::filesystem::path abs = (p.is_absolute() ? p : folder / p).lexically_normal();
    if (const std::string problem = mesh_path_problem(abs); !problem.empty()) {
      r.fail(*file, "expected an existing mesh file (relative to the case file's folder), got " +
                        p.string() + " (" + abs.string() + ": " + problem + ")");
    }
    src.file = abs;
  }
  if (const auto cyl = m.get("cylinder")) {
    const Map c(
        r, *cyl,
        {"radius", "height", "core", "ring", "layers", "rim_grading", "bottom_grading", "sector"});
    CylinderParams cp;
    const auto positive = [](double v) { return v > 0.0; };
    if (const auto x = c.get("radius")) cp.radius = number(r, *x, "a number > 0", positive);
    if (const auto x = c.get("height")) cp.height = number(r, *x, "a number > 0", positive);
    if (const auto x = c.get("core")) cp.core = integer(r, *x, "an integer >= 1", 1);
    if (const auto x = c.get("ring")) cp.ring = integer(r, *x, "an integer >= 1", 1);
    if (const auto x = c.get("layers")) cp.layers = integer(r, *x, "an integer >= 1", 1);
    const auto at_least_one = [](double v) { return v >= 1.0; };
    if (const auto x = c.get("rim_grading"))
      cp.rim_grading = number(r, *x, "a number >= 1", at_least_one);
    if (const auto x = c.get("bottom_grading"))
      cp.bottom_grading = number(r, *x, "a number >= 1", at_least_one);
    if (const auto x = c.get("sector")) {
      const std::string sector = text(r, *x, "full or quarter", false);
      if (sector == "quarter")
        cp.sector = CylinderParams::Sector::quarter;
      else if (sector != "full")
        r.fail(*x, "expected full or quarter, got " + sector);
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
  mat.young = number(r, m.required("young", "Young's modulus E, a number > 0"), "a number > 0",
                     [](double v) { return v > 0.0; });
  mat.poisson = number(r, m.required("poisson", "Poisson's ratio, a number in (-1, 0.5)"),
                       "a number in (-1, 0.5)", [](double v) { return v > -1.0 && v < 0.5; });
  return mat;
}

DirichletCondition dirichlet(const Reader& r, const Field& f, const LoadProgram& main) {
  const Map m(r, f, {"set", "displacement", "program"});
  DirichletCondition bc;
  bc.set =
      text(r, m.required("set", "the name of a node set of the mesh"), "a node set name", false);
  const Field disp = m.required("displacement", "a map with any of the keys x, y, z");
  const Map d(r, disp, {"x", "y", "z"});
  const char* const names[3] = {"x", "y", "z"};
  bool any = false;
  for (std::size_t i = 0; i < 3; ++i) {
    if (const auto v = d.get(names[i])) {
      bc.value[i] = number(r, *v, "a number (displacement at factor 1)");
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
  load.set =
      text(r, m.required("set", "the name of a node set of the mesh"), "a node set name", false);
  load.force_per_node = vec3(r, m.required("force_per_node", "a list of 3 numbers [fx, fy, fz]"));
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
  const std::string nonneg = "a number >= 0";
  const auto ok = [](double v) { return v >= 0.0; };
  FrictionParams fp;
  std::optional<Field> p1_field, p2_field;
  if (ortho) {
    fp.mu1 = number(r, m.required("mu1", "a friction coefficient >= 0"), nonneg, ok);
    fp.mu2 = number(r, m.required("mu2", "a friction coefficient >= 0"), nonneg, ok);
    p1_field = m.get("p1");
    p2_field = m.get("p2");
  } else {
    fp.mu1 = fp.mu2 = number(r, m.required("mu", "a friction coefficient >= 0"), nonneg, ok);
    p1_field = p2_field = m.get("p");
  }
  fp.p1 = p1_field ? number(r, *p1_field, nonneg, ok) : fp.mu1;
  fp.p2 = p2_field ? number(r, *p2_field, nonneg, ok) : fp.mu2;

  const bool frictionless = fp.mu1 == 0.0 && fp.mu2 == 0.0;
  if (!frictionless && (fp.mu1 == 0.0 || fp.mu2 == 0.0)) {
    const Field& zero = m.required(fp.mu1 == 0.0 ? "mu1" : "mu2", "");
    r.fail(zero, "expected mu1 and mu2 both > 0 (or both 0: frictionless), got mu1 = " +
                     fmt(fp.mu1) + ", mu2 = " + fmt(fp.mu2));
  }
  if (frictionless) {
    if (fp.p1 != 0.0)
      r.fail(*p1_field,
             "expected 0 or no value (the contact is frictionless), got " + found(p1_field->node));
    if (fp.p2 != 0.0)
      r.fail(*p2_field,
             "expected 0 or no value (the contact is frictionless), got " + found(p2_field->node));
  } else {
    if (fp.p1 == 0.0)
      r.fail(*p1_field,
             "expected a number > 0 (the contact has friction), got " + found(p1_field->node));
    if (fp.p2 == 0.0)
      r.fail(*p2_field,
             "expected a number > 0 (the contact has friction), got " + found(p2_field->node));
  }
  return fp;
}

/// t1 for angle 0: the projection of global x onto the plane, or of global y
/// when n is parallel to x.
Eigen::Vector3d reference_direction(const Eigen::Vector3d& n) {
  Eigen::Vector3d e = Eigen::Vector3d::UnitX() - n.x() * n;
  if (e.norm() < 1e-6) e = Eigen::Vector3d::UnitY() - n.y() * n;
  return e.normalized();
}

Eigen::Vector3d direction(const Reader& r, const std::optional<Field>& f,
                          const Eigen::Vector3d& n) {
  const Eigen::Vector3d e = reference_direction(n);
  if (!f) return e;
  const Map m(r, *f, {"angle", "vector"}, "a map {angle: <degrees>} or {vector: [x, y, z]}");
  if (m.has("angle") == m.has("vector")) {
    r.fail(*f, std::string("expected exactly one of the keys angle, vector, got ") +
                   (m.has("angle") ? "both" : "neither"));
  }
  if (const auto a = m.get("angle")) {
    const double deg = number(r, *a, "an angle in degrees");
    const double rad = deg * std::numbers::pi / 180.0;
    return (std::cos(rad) * e + std::sin(rad) * n.cross(e)).normalized();
  }
  const Field vf = *m.get("vector");
  const Eigen::Vector3d v = vec3(r, vf);
  if (v.norm() == 0.0) r.fail(vf, "expected a non-zero vector, got [0, 0, 0]");
  const Eigen::Vector3d t = v - v.dot(n) * n;
  if (t.norm() <= 1e-8 * v.norm()) {
    r.fail(vf, "expected a vector not parallel to the plane's normal, got [" + fmt(v.x()) + ", " +
                   fmt(v.y()) + ", " + fmt(v.z()) + "] (its projection onto the plane is zero)");
  }
  return t.normalized();
}

ContactPlane contact(const Reader& r, const Field& f, std::size_t index, const LoadProgram& main) {
  const Map m(r, f, {"name", "set", "plane", "friction", "direction", "rho", "motion"});
  ContactPlane c;
  c.name = "plane_" + std::to_string(index);
  if (const auto x = m.get("name")) c.name = text(r, *x, "a non-empty name", false);
  c.set = text(r, m.required("set", "the name of the contact node set of the mesh"),
               "a node set name", false);

  const Map plane(r, m.required("plane", "a map {point: [x, y, z], normal: [x, y, z]}"),
                  {"point", "normal"});
  c.point = vec3(r, plane.required("point", "a point of the plane [x, y, z]"));
  const Field nf = plane.required("normal", "the plane's normal [x, y, z], pointing into the body");
  const Eigen::Vector3d n = vec3(r, nf);
  if (n.norm() == 0.0) r.fail(nf, "expected a non-zero normal, got [0, 0, 0]");
  c.normal = n.normalized();

  c.friction =
      friction(r, m.required("friction", "a map {mu: <coefficient>} or {mu1, mu2, p1, p2}"));
  c.direction = direction(r, m.get("direction"), c.normal);

  if (const auto x = m.get("rho")) {
    if (!(x->node.IsScalar() && x->node.Scalar() == "auto")) {
      c.rho = number(r, *x, "auto or a number > 0", [](double v) { return v > 0.0; });
    }
  }
  if (const auto x = m.get("motion")) {
    const Map mo(r, *x, {"displacement", "program"});
    c.motion = vec3(
        r, mo.required("displacement", "the plane's rigid displacement at factor 1 [dx, dy, dz]"));
    c.motion_program = own_program(r, mo, main);
  }
  return c;
}

SolverSettings solver(const Reader& r, const Field& f) {
  const Map m(r, f,
              {"force_tolerance", "law_tolerance", "max_iterations", "max_cuts", "blas_threads"});
  SolverSettings s;
  const auto positive = [](double v) { return v > 0.0; };
  if (const auto x = m.get("force_tolerance"))
    s.force_tolerance = number(r, *x, "a number > 0", positive);
  if (const auto x = m.get("law_tolerance"))
    s.law_tolerance = number(r, *x, "a number > 0", positive);
  if (const auto x = m.get("max_iterations"))
    s.max_iterations = integer(r, *x, "an integer >= 1", 1);
  if (const auto x = m.get("max_cuts")) s.max_cuts = integer(r, *x, "an integer >= 0", 0);
  if (const auto x = m.get("blas_threads")) {
    if (!(x->node.IsScalar() && x->node.Scalar() == "auto"))
      s.blas_threads = integer(r, *x, "auto or an integer >= 1", 1);
  }
  return s;
}

const std::vector<std::string> kOutputFields{"displacement", "stress", "von_mises", "sets",
                                             "contact"};

OutputSettings output(const Reader& r, const std::optional<Field>& f,
                      const std::filesystem::path& folder, const std::filesystem::path& stem) {
  OutputSettings o;
  o.directory = (std::filesystem::current_path() / "results" / stem).lexically_normal();
  if (!f) return o;
  const Map m(r, *f, {"directory", "fields", "every", "vtk"});
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
        r.fail(item, "expected one of " + join(kOutputFields) + ", got " + name);
      }
      if (std::find(o.fields.begin(), o.fields.end(), name) != o.fields.end()) {
        r.fail(item, "expected each field once, got " + name + " twice");
      }
      o.fields.push_back(name);
    }
  }
  if (const auto x = m.get("every")) o.every = integer(r, *x, "an integer >= 1", 1);
  if (const auto x = m.get("vtk")) o.vtk = boolean(r, *x);
  return o;
}

/// Reads the whole file; InputError naming the path if it cannot.
std::string slurp(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    throw InputError(file.string() + ": case file not found");
  }
  if (std::filesystem::is_directory(file, ec)) {
    throw InputError(file.string() + ": expected a case file, got a directory");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string() + ": cannot open the case file for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(file.string() + ": error while reading the case file");
  return ss.str();
}

}  // namespace

Case read_case(const std::filesystem::path& file) {
  const Reader r(file.string());
  const std::string content = slurp(file);

  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(content);
  } catch (const YAML::ParserException& e) {
    r.syntax_error(e.mark, e.msg);
  } catch (const YAML::Exception& e) {
    r.syntax_error(e.mark, e.msg);
  }
  if (docs.empty()) r.fail("(top level)", 1, "expected a map of case keys, got an empty file");
  if (docs.size() > 1) {
    r.fail("(top level)", line_of(docs[1], 1),
           "expected a single YAML document, got " + std::to_string(docs.size()));
  }

  const Field root{docs[0], "", line_of(docs[0], 1)};
  if (!root.node.IsMap()) {
    r.fail("(top level)", root.line, "expected a map of case keys, got " + found(root.node));
  }
  const Map m(r, root,
              {"title", "mesh", "material", "load_program", "boundary_conditions", "loads",
               "contact", "probes", "solver", "output"});

  const std::filesystem::path abs = std::filesystem::absolute(file).lexically_normal();
  const std::filesystem::path folder = abs.parent_path();

  Case c;
  c.source = abs;
  if (const auto x = m.get("title")) c.title = text(r, *x, "a string", true);
  c.mesh = mesh_source(r, m.required("mesh", "a map with one of the keys file, cylinder"), folder);
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
  if (const auto x = m.get("contact")) {
    std::set<std::string> names;
    const auto items = list(r, *x, "a list of rigid planes {name, set, plane, friction, ...}");
    for (std::size_t i = 0; i < items.size(); ++i) {
      c.contacts.push_back(contact(r, items[i], i, c.program));
      if (!names.insert(c.contacts.back().name).second) {
        r.fail(items[i].path + ".name", items[i].line,
               "expected a unique plane name, got '" + c.contacts.back().name + "' twice");
      }
    }
  }
  if (const auto x = m.get("probes")) {
    std::set<std::string> names;
    std::optional<Field> marked;
    for (const auto& item : list(r, *x, "a list of probes {name, point, set, point_p}")) {
      const Map pm(r, item, {"name", "point", "set", "point_p"});
      Probe p;
      const Field name = pm.required("name", "a non-empty name");
      p.name = text(r, name, "a non-empty name", false);
      if (!names.insert(p.name).second)
        r.fail(name, "expected a unique probe name, got '" + p.name + "' twice");
      p.point = vec3(
          r, pm.required("point", "a point [x, y, z] (the nearest node of the set is followed)"));
      if (const auto s = pm.get("set")) {
        p.set = text(r, *s, "a node set name", false);
      } else if (!c.contacts.empty()) {
        p.set = c.contacts.front().set;
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
        c.probe_p = p.name;
      }
      c.probes.push_back(p);
    }
  }
  if (const auto x = m.get("solver")) c.solver = solver(r, *x);
  c.output = output(r, m.get("output"), folder, abs.stem());
  return c;
}

}  // namespace bipo
