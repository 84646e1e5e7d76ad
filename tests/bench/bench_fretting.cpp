// Benchmark of the dense contact solve in a sphere-on-flat situation (issue
// 15, item 7: 1000 fretting cycles of 20 increments in under a minute), at
// the solver level: the Delassus operator of the seed punch's bottom face
// (337 nodes) with the free gap of a rigid sphere of radius R pressed by
// delta, g0 = rho^2 / (2 R) - delta at a node at radius rho, so that only a
// central disc touches. Two sequences, each solved increment after
// increment with one ContactWorkspace as an analysis does:
//   pressing: delta in 5 equal increments from 0, tangential motion 0;
//   fretting: from the pressed state, one cycle of 20 increments of the
//     sphere's tangential displacement s (0 -> +s_a -> -s_a -> 0, equal
//     steps), the normal position held.
// In an increment the free motion is q = (g0, -(W r_prev)_t - ds): the
// reactions r are totals, the tangential kinematics increments.
// Each sequence runs with the plain Newton step (unknowns dv, a fresh LU
// every step) and with the default one (the smaller formulation, the LU
// reused while the system is unchanged), interleaved repetition by
// repetition (the machine is shared); prints the median time of the
// contact solves (solve_contact alone) per increment, the
// Newton steps, the steps solved for dr and those that reused an LU, the
// node states at the end, and the largest difference of the two answers.
//
//   bench_fretting [--reps N] [--radius R] [--delta D] [--slip S] [--mu MU] [--skip-plain]
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "contact/law/law.hpp"
#include "contact/solvers.hpp"
#include "mesh/generate.hpp"
#include "solver/analysis.hpp"
#include "solver/blas_threads.hpp"

