// Owns what `bipo run`, `bipo check` and `bipo mesh` do differently when mpirun starts
// them (docs/parallel.md): starting and finishing the parallel runtime, rank
// 0 alone printing and writing results, the ranks agreeing on every error
// (or ending the job when they cannot), the guard against ranks whose states
// drift apart, and the threads of each rank. Every rank runs the same
// analysis on the same data; only the linear algebra is distributed.
#pragma once

#include <exception>
#include <optional>
#include <ostream>
#include <string>

#include "app/exit_status.hpp"

namespace bipo {

class Analysis;

/// The parallel runtime of one command: started when mpirun launched the
/// process (the environment says so; a serial run loads nothing), finished
/// when the session ends, on every exit path. Also finishes a runtime that a
/// serial run started for solver.linear: petsc.
class ParallelSession {
 public:
  /// Throws SystemError if the runtime cannot start (no plugin).
  ParallelSession();
  ~ParallelSession();
  ParallelSession(const ParallelSession&) = delete;
  ParallelSession& operator=(const ParallelSession&) = delete;
};

/// The rank of this process as the launcher's environment gives it, before
/// the runtime starts (0 when not launched by mpirun): which rank prints an
/// error that stops the runtime from starting.
[[nodiscard]] int launcher_rank();

/// True on the rank that prints and writes results: rank 0 (or a serial run).
[[nodiscard]] bool is_output_rank();

/// More than one rank: the ranks must agree at every decision.
[[nodiscard]] bool is_distributed();

/// `stream` on the output rank; on the others a stream that drops everything.
[[nodiscard]] std::ostream& on_output_rank(std::ostream& stream);

/// Shares the outcome of work done on the output rank only (`error`: its
/// error, or null): on one rank, rethrows `error`; with several, every rank
/// learns it and throws a SharedError (rank 0's holds the error). A
/// collective: every rank calls it at the same point.
void share_output_rank_error(const std::exception_ptr& error);

/// Runs `write` on the output rank only (the results folder is rank 0's),
/// then lets every rank know whether it failed (share_output_rank_error).
template <typename Write>
void write_on_output_rank(Write&& write) {
  std::exception_ptr error;
  if (is_output_rank()) {
    try {
      write();
    } catch (...) {
      error = std::current_exception();
    }
  }
  share_output_rank_error(error);
}

/// After work that every rank does alike but that could fail on some only
/// (reading a file that another rank cannot read): returns if every rank
/// ended alike (no error, or errors of the same exit code, which each rank
/// then handles as in a serial run); otherwise the ranks that failed print
/// their error, naming their rank, and the job ends with the largest exit
/// code (MPI_Abort): the others would wait for them forever. A collective.
void agree_on_error(const std::exception_ptr& error);

/// agree_on_error for an exit status already reported (0: none) and its
/// line (what a failing rank prints before ending the job).
void agree_on_exit_code(int exit_code, const std::string& line);

/// Whether every rank is sure to have thrown `error` at the same point:
/// input errors and numerical failures (the same data and the same steps
/// give the same ones) and shared errors. Any other (a system error, no
/// memory) may be one rank's alone, in the middle of work that the ranks
/// do together: that rank must end the job (abort_job).
[[nodiscard]] bool same_on_every_rank(const std::exception_ptr& error);

/// Ends the whole job now with `exit_code` after this rank prints `line`
/// (prefixed with its rank) on stderr: for an error that this rank may have
/// seen alone, in the middle of work the ranks do together.
[[noreturn]] void abort_job(const std::string& line, int exit_code);

/// The divergence guard, after each converged increment: every rank's
/// displacement and contact reactions must be bitwise the same (they are
/// computed from the same data by the same steps). Otherwise every rank
/// throws the same NumericalError, naming the step: the case fails (its
/// summary says why) rather than go on with ranks whose next steps could
/// differ. A collective; nothing on one rank.
void check_ranks_agree(const Analysis& analysis, double position);

/// The ranks of this run on this machine (the launcher's local size; 1
/// for a process not started by mpirun).
[[nodiscard]] int ranks_on_this_machine();

/// The threads each rank may use under mpirun: processors / ranks on this
/// machine, at most the cores mpirun bound the rank to, at least 1; nullopt
/// for a process not started by mpirun, or when OMP_NUM_THREADS or
/// OPENBLAS_NUM_THREADS is set (the user's choice).
[[nodiscard]] std::optional<int> threads_per_rank();

}  // namespace bipo
