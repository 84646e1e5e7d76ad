// Owns the description of an analysis as read from a YAML case file: the
// types below are what every other part of bipo consumes, and read_case() is
// the only place that knows YAML. Every key is documented in docs/case-file.md.
#pragma once

#include <Eigen/Core>
#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bipo {

/// One straight segment of a load program: the factor goes linearly from the
/// previous segment's target (0 at the start) to `target` in `n_increments`.
struct LoadSegment {
  double target = 0.0;
  int n_increments = 1;
  int cycle = 0;  ///< 0 outside a `repeat` block, k for its k-th repetition
};

/// A piecewise linear load program, starting from factor 0.
struct LoadProgram {
  std::vector<LoadSegment> segments;

  /// Total number of increments.
  [[nodiscard]] int n_increments() const;
  /// Factor at the end of increment k (k = 1..n_increments()); factor(0) = 0.
  /// Fractional k (cut increments) interpolates linearly within a segment.
  /// Throws std::out_of_range outside [0, n_increments()].
  [[nodiscard]] double factor(double k) const;
  /// Cycle of increment k (1-based): the `cycle` of the segment it belongs to;
  /// cycle(0) = 0. Throws std::out_of_range outside [0, n_increments()].
  [[nodiscard]] int cycle(int k) const;
  /// Number of cycles (largest segment cycle).
  [[nodiscard]] int n_cycles() const;
};

/// Parameters of the punch cylinder generator (O-grid, see src/mesh/generate.hpp).
struct CylinderParams {
  double radius = 10.0;
  double height = 10.0;
  int core = 8;    ///< elements along each side of the central square block
  int ring = 8;    ///< radial elements of each ring block
  int layers = 4;  ///< elements along the axis
  /// Grading toward the rim r = radius in the ring blocks: the radial fraction
  /// s in [0, 1] becomes 1 - (1 - s)^rim_grading (>= 1; 1 = uniform).
  double rim_grading = 1.0;
  /// Grading toward the bottom face z = 0: layer coordinate zeta in [0, 1]
  /// gives z = height zeta^bottom_grading (>= 1; 1 = uniform).
  double bottom_grading = 1.0;
  /// The whole cylinder, or its quarter x >= 0, y >= 0 (for models that use
  /// the mirror symmetries of a case; needs an even `core`).
  enum class Sector { full, quarter };
  Sector sector = Sector::full;
  bool operator==(const CylinderParams&) const = default;
};

/// Where the mesh comes from: a .msh file or the built-in generator.
struct MeshSource {
  /// Absolute (resolved against the case file's folder).
  std::optional<std::filesystem::path> file;
  std::optional<CylinderParams> cylinder;  ///< exactly one of file / cylinder is set
  bool operator==(const MeshSource&) const = default;
};

/// Linear isotropic elasticity (SPEC.md section 1).
struct Material {
  double young = 0.0;    ///< E > 0 [stress units, e.g. MPa]
  double poisson = 0.0;  ///< -1 < nu < 0.5
};

/// A displacement condition on a named node set: each component optional; the
/// imposed value at increment k is value * program.factor(k).
struct DirichletCondition {
  std::string set;
  std::array<std::optional<double>, 3> value;  ///< ux, uy, uz [length]
  std::optional<LoadProgram> program;          ///< default: the case's load program
};

/// A force applied to every node of a named set, scaled by a program.
struct NodalLoad {
  std::string set;
  Eigen::Vector3d force_per_node = Eigen::Vector3d::Zero();  ///< [force]
  std::optional<LoadProgram> program;
};

/// Friction law parameters, SPEC.md section 3 (mu = diag(mu1, mu2), p = diag(p1, p2)).
struct FrictionParams {
  double mu1 = 0.0, mu2 = 0.0, p1 = 0.0, p2 = 0.0;
};

/// A rigid plane in contact with a named node set (SPEC.md section 2).
struct ContactPlane {
  std::string name;
  std::string set;                                       ///< contact node set
  Eigen::Vector3d point = Eigen::Vector3d::Zero();       ///< p0
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();     ///< n, unit, into the body
  Eigen::Vector3d direction = Eigen::Vector3d::UnitX();  ///< t1 (already projected and normalized)
  FrictionParams friction;
  std::optional<double> rho;                         ///< override of the automatic rho
  Eigen::Vector3d motion = Eigen::Vector3d::Zero();  ///< w at factor 1 [length]
  std::optional<LoadProgram> motion_program;         ///< default: the case's load program
};

/// Tolerances and limits of the increment loop (SPEC.md section 3.3).
struct SolverSettings {
  double force_tolerance = 1e-10;   ///< equilibrium residual / reference force
  double law_tolerance = 1e-10;     ///< max_i G_i / (max r_n * max |du| ) scaled certificate
  int max_iterations = 10000;       ///< contact iterations per increment
  int max_cuts = 4;                 ///< bisections of a failing increment
  std::optional<int> blas_threads;  ///< BLAS/LAPACK threads; nullopt = auto (blas_threads.hpp)
};

/// A point of the contact face followed through the history (nearest node).
struct Probe {
  std::string name;
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  std::string set;  ///< the node set searched (default: the first contact plane's set)
};

/// What is written and where.
struct OutputSettings {
  /// Absolute. An explicit path is resolved against the case file's folder; the
  /// default is results/<case file stem> under the current working directory.
  std::filesystem::path directory;
  std::vector<std::string> fields{"displacement", "stress", "von_mises", "sets", "contact"};
  int every = 1;  ///< write VTK every N increments (the last one is always written)
  bool vtk = true;
};

/// A whole analysis.
struct Case {
  std::filesystem::path source;  ///< the case file (absolute)
  std::string title;
  MeshSource mesh;
  Material material;
  LoadProgram program;
  std::vector<DirichletCondition> dirichlet;
  std::vector<NodalLoad> loads;
  std::vector<ContactPlane> contacts;
  std::vector<Probe> probes;
  /// Name of the probe marked `point_p: true`, shown as the paper's point P
  /// (empty if none).
  std::string probe_p;
  SolverSettings solver;
  OutputSettings output;
  /// The 1-based line of each key whose value can only be checked against
  /// the mesh (the `set` of every condition, load, plane and probe, e.g.
  /// "contact[0].set"), so that those checks name the line although they run
  /// long after reading. Empty for a Case built in code.
  std::map<std::string, int> key_lines;
};

/// Reads and validates a case file. Throws InputError naming the file, the key
/// path and the line for unknown keys, wrong types, missing required keys and
/// out-of-range values; nothing is silently ignored. Whatever the bytes of the
/// file, it throws nothing but InputError for its content (the size limits of
/// docs/case-file.md keep memory and time bounded), and returns only names
/// that pass is_safe_file_name (io/safe_name.hpp) and strings that are UTF-8
/// without control characters other than tab and line breaks.
[[nodiscard]] Case read_case(const std::filesystem::path& file);

/// "<case file>:<line>: <key>: " (without the line when `key` is not in
/// c.key_lines): the start of a message about a value found wrong after
/// reading, e.g. a node set that the mesh does not have. `key` is a key path
/// as the reader writes it ("boundary_conditions[2].set").
[[nodiscard]] std::string located(const Case& c, const std::string& key);

}  // namespace bipo
