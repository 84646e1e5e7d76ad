#include "app/parallel_run.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <thread>

#include "app/exit_status.hpp"
#include "core/errors.hpp"
#include "parallel/parallel_runtime.hpp"
#include "solver/analysis.hpp"
#include "solver/blas_threads.hpp"

namespace bipo {

namespace {

/// A positive integer from the environment variable `name`, or 0.
int environment_count(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return 0;
  const long n = std::strtol(value, nullptr, 10);
  return n > 0 && n < 1 << 20 ? static_cast<int>(n) : 0;
}

/// Blocks in a collective that the failing ranks never join, until their
/// MPI_Abort ends this rank too: a rank that saw no error must not end the
/// job before the failing one has printed why.
[[noreturn]] void wait_for_abort() {
  for (double least = 0.0, most = 0.0;;) parallel_min_max(0.0, least, most);
}

/// Folds the bytes of `data` into the FNV-1a hash `h`.
void hash_bytes(std::uint64_t& h, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
}

/// The bits of what every rank holds whole, the contact nodes' reactions
/// and accumulated slips (the displacements at the contact nodes, which the
/// ranks gather: each rank holds only its rows of the others), as a double
/// that holds them exactly (an integer below 2^53), for min_max.
double state_checksum(const Analysis& analysis) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const ContactNodeState& state : analysis.contact_states())
    hash_bytes(h, state.r.data(), sizeof(double) * 3);
  for (const Eigen::Vector3d& slip : analysis.accumulated_slip())
    hash_bytes(h, slip.data(), sizeof(double) * 3);
  return static_cast<double>(h >> 11);
}

}  // namespace

ParallelSession::ParallelSession() {
  if (!launched_by_mpi()) return;
  start_parallel_runtime();
  // OpenMP's threads (the assembly) are set here, once; the BLAS's per case
  // (app/run.cpp), from the same budget.
  if (const std::optional<int> threads = threads_per_rank())
    set_openmp_threads_of_this_thread(*threads);
}

ParallelSession::~ParallelSession() {
  finish_parallel_runtime();
}

int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0')
      return static_cast<int>(std::strtol(value, nullptr, 10));
  return 0;
}

bool is_output_rank() {
  return parallel_rank() == 0;
}

bool is_distributed() {
  return parallel_size() > 1;
}

std::ostream& on_output_rank(std::ostream& stream) {
  static std::ostream dropped(nullptr);
  return is_output_rank() ? stream : dropped;
}

void share_output_rank_error(const std::exception_ptr& error) {
  if (!is_distributed()) {
    if (error) std::rethrow_exception(error);
    return;
  }
  const int code = error ? report_error(error).exit_code : 0;
  double least = 0.0, worst = 0.0;
  parallel_min_max(code, least, worst);
  if (worst != 0.0) throw SharedError(static_cast<int>(worst), error);
}

void agree_on_error(const std::exception_ptr& error) {
  const ErrorReport report = error ? report_error(error) : ErrorReport{0, ""};
  agree_on_exit_code(report.exit_code, report.line);
}

void agree_on_exit_code(int exit_code, const std::string& line) {
  if (!is_distributed()) return;
  double least = 0.0, worst = 0.0;
  parallel_min_max(exit_code, least, worst);
  if (least == worst) return;
  if (exit_code == 0) wait_for_abort();
  abort_job(line + " (not every rank had this outcome)", static_cast<int>(worst));
}

bool same_on_every_rank(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const InputError&) {
    return true;
  } catch (const NumericalError&) {
    return true;
  } catch (const SharedError&) {
    return true;
  } catch (...) {
    return false;
  }
}

void abort_job(const std::string& line, int exit_code) {
  std::ostringstream text;
  text << "rank " << parallel_rank() << " of " << parallel_size() << ": " << line << "\n";
  std::cerr << text.str() << std::flush;
  parallel_abort(exit_code);
}

void check_ranks_agree(const Analysis& analysis, double position) {
  if (!is_distributed()) return;
  double least = 0.0, most = 0.0;
  parallel_min_max(state_checksum(analysis), least, most);
  if (least == most) return;
  // Every rank sees the difference: all fail the case alike.
  std::ostringstream message;
  message << "the MPI ranks' states differ after the step at program position " << position
          << ": the ranks no longer compute the same thing (nondeterminism, for example "
             "threads that differ between ranks; docs/parallel.md)";
  throw NumericalError(message.str());
}

int ranks_on_this_machine() {
  if (!launched_by_mpi()) return 1;
  int local_ranks = 0;
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMI_LOCAL_SIZE"})
    if (local_ranks == 0) local_ranks = environment_count(name);
  return local_ranks > 0 ? local_ranks : std::max(1, parallel_size());
}

std::optional<int> threads_per_rank() {
  // Also on one rank: mpirun may have bound it to fewer cores than the machine's.
  if (!launched_by_mpi() || environment_count("OMP_NUM_THREADS") > 0 ||
      environment_count("OPENBLAS_NUM_THREADS") > 0)
    return std::nullopt;
  const int processors = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  int threads = std::max(1, processors / ranks_on_this_machine());
  // mpirun may bind each rank to some cores: it then has only those.
  cpu_set_t bound;
  if (sched_getaffinity(0, sizeof bound, &bound) == 0)
    threads = std::min(threads, std::max(1, CPU_COUNT(&bound)));
  return threads;
}

}  // namespace bipo
