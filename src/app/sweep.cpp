#include "app/sweep.hpp"

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include "app/exit_status.hpp"
#include "app/parallel_run.hpp"
#include "core/errors.hpp"
#include "core/text_encoding.hpp"
#include "io/case_file.hpp"
#include "io/vtk_output.hpp"

namespace bipo {

namespace fs = std::filesystem;

namespace {

/// The headline numbers of one value's results, as text copied from its
/// files (so that the index holds exactly what they hold).
struct Headline {
  std::string status = "no results";
  std::string setup_shared, steps_converged, dissipation_total;
  std::string normal_force_end;
  std::map<long, std::string> cycle_dissipation;  ///< cycle -> dissipation
};

/// The fields of one CSV line of bipo's outputs (no quoted commas in the
/// columns read here: the numbers and fixed names come first).
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, ',');) out.push_back(field);
  return out;
}

/// The rows of a CSV file as maps column -> text; empty if it cannot be read.
std::vector<std::map<std::string, std::string>> csv_rows(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line)) return {};
  const std::vector<std::string> header = fields(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> values = fields(line);
    std::map<std::string, std::string> row;
    for (std::size_t k = 0; k < header.size() && k < values.size(); ++k) row[header[k]] = values[k];
    rows.push_back(std::move(row));
  }
  return rows;
}

Headline headline_of(const fs::path& folder) {
  Headline h;
  std::ifstream summary_file(folder / "summary.json");
  if (!summary_file) return h;
  const nlohmann::json summary = nlohmann::json::parse(summary_file, nullptr, false);
  if (summary.is_discarded() || !summary.is_object()) {
    h.status = "unreadable summary";
    return h;
  }
  h.status = summary.value("status", "unknown");
  for (const auto& [key, text] : {std::pair{"setup_shared", &h.setup_shared},
                                  {"steps_converged", &h.steps_converged},
                                  {"dissipation_total", &h.dissipation_total}})
    if (summary.contains(key)) *text = summary[key].dump();
  const auto history = csv_rows(folder / "history.csv");
  if (!history.empty() && history.back().count("normal_force") != 0)
    h.normal_force_end = history.back().at("normal_force");
  for (const auto& row : csv_rows(folder / "cycles.csv")) {
    if (row.count("cycle") == 0 || row.count("dissipation") == 0) continue;
    h.cycle_dissipation[std::strtol(row.at("cycle").c_str(), nullptr, 10)] = row.at("dissipation");
  }
  return h;
}

/// index.csv: one row per value, the columns of docs/outputs.md ("Sweeps").
std::string index_text(const SweepValues& sweep, const std::vector<std::string>& folders) {
  std::vector<Headline> headlines;
  std::set<long> cycles;
  for (const std::string& folder : folders) {
    headlines.push_back(headline_of(folder));
    for (const auto& [cycle, d] : headlines.back().cycle_dissipation) cycles.insert(cycle);
  }
  std::string out =
      "key,value,folder,status,setup_shared,steps_converged,normal_force_end,dissipation_total";
  for (long cycle : cycles) out += ",dissipation_cycle_" + std::to_string(cycle);
  out += "\n";
  for (std::size_t i = 0; i < headlines.size(); ++i) {
    const Headline& h = headlines[i];
    out += csv_field(sweep.key) + "," + csv_field(sweep.values[i]) + "," +
           csv_field(fs::path(folders[i]).filename().string()) + "," + h.status + "," +
           h.setup_shared + "," + h.steps_converged + "," + h.normal_force_end + "," +
           h.dissipation_total;
    for (long cycle : cycles) {
      const auto at = h.cycle_dissipation.find(cycle);
      out += "," + (at == h.cycle_dissipation.end() ? std::string() : at->second);
    }
    out += "\n";
  }
  return out;
}

/// The case of each value, all read before any runs; nullopt (the errors
/// written to `log`, `status` set) if any cannot be read.
std::optional<std::vector<Case>> sweep_cases(const fs::path& file,
                                             const std::vector<CaseOverride>& overrides,
                                             const SweepValues& sweep, std::ostream& log,
                                             int& status) {
  std::vector<Case> cases;
  status = 0;
  std::string first_error;
  for (const std::string& value : sweep.values) {
    std::vector<CaseOverride> all = overrides;
    all.push_back(CaseOverride{"--sweep", sweep.key, value, ""});
    try {
      cases.push_back(read_case(file, all));
    } catch (...) {
      const ErrorReport report = report_error(std::current_exception());
      log << report.line << "\n";
      if (first_error.empty()) first_error = report.line;
      if (status != 2) status = report.exit_code;
    }
  }
  // Under mpirun, a file that one rank cannot read ends the job.
  agree_on_exit_code(status, first_error);
  if (status != 0) return std::nullopt;
  return cases;
}

}  // namespace

std::string sweep_folder_name(std::size_t index, const std::string& value) {
  char number[32];
  std::snprintf(number, sizeof number, "%03zu_", index);
  std::string name = number;
  for (std::size_t k = 0; k < value.size() && k < 40; ++k) {
    const char c = value[k];
    const bool kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '+' || c == '-';
    name += kept ? c : '_';
  }
  return name;
}

int run_sweep(const fs::path& file, const std::vector<CaseOverride>& overrides,
              const SweepValues& sweep, const RunOptions& options, std::ostream& log) {
  if (is_within_key(sweep.key, "output"))
    throw InputError("--sweep " + sweep.key +
                     ": expected a key of the analysis, not of output (each value's results go "
                     "to a sub-folder of the sweep's folder: --output or output.directory)");
  int status = 0;
  std::optional<std::vector<Case>> cases = sweep_cases(file, overrides, sweep, log, status);
  if (!cases) return status;
  const fs::path root = options.output_directory.value_or(cases->front().output.directory);
  std::vector<std::string> folders;
  for (std::size_t i = 0; i < cases->size(); ++i) {
    folders.push_back((root / sweep_folder_name(i, sweep.values[i])).string());
    (*cases)[i].output.directory = folders.back();
  }
  if (!options.quiet) {
    log << "sweep of " << sweep.key << " over " << sweep.values.size() << " values into "
        << root.string() << "/NNN_<value>, index in " << (root / "index.csv").string() << "\n";
    if (is_within_key(sweep.key, "mesh"))
      log << "the key changes the mesh: each value reads or generates its own mesh and sets up "
             "on its own (nothing is shared)\n";
  }
  RunOptions each = options;
  each.output_directory.reset();
  status = run_cases(*cases, each, log);
  write_on_output_rank(
      [&] { write_text_atomically(root / "index.csv", index_text(sweep, folders)); });
  if (!options.quiet) log << "sweep index: " << (root / "index.csv").string() << "\n";
  return status;
}

}  // namespace bipo
