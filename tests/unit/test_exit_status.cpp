// The one mapping from errors to exit codes (src/app/exit_status.hpp): what
// README "Exit codes" promises, for every kind of error.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>

#include "app/exit_status.hpp"
#include "core/errors.hpp"

namespace {

template <class Error>
bipo::ErrorReport report_of(const char* what, const std::string& prefix = "") {
  return bipo::report_error(std::make_exception_ptr(Error(what)), prefix);
}

}  // namespace

TEST(ExitStatus, EachKindOfErrorHasItsCodeAndWord) {
  const auto input = report_of<bipo::InputError>("a.yaml:3: material.young: bad");
  EXPECT_EQ(input.exit_code, 2);
  EXPECT_EQ(input.line, "bipo: input error: a.yaml:3: material.young: bad");
  const auto numerical = report_of<bipo::NumericalError>("increment 4 did not converge");
  EXPECT_EQ(numerical.exit_code, 3);
  EXPECT_EQ(numerical.line, "bipo: numerical failure: increment 4 did not converge");
  const auto system = report_of<bipo::SystemError>("cannot write x: No space left on device");
  EXPECT_EQ(system.exit_code, 1);
  EXPECT_EQ(system.line, "bipo: system error: cannot write x: No space left on device");
  const auto other = report_of<std::logic_error>("bug");
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_EQ(other.line, "bipo: error: bug");
  EXPECT_EQ(bipo::report_error(std::make_exception_ptr(42)).exit_code, 1);
}

TEST(ExitStatus, ThePrefixGoesBeforeTheErrorsOwnMessage) {
  EXPECT_EQ(report_of<bipo::InputError>("bad", "cases/a.yaml: ").line,
            "bipo: input error: cases/a.yaml: bad");
}

TEST(ExitStatus, OutOfMemoryIsExitCode1AndSaysSoWithWhatNeedsLess) {
  // CHOLMOD's refusal, with its own message.
  const auto cholmod =
      report_of<bipo::OutOfMemoryError>("CHOLMOD's Cholesky factorization ran out");
  EXPECT_EQ(cholmod.exit_code, 1);
  EXPECT_EQ(cholmod.line, "bipo: out of memory: CHOLMOD's Cholesky factorization ran out");
  // A bare std::bad_alloc (an Eigen matrix, a vector) anywhere in a run.
  const auto bad_alloc = bipo::report_error(std::make_exception_ptr(std::bad_alloc()), "a.yaml: ");
  EXPECT_EQ(bad_alloc.exit_code, 1);
  EXPECT_EQ(bad_alloc.line.rfind("bipo: out of memory: a.yaml: an allocation was refused", 0), 0u)
      << bad_alloc.line;
  EXPECT_EQ(bad_alloc.line.find("std::bad_alloc\n"), std::string::npos);
  for (const char* key :
       {"solver.contact_solver: sparse", "solver.sparse_preconditioner: own_factor",
        "solver.linear: petsc", "solver.petsc.method: cg_gamg", "coarser mesh"})
    EXPECT_NE(bad_alloc.line.find(key), std::string::npos) << key;
  // Other system errors keep their word.
  EXPECT_EQ(report_of<bipo::SystemError>("x").line, "bipo: system error: x");
}
