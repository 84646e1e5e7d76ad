// Owns what `bipo run` and `bipo check` do with a case: build or read the
// mesh, validate the case against it, schedule the cases (one after the
// other or at once, sharing set-ups), run each analysis and hand a snapshot
// of every converged step to its result writer (io/result_writer.hpp), and
// the progress lines.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "mesh/mesh.hpp"
#include "model/case.hpp"

namespace bipo {

/// The mesh of a case: read from its .msh file or generated.
[[nodiscard]] Mesh load_mesh(const Case& c);

struct RunOptions {
  std::optional<std::filesystem::path> output_directory;  ///< overrides the case's
  bool quiet = false;                                     ///< no progress lines
  int jobs = 1;                                           ///< cases run at once (threads); >= 1
  /// Within an increment, a progress line (its Newton steps so far, the
  /// residual) after a contact iteration that ends at least this many
  /// seconds after the case's last line; 0: after every one. >= 0.
  double progress_interval = 10.0;
};

/// Runs cases in this process (`bipo run` with one or several case files),
/// `options.jobs` of them at once on as many threads, in the order given, and
/// writes their results; progress lines (one per increment, prefixed with the
/// case file's name when cases run at once) go to `log`. A failed case keeps
/// the results of its converged increments, and its summary says "failed".
///
/// Consecutive cases with the same mesh source (file or generator
/// parameters) read or generate it once. Among them, the first to start sets
/// up (assembly, factorization, condensed operators) and the others whose
/// material, supports, contact nodes and planes' frames are the same share
/// that set-up, so a family of cases that differ in friction law, loads or
/// outputs is set up once, also when they run at once. With jobs > 1 the
/// BLAS runs on one thread (the process-wide setting cannot differ between
/// cases running at once; the environment's OPENBLAS_NUM_THREADS or
/// OMP_NUM_THREADS, if set, is left in effect), and so does each case's
/// OpenMP.
///
/// Errors of a case are written to `log` ("bipo: input error: ...",
/// "bipo: numerical failure: ...", prefixed with the case file when there are
/// several) and the other cases run. Returns the exit status: 0 if every case
/// completed, 2 if any had an input error, else 3 if any failed numerically,
/// else 1 if any had another error. Throws InputError before running anything
/// if an output folder is forced for several cases, if two cases would write
/// to the same folder, or if jobs < 1.
int run_cases(const std::vector<Case>& cases, const RunOptions& options, std::ostream& log);

/// The --jobs value: a positive integer, or "auto" for the number of
/// processors the machine reports (at least 1). Throws InputError otherwise.
[[nodiscard]] int parse_jobs(const std::string& text);

/// The value of --progress: seconds, a decimal number from 0 to 10^6; throws
/// InputError naming the option otherwise.
[[nodiscard]] double parse_progress_interval(const std::string& text);

/// Validates a case: reads it, builds the mesh and checks every set name and
/// condition against it, without solving. Prints a short description.
void check_case(const Case& c, std::ostream& log);

}  // namespace bipo
