// Benchmark of the linear-elastic phases (issue 2, "Speed"): on the punch
// cylinder and on refined cylinders, the median times of the stiffness
// assembly, the Dirichlet partition, the CHOLMOD factorization of K_ff and a
// single right-hand-side solve, the factor size and the peak memory. Then an
// Analysis of a linear case over several increments, through a solver wrapper
// that counts the calls: one factorization for the whole analysis, two
// triangular solves per increment.
//
// A plain program (not Google Benchmark): the phases take up to a minute, so
// it runs each a few times and prints medians.
//
//   bench_elasticity [--max-scale S] [--reps N] [--increments N]
//
// Size "scale s" is the cylinder with core = ring = round(8 s) and
// layers = round(4 s) (s = 1 is the punch mesh: 1280 hex8, 5055 dofs). The
// scales run are 1, 1.5, 2, 2.5, 3, 3.5, 4, 5, 6 up to S (default 3).
#include <sys/resource.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "app/allocator.hpp"
#include "bench_support.hpp"
#include "fem/elasticity.hpp"
#include "fem/hex8.hpp"
#include "mesh/generate.hpp"
#include "solver/analysis.hpp"
#include "solver/blas_threads.hpp"
#include "solver/linear_solver.hpp"

namespace {

using namespace bench;  // NOLINT: the shared helpers of bench_support.hpp

struct Size {
  double scale;
  bipo::CylinderParams params;
};

struct Row {
  Size size;
  int n_hex = 0, n_dofs = 0, n_free = 0;
  double assembly = 0, partition = 0, factorization = 0, solve = 0, factor_nnz = 0;
  double peak_gib = 0;
  int reps = 0;
  // Linear analysis over several increments.
  double increment = 0, increment_solve = 0;
  int factorizations = 0, solves = 0, increments = 0;
};

/// Top pushed down by 0.1 at factor 1, bottom clamped; no contact.
bipo::Case linear_case(int n_increments) {
  bipo::Case c;
  c.source = "bench_elasticity (linear compression, bottom clamped)";
  c.material = {210000.0, 0.3};
  c.program.segments = {{1.0, n_increments, 0}};
  c.dirichlet.push_back({"top", {0.0, 0.0, -0.1}, std::nullopt});
  c.dirichlet.push_back({"bottom", {0.0, 0.0, 0.0}, std::nullopt});
  return c;
}

Row measure(const Size& size, int reps, int n_increments) {
  Row row;
  row.size = size;
  row.reps = reps;
  const bipo::Mesh mesh = bipo::generate_cylinder(size.params);
  row.n_hex = mesh.n_hexes();
  row.n_dofs = 3 * mesh.n_nodes();
  const bipo::Matrix6d d = bipo::isotropic_elasticity(210000.0, 0.3);

  bipo::SparseMatrix k;
  // As a run does: K's lower triangle only, and K_ff's out of it.
  row.assembly = time_median(
      reps, [&] { k = bipo::assemble_stiffness(mesh, d, bipo::StoredTriangle::lower); });

  std::vector<bool> prescribed(static_cast<std::size_t>(row.n_dofs), false);
  for (const char* set : {"top", "bottom"})
    for (int node : mesh.node_set(set))
      for (int comp = 0; comp < 3; ++comp)
        prescribed[static_cast<std::size_t>(3 * node + comp)] = true;
  const bipo::DofPartition partition(prescribed);
  row.n_free = partition.n_free();
  bipo::SparseMatrix k_ff_lower, k_fp;
  row.partition = time_median(reps, [&] { partition.split_lower_triangle(k, k_ff_lower, k_fp); });

  std::unique_ptr<bipo::LinearSolver> solver;
  row.factorization = time_median(reps, [&] {
    solver.reset();  // free the previous factor first, as a fresh analysis would
    solver = bipo::make_cholmod_solver();
    solver->factorize_lower(k_ff_lower, false);
  });
  row.factor_nnz = solver->factor_nonzeros();

  // Single right-hand side: the top pushed down, bottom clamped.
  Eigen::VectorXd u_p = Eigen::VectorXd::Zero(partition.n_prescribed());
  for (int p = 0; p < partition.n_prescribed(); ++p) {
    const int dof = partition.prescribed_dofs()[p];
    if (dof % 3 == 2 && mesh.nodes[dof / 3].z() > 0.5 * size.params.height) u_p(p) = -0.1;
  }
  const Eigen::MatrixXd b = -(k_fp * u_p);
  Eigen::MatrixXd x;
  row.solve = time_median(std::max(reps, 7), [&] { solver->solve(b, x); });
  const double residual = (k_ff_lower.selfadjointView<Eigen::Lower>() * x - b).norm() / b.norm();
  if (!(residual < 1e-8)) {
    std::fprintf(stderr, "scale %g: solve residual %g too large\n", size.scale, residual);
    std::exit(1);
  }
  solver.reset();
  bipo::SparseMatrix().swap(k_ff_lower);
  bipo::SparseMatrix().swap(k_fp);

  // A linear analysis over n increments: count factorizations and solves.
  if (n_increments > 0) {
    SolverLog log;
    const bipo::Case c = linear_case(n_increments);
    bipo::Analysis analysis(
        c, mesh, std::make_unique<CountingSolver>(&log),
        {nullptr,
         [&](int n_free) {
           return bipo::apply_blas_threads(bipo::blas_threads_for(c.solver.blas_threads, n_free));
         },
         nullptr, nullptr});
    const int solves_before = log.solves;
    std::vector<double> per_increment;
    for (int inc = 1; inc <= n_increments; ++inc) {
      const auto start = Clock::now();
      (void)analysis.advance_to(inc);
      per_increment.push_back(seconds_since(start));
    }
    row.increment = median(per_increment);
    row.increment_solve = median(log.single_solve_seconds);
    row.factorizations = log.factorizations;
    row.solves = log.solves - solves_before;
    row.increments = n_increments;
    if (log.factorizations != 1) {
      std::fprintf(stderr, "scale %g: %d factorizations in one analysis (expected 1)\n", size.scale,
                   log.factorizations);
      std::exit(1);
    }
  }
  row.peak_gib = peak_rss_gib();
  return row;
}

void print_header() {
  std::printf("%6s %7s %8s %8s %5s %10s %10s %10s %10s %8s %10s %9s\n", "scale", "hex8", "dofs",
              "free", "reps", "assembly", "partition", "factorize", "solve", "asm/fac",
              "factor_nnz", "peak_GiB");
}

void print_row(const Row& r) {
  std::printf("%6.2g %7d %8d %8d %5d %9.4fs %9.4fs %9.4fs %9.5fs %8.3f %10.3g %9.2f\n",
              r.size.scale, r.n_hex, r.n_dofs, r.n_free, r.reps, r.assembly, r.partition,
              r.factorization, r.solve, r.assembly / r.factorization, r.factor_nnz, r.peak_gib);
  std::fflush(stdout);
}

void usage() {
  std::printf(
      "usage: bench_elasticity [--max-scale S] [--reps N] [--increments N]\n"
      "  --max-scale S   largest refinement scale (default 3; 3.5 is ~180k dofs, 4 is ~264k)\n"
      "  --reps N        repetitions per phase (default 5 below 50k dofs, 3 above)\n"
      "  --increments N  increments of the linear analysis per size (default 5, 0 = skip)\n");
}

}  // namespace

