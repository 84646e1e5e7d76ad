// output.cycle_every thins the maps of a long fretting run to some cycles
// without changing anything else: a 5-cycle gross-slip case run with
// cycle_every 1 and 3 must write maps for exactly cycles 0, 1, 3 and 5 (the
// last) in the second run, those maps byte-identical to the first run's, and
// the same history.csv and cycles.csv (docs/case-file.md, `output`).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Press in 2 increments, then 5 cycles of the plane's motion +d -> -d -> 0.
const std::string kCase = R"(title: cycle_every
mesh: {cylinder: {radius: 10, height: 10, core: 2, ring: 1, layers: 1}}
material: {young: 210000, poisson: 0.3}
load_program: [{to: 1, increments: 2}, {to: 1, increments: 20}]
boundary_conditions:
  - {set: top, displacement: {x: 0, y: 0, z: -0.0001}}
contact:
  - name: base
    set: bottom
    plane: {point: [0, 0, 0], normal: [0, 0, 1]}
    friction: {mu: 0.3}
    motion:
      displacement: [0.001, 0, 0]
      program:
        - {to: 0, increments: 2}
        - repeat: 5
          segments: [{to: 1, increments: 1}, {to: -1, increments: 2}, {to: 0, increments: 1}]
cycles: {program: contact.base.motion}
output: {vtk: false}
)";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A CSV file's text without its `seconds` column (the wall time of each step).
std::string without_seconds(const std::string& text) {
  std::istringstream in(text);
  std::string line, result;
  std::size_t drop = std::string::npos;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream cells_in(line);
    for (std::string cell; std::getline(cells_in, cell, ',');) cells.push_back(cell);
    if (drop == std::string::npos)
      for (std::size_t j = 0; j < cells.size(); ++j)
        if (cells[j] == "seconds") drop = j;
    for (std::size_t j = 0; j < cells.size(); ++j)
      if (j != drop) result += cells[j] + ',';
    result += '\n';
  }
  return result;
}

fs::path run(const fs::path& dir, int cycle_every) {
  const fs::path out = dir / ("every_" + std::to_string(cycle_every));
  const std::string command = std::string("'") + BIPO_EXE + "' run -q -o '" + out.string() + "' '" +
                              (dir / "case.yaml").string() +
                              "' --set output.cycle_every=" + std::to_string(cycle_every);
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return out;
}

/// The rows of maps/index.csv after its header, split into cells.
std::vector<std::vector<std::string>> index_rows(const fs::path& out) {
  std::istringstream in(slurp(out / "maps" / "index.csv"));
  std::string line;
  std::getline(in, line);
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream cells_in(line);
    for (std::string cell; std::getline(cells_in, cell, ',');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace

TEST(CycleEvery, KeepsTheMapsOfTheChosenCyclesAndChangesNothingElse) {
  // The process id: builds of several checkouts may run this test at once.
  const fs::path dir =
      fs::temp_directory_path() / ("bipo_cycle_every_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "case.yaml") << kCase;
  const fs::path all = run(dir, 1), thinned = run(dir, 3);
  const std::string history = without_seconds(slurp(all / "history.csv"));
  EXPECT_GT(history.size(), 1000u);
  EXPECT_EQ(history, without_seconds(slurp(thinned / "history.csv")));
  EXPECT_EQ(slurp(all / "cycles.csv"), slurp(thinned / "cycles.csv"));
  std::set<std::string> cycles_all, cycles_thinned;
  for (const auto& row : index_rows(all)) cycles_all.insert(row.at(3));
  EXPECT_EQ(cycles_all, (std::set<std::string>{"0", "1", "2", "3", "4", "5"}));
  std::set<std::string> files_thinned;
  for (const auto& row : index_rows(thinned)) {
    cycles_thinned.insert(row.at(3));
    files_thinned.insert(row.at(5));
    EXPECT_EQ(slurp(all / "maps" / row.at(5)), slurp(thinned / "maps" / row.at(5))) << row.at(5);
  }
  EXPECT_EQ(cycles_thinned, (std::set<std::string>{"0", "1", "3", "5"}));
  // Only the listed maps are in the folder.
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(thinned / "maps"))
    if (entry.path().filename() != "index.csv") files.insert(entry.path().filename().string());
  EXPECT_EQ(files, files_thinned);
  fs::remove_all(dir);
}
