// Owns the one mapping from bipo's typed errors to the program's exit codes
// and message kinds (README "Exit codes"), used by the command line and by
// every case of a multi-case run.
#pragma once

#include <exception>
#include <string>
#include <utility>

namespace bipo {

/// An error as the user sees it: the exit code and the line for stderr.
struct ErrorReport {
  int exit_code = 1;
  std::string line;  ///< "bipo: <kind>: <prefix><what>", no newline
};

/// An error that every rank of a run under mpirun knows of
/// (app/parallel_run.hpp): on the rank that saw it, that error; on the
/// others, only its exit code (they end with it silently; rank 0 prints).
class SharedError : public std::exception {
 public:
  SharedError(int exit_code, std::exception_ptr error)
      : exit_code_(exit_code), error_(std::move(error)) {}
  [[nodiscard]] int exit_code() const { return exit_code_; }
  /// The error itself, or null on a rank that only learnt its exit code.
  [[nodiscard]] const std::exception_ptr& error() const { return error_; }
  [[nodiscard]] const char* what() const noexcept override { return "error on another rank"; }

 private:
  int exit_code_;
  std::exception_ptr error_;
};

/// The message of an out-of-memory error that says no more than
/// std::bad_alloc does: what failed and what needs less memory.
[[nodiscard]] std::string out_of_memory_message();

/// Classifies `error`: InputError 2 ("input error"), NumericalError 3
/// ("numerical failure"), OutOfMemoryError and std::bad_alloc 1 ("out of
/// memory"), any other SystemError 1 ("system error"), a SharedError as
/// its error (or its exit code alone), any other exception 1 ("error").
/// `prefix` goes before the error's own message (the case file, when
/// several run).
[[nodiscard]] ErrorReport report_error(const std::exception_ptr& error,
                                       const std::string& prefix = "");

}  // namespace bipo
