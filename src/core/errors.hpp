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

/// The machine has not the memory the case needs (an allocation refused:
/// a factorization, the dense contact matrices, any std::bad_alloc): the
/// message says what could not be allocated, its size when known, and
/// what needs less memory. A SystemError (exit code 1: the case may be
/// right, the machine is too small for it), reported as "out of memory";
/// not a NumericalError: cutting the increment would not need less.
class OutOfMemoryError : public SystemError {
 public:
  using SystemError::SystemError;
};

/// What needs less memory, for the messages of OutOfMemoryError (the keys
/// of docs/case-file.md, "solver").
inline constexpr const char* out_of_memory_hint =
    "to need less memory: the sparse contact path (solver.contact_solver: sparse: no dense "
    "matrices of the contact unknowns) without its second factorization "
    "(solver.sparse_preconditioner: own_factor), PETSc's iterative solver (solver.linear: petsc "
    "with solver.petsc.method: cg_gamg: no factorization; under mpirun over several machines, "
    "docs/parallel.md), or a coarser mesh";

}  // namespace bipo
