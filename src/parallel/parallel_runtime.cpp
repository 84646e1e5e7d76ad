// bipo's side of the parallel plugin (parallel_runtime.hpp): the plugin is
// opened with dlopen from the installed layout next to the program, else
// from the build tree it was built in; its table is checked against this
// build's API version before any call.
#include "parallel/parallel_runtime.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <mutex>
#include <vector>

#include "core/errors.hpp"
#include "parallel/plugin_api.hpp"

#ifndef BIPO_PETSC_PLUGIN_BUILD_PATH
#error "BIPO_PETSC_PLUGIN_BUILD_PATH (empty without PETSc) comes from CMakeLists.txt"
#endif
#ifndef BIPO_PETSC_PLUGIN_INSTALL_PATH
#error "BIPO_PETSC_PLUGIN_INSTALL_PATH (relative to the program's folder) comes from CMakeLists.txt"
#endif

namespace bipo {

namespace {

std::mutex runtime_mutex;
const ParallelPluginApi* plugin = nullptr;  // set once the runtime is started
bool started = false;
bool finished = false;  // MPI cannot start twice in a process

std::filesystem::path program_folder() {
  std::error_code error;
  const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::path() : program.parent_path();
}

/// The candidates, in order: the installed plugin beside the program
/// (PREFIX/bin/bipo -> PREFIX/lib.../bipo/), then the build tree's.
std::vector<std::string> plugin_candidates() {
  std::vector<std::string> candidates;
  if (std::string(BIPO_PETSC_PLUGIN_BUILD_PATH).empty()) return candidates;
  const std::filesystem::path folder = program_folder();
  if (!folder.empty())
    candidates.push_back((folder / BIPO_PETSC_PLUGIN_INSTALL_PATH).lexically_normal().string());
  candidates.emplace_back(BIPO_PETSC_PLUGIN_BUILD_PATH);
  return candidates;
}

const ParallelPluginApi* open_plugin() {
  const std::vector<std::string> candidates = plugin_candidates();
  if (candidates.empty())
    throw SystemError(
        "this run needs MPI and PETSc (solver.linear: petsc, or mpirun), but bipo was built "
        "without PETSc (docs/install.md says how to build its parallel plugin)");
  std::string path = candidates.back();
  for (const std::string& candidate : candidates)
    if (std::filesystem::exists(candidate)) {
      path = candidate;
      break;
    }
  // RTLD_LOCAL: PETSc's and MPI's symbols stay out of bipo's global scope.
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* reason = dlerror();
    throw SystemError("cannot load bipo's parallel plugin " + path +
                      " (PETSc and MPI, for solver.linear: petsc and mpirun runs; are PETSc and "
                      "MPI installed? docs/install.md): " +
                      (reason != nullptr ? reason : "no reason"));
  }
  using Entry = const ParallelPluginApi* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(library, "bipo_parallel_plugin_api"));
  const ParallelPluginApi* api = entry != nullptr ? entry() : nullptr;
  if (api == nullptr || api->api_version != kParallelPluginApiVersion)
    throw SystemError("the parallel plugin " + path +
                      " is not the one of this bipo build (API version " +
                      (api != nullptr ? std::to_string(api->api_version) : "missing") +
                      ", expected " + std::to_string(kParallelPluginApiVersion) + ")");
  return api;
}

}  // namespace

bool launched_by_mpi() {
  // Open MPI, MPICH/Hydra and other PMI launchers, PMIx launchers, MVAPICH.
  static constexpr std::array<const char*, 6> variables = {
      "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",           "PMI_RANK", "PMIX_RANK",
      "MPI_LOCALNRANKS",      "MV2_COMM_WORLD_SIZE"};
  for (const char* variable : variables)
    if (std::getenv(variable) != nullptr) return true;
  return false;
}

int launched_world_size() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"})
    if (const char* value = std::getenv(variable); value != nullptr) return std::atoi(value);
  return 0;
}

std::string parallel_plugin_path() {
  std::string paths;
  for (const std::string& candidate : plugin_candidates())
    paths += (paths.empty() ? "" : ", then ") + candidate;
  return paths.empty() ? "none (built without PETSc)" : paths;
}

void start_parallel_runtime() {
  const std::lock_guard<std::mutex> lock(runtime_mutex);
  if (started) return;
  if (finished)
    throw SystemError("MPI and PETSc were already finished in this process: they cannot restart");
  // The plugin stays open for the process: MPI cannot be re-initialized.
  static const ParallelPluginApi* const api = open_plugin();
  const std::string error = api->initialize();
  if (!error.empty()) throw SystemError("cannot start MPI and PETSc: " + error);
  plugin = api;
  started = true;
}

bool parallel_runtime_started() {
  const std::lock_guard<std::mutex> lock(runtime_mutex);
  return started;
}

int parallel_rank() {
  return parallel_runtime_started() ? plugin->rank() : 0;
}

int parallel_size() {
  return parallel_runtime_started() ? plugin->size() : 1;
}

void parallel_min_max(double value, double& min, double& max) {
  min = max = value;
  if (parallel_runtime_started()) plugin->min_max(value, &min, &max);
}

void parallel_all_gather(const double* mine, int count, double* all, const std::vector<int>& counts,
                         const std::vector<int>& displacements) {
  if (parallel_runtime_started())
    plugin->all_gather(mine, count, all, counts.data(), displacements.data());
  else
    std::copy(mine, mine + count, all);
}

void parallel_all_to_all(const double* send, const std::vector<int>& send_counts,
                         const std::vector<int>& send_displacements, double* receive,
                         const std::vector<int>& receive_counts,
                         const std::vector<int>& receive_displacements) {
  if (parallel_runtime_started())
    plugin->all_to_all(send, send_counts.data(), send_displacements.data(), receive,
                       receive_counts.data(), receive_displacements.data());
  else
    std::copy(send + send_displacements[0], send + send_displacements[0] + send_counts[0],
              receive + receive_displacements[0]);
}

void parallel_abort(int exit_code) {
  if (parallel_runtime_started()) plugin->abort(exit_code);
  std::exit(exit_code);
}

void finish_parallel_runtime() {
  const std::lock_guard<std::mutex> lock(runtime_mutex);
  if (!started) return;
  plugin->finalize();
  started = false;
  finished = true;
}

std::unique_ptr<LinearSolver> make_petsc_solver(const PetscSolverSettings& settings) {
  start_parallel_runtime();
  std::string error;
  std::unique_ptr<LinearSolver> solver(plugin->make_linear_solver(settings, &error));
  if (!solver) throw NumericalError("cannot create the PETSc solver: " + error);
  return solver;
}

}  // namespace bipo
