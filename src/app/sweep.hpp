// Owns `bipo run CASE.yaml --sweep KEY=V1,V2,...` (docs/case-file.md, "The
// command line"): one case per value (the file, the --set values, then the
// swept one), all read and validated before any runs, run by run_cases (so
// that they share one set-up when the key leaves the body, supports and
// contact nodes alone), each into its own sub-folder of the sweep's folder,
// and the sweep's index.csv (docs/outputs.md, "Sweeps").
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "app/run.hpp"
#include "io/case_overrides.hpp"

namespace bipo {

/// The sub-folder of the value `value`, the `index`-th (0-based) of its
/// sweep: "NNN_<value>", the value's characters other than ASCII letters,
/// digits, '.', '+' and '-' as '_', at most 40 of them ("002_0.3").
[[nodiscard]] std::string sweep_folder_name(std::size_t index, const std::string& value);

/// Runs the sweep of `file` and writes its index.csv into the sweep's
/// folder (options.output_directory, or the case's output.directory); the
/// errors of reading a value's case go to `log` and nothing runs. Returns
/// the exit status of run_cases (or of reading). Throws InputError when the
/// key is in `output` (a sweep varies the analysis, not where it goes).
int run_sweep(const std::filesystem::path& file, const std::vector<CaseOverride>& overrides,
              const SweepValues& sweep, const RunOptions& options, std::ostream& log);

}  // namespace bipo
