// Benchmarks of the contact law module (contact/law/): the cone
// projection (isotropic closed form, orthotropic Ferrari + Newton path) and the
// bipotential predictor-corrector, on pre-generated inputs with mixed states
// (stick, slip, open), and the one-node solve of a Gauss-Seidel sweep.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <cmath>
#include <random>
#include <vector>

#include "contact/law/law.hpp"

namespace {

using bipo::FrictionLaw;
using Eigen::Matrix3d;
using Eigen::Vector2d;
using Eigen::Vector3d;

constexpr int kSamples = 1 << 14;  // fits in L1/L2, cycled through

/// Random tau in all directions: about a third each of stick, slip and open for
/// the friction coefficients used below.
std::vector<Vector3d> make_taus(unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  std::vector<Vector3d> taus(kSamples);
  for (Vector3d& t : taus) t = Vector3d(n(gen), 0.25 * n(gen), 0.25 * n(gen)) * 1e3;
  return taus;
}

struct UpdateInput {
  Vector3d r;
  double g;
  Vector2d du;
};

std::vector<UpdateInput> make_updates(unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  std::vector<UpdateInput> in(kSamples);
  for (UpdateInput& u : in) {
    u.r = Vector3d(std::abs(n(gen)), 0.1 * n(gen), 0.1 * n(gen)) * 1e3;
    u.g = 1e-3 * n(gen);
    u.du = Vector2d(n(gen), n(gen)) * 1e-3;
  }
  return in;
}

void run_projection(benchmark::State& state, const FrictionLaw& law) {
  const std::vector<Vector3d> taus = make_taus(1);
  std::size_t i = 0;
  for (auto _ : state) {
    const bipo::ConeProjection p = bipo::project_onto_friction_cone(taus[i], law);
    benchmark::DoNotOptimize(p);
    i = (i + 1) & (kSamples - 1);
  }
  state.SetItemsProcessed(state.iterations());
}

void run_update(benchmark::State& state, const FrictionLaw& law) {
  const std::vector<UpdateInput> in = make_updates(2);
  const double rho = 1e5;  // N/mm: the order of 1 / W for a steel node
  std::size_t i = 0;
  for (auto _ : state) {
    const UpdateInput& u = in[i];
    const bipo::ConeProjection p = bipo::bipotential_update(u.r, u.g, u.du, rho, law);
    benchmark::DoNotOptimize(p);
    i = (i + 1) & (kSamples - 1);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_ProjectionIsotropic(benchmark::State& state) {
  run_projection(state, FrictionLaw::isotropic(0.2));  // physics.md 4, case A
}
void BM_ProjectionOrthotropic(benchmark::State& state) {
  run_projection(state, FrictionLaw::orthotropic(0.3, 0.15, 0.05, 0.2));  // case C
}
void BM_UpdateIsotropic(benchmark::State& state) {
  run_update(state, FrictionLaw::isotropic(0.2));
}
void BM_UpdateOrthotropic(benchmark::State& state) {
  run_update(state, FrictionLaw::orthotropic(0.3, 0.15, 0.05, 0.2));
}

void BM_SolveNodeLawOrthotropic(benchmark::State& state) {
  const FrictionLaw law = FrictionLaw::orthotropic(0.3, 0.15, 0.05, 0.2);
  std::mt19937_64 gen(3);
  std::normal_distribution<double> n(0.0, 1.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  constexpr int n_cases = 1024;
  std::vector<Matrix3d> Ws(n_cases);
  std::vector<Vector3d> qs(n_cases);
  for (int k = 0; k < n_cases; ++k) {
    Matrix3d L = Matrix3d::Zero();
    for (int a = 0; a < 3; ++a) {
      L(a, a) = 0.6 + 0.7 * u(gen);
      for (int b = 0; b < a; ++b) L(a, b) = 0.3 * (2.0 * u(gen) - 1.0);
    }
    Ws[k] = 1e-5 * L * L.transpose();
    qs[k] = Vector3d(-u(gen), 0.3 * n(gen), 0.3 * n(gen)) * 1e-3;
  }
  std::size_t i = 0;
  for (auto _ : state) {
    const bipo::LocalSolution s =
        bipo::solve_node_law(Ws[i], qs[i], law, 0.0, Vector3d::Zero(), 1e-12, 100);
    benchmark::DoNotOptimize(s);
    i = (i + 1) & (n_cases - 1);
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_ProjectionIsotropic);
BENCHMARK(BM_ProjectionOrthotropic);
BENCHMARK(BM_UpdateIsotropic);
BENCHMARK(BM_UpdateOrthotropic);
BENCHMARK(BM_SolveNodeLawOrthotropic);

}  // namespace

BENCHMARK_MAIN();
