// Owns the automatic choice between the dense and the sparse contact path
// (solver.contact_solver: auto) and the memory figures it rests on. The
// measurements behind the model are in docs/performance.md, "The automatic
// choice of the contact path".
#pragma once

#include <string>

#include "model/case.hpp"

namespace bipo {

/// Bytes that the dense contact path adds to a run with m contact nodes,
/// beyond what the same mesh costs on rollers: `dense_path_matrices` dense
/// matrices of size 3m. What is alive at the peak (the contact iteration):
/// the factor's dense trailing block, S, W and the Newton system, and the
/// larger factor of the contact-last ordering; measured at 4.4 to 4.9 such
/// matrices from m = 1313 to 5185.
[[nodiscard]] double dense_contact_path_bytes(int m);
inline constexpr double dense_path_matrices = 5.5;

/// The share of the available memory that the dense path may take; the
/// rest is left to the stiffness' factor, which both paths need.
inline constexpr double dense_path_memory_share = 0.5;

/// The memory new allocations can take without swapping: the kernel's
/// MemAvailable (or the free physical memory where it does not say), and
/// no more than the memory limit of this process's control group (a batch
/// scheduler's job, a container) leaves, when it has one.
[[nodiscard]] double available_memory_bytes();

/// What a control group's memory limit leaves: limit - (usage - inactive
/// file cache, which the kernel reclaims first), from the texts of its
/// files (v2: memory.max, memory.current, memory.stat; v1:
/// memory.limit_in_bytes, memory.usage_in_bytes, memory.stat). Negative
/// when there is no limit ("max", or v1's page-rounded 2^63).
[[nodiscard]] double cgroup_available_bytes(const std::string& limit, const std::string& usage,
                                            const std::string& stat);

struct ContactPathChoice {
  bool sparse = false;
  std::string reason;  ///< one sentence, for summary.json (contact_solver.reason)
};

/// The contact path of a problem with m contact nodes, as `asked`
/// (solver.contact_solver): forced, or, with auto, the dense path while its
/// matrices fit in dense_path_memory_share of `available_bytes` (measured:
/// wherever it fits, it is the faster one), the sparse path beyond.
[[nodiscard]] ContactPathChoice choose_contact_path(ContactSolverChoice asked, int m,
                                                    double available_bytes);

}  // namespace bipo
