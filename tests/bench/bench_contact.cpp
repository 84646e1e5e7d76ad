// Benchmark of the frictional contact solver (issue 4, "Speed"): the punch
// pressed on the rigid plane (isotropic friction mu = 0.2, top pushed down by
// 0.1 with in-plane held, contact on the bottom face) through one loading of
// 5 increments and one unloading of 10 (to factor 0.5). Per increment: the
// contact iterations (StepResult::newton_iterations, and the Gauss-Seidel
// sweeps of the fallback, StepResult::sweeps), the linear and the contact time;
// for the whole run (set-up included: assembly, factorization, Delassus
// operator) its time against the lower bound of one factorization plus one
// solve per increment. The single-solve time is measured on the run's own
// solver (a wrapper that times every call and counts factorizations).
// Then the whole cyclic cases A, B, C (programs and friction of
// cases/punch_*.yaml, 95 increments) on the punch mesh.
// With --sparse N (issue 13): the sparse contact path on the cylinder core =
// ring = N, layers = N/2, loaded in 5 increments: the median time of one
// application of W (one solve with K_ff's factor), and per preconditioner
// mode the medians of the contact time, the Newton steps and GMRES
// iterations, and the contact time per GMRES iteration.
//
//   bench_contact [--reps N] [--budget S] [--no-cyclic]
//                 [--refined] [--refined-size CORE,RING,LAYERS] [--time-limit S]
//                 [--sparse N] [--only-sparse]
//
// The seed runs repeat up to N times (default 5) while a measurement has used
// less than S seconds (default 15), and print medians. The refined punch
// (default core = ring = 16, layers = 24: 98475 dofs) runs once, only with
// --refined, and stops after the increment that passes the time limit
// (default 900 s).
#include <sys/resource.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "app/allocator.hpp"
#include "bench_support.hpp"
#include "io/case_file.hpp"
#include "mesh/generate.hpp"
#include "solver/analysis.hpp"
#include "solver/blas_threads.hpp"
#include "solver/driver.hpp"
#include "solver/linear_solver.hpp"

