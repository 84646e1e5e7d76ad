// Owns the description of an analysis: the case (mesh source, material,
// conditions, loads, contact planes, probes, solver and output settings) as
// the case reader fills it and the solver and the writers read it. Plain
// values; no file format. Every field is a key of docs/case-file.md.
#pragma once

#include <Eigen/Core>
#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/block.hpp"
#include "model/cylinder.hpp"
#include "model/load_program.hpp"

namespace bipo {

/// Where the mesh comes from: a .msh file or the built-in generator.
struct MeshSource {
  /// Absolute (resolved against the case file's folder).
  std::optional<std::filesystem::path> file;
  std::optional<CylinderParams> cylinder;  ///< exactly one of file / cylinder / block is set
  std::optional<BlockParams> block;
  bool operator==(const MeshSource&) const = default;
};

/// Linear isotropic elasticity (docs/physics.md section 1).
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

/// Friction law parameters, docs/physics.md section 3 (mu = diag(mu1, mu2), p = diag(p1, p2)).
struct FrictionParams {
  double mu1 = 0.0, mu2 = 0.0, p1 = 0.0, p2 = 0.0;
};

/// A change of a plane's friction law along the load program
/// (contact[i].friction_program): from increment `from_increment` (1-based,
/// as the load program counts them; a cut increment's parts included) on,
/// the law is `friction`.
struct FrictionChange {
  int from_increment = 2;
  FrictionParams friction;
};

/// The rigid surface of a contact: a plane, or an indenter whose outside
/// is the body (docs/physics.md sections 2 and 2.1).
enum class ContactShape { plane, sphere, cylinder };

/// A rigid plane or indenter in contact with a named node set (docs/physics.md section 2).
struct ContactPlane {
  std::string name;
  std::string set;  ///< contact node set
  ContactShape shape = ContactShape::plane;
  Eigen::Vector3d point = Eigen::Vector3d::Zero();    ///< p0; a sphere's centre; a point of an axis
  Eigen::Vector3d normal = Eigen::Vector3d::UnitZ();  ///< n, unit, into the body (a plane)
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();    ///< unit axis (a cylinder)
  double radius = 0.0;                                ///< R > 0 (a sphere or cylinder) [length]
  /// t1: a plane's, already projected and normalized; an indenter's given
  /// unit vector, projected at each node, unless direction_angle is set.
  Eigen::Vector3d direction = Eigen::Vector3d::UnitX();
  /// An indenter's friction direction as an angle from each node's
  /// reference direction [degrees] (0 without a `direction` key).
  std::optional<double> direction_angle;
  FrictionParams friction;  ///< the law from increment 1 on (until a friction_program change)
  std::vector<FrictionChange> friction_program;      ///< strictly ascending from_increment >= 2
  std::optional<double> rho;                         ///< override of the automatic rho
  Eigen::Vector3d motion = Eigen::Vector3d::Zero();  ///< w at factor 1 [length]
  std::optional<LoadProgram> motion_program;         ///< default: the case's load program

