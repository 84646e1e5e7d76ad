// The automatic choice of the contact path; see contact_path.hpp.
#include "solver/contact_path.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace bipo {

double dense_contact_path_bytes(int m) {
  const double n = 3.0 * m;
  return dense_path_matrices * n * n * static_cast<double>(sizeof(double));
}

double available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0.0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return 1024.0 * kib;
  return static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) *
         static_cast<double>(sysconf(_SC_PAGE_SIZE));
}

namespace {

/// "12.3 GiB", or "45 MiB" below a GiB.
std::string memory_text(double bytes) {
  char text[32];
  const double mib = bytes / (1024.0 * 1024.0);
  if (mib < 1024.0)
    std::snprintf(text, sizeof text, "%.0f MiB", mib);
  else
    std::snprintf(text, sizeof text, "%.1f GiB", mib / 1024.0);
  return text;
}

}  // namespace

static_assert(dense_path_memory_share == 0.5, "the reason's text says half");

ContactPathChoice choose_contact_path(ContactSolverChoice asked, int m, double available_bytes) {
  switch (asked) {
    case ContactSolverChoice::dense:
      return {false, "solver.contact_solver: dense"};
    case ContactSolverChoice::sparse:
      return {m > 0, "solver.contact_solver: sparse"};
    case ContactSolverChoice::automatic:
      break;
  }
  if (m == 0) return {false, "auto: no contact nodes"};
  const double dense = dense_contact_path_bytes(m);
  const double budget = dense_path_memory_share * available_bytes;
  const std::string figures = "the dense path's matrices for " + std::to_string(m) +
                              " contact nodes (" + memory_text(dense) + ") against half of the " +
                              memory_text(available_bytes) + " of memory available";
  if (dense <= budget) return {false, "auto: dense: " + figures};
  return {true, "auto: sparse: " + figures};
}

}  // namespace bipo