namespace {

using namespace bench;  // NOLINT: the shared helpers of bench_support.hpp

struct Step {
  double position = 0, factor = 0;
  int newton = 0, sweeps = 0;
  double linear = 0, contact = 0, wall = 0;
};

struct Run {
  int n_free = 0, n_contact = 0, n_increments = 0;
  bool completed = false;
  std::string failure;
  bipo::SetupTimings setup;
  double setup_wall = 0, total = 0, solve = 0;
  std::vector<Step> steps;
  SolverLog log;
  double factor_nnz = 0;
};

struct TimeLimit {};

/// Set-up (Analysis construction) and the whole load program, timed.
Run run_case(const bipo::Case& c, const bipo::Mesh& mesh, double time_limit = 0.0) {
  Run run;
  const auto start = Clock::now();
  bipo::Analysis analysis(
      c, mesh, std::make_unique<CountingSolver>(&run.log),
      {nullptr,
       [&](int n_free) {
         return bipo::apply_blas_threads(bipo::blas_threads_for(c.solver.blas_threads, n_free));
       },
       nullptr, nullptr});
  run.setup_wall = seconds_since(start);
  run.setup = analysis.timings();
  run.n_free = analysis.n_free();
  run.n_contact = analysis.contact().n_nodes();
  run.n_increments = c.program.n_increments();
  run.factor_nnz = analysis.factor_nonzeros();
  auto last = Clock::now();
  try {
    bipo::run_load_program(analysis, [&](const bipo::Analysis&, const bipo::StepResult& s) {
      const auto now = Clock::now();
      run.steps.push_back({s.position, s.factor, s.newton_iterations, s.sweeps, s.seconds_linear,
                           s.seconds_contact, std::chrono::duration<double>(now - last).count()});
      last = now;
      if (time_limit > 0.0 && seconds_since(start) > time_limit) throw TimeLimit{};
    });
    run.completed = true;
  } catch (const TimeLimit&) {
    run.failure = "stopped by the time limit";
  } catch (const std::exception& e) {
    run.failure = e.what();
  }
  run.total = seconds_since(start);
  run.solve = median(run.log.single_solve_seconds);
  if (run.log.factorizations != 1) {
    std::fprintf(stderr, "%d factorizations in one analysis (expected 1)\n",
                 run.log.factorizations);
    std::exit(1);
  }
  return run;
}

/// Runs up to `reps` times while the measurement has used less than `budget`.
std::vector<Run> repeat(const bipo::Case& c, const bipo::Mesh& mesh, int reps, double budget) {
  std::vector<Run> runs;
  const auto start = Clock::now();
  while (static_cast<int>(runs.size()) < reps && (runs.empty() || seconds_since(start) < budget)) {
    runs.push_back(run_case(c, mesh));
    if (!runs.back().completed) break;
  }
  return runs;
}

template <class F>
double median_of(const std::vector<Run>& runs, F f) {
  std::vector<double> v;
  for (const Run& r : runs) v.push_back(f(r));
  return median(v);
}

/// The punch of cases/punch_A.yaml with mu = 0.2: top (0, 0, -0.1) at factor 1
/// (in-plane held), contact of the bottom face on the plane z = 0.
bipo::Case punch_case(const bipo::LoadProgram& program) {
  bipo::Case c;
  c.source = "bench_contact punch";
  c.title = "punch, mu = 0.2";
  c.material = {210000.0, 0.3};
  c.program = program;
  c.dirichlet.push_back({"top", {0.0, 0.0, -0.1}, std::nullopt});
  bipo::ContactPlane plane;
  plane.name = "plane";
  plane.set = "bottom";
  plane.friction = {0.2, 0.2, 0.2, 0.2};
  c.contacts.push_back(plane);
  c.output.vtk = false;
  return c;
}

/// One loading of 5 increments to 1, one unloading of 10 to 0.5.
bipo::LoadProgram load_unload() {
  bipo::LoadProgram p;
  p.segments = {{1.0, 5, 0}, {0.5, 10, 0}};
  return p;
}

void print_steps(const std::vector<Run>& runs) {
  std::printf("%5s %7s %7s %7s %11s %11s %11s\n", "step", "factor", "newton", "sweeps", "linear",
              "contact", "step");
  const std::size_t n = runs.front().steps.size();
  for (std::size_t k = 0; k < n; ++k) {
    std::vector<double> lin, con, wall;
    for (const Run& r : runs) {
      if (r.steps.size() != n) continue;
      lin.push_back(r.steps[k].linear);
      con.push_back(r.steps[k].contact);
      wall.push_back(r.steps[k].wall);
    }
    const Step& s = runs.front().steps[k];
    std::printf("%5.4g %7.3f %7d %7d %9.2fms %9.2fms %9.2fms\n", s.position, s.factor, s.newton,
                s.sweeps, 1e3 * median(lin), 1e3 * median(con), 1e3 * median(wall));
  }
}

void print_summary(const std::vector<Run>& runs) {
  const Run& r0 = runs.front();
  const double fac = median_of(runs, [](const Run& r) { return r.setup.factorization; });
  const double solve = median_of(runs, [](const Run& r) { return r.solve; });
  const double total = median_of(runs, [](const Run& r) { return r.total; });
  const double linear = median_of(runs, [](const Run& r) {
    double s = 0;
    for (const Step& st : r.steps) s += st.linear;
    return s;
  });
  const double contact = median_of(runs, [](const Run& r) {
    double s = 0;
    for (const Step& st : r.steps) s += st.contact;
    return s;
  });
  long newton = 0, sweeps = 0;
  for (const Step& st : r0.steps) {
    newton += st.newton;
    sweeps += st.sweeps;
  }
  const double delassus = median_of(runs, [](const Run& r) { return r.setup.delassus; });
  const double bound = fac + r0.n_increments * solve;
  std::printf("  free dofs %d, contact nodes %d, factor nnz %.3g, runs %zu%s\n", r0.n_free,
              r0.n_contact, r0.factor_nnz, runs.size(),
              r0.completed ? "" : (" -- NOT COMPLETED: " + r0.failure).c_str());
  std::printf("  set-up %.4f s (assembly %.4f, factorization %.4f, Delassus %.4f)\n",
              median_of(runs, [](const Run& r) { return r.setup_wall; }),
              median_of(runs, [](const Run& r) { return r.setup.assembly; }), fac, delassus);
  std::printf(
      "  %zu steps for %d increments, %ld Newton iterations, %ld Gauss-Seidel sweeps; linear "
      "%.4f s, contact %.4f s\n",
      r0.steps.size(), r0.n_increments, newton, sweeps, linear, contact);
  std::printf("  single solve %.5f s; solves %d (%ld right-hand sides), factorizations %d\n", solve,
              r0.log.solves, r0.log.rhs_columns, r0.log.factorizations);
  std::printf("  whole run %.4f s; lower bound (1 factorization + %d solves) %.4f s; ratio %.2f\n",
              total, r0.n_increments, bound, total / bound);
  std::printf("  whole run without the Delassus operator %.4f s; ratio %.2f\n", total - delassus,
              (total - delassus) / bound);
  std::fflush(stdout);
}

void bench_sparse_runs(const bipo::Case& c, const bipo::Mesh& mesh, int reps, double budget);

/// The sparse contact path on a cylinder of size n (issue 13), both
/// preconditioners.
void bench_sparse(int n, int reps, double budget) {
  bipo::CylinderParams params;
  params.core = params.ring = n;
  params.layers = std::max(1, n / 2);
  const bipo::Mesh mesh = bipo::generate_cylinder(params);
  bipo::LoadProgram load;
  load.segments = {{1.0, 5, 0}};
  bipo::Case c = punch_case(load);
  c.solver.contact_solver = bipo::ContactSolverChoice::sparse;
  std::printf("\n== sparse contact path, cylinder core = ring = %d, layers = %d, load 5 ==\n", n,
              params.layers);
  {
    const bipo::Analysis analysis(c, mesh);
    const bipo::DelassusOperator& w = *analysis.contact().condensed_operators();
    Eigen::VectorXd r = Eigen::VectorXd::Ones(w.size()), v = Eigen::VectorXd::Zero(w.size());
    w.add_product(r, v);  // warm-up
    const double apply = time_median(std::max(reps, 21), [&] { w.add_product(r, v); });
    std::printf("  free dofs %d, contact nodes %d; W r (one solve) median %.3f ms\n",
                analysis.n_free(), analysis.contact().n_nodes(), 1e3 * apply);
  }
  for (const auto mode : {bipo::SparsePreconditionerChoice::stiffness_factor,
                          bipo::SparsePreconditionerChoice::own_factor}) {
    c.solver.sparse_preconditioner = mode;
    bench_sparse_runs(c, mesh, reps, budget);
  }
}

/// Runs the case up to `reps` times within `budget` and prints the medians.
void bench_sparse_runs(const bipo::Case& c, const bipo::Mesh& mesh, int reps, double budget) {
  const bool own = c.solver.sparse_preconditioner == bipo::SparsePreconditionerChoice::own_factor;
  std::vector<double> contact, per_iteration;
  long steps = 0, factorizations = 0, iterations = 0;
  const auto start = Clock::now();
  while (static_cast<int>(contact.size()) < reps &&
         (contact.empty() || seconds_since(start) < budget)) {
    bipo::Analysis analysis(c, mesh);
    double seconds = 0.0;
    steps = factorizations = iterations = 0;
    bipo::run_load_program(analysis, [&](const bipo::Analysis&, const bipo::StepResult& s) {
      seconds += s.seconds_contact;
      steps += s.newton_iterations;
      factorizations += s.contact_factorizations;
      iterations += s.contact_linear_iterations;
    });
    contact.push_back(seconds);
    per_iteration.push_back(seconds / static_cast<double>(std::max(1L, iterations)));
  }
  std::printf(
      "  %s: %zu runs: contact %.3f s (median), Newton steps %ld, factorizations %ld, GMRES "
      "iterations %ld (%.1f per step), contact time per GMRES iteration %.3f ms\n",
      own ? "own_factor" : "stiffness_factor", contact.size(), median(contact), steps,
      factorizations, iterations,
      static_cast<double>(iterations) / static_cast<double>(std::max(1L, steps)),
      1e3 * median(per_iteration));
  std::fflush(stdout);
}

void usage() {
  std::printf(
      "usage: bench_contact [--reps N] [--budget S] [--no-cyclic]\n"
      "                     [--refined] [--refined-size CORE,RING,LAYERS] [--time-limit S]\n"
      "  --reps N          repetitions of the seed runs (default 5)\n"
      "  --budget S        stop repeating a seed measurement after S seconds (default 15)\n"
      "  --no-cyclic       skip the 95-increment cyclic cases A, B, C\n"
      "  --refined         also run the refined punch (default 16,16,24: 98475 dofs)\n"
      "  --time-limit S    stop the refined run after the increment passing S s (default 900)\n"
      "  --sparse N        also bench the sparse contact path on the cylinder core = ring = N\n"
      "  --only-sparse     skip the seed, cyclic and refined runs\n");
}

}  // namespace