int main(int argc, char** argv) {
  bipo::keep_freed_memory_in_heap();  // as the bipo program does
  double max_scale = 3.0;
  int reps_override = 0, n_increments = 5;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto value = [&] { return bench::option_value(argc, argv, a, usage); };
    if (arg == "--max-scale") {
      max_scale = std::atof(value());
    } else if (arg == "--reps") {
      reps_override = std::atoi(value());
    } else if (arg == "--increments") {
      n_increments = std::atoi(value());
    } else {
      usage();
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }

  std::vector<Size> sizes;
  for (double s : {1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0}) {
    if (s > max_scale + 1e-9) break;
    bipo::CylinderParams p;
    p.core = p.ring = static_cast<int>(std::lround(8.0 * s));
    p.layers = static_cast<int>(std::lround(4.0 * s));
    sizes.push_back({s, p});
  }

  std::printf(
      "bench_elasticity: cylinder R = H = 10, E = 210000, nu = 0.3; K_ff with top and\n"
      "bottom clamped; %u hardware threads; load average at start %s\n",
      std::thread::hardware_concurrency(), load_average().c_str());
  std::printf(
      "times are medians over `reps` runs (solve: over max(reps, 7)); peak_GiB is the\n"
      "process peak RSS so far (sizes grow, so it is the peak of the largest size run)\n\n");
  print_header();
  const auto start = Clock::now();
  std::vector<Row> rows;
  for (const Size& size : sizes) {
    const int n_dofs =
        3 * (size.params.layers + 1) *
        ((size.params.core + 1) * (size.params.core + 1) + 4 * size.params.core * size.params.ring);
    const int reps = reps_override > 0 ? reps_override : (n_dofs < 50000 ? 5 : 3);
    rows.push_back(measure(size, reps, n_increments));
    print_row(rows.back());
  }

  if (n_increments > 0) {
    std::printf("\nLinear analysis (Analysis::advance_to, no contact), %d increments per size:\n",
                n_increments);
    std::printf("%6s %8s %12s %12s %10s %9s %15s\n", "scale", "free", "increment", "solve",
                "inc/solve", "inc/fac", "factorizations");
    for (const Row& r : rows)
      std::printf("%6.2g %8d %11.5fs %11.5fs %10.2f %9.4f %6d (%d solves)\n", r.size.scale,
                  r.n_free, r.increment, r.increment_solve, r.increment / r.increment_solve,
                  r.increment / r.factorization, r.factorizations, r.solves);
    std::printf(
        "(one factorization per analysis, two single right-hand-side solves per "
        "increment: nothing is refactorized between increments)\n");
  }
  std::printf("\ntotal %.1f s; load average at end %s; peak RSS %.2f GiB\n", seconds_since(start),
              load_average().c_str(), peak_rss_gib());
  return 0;
}