  /// The law of increment k (1-based): that of the last friction_program
  /// change at or before k, else `friction`.
  [[nodiscard]] const FrictionParams& friction_at(int increment) const {
    const FrictionParams* law = &friction;
    for (const FrictionChange& change : friction_program)
      if (change.from_increment <= increment) law = &change.friction;
    return *law;
  }
};

/// Wear of a contact surface (docs/case-file.md, `wear`): the law, its
/// coefficient, and how the worn depth enters the gaps.
enum class WearLawChoice { archard, energy };
struct WearSettings {
  WearLawChoice law = WearLawChoice::archard;
  double coefficient = 0.0;             ///< k [1 / pressure]
  int cycle_jump = 1;                   ///< K: each simulated cycle's wear is applied K times
  std::optional<long long> max_cycles;  ///< stop once this many cycles are represented
  std::optional<double> max_depth;      ///< stop once a node's depth reaches it [length]
  std::string contact;                  ///< the contact plane that wears; empty: all
};

/// How the contact problem's Delassus operator is held (docs/case-file.md,
/// `solver.contact_solver`): dense W and S, or W applied through the sparse
/// factorization; automatic picks by the number of contact nodes.
enum class ContactSolverChoice { automatic, dense, sparse };

/// How the sparse path preconditions its Newton steps (docs/case-file.md,
/// `solver.sparse_preconditioner`): a second factorization of the stiffness
/// with the nodes' springs, or K_ff's own factor only; automatic picks by
/// the memory the second factorization would take.
enum class SparsePreconditionerChoice { automatic, own_factor, stiffness_factor };

/// Which library solves with K_ff (docs/case-file.md, `solver.linear`):
/// CHOLMOD in one process, or PETSc (one or several MPI ranks); automatic is
/// CHOLMOD in a serial run and PETSc under mpirun with more than one rank.
enum class LinearSolverChoice { automatic, cholmod, petsc };

/// PETSc's method for K_ff (docs/case-file.md, `solver.petsc`). Only these
/// vetted configurations are offered: the case file never passes PETSc
/// options through (some of them run programs or write files).
enum class PetscMethod {
  direct,    ///< MUMPS Cholesky factorization (distributed)
  cg_gamg,   ///< conjugate gradients, PETSc's algebraic multigrid with rigid-body modes
  cg_hypre,  ///< conjugate gradients, hypre's BoomerAMG
};
struct PetscSolverSettings {
  PetscMethod method = PetscMethod::direct;
  double relative_tolerance = 1e-12;  ///< Krylov methods: |b - A x| / |b|
  int max_iterations = 10000;         ///< Krylov methods: per solve
  /// relative_tolerance was given (case file or --set); else the analysis
  /// chooses it from the friction (effective_petsc_settings, solver/analysis.hpp).
  bool relative_tolerance_given = false;
};

/// Tolerances and limits of the increment loop (docs/physics.md section 3.3).
struct SolverSettings {
  double force_tolerance = 1e-10;   ///< equilibrium residual / reference force
  double law_tolerance = 1e-10;     ///< max_i G_i / (max r_n * max |du| ) scaled certificate
  int max_iterations = 10000;       ///< contact iterations per increment
  int max_cuts = 4;                 ///< bisections of a failing increment
  std::optional<int> blas_threads;  ///< BLAS/LAPACK threads; nullopt = auto (blas_threads.hpp)
  ContactSolverChoice contact_solver = ContactSolverChoice::automatic;
  SparsePreconditionerChoice sparse_preconditioner = SparsePreconditionerChoice::automatic;
  LinearSolverChoice linear = LinearSolverChoice::automatic;
  PetscSolverSettings petsc;
};

/// A point of the contact face followed through the history (nearest node).
struct Probe {
  std::string name;
  Eigen::Vector3d point = Eigen::Vector3d::Zero();
  std::string set;  ///< the node set searched (default: the first contact plane's set)
};

/// What is written and where.
/// The compressor of the VTK files (docs/case-file.md, `output.vtu_compression`;
/// docs/outputs.md, "VTU compression").
enum class VtuCompressionChoice { zlib, lz4, lzma, none };

struct OutputSettings {
  /// Absolute. A path in the file is resolved against the case file's folder,
  /// one given on the command line (--set) against the working directory;
  /// the default is results/<case file stem> under the working directory.
  std::filesystem::path directory;
  std::vector<std::string> fields{"displacement", "stress", "von_mises", "sets", "contact"};
  int every = 1;  ///< write VTK every N increments (the last one is always written)
  bool vtk = true;
  VtuCompressionChoice vtu_compression = VtuCompressionChoice::zlib;
  /// Cycles whose maps (and VTK files at segment ends and extremes) are
  /// written: 0, 1, the last, and the multiples of N (docs/case-file.md).
  int cycle_every = 1;
};

/// A value given on the command line in place of the case file's (`bipo
/// run --set KEY=VALUE`, or one value of `--sweep`; docs/case-file.md, "The
/// command line"): put into the case's YAML tree and validated with it.
struct CaseOverride {
  std::string option;  ///< "--set" or "--sweep", for messages
  std::string key;     ///< key path, e.g. "contact[0].friction.mu1"
  std::string value;   ///< as given: a YAML scalar or flow collection
  /// The key path of what it put into the case: `key`, or the map or list
  /// item it had to add on the way (set when applied). An error at or
  /// inside it names the option rather than a line of the file.
  std::string scope;
  [[nodiscard]] std::string text() const { return key + "=" + value; }
  /// "<option> <key>=<value>" for messages, a long value cut short ("...").
  [[nodiscard]] std::string named() const;
};

/// Whether key path `key` is `scope` or inside it ("contact[0].set" is
/// inside "contact[0]" and "contact", not inside "cont").
[[nodiscard]] bool is_within_key(const std::string& key, const std::string& scope);

/// The program whose cycles and turning points define the run's cycles,
/// the maps at the extremes and the fretting loop (docs/case-file.md,
/// `cycles`): the case's load program or the program of one of its items.
struct CycleProgramRef {
  enum class Kind { load_program, contact_motion, boundary_condition, load };
  Kind kind = Kind::load_program;
  int index = -1;                     ///< into contacts, dirichlet or loads
  std::string text = "load_program";  ///< as written in the case file
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
  CycleProgramRef cycles;  ///< `cycles.program`
  /// Name of the probe marked `point_p: true`, shown as the paper's point P
  /// (empty if none).
  std::string probe_p;
  SolverSettings solver;
  OutputSettings output;
  std::optional<WearSettings> wear;
  /// The 1-based line of each key whose value can only be checked against
  /// the mesh (the `set` of every condition, load, plane and probe, e.g.
  /// "contact[0].set"), so that those checks name the line although they run
  /// long after reading. Empty for a Case built in code.
  std::map<std::string, int> key_lines;
  /// The command-line values applied over the file, in order (summary.json
  /// lists them).
  std::vector<CaseOverride> overrides;
};

/// The program of contact surface `plane`'s motion: its own
/// (`contact[].motion.program`), else the case's load program.
[[nodiscard]] inline const LoadProgram& motion_program_of(const Case& c,
                                                          const ContactPlane& plane) {
  return plane.motion_program ? *plane.motion_program : c.program;
}

/// The program named by c.cycles (the case's load program when the named
/// item has no own program).
[[nodiscard]] const LoadProgram& cycle_program(const Case& c);

/// "<case file>:<line>: <key>: " (without the line when `key` is not in
/// c.key_lines; "<case file>: --set <key=value>: <key>: " when `key` is
/// within what a command-line value put there): the start of a message about a value found wrong
/// after reading, e.g. a node set that the mesh does not have. `key` is a key path as the reader
/// writes it ("boundary_conditions[2].set").
[[nodiscard]] std::string located(const Case& c, const std::string& key);

}  // namespace bipo
