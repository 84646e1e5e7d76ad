// The BLAS threads of the verification tests' process. The thread count is
// the application's choice (Analysis leaves it alone unless its
// SetupChoices say otherwise), and results depend on it in the last bits: a
// bonded punch converges with one thread and not with the library's default
// on two cores. These tests' problems are all small, so they run as bipo
// would run them: auto for a small problem, set once for the process.
#include <gtest/gtest.h>

#include <optional>

#include "solver/blas_threads.hpp"

namespace {

class BlasThreadsEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { (void)bipo::apply_blas_threads(bipo::blas_threads_for(std::nullopt, 0)); }
};

const ::testing::Environment* const blas_threads_environment =
    ::testing::AddGlobalTestEnvironment(new BlasThreadsEnvironment);

}  // namespace
