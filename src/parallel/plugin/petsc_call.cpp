// PETSc's errors as bipo's exceptions (petsc_call.hpp).
#include "parallel/plugin/petsc_call.hpp"

#include "core/errors.hpp"

namespace bipo::petsc {

namespace {

// PETSc reports a failure from the innermost call outwards; the innermost
// message (PETSC_ERROR_INITIAL) says what went wrong, the rest is the stack.
thread_local std::string first_message;

PetscErrorCode record_error(MPI_Comm /*comm*/, int /*line*/, const char* function,
                            const char* /*file*/, PetscErrorCode code, PetscErrorType type,
                            const char* message, void* /*context*/) {
  if (type == PETSC_ERROR_INITIAL || first_message.empty()) {
    const char* generic = nullptr;
    PetscErrorMessage(code, &generic, nullptr);
    first_message = std::string(message != nullptr && *message != '\0' ? message
                                : generic != nullptr                   ? generic
                                                                       : "unknown error") +
                    " (in " + (function != nullptr ? function : "?") + ")";
  }
  return code;
}

}  // namespace

void install_error_handler() {
  PetscPushErrorHandler(record_error, nullptr);
}

void check(PetscErrorCode code, const char* what) {
  if (code == 0) {
    first_message.clear();
    return;
  }
  std::string message = "PETSc " + std::string(what) + " failed: " +
                        (first_message.empty() ? "error " + std::to_string(code) : first_message);
  first_message.clear();
  // Out of memory is not a numerical failure: cutting the increment would
  // not need less (core/errors.hpp, OutOfMemoryError; CHOLMOD's likewise).
  if (code == PETSC_ERR_MEM) throw OutOfMemoryError(message + "; " + out_of_memory_hint);
  throw NumericalError(message);
}

}  // namespace bipo::petsc
