// Owns how the plugin turns a PETSc error code into a C++ exception: PETSc's
// error handler is replaced by one that records the first message of a
// failure (instead of printing a traceback on stderr), and check() throws it
// as a NumericalError naming the call that failed (an OutOfMemoryError for
// PETSc's out-of-memory code).
#pragma once

#include <petscsys.h>

#include <string>

namespace bipo::petsc {

/// Installs the recording error handler (after PetscInitialize).
void install_error_handler();

/// Throws NumericalError("PETSc <what> failed: <PETSc's message>") when
/// `code` is an error, OutOfMemoryError (with the hint of what needs less)
/// when it is PETSC_ERR_MEM; clears the recorded message either way.
void check(PetscErrorCode code, const char* what);

}  // namespace bipo::petsc
