// Reads a CSV results file (history.csv, cycles.csv, maps/index.csv) as
// numeric columns by name, for the fretting verification tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace bipo_test {

/// A CSV file as columns by name (numbers; a text cell reads as NaN).
inline std::map<std::string, std::vector<double>> read_csv(const std::filesystem::path& file) {
  std::ifstream in(file);
  EXPECT_TRUE(in) << file;
  const auto split = [](const std::string& text) {
    std::vector<std::string> cells;
    std::stringstream stream(text);
    for (std::string cell; std::getline(stream, cell, ',');) cells.push_back(cell);
    return cells;
  };
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split(line);
  std::map<std::string, std::vector<double>> columns;
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = split(line);
    for (std::size_t j = 0; j < header.size() && j < cells.size(); ++j) {
      char* end = nullptr;
      const double value = std::strtod(cells[j].c_str(), &end);
      columns[header[j]].push_back(*end == '\0' ? value : std::nan(""));
    }
  }
  return columns;
}

}  // namespace bipo_test
