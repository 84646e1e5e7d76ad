// PETSc's error codes as bipo's exceptions (src/parallel/plugin/petsc_call.hpp):
// out of memory must not pass for a numerical failure, which the driver
// answers by cutting the increment and trying again. Built into its own
// test program with the plugin's source, as bipo's tests never link PETSc.
#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"
#include "parallel/plugin/petsc_call.hpp"

namespace bipo::petsc {
namespace {

TEST(PetscCall, OutOfMemoryIsAnOutOfMemoryErrorWithTheHint) {
  try {
    check(PETSC_ERR_MEM, "KSPSolve");
    FAIL() << "no exception";
  } catch (const OutOfMemoryError& error) {
    const std::string what = error.what();
    const std::string start =
        "PETSc KSPSolve failed: error " + std::to_string(PETSC_ERR_MEM) + "; ";
    EXPECT_EQ(what.rfind(start, 0), 0u) << what;
    EXPECT_NE(what.find(out_of_memory_hint), std::string::npos) << what;
  }
}

TEST(PetscCall, OtherErrorsAreNumericalErrorsAndSuccessIsSilent) {
  EXPECT_NO_THROW(check(0, "KSPSolve"));
  for (const PetscErrorCode code : {PETSC_ERR_NOT_CONVERGED, PETSC_ERR_LIB, PETSC_ERR_PLIB}) {
    try {
      check(code, "KSPSolve");
      FAIL() << "no exception for " << code;
    } catch (const OutOfMemoryError&) {
      FAIL() << "out of memory for " << code;
    } catch (const NumericalError& error) {
      EXPECT_EQ(std::string(error.what()).rfind("PETSc KSPSolve failed: error ", 0), 0u);
    }
  }
}

}  // namespace
}  // namespace bipo::petsc
