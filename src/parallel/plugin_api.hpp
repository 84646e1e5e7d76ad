// Owns the boundary between bipo and its parallel plugin (libbipo_petsc.so):
// MPI, through PETSc, and the PETSc linear-algebra backend. bipo opens the
// plugin only when a run asks for PETSc or is started by mpirun, so that a
// serial run neither loads PETSc's ~100 libraries nor initializes MPI
// (measured on a program linked with PETSc: 40-60 ms more per start, and
// 0.4 s when it initializes MPI). Both sides are built from this tree by the
// same compiler; the version number refuses a plugin of another build.
#pragma once

#include <string>

#include "model/case.hpp"
#include "solver/linear_solver.hpp"

namespace bipo {

/// Raised whenever this table or the virtual functions of LinearSolver
/// (solver/linear_solver.hpp), which the plugin implements, change: 2 since
/// factorize_lower_changed and factorize_lower_and_condense, 3 since
/// processes(), 4 since all_gather and LinearSolver::row_share(), 5 since
/// LinearSolver::divide_rows(), 6 since the solves on a process's own rows
/// (LinearSolver::apply_approximate_inverse_to_own_rows), 7 since
/// all_to_all, 8 since LinearSolver::RowGraph holds a rank's slice
/// (first_vertex), 9 since LinearSolver::solve_from_guess, 10 since
/// LinearSolver::solve_own_rows_from_guess.
inline constexpr int kParallelPluginApiVersion = 10;

/// The plugin's functions. All but `initialize` need an initialized runtime.
struct ParallelPluginApi {
  int api_version;
  /// Initializes MPI and PETSc once for the process. PETSc sees none of
  /// bipo's command line and reads no .petscrc file (those could carry
  /// options that run programs). Returns an empty string or the error.
  std::string (*initialize)();
  /// Finalizes PETSc and MPI (after the last solver is destroyed).
  void (*finalize)();
  int (*rank)();
  int (*size)();
  /// Ends every rank with this exit code (MPI_Abort): for an error that
  /// only some ranks saw, where the others would wait forever.
  void (*abort)(int exit_code);
  /// The least and the largest of `value` over the ranks (a collective).
  void (*min_max)(double value, double* min, double* max);
  /// Every rank's `count` values into `all` on every rank, rank r's at
  /// `displacements[r]`; `counts` holds every rank's count (a collective:
  /// MPI_Allgatherv).
  void (*all_gather)(const double* mine, int count, double* all, const int* counts,
                     const int* displacements);
  /// Rank r's `send_counts[r]` values from `send + send_displacements[r]`
  /// to rank r, and rank r's values to this rank into `receive +
  /// receive_displacements[r]`, `receive_counts[r]` of them (a collective:
  /// MPI_Alltoallv; counts of 0 between ranks that exchange nothing).
  void (*all_to_all)(const double* send, const int* send_counts, const int* send_displacements,
                     double* receive, const int* receive_counts, const int* receive_displacements);
  /// A new PETSc linear solver of K_ff, owned by the caller; on failure
  /// nullptr and the reason in `error`.
  LinearSolver* (*make_linear_solver)(const PetscSolverSettings& settings, std::string* error);
};

}  // namespace bipo

/// The plugin's one exported symbol.
extern "C" const bipo::ParallelPluginApi* bipo_parallel_plugin_api();
