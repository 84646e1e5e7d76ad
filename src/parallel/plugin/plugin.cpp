// Owns the plugin's exported table (parallel/plugin_api.hpp): MPI and PETSc
// started and stopped for the process, the rank queries, the collectives
// bipo needs, and the PETSc linear solver.
#include <dlfcn.h>
#include <mpi.h>
#include <petscsys.h>

#include <cstdlib>
#include <exception>

#include "parallel/plugin/petsc_call.hpp"
#include "parallel/plugin/petsc_solver.hpp"
#include "parallel/plugin_api.hpp"

namespace bipo {

namespace {

bool mpi_started_here = false;

// The plugin and its libraries are opened RTLD_LOCAL. Open MPI opens its
// own components (dlopen) at MPI_Init, and in builds whose components are
// not linked against libmpi they resolve its symbols from the global scope
// (Debian 12's Open MPI 4.1 works either way: measured, one and two ranks).
// So re-open the libmpi this plugin is bound to (found from one of its
// symbols) with RTLD_GLOBAL, without loading anything new (RTLD_NOLOAD).
void make_mpi_global() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&MPI_Init), &info) != 0 && info.dli_fname != nullptr)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
}

std::string initialize() {
  PetscBool petsc_started = PETSC_FALSE;
  PetscInitialized(&petsc_started);
  if (petsc_started) return "";
  // PT-Scotch, which divides the rows among the ranks (row_partition.cpp),
  // partitions with several threads by default, and its threads made the
  // partition, and so the last digits of every result, change from run to
  // run (seed punch A on two ranks: 4 runs, 3 partitions and 3 different
  // histories). On one thread two runs of a case on the same ranks give
  // the same bits. Set before MPI and PETSc start their threads (Scotch reads
  // it at each partition); a value the user set is kept.
  setenv("SCOTCH_PTHREAD_NUMBER", "1", 0);
  make_mpi_global();
  int mpi_started = 0;
  MPI_Initialized(&mpi_started);
  if (!mpi_started) {
    // Serialized: analyses running at once (bipo run --jobs) take turns
    // in the solver's calls, from different threads.
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
      return "MPI_Init_thread failed";
    mpi_started_here = true;
  }
  // Before PetscInitialize: no .petscrc from the working or home folder (an
  // options file can run programs), and bipo keeps its own signal handling.
  // The user's PETSC_OPTIONS environment variable is still read.
  PetscOptionsSetValue(nullptr, "-skip_petscrc", nullptr);
  PetscOptionsSetValue(nullptr, "-no_signal_handler", nullptr);
  static char program[] = "bipo";
  static char* arguments[] = {program, nullptr};
  int argc = 1;
  char** argv = arguments;
  if (PetscInitialize(&argc, &argv, nullptr, nullptr) != 0) return "PetscInitialize failed";
  petsc::install_error_handler();
  return "";
}

void finalize() {
  PetscBool petsc_started = PETSC_FALSE, petsc_finished = PETSC_FALSE;
  PetscInitialized(&petsc_started);
  PetscFinalized(&petsc_finished);
  if (petsc_started && !petsc_finished) PetscFinalize();
  int mpi_finished = 0;
  MPI_Finalized(&mpi_finished);
  if (mpi_started_here && !mpi_finished) MPI_Finalize();
}

int rank() {
  int value = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &value);
  return value;
}

int size() {
  int value = 1;
  MPI_Comm_size(PETSC_COMM_WORLD, &value);
  return value;
}

void abort_all(int exit_code) {
  MPI_Abort(PETSC_COMM_WORLD, exit_code);
}

void min_max(double value, double* min, double* max) {
  MPI_Allreduce(&value, min, 1, MPI_DOUBLE, MPI_MIN, PETSC_COMM_WORLD);
  MPI_Allreduce(&value, max, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
}

void all_gather(const double* mine, int count, double* all, const int* counts,
                const int* displacements) {
  MPI_Allgatherv(mine, count, MPI_DOUBLE, all, counts, displacements, MPI_DOUBLE, PETSC_COMM_WORLD);
}

void all_to_all(const double* send, const int* send_counts, const int* send_displacements,
                double* receive, const int* receive_counts, const int* receive_displacements) {
  MPI_Alltoallv(send, send_counts, send_displacements, MPI_DOUBLE, receive, receive_counts,
                receive_displacements, MPI_DOUBLE, PETSC_COMM_WORLD);
}

LinearSolver* make_linear_solver(const PetscSolverSettings& settings, std::string* error) {
  try {
    return petsc::make_solver(settings).release();
  } catch (const std::exception& e) {
    if (error != nullptr) *error = e.what();
    return nullptr;
  }
}

const ParallelPluginApi api{kParallelPluginApiVersion,
                            initialize,
                            finalize,
                            rank,
                            size,
                            abort_all,
                            min_max,
                            all_gather,
                            all_to_all,
                            make_linear_solver};

}  // namespace

}  // namespace bipo

extern "C" __attribute__((visibility("default"))) const bipo::ParallelPluginApi*
bipo_parallel_plugin_api() {
  return &bipo::api;
}
