// Owns what `bipo run` and `bipo check` do with a case: build or read the
// mesh, validate the case against it, run the analysis, and write every
// result file (VTK series, history and probe CSVs, per-cycle CSV, summary
// JSON; see docs/outputs.md). Output files are complete or absent.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <vector>

#include "io/case_file.hpp"
#include "mesh/mesh.hpp"

namespace bipo {

/// The mesh of a case: read from its .msh file or generated.
[[nodiscard]] Mesh load_mesh(const Case& c);

struct RunOptions {
  std::optional<std::filesystem::path> output_directory;  ///< overrides the case's
  bool quiet = false;                                     ///< no progress lines
};

/// Runs cases one after the other in this process (`bipo run` with one or
/// several case files) and writes their results; progress lines (one per
/// increment) go to `log`. A failed case keeps the results of its converged
/// increments, and its summary says "failed".
///
/// A case whose mesh source (file or generator parameters) is that of the
/// case before reuses its mesh; if its material, supports, contact nodes and
/// planes' frames are the same too, it also shares that case's set-up
/// (assembly, factorization, condensed operators), so a family of cases that
/// differ in friction law, loads or outputs is set up once.
///
/// Errors of a case are written to `log` ("bipo: input error: ...",
/// "bipo: numerical failure: ...", prefixed with the case file when there are
/// several) and the next case runs. Returns the exit status: 0 if every case
/// completed, 2 if any had an input error, else 3 if any failed numerically.
/// Throws InputError if an output folder is forced for several cases.
int run_cases(const std::vector<Case>& cases, const RunOptions& options, std::ostream& log);

/// Validates a case: reads it, builds the mesh and checks every set name and
/// condition against it, without solving. Prints a short description.
void check_case(const Case& c, std::ostream& log);

}  // namespace bipo
