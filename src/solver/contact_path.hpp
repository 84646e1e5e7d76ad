// Owns the automatic choice between the dense and the sparse contact path
// (solver.contact_solver: auto) and the memory figures it rests on. The
// measurements behind the model are in docs/performance.md, "The automatic
// choice of the contact path".
#pragma once

#include <functional>
#include <string>

#include "model/case.hpp"

namespace bipo {

/// Bytes that the dense contact path adds to a run with m contact nodes,
/// beyond what the same mesh costs on rollers: `dense_path_matrices` dense
/// matrices of size 3m. What is alive at the peak (the contact iteration):
/// the factor's dense trailing block, S and W (one matrix together) and
/// the Newton system, and the larger factor of the contact-last ordering;
/// measured at 3.5 to 4.0 such matrices from m = 1313 to 6553.
[[nodiscard]] double dense_contact_path_bytes(int m);
inline constexpr double dense_path_matrices = 4.5;

/// The share of the available memory that the dense path may take without
/// looking at the stiffness' factor, which both paths need: the rest is
/// left to it.
inline constexpr double dense_path_memory_share = 0.5;

/// The memory of a run of the same mesh without the contact problem (the
/// bottom on rollers: the stiffness, its factor and the mesh), from the
/// factor's bytes by the solver's symbolic analysis and the unknowns:
/// the factor plus `stiffness_run_bytes_per_unknown`, 10-15 % above the
/// peaks measured on the whole punch cylinder (30k to 347k unknowns).
[[nodiscard]] double stiffness_run_bytes(double factor_bytes, int unknowns);
inline constexpr double stiffness_run_bytes_per_unknown = 6500.0;

/// The share of the available memory that the dense path's matrices and
/// the stiffness run together may take, when the factor's size is known.
inline constexpr double dense_path_total_share = 0.9;

/// The memory new allocations can take without swapping: the kernel's
/// MemAvailable (or the free physical memory where it does not say), and
/// no more than the memory limit of this process's control group (a batch
/// scheduler's job, a container) leaves, when it has one.
[[nodiscard]] double available_memory_bytes();

/// A memory size for messages: "12.3 GiB", or "45 MiB" below a GiB.
[[nodiscard]] std::string memory_text(double bytes);

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
  /// The stiffness run's bytes where the choice asked for them, else -1.
  double stiffness_run_bytes = -1.0;
};

/// The contact path of a problem with m contact nodes, as `asked`
/// (solver.contact_solver): forced, or, with auto, the dense path wherever
/// it fits (measured: wherever it fits, it is the faster one), the sparse
/// path beyond. "Fits": its matrices within dense_path_memory_share of
/// `available_bytes`; or, when they do not but are within the available
/// memory, together with the stiffness run within dense_path_total_share
/// of it. `stiffness_run` gives the stiffness run's bytes (a symbolic
/// analysis, seconds on large meshes: called only then; negative if
/// unknown, and the sparse path is taken).
[[nodiscard]] ContactPathChoice choose_contact_path(
    ContactSolverChoice asked, int m, double available_bytes,
    const std::function<double()>& stiffness_run = {});

}  // namespace bipo
