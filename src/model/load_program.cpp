#include "model/load_program.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace bipo {

int LoadProgram::n_increments() const {
  int n = 0;
  for (const auto& s : segments) n += s.n_increments;
  return n;
}

double LoadProgram::factor(double k) const {
  const int n = n_increments();
  if (!(k >= 0.0) || k > static_cast<double>(n)) {
    throw std::out_of_range("LoadProgram::factor: increment " + std::to_string(k) +
                            " outside [0, " + std::to_string(n) + "]");
  }
  double start = 0.0;  // factor at the beginning of the segment
  int first = 0;       // increments before the segment
  for (const auto& s : segments) {
    const int last = first + s.n_increments;
    if (k <= static_cast<double>(last)) {
      const double t = (k - static_cast<double>(first)) / static_cast<double>(s.n_increments);
      return k == static_cast<double>(last) ? s.target : start + t * (s.target - start);
    }
    start = s.target;
    first = last;
  }
  return start;  // k == 0 with no segments
}

int LoadProgram::cycle(int k) const {
  if (k == 0) return 0;
  int last = 0;
  for (const auto& s : segments) {
    last += s.n_increments;
    if (k >= 1 && k <= last) return s.cycle;
  }
  throw std::out_of_range("LoadProgram::cycle: increment " + std::to_string(k) + " outside [0, " +
                          std::to_string(n_increments()) + "]");
}

int LoadProgram::n_cycles() const {
  int n = 0;
  for (const auto& s : segments) n = std::max(n, s.cycle);
  return n;
}

std::vector<int> LoadProgram::extremes() const {
  std::vector<int> kind(static_cast<std::size_t>(n_increments()) + 1, 0);
  // Direction of each segment: +1 rising, -1 falling, 0 hold.
  std::vector<int> direction;
  double before = 0.0;
  for (const auto& s : segments) {
    direction.push_back(s.target > before ? 1 : s.target < before ? -1 : 0);
    before = s.target;
  }
  int end = 0;
  for (std::size_t j = 0; j < segments.size(); ++j) {
    end += segments[j].n_increments;
    if (direction[j] == 0) continue;
    std::size_t next = j + 1;
    while (next < segments.size() && direction[next] == 0) ++next;
    if (next < segments.size() && direction[next] == -direction[j])
      kind[static_cast<std::size_t>(end)] = direction[j];
  }
  return kind;
}

}  // namespace bipo
