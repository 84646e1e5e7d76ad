// Shared by the punch regression and check tests: runs a shipped punch case
// once through the bipo executable (VTK output off, results cached in the
// temporary folder under a key made of the executable's size and time stamp
// and the case text, guarded by a file lock so that parallel ctest processes
// share one run), and reads the CSV results back.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bipo_regression {

namespace fs = std::filesystem;

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A CSV file of numbers: columns by name.
struct Table {
  std::vector<std::string> names;
  std::map<std::string, std::vector<double>> columns;
  [[nodiscard]] std::size_t rows() const {
    return columns.empty() ? 0 : columns.begin()->second.size();
  }
  [[nodiscard]] const std::vector<double>& operator[](const std::string& name) const {
    const auto it = columns.find(name);
    if (it == columns.end()) throw std::runtime_error("no column " + name);
    return it->second;
  }
};

inline Table read_csv(const fs::path& path) {
  std::istringstream in(read_text(path));
  Table t;
  std::string line;
  std::getline(in, line);
  {
    std::istringstream header(line);
    std::string name;
    while (std::getline(header, name, ',')) t.names.push_back(name);
  }
  for (const auto& name : t.names) t.columns[name];
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream row(line);
    std::string cell;
    for (const auto& name : t.names) {
      if (!std::getline(row, cell, ',')) throw std::runtime_error("short row in " + path.string());
      t.columns[name].push_back(std::strtod(cell.c_str(), nullptr));
    }
  }
  return t;
}

inline fs::path source_dir() {
  return fs::path(BIPO_SOURCE_DIR);
}
inline fs::path bipo_exe() {
  return fs::path(BIPO_EXE);
}

/// The case text with the mesh path made absolute and the output replaced by
/// `directory` without VTK files (the CSV results are what the tests read).
inline std::string case_copy_text(const std::string& case_name, const fs::path& directory) {
  std::string text = read_text(source_dir() / "cases" / (case_name + ".yaml"));
  const std::string mesh_key = "file: ../meshes/";
  if (const auto at = text.find(mesh_key); at != std::string::npos)
    text.replace(at, mesh_key.size(), "file: " + (source_dir() / "meshes").string() + "/");
  const auto output = text.find("\noutput:");
  if (output == std::string::npos) throw std::runtime_error(case_name + ": no output block");
  text.erase(output);
  text += "\noutput:\n  directory: " + directory.string() + "\n  vtk: false\n";
  return text;
}

/// `bipo <arguments...>` with each argument quoted, output to `log`; returns
/// the exit status. (Built by appending: GCC 12 warns wrongly on chains of
/// std::string operator+ with literals.)
inline int run_bipo(const std::vector<std::string>& arguments, const std::string& log) {
  std::string command;
  command.append("\"").append(bipo_exe().string()).append("\"");
  for (const auto& a : arguments) command.append(" \"").append(a).append("\"");
  command.append(" > \"").append(log).append("\" 2>&1");
  return std::system(command.c_str());
}

/// Writes `text` as `case_file` in `directory` and runs it, output to
/// directory/log.txt; returns bipo's exit status.
inline int run_text_into(const std::string& text, const fs::path& directory,
                         const std::string& case_file) {
  fs::create_directories(directory);
  std::ofstream(directory / case_file) << text;
  return run_bipo({"run", (directory / case_file).string(), "-q"},
                  (directory / "log.txt").string());
}

/// Runs the case into `directory` (a fresh run), returns bipo's exit status.
inline int run_into(const std::string& case_name, const fs::path& directory) {
  return run_text_into(case_copy_text(case_name, directory / "results"), directory,
                       case_name + ".yaml");
}

/// Results folder of a shipped case, run once per build of bipo and shared by
/// every test process through a cache in the temporary folder.
inline fs::path cached_results(const std::string& case_name) {
  const auto exe_size = fs::file_size(bipo_exe());
  const auto exe_time = fs::last_write_time(bipo_exe()).time_since_epoch().count();
  const std::size_t key =
      std::hash<std::string>{}(std::to_string(exe_size) + ":" + std::to_string(exe_time) + ":" +
                               case_copy_text(case_name, "x") + ":" + bipo_exe().string());
  std::ostringstream name;
  name << "bipo_regression_" << case_name << "_" << std::hex << key;
  const fs::path dir = fs::temp_directory_path() / name.str();
  const fs::path lock_path = fs::temp_directory_path() / (name.str() + ".lock");
  const int lock = ::open(lock_path.c_str(), O_CREAT | O_RDWR, 0644);
  if (lock < 0) throw std::runtime_error("cannot open " + lock_path.string());
  ::flock(lock, LOCK_EX);
  const fs::path summary = dir / "results" / "summary.json";
  bool done = fs::exists(summary) &&
              read_text(summary).find("\"status\": \"completed\"") != std::string::npos;
  int status = 0;
  if (!done) {
    fs::remove_all(dir);
    status = run_into(case_name, dir);
  }
  ::flock(lock, LOCK_UN);
  ::close(lock);
  if (status != 0)
    throw std::runtime_error("bipo failed on " + case_name + " (see " + (dir / "log.txt").string() +
                             ")");
  return dir / "results";
}

/// Maps of the contact face at the segment ends: step -> table.
inline std::map<int, Table> segment_maps(const fs::path& results) {
  std::map<int, Table> maps;
  for (const auto& entry : fs::directory_iterator(results / "maps")) {
    const std::string file = entry.path().filename().string();
    if (file.rfind("step_", 0) != 0) continue;
    maps[std::stoi(file.substr(5, 6))] = read_csv(entry.path());
  }
  return maps;
}

/// Index j of the node of `map` at (x, y), to 1e-9; -1 if none.
inline int node_at(const Table& map, double x, double y) {
  const auto& xs = map["x"];
  const auto& ys = map["y"];
  for (std::size_t j = 0; j < xs.size(); ++j)
    if (std::abs(xs[j] - x) < 1e-9 && std::abs(ys[j] - y) < 1e-9) return static_cast<int>(j);
  return -1;
}

inline double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

}  // namespace bipo_regression
