// Owns bipo's typed errors. Input errors are the user's to fix (bad case file,
// bad mesh); numerical errors are the solver's (the increment driver catches
// them to cut an increment or to stop cleanly). No status codes.
#pragma once

#include <stdexcept>
#include <string>

namespace bipo {

/// Anything wrong in what the user supplied: the message names the file, the
/// key path or line, and what was expected.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A numerical failure (factorization failed, non-finite value, increment did
/// not converge). The driver decides whether to cut the increment or stop.
class NumericalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace bipo

namespace bipo {

/// The system refused an operation that the input was fine for (full disk,
/// permission denied, read-only file system, I/O error): the message says
/// what could not be done, names the path and gives the system's reason.
/// Exit code 1, not an input error: the case is right, the machine is not.
class SystemError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace bipo
