// Owns how many threads the BLAS/LAPACK library and OpenMP may use. bipo's
// dense work (the Newton systems of the contact iteration, the condensed
// stiffness) and CHOLMOD's supernodes on small meshes are too small for
// threads to pay: OpenBLAS's idle threads spin and yield, and on a machine
// with another busy process they double the run time (docs/performance.md).
// OpenMP's idle threads (Eigen's products, the stresses' loop) spin too:
// after each parallel region a worker keeps a core busy for milliseconds,
// which an increment of a small case does not outlast, so the same count
// goes to OpenMP, and a count of 1 also holds the regions whose num_threads
// clause asks for more (CHOLMOD's factorization). The BLAS setting goes
// through OpenBLAS's own call, looked up at run time, so another BLAS is
// left untouched.
#pragma once

#include <optional>
#include <string>

namespace bipo {

/// The threads of an analysis with `n_free` unknowns for the case-file
/// setting `requested` (nullopt = auto): the number requested, or for auto
/// 1 below `small_problem_unknowns` unknowns and the library's default
/// above; auto also leaves the library's default when OPENBLAS_NUM_THREADS
/// or OMP_NUM_THREADS is set (the user's choice). nullopt = library default.
inline constexpr int small_problem_unknowns = 20000;
[[nodiscard]] std::optional<int> blas_threads_for(std::optional<int> requested, int n_free);

/// Applies a thread count to the BLAS library if it is OpenBLAS, and to
/// OpenMP's parallel regions started by the calling thread (whatever the
/// BLAS); returns a description of what is in effect in the BLAS (for
/// summary.json), e.g. "1 (OpenBLAS)", "library default", "unknown BLAS,
/// not set". nullopt puts back the counts in effect before the first call
/// (the library's defaults, or the environment's): a count set for one case
/// does not stay for the next.
std::string apply_blas_threads(std::optional<int> threads);

/// Sets the threads of the OpenMP parallel regions that the calling thread
/// starts from now on: `count` (omp_set_num_threads), and for a count of 1
/// also the regions whose num_threads clause asks for more (CHOLMOD's
/// factorization), by allowing no active level; a count above 1 puts back
/// the active levels in effect before the first call.
void set_openmp_threads_of_this_thread(int count);

/// OpenBLAS's current thread count, or 0 if the BLAS is not OpenBLAS.
[[nodiscard]] int openblas_threads();

}  // namespace bipo