namespace {

using namespace bench;  // NOLINT: the shared helpers of bench_support.hpp

struct Options {
  int reps = 11;
  double radius = 80.0;  // sphere: contact radius sqrt(2 R delta) = 4 on the punch's 10
  double delta = 0.1;
  double slip = 0.004;  // s_a: partial slip at mu = 0.3 (Cattaneo-Mindlin)
  double mu = 0.3;
  bool skip_plain = false;
};

/// One sequence's increments: the free gap g0 and the tangential step ds.
struct Increment {
  double delta = 0.0;
  Eigen::Vector2d ds = Eigen::Vector2d::Zero();
};

struct SequenceResult {
  double seconds = 0.0;
  long newton = 0, sweeps = 0, steps = 0, in_reactions = 0, reused = 0;
  bool converged = true;
  Eigen::VectorXd r;
  int stick = 0, slip = 0, open = 0;
};

/// Solves the increments one after the other from r (the state before the
/// first), with one workspace, as an analysis does.
SequenceResult run_sequence(const bipo::CondensedContactProblem& base,
                            const std::vector<double>& radius2, double sphere_radius,
                            const std::vector<Increment>& increments, Eigen::VectorXd r,
                            bool plain) {
  bipo::ContactWorkspace workspace;
  workspace.options.choose_formulation = !plain;
  workspace.options.reuse_factorization = !plain;
  bipo::CondensedContactProblem problem = base;
  const int m = problem.n_nodes();
  Eigen::VectorXd wr(3 * m);
  SequenceResult result;
  double previous_delta = 0.0;
  for (const Increment& inc : increments) {
    wr.setZero();
    problem.operators->add_product(r, wr);
    double scale = std::abs(inc.delta - previous_delta);
    for (int i = 0; i < m; ++i) {
      problem.q(3 * i) = radius2[static_cast<std::size_t>(i)] / (2.0 * sphere_radius) - inc.delta;
      problem.q.segment<2>(3 * i + 1) = -wr.segment<2>(3 * i + 1) - inc.ds;
      scale = std::max(scale, problem.q.segment<2>(3 * i + 1).norm());
    }
    problem.motion_scale = scale;
    previous_delta = inc.delta;
    const auto start = Clock::now();
    const bipo::ContactSolveReport report = bipo::solve_contact(problem, r, 1e-10, 500, workspace);
    result.seconds += seconds_since(start);
    result.newton += report.newton_iterations;
    result.sweeps += report.sweeps;
    result.converged = result.converged && report.converged;
  }
  result.steps = workspace.counts.steps;
  result.in_reactions = workspace.counts.in_reactions;
  result.reused = workspace.counts.reused;
  Eigen::VectorXd v = problem.q;
  problem.operators->add_product(r, v);
  for (int i = 0; i < m; ++i) {
    Eigen::Vector3d f;
    const auto state = bipo::node_residual(
        r.segment<3>(3 * i), v.segment<3>(3 * i), problem.rho[static_cast<std::size_t>(i)],
        problem.laws[static_cast<std::size_t>(i)], f, nullptr, nullptr);
    (state == bipo::ContactState::stick  ? result.stick
     : state == bipo::ContactState::slip ? result.slip
                                         : result.open) += 1;
  }
  result.r = r;
  return result;
}

void print_comparison(const char* name, const std::vector<SequenceResult>& plain,
                      const std::vector<SequenceResult>& fast, int n_increments) {
  std::vector<double> tp, tf;
  for (const auto& p : plain) tp.push_back(p.seconds);
  for (const auto& f : fast) tf.push_back(f.seconds);
  const double mp = median(tp), mf = median(tf);
  const SequenceResult& p = plain.front();
  const SequenceResult& f = fast.front();
  const double max_r = p.r.lpNorm<Eigen::Infinity>();
  std::printf("\n== %s: %d increments, %zu repetitions ==\n", name, n_increments, plain.size());
  std::printf("  end states: stick %d, slip %d, open %d\n", f.stick, f.slip, f.open);
  for (const auto& [label, s, t] : {std::tuple{"plain  ", &p, mp}, std::tuple{"default", &f, mf}})
    std::printf(
        "  %s: %.3f ms per increment (median), Newton steps %ld, sweeps %ld, dense steps %ld "
        "(in dr %ld, LU reused %ld)%s\n",
        label, 1e3 * t / n_increments, s->newton, s->sweeps, s->steps, s->in_reactions, s->reused,
        s->converged ? "" : " -- NOT CONVERGED");
  std::printf("  speed-up %.2f; max |r_default - r_plain| / max |r| = %.2e\n", mp / mf,
              (f.r - p.r).lpNorm<Eigen::Infinity>() / max_r);
  std::fflush(stdout);
}

/// The contact problem of the seed punch's bottom face on a plane (its
/// operators shared with an analysis that is gone, q = 0), and each node's
/// squared distance from the axis.
bipo::CondensedContactProblem seed_punch_face(double mu, std::vector<double>& radius2) {
  bipo::Case c;
  c.source = "bench_fretting";
  c.material = {210000.0, 0.3};
  c.program.segments = {{1.0, 1, 0}};
  c.dirichlet.push_back({"top", {0.0, 0.0, 0.0}, std::nullopt});
  bipo::ContactPlane plane;
  plane.name = "sphere";
  plane.set = "bottom";
  plane.friction = {mu, mu, mu, mu};
  c.contacts.push_back(plane);
  c.output.vtk = false;
  const bipo::Mesh mesh = bipo::generate_cylinder({});
  const bipo::Analysis analysis(c, mesh);
  const bipo::NodeToPlaneContact& contact = analysis.contact();
  const int m = contact.n_nodes();
  bipo::CondensedContactProblem base{
      contact.condensed_operators(), Eigen::VectorXd::Zero(3 * m), {}, {}, 0.0};
  for (int i = 0; i < m; ++i) {
    base.laws.push_back(contact.law(i));
    base.rho.push_back(contact.rho(i));
    radius2.push_back(
        contact.nodes()[static_cast<std::size_t>(i)].position.head<2>().squaredNorm());
  }
  return base;
}

void usage() {
  std::printf(
      "usage: bench_fretting [--reps N] [--radius R] [--delta D] [--slip S] [--mu MU]\n"
      "  --reps N     repetitions of each sequence (default 11)\n"
      "  --radius R   sphere radius (default 80; the punch's radius is 10)\n"
      "  --delta D    indentation (default 0.1)\n"
      "  --slip S     fretting amplitude of the sphere's displacement (default 0.004)\n"
      "  --mu MU      friction coefficient, isotropic and associated (default 0.3)\n"
      "  --skip-plain run the default step only (for profiling)\n");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    auto value = [&] { return std::atof(bench::option_value(argc, argv, a, usage)); };
    if (arg == "--reps") {
      o.reps = std::max(1, static_cast<int>(value()));
    } else if (arg == "--radius") {
      o.radius = value();
    } else if (arg == "--delta") {
      o.delta = value();
    } else if (arg == "--slip") {
      o.slip = value();
    } else if (arg == "--mu") {
      o.mu = value();
    } else if (arg == "--skip-plain") {
      o.skip_plain = true;
    } else {
      usage();
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  // As the bipo program sets it for a problem of this size.
  const std::string threads = bipo::apply_blas_threads(bipo::blas_threads_for(std::nullopt, 1000));
  std::vector<double> radius2;
  const bipo::CondensedContactProblem base = seed_punch_face(o.mu, radius2);
  const int m = base.n_nodes();
  std::printf(
      "bench_fretting: seed punch bottom face, %d contact nodes; sphere R = %g, delta = %g "
      "(contact radius %.2f), mu = %g, fretting amplitude %g; BLAS threads %s; load average %s\n",
      m, o.radius, o.delta, std::sqrt(2.0 * o.radius * o.delta), o.mu, o.slip, threads.c_str(),
      load_average().c_str());

  std::vector<Increment> pressing(5), cycle(20);
  for (int k = 0; k < 5; ++k) pressing[static_cast<std::size_t>(k)].delta = o.delta * (k + 1) / 5.0;
  for (int k = 0; k < 20; ++k) {
    cycle[static_cast<std::size_t>(k)].delta = o.delta;
    const double step = o.slip / 5.0;
    cycle[static_cast<std::size_t>(k)].ds.x() = (k < 5 || k >= 15) ? step : -step;
  }
  const Eigen::VectorXd pressed =
      run_sequence(base, radius2, o.radius, pressing, Eigen::VectorXd::Zero(3 * m), true).r;
  for (const auto& [name, incs, start] :
       {std::tuple{"pressing (5 increments of delta / 5)", &pressing,
                   Eigen::VectorXd(Eigen::VectorXd::Zero(3 * m))},
        std::tuple{"fretting cycle (20 increments)", &cycle, pressed}}) {
    std::vector<SequenceResult> plain, fast;
    for (int rep = 0; rep < o.reps; ++rep) {
      if (rep == 0 || !o.skip_plain)
        plain.push_back(run_sequence(base, radius2, o.radius, *incs, start, true));
      fast.push_back(run_sequence(base, radius2, o.radius, *incs, start, false));
    }
    print_comparison(name, plain, fast, static_cast<int>(incs->size()));
  }
  std::printf("\nload average at end %s\n", load_average().c_str());
  return 0;
}
