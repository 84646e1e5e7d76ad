#include "solver/blas_threads.hpp"

#include <dlfcn.h>
#include <omp.h>

#include <cstdlib>

namespace bipo {

namespace {

using SetThreads = void (*)(int);
using GetThreads = int (*)();

/// OpenBLAS's functions if the process's BLAS is OpenBLAS, else nullptr.
template <typename Function>
Function openblas_function(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
}

bool set_in_environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

}  // namespace

std::optional<int> blas_threads_for(std::optional<int> requested, int n_free) {
  if (requested) return requested;
  if (set_in_environment("OPENBLAS_NUM_THREADS") || set_in_environment("OMP_NUM_THREADS"))
    return std::nullopt;
  if (n_free < small_problem_unknowns) return 1;
  return std::nullopt;
}

void set_openmp_threads_of_this_thread(int count) {
  // The levels in effect before the first call (the environment's
  // OMP_MAX_ACTIVE_LEVELS or the library's default), put back for a count
  // above 1.
  static const int default_active_levels = omp_get_max_active_levels();
  omp_set_num_threads(count);
  // A region with its own num_threads clause ignores omp_set_num_threads:
  // CHOLMOD's supernodal factorization asks for a fixed 4 threads
  // (CHOLMOD_OMP_NUM_THREADS, compiled into Debian's library) for every
  // large enough supernode, and on a small mesh waking them costs more than
  // they give (docs/performance.md, "CHOLMOD's threads on small
  // problems"). With no active level allowed, every region this thread
  // starts is inactive: one thread, whatever the clause asks.
  omp_set_max_active_levels(count == 1 ? 0 : default_active_levels);
}

std::string apply_blas_threads(std::optional<int> threads) {
  // The counts in effect before the first call: the library's defaults (or
  // the environment's), which nullopt puts back, so that a large case run
  // after a small one in the same process gets them, as the summary says.
  static const int default_blas_threads = openblas_threads();
  static const int default_omp_threads = omp_get_max_threads();
  const int count = threads.value_or(default_omp_threads);
  // Per calling thread: the thread that runs the analysis. Eigen asks
  // omp_get_max_threads() how many threads its products may use.
  set_openmp_threads_of_this_thread(count);
  const auto set = openblas_function<SetThreads>("openblas_set_num_threads");
  if (!threads) {
    if (set && default_blas_threads > 0) set(default_blas_threads);
    return "library default";
  }
  if (!set) return "unknown BLAS, not set";
  set(*threads);
  return std::to_string(*threads) + " (OpenBLAS)";
}

int openblas_threads() {
  const auto get = openblas_function<GetThreads>("openblas_get_num_threads");
  return get ? get() : 0;
}

}  // namespace bipo
