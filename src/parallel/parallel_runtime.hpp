// Owns bipo's side of the parallel plugin (plugin_api.hpp): finding and
// opening libbipo_petsc.so when a run needs MPI or PETSc, and the process's
// parallel runtime (MPI and PETSc, started once, finished once). A serial
// CHOLMOD run never calls anything here but launched_by_mpi().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/case.hpp"
#include "solver/linear_solver.hpp"

namespace bipo {

/// Whether mpirun (or another MPI launcher) started this process, read
/// from the environment only (nothing is loaded).
[[nodiscard]] bool launched_by_mpi();

/// The number of ranks the MPI launcher declares for this job
/// (OMPI_COMM_WORLD_SIZE, PMI_SIZE or MV2_COMM_WORLD_SIZE), or 0 if none
/// does. Unlike launched_by_mpi() it is not fooled by an MPI singleton
/// start in this process, which sets some of the launchers' variables.
[[nodiscard]] int launched_world_size();

/// Where bipo looks for the plugin, in order (for messages and docs).
[[nodiscard]] std::string parallel_plugin_path();

/// Opens the plugin and initializes MPI and PETSc; idempotent. Throws
/// SystemError naming the plugin when it cannot be opened (or bipo was
/// built without PETSc) or MPI/PETSc cannot start.
void start_parallel_runtime();

/// Whether start_parallel_runtime() has run (and finish has not).
[[nodiscard]] bool parallel_runtime_started();

/// This process's rank and the number of ranks: 0 and 1 when the runtime
/// is not started.
[[nodiscard]] int parallel_rank();
[[nodiscard]] int parallel_size();

/// The least and largest of `value` over the ranks (collective; the value
/// itself for both when the runtime is not started).
void parallel_min_max(double value, double& min, double& max);

/// Every rank's `mine` (rank r's `counts[r]` values) into `all` on every
/// rank, rank r's from `displacements[r]` on (collective; `mine` copied to
/// `all` when the runtime is not started). Allocates nothing.
void parallel_all_gather(const double* mine, int count, double* all, const std::vector<int>& counts,
                         const std::vector<int>& displacements);

/// Rank r's `send_counts[r]` values from `send + send_displacements[r]` to
/// rank r, and rank r's to this rank into `receive +
/// receive_displacements[r]` (collective: MPI_Alltoallv; this rank's own
/// values copied when the runtime is not started). Allocates nothing.
void parallel_all_to_all(const double* send, const std::vector<int>& send_counts,
                         const std::vector<int>& send_displacements, double* receive,
                         const std::vector<int>& receive_counts,
                         const std::vector<int>& receive_displacements);

/// Ends every rank with `exit_code` (MPI_Abort); std::exit when the runtime
/// is not started.
[[noreturn]] void parallel_abort(int exit_code);

/// Finalizes PETSc and MPI, after the last PETSc solver is destroyed;
/// nothing when the runtime is not started.
void finish_parallel_runtime();

/// A PETSc solver over all ranks (starts the runtime if needed; collective).
[[nodiscard]] std::unique_ptr<LinearSolver> make_petsc_solver(const PetscSolverSettings& settings);

}  // namespace bipo