int main(int argc, char** argv) {
  bipo::keep_freed_memory_in_heap();  // as the bipo program does
  int reps = 5;
  double budget = 15.0, time_limit = 900.0;
  bool cyclic = true, refined = false, only_sparse = false;
  int sparse_size = 0;
  bipo::CylinderParams refined_params;
  refined_params.core = refined_params.ring = 16;
  refined_params.layers = 24;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto value = [&] { return bench::option_value(argc, argv, a, usage); };
    if (arg == "--reps") {
      reps = std::max(1, std::atoi(value()));
    } else if (arg == "--budget") {
      budget = std::atof(value());
    } else if (arg == "--no-cyclic") {
      cyclic = false;
    } else if (arg == "--refined") {
      refined = true;
    } else if (arg == "--refined-size") {
      refined = true;
      if (std::sscanf(value(), "%d,%d,%d", &refined_params.core, &refined_params.ring,
                      &refined_params.layers) != 3) {
        usage();
        return 2;
      }
    } else if (arg == "--time-limit") {
      time_limit = std::atof(value());
    } else if (arg == "--sparse") {
      sparse_size = std::max(1, std::atoi(value()));
    } else if (arg == "--only-sparse") {
      only_sparse = true;
    } else {
      usage();
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }

  std::printf(
      "bench_contact: punch R = H = 10, E = 210000, nu = 0.3, top (0, 0, -0.1), bottom\n"
      "on the plane z = 0; %u hardware threads; load average at start %s\n",
      std::thread::hardware_concurrency(), load_average().c_str());
  std::printf(
      "times are medians over the runs; a step's `linear` is its two solves and\n"
      "checks, `contact` the contact iteration, `step` the step's wall time\n");
  const auto start = Clock::now();

  if (sparse_size > 0) bench_sparse(sparse_size, reps, budget);
  if (only_sparse) {
    std::printf("\ntotal %.1f s; load average at end %s; peak RSS %.2f GiB (process)\n",
                seconds_since(start), load_average().c_str(), peak_rss_gib());
    return 0;
  }
  const bipo::Mesh seed = bipo::generate_cylinder({});
  {
    std::printf("\n== seed punch (%d hex8, %d dofs), mu = 0.2, load 5 + unload 10 ==\n",
                seed.n_hexes(), 3 * seed.n_nodes());
    const std::vector<Run> runs = repeat(punch_case(load_unload()), seed, reps, budget);
    print_steps(runs);
    print_summary(runs);
  }

  if (cyclic) {
    for (const char* name : {"A", "B", "C"}) {
      const std::filesystem::path file = std::filesystem::path(BIPO_SOURCE_DIR) / "cases" /
                                         ("punch_" + std::string(name) + ".yaml");
      bipo::Case c = bipo::read_case(file);
      c.output.vtk = false;
      const std::vector<Run> runs = repeat(c, seed, reps, budget);
      const Run& r0 = runs.front();
      long newton = 0, sweeps = 0;
      for (const Step& st : r0.steps) {
        newton += st.newton;
        sweeps += st.sweeps;
      }
      const auto& f = c.contacts.front().friction;
      std::printf("\n== seed punch cyclic case %s (mu %.2f/%.2f, p %.2f/%.2f), %d increments ==\n",
                  name, f.mu1, f.mu2, f.p1, f.p2, r0.n_increments);
      std::printf(
          "  whole run %.3f s (median of %zu; set-up %.4f s), %zu steps, %ld Newton iterations "
          "(%.1f per step), %ld sweeps, contact %.3f s%s\n",
          median_of(runs, [](const Run& r) { return r.total; }), runs.size(),
          median_of(runs, [](const Run& r) { return r.setup_wall; }), r0.steps.size(), newton,
          static_cast<double>(newton) / static_cast<double>(r0.steps.size()), sweeps,
          median_of(runs,
                    [](const Run& r) {
                      double s = 0;
                      for (const Step& st : r.steps) s += st.contact;
                      return s;
                    }),
          r0.completed ? "" : (" -- NOT COMPLETED: " + r0.failure).c_str());
      std::fflush(stdout);
    }
  }

  if (refined) {
    const bipo::Mesh mesh = bipo::generate_cylinder(refined_params);
    std::printf(
        "\n== refined punch core %d ring %d layers %d (%d hex8, %d dofs), mu = 0.2, "
        "load 5 + unload 10, one run, time limit %.0f s ==\n",
        refined_params.core, refined_params.ring, refined_params.layers, mesh.n_hexes(),
        3 * mesh.n_nodes(), time_limit);
    std::fflush(stdout);
    const std::vector<Run> runs{run_case(punch_case(load_unload()), mesh, time_limit)};
    print_steps(runs);
    print_summary(runs);
  }

  std::printf("\ntotal %.1f s; load average at end %s; peak RSS %.2f GiB (process)\n",
              seconds_since(start), load_average().c_str(), peak_rss_gib());
  return 0;
}
