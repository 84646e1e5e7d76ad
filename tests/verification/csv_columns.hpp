// Reads a CSV results file (history.csv, cycles.csv, maps/index.csv) as
// text or numeric columns by name, for the fretting verification and
// regression tests.
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

/// A CSV file as text columns by name (a missing cell reads as "").
using CsvTable = std::map<std::string, std::vector<std::string>>;

inline CsvTable read_csv_text(const std::filesystem::path& file) {
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
  CsvTable columns;
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = split(line);
    for (std::size_t j = 0; j < header.size(); ++j)
      columns[header[j]].push_back(j < cells.size() ? cells[j] : "");
  }
  return columns;
}

/// A CSV file as numeric columns by name (a text cell reads as NaN).
inline std::map<std::string, std::vector<double>> read_csv(const std::filesystem::path& file) {
  std::map<std::string, std::vector<double>> columns;
  for (const auto& [name, cells] : read_csv_text(file)) {
    std::vector<double>& values = columns[name];
    for (const std::string& cell : cells) {
      char* end = nullptr;
      const double value = std::strtod(cell.c_str(), &end);
      values.push_back(*end == '\0' ? value : std::nan(""));
    }
  }
  return columns;
}

}  // namespace bipo_test
