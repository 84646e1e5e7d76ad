// Owns the one mapping from bipo's typed errors to the program's exit codes
// and message kinds (README "Exit codes"), used by the command line and by
// every case of a multi-case run.
#pragma once

#include <exception>
#include <string>

namespace bipo {

/// An error as the user sees it: the exit code and the line for stderr.
struct ErrorReport {
  int exit_code = 1;
  std::string line;  ///< "bipo: <kind>: <prefix><what>", no newline
};

/// Classifies `error`: InputError 2 ("input error"), NumericalError 3
/// ("numerical failure"), SystemError 1 ("system error"), any other
/// exception 1 ("error"). `prefix` goes before the error's own message
/// (the case file, when several run).
[[nodiscard]] ErrorReport report_error(const std::exception_ptr& error,
                                       const std::string& prefix = "");

}  // namespace bipo
