// The automatic choice of the contact path; see contact_path.hpp.
#include "solver/contact_path.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace bipo {

double dense_contact_path_bytes(int m) {
  const double n = 3.0 * m;
  return dense_path_matrices * n * n * static_cast<double>(sizeof(double));
}

namespace {

double machine_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0.0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return 1024.0 * kib;
  return static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) *
         static_cast<double>(sysconf(_SC_PAGE_SIZE));
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The control group's memory limit, or a negative value: v2 (the line
/// "0::PATH" of /proc/self/cgroup), then v1 (the "memory" controller's
/// line). In a container the group's own files may sit at the mount's root.
double cgroup_memory_available() {
  std::ifstream cgroups("/proc/self/cgroup");
  std::string line;
  while (std::getline(cgroups, line)) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::filesystem::path group = line.substr(second + 1);
    const bool v2 = controllers.empty();
    if (!v2 && controllers.find("memory") == std::string::npos) continue;
    const std::filesystem::path mount = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    const char* limit_file = v2 ? "memory.max" : "memory.limit_in_bytes";
    const char* usage_file = v2 ? "memory.current" : "memory.usage_in_bytes";
    for (const auto& folder : {mount / group.relative_path(), mount}) {
      std::error_code error;
      if (!std::filesystem::exists(folder / limit_file, error)) continue;
      const double left =
          cgroup_available_bytes(file_text(folder / limit_file), file_text(folder / usage_file),
                                 file_text(folder / "memory.stat"));
      if (left >= 0.0) return left;
      break;
    }
  }
  return -1.0;
}

}  // namespace

double cgroup_available_bytes(const std::string& limit, const std::string& usage,
                              const std::string& stat) {
  const auto number = [](const std::string& text) {
    double value = -1.0;
    std::istringstream in(text);
    return in >> value ? value : -1.0;
  };
  const double limit_bytes = number(limit), usage_bytes = number(usage);
  // No limit: "max" (v2), or v1's 2^63 rounded down to a page.
  if (limit_bytes < 0.0 || limit_bytes >= 0x1p62 || usage_bytes < 0.0) return -1.0;
  double inactive_file = 0.0;
  std::istringstream lines(stat);
  std::string key;
  double value = 0.0;
  while (lines >> key >> value)
    if (key == "inactive_file" || key == "total_inactive_file") inactive_file = value;
  return std::max(0.0, limit_bytes - std::max(0.0, usage_bytes - inactive_file));
}

double available_memory_bytes() {
  const double machine = machine_available_bytes(), group = cgroup_memory_available();
  return group >= 0.0 ? std::min(machine, group) : machine;
}

std::string memory_text(double bytes) {
  char text[32];
  const double mib = bytes / (1024.0 * 1024.0);
  if (mib < 1024.0)
    std::snprintf(text, sizeof text, "%.0f MiB", mib);
  else
    std::snprintf(text, sizeof text, "%.1f GiB", mib / 1024.0);
  return text;
}

double stiffness_run_bytes(double factor_bytes, int unknowns) {
  return factor_bytes + stiffness_run_bytes_per_unknown * unknowns;
}

static_assert(dense_path_memory_share == 0.5, "the reason's text says half");
static_assert(dense_path_total_share == 0.9, "the reason's text says 90 %");

ContactPathChoice choose_contact_path(ContactSolverChoice asked, int m, double available_bytes,
                                      const std::function<double()>& stiffness_run) {
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
  if (dense > available_bytes || !stiffness_run) return {true, "auto: sparse: " + figures};
  // Past half: what the factor leaves decides (docs/performance.md, "The
  // automatic choice of the contact path").
  const double stiffness = stiffness_run();
  if (stiffness < 0.0) return {true, "auto: sparse: " + figures};
  const std::string total =
      "the dense path's matrices for " + std::to_string(m) + " contact nodes (" +
      memory_text(dense) + ") and the stiffness with its factor (" + memory_text(stiffness) +
      ") against 90 % of the " + memory_text(available_bytes) + " of memory available";
  if (dense + stiffness <= dense_path_total_share * available_bytes)
    return {false, "auto: dense: " + total, stiffness};
  return {true, "auto: sparse: " + total, stiffness};
}

}  // namespace bipo
