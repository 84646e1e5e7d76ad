// The solver's edge cases (issue 11, items 7, 10, 11, 12): increment cutting
// that terminates whatever max_cuts says; a body that starts at a distance
// from the plane, a rigid motion without contact force, a plane whose normal
// points away from the body; nodes clear of the plane reported open; the
// signs and the cone that the outputs promise, on a bonded run and on the
// seed punch cases.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "../sanitized_build.hpp"
#include "app/run.hpp"
#include "core/errors.hpp"
#include "io/case_file.hpp"
#include "mesh/generate.hpp"
#include "solver/analysis.hpp"
#include "solver/driver.hpp"

namespace bipo {
namespace {

ContactPlane floor_plane(const FrictionParams& friction) {
  ContactPlane plane;
  plane.name = "floor";
  plane.set = "bottom";
  plane.friction = friction;
  return plane;
}

/// The punch (top pressed down by `depth` at factor 1, in-plane held) on the
/// floor z = `floor_z`.
Case punch_case(const FrictionParams& friction, double depth, double floor_z = 0.0) {
  Case c;
  c.source = "punch";
  c.material = {210000.0, 0.3};
  c.program.segments = {{1.0, 1, 0}};
  c.dirichlet.push_back({"top", {0.0, 0.0, -depth}, std::nullopt});
  c.contacts.push_back(floor_plane(friction));
  c.contacts[0].point = {0.0, 0.0, floor_z};
  return c;
}

std::string numerical_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const NumericalError& e) {
    return e.what();
  }
  return "no NumericalError";
}

// --- item 7: cutting terminates ----------------------------------------------

// The punch resting 0.0233 mm above the floor, pressed 0.02 mm per increment
// with one contact iteration allowed and practically unlimited cuts.
// Increment 1 is free motion (converges without iterations). Increment 2
// touches at position 1.165: pieces before it converge, but a piece across it
// starts a contact problem that is the same at every scale and needs more
// than one iteration, so the pieces around the touch are cut down to the
// smallest one: the run must stop there, quickly, naming the increment.
TEST(SolverEdgeCases, CuttingStopsAtTheSmallestPieceWhateverMaxCuts) {
  const Mesh mesh = generate_cylinder({.core = 4, .ring = 4, .layers = 2});
  Case c = punch_case({0.2, 0.2, 0.2, 0.2}, 0.1, -0.0233);
  c.program.segments = {{1.0, 5, 0}};
  c.solver.max_iterations = 1;
  c.solver.max_cuts = 1000000;
  Analysis analysis(c, mesh);
  std::vector<double> positions;
  const auto start = std::chrono::steady_clock::now();
  const std::string message = numerical_error_of([&] {
    run_load_program(
        analysis, [&](const Analysis&, const StepResult& s) { positions.push_back(s.position); });
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 20.0);
  EXPECT_NE(message.find("increment 2 did not converge (program position 1.16"), std::string::npos)
      << message;
  EXPECT_NE(message.find("after 30 cuts, the smallest piece: 2^-30 of an increment)"),
            std::string::npos)
      << message;
  ASSERT_FALSE(positions.empty());
  EXPECT_EQ(positions.front(), 1.0);
  // Every converged piece is at least the smallest piece long.
  double previous = 0.0;
  for (const double p : positions) {
    EXPECT_GE(p - previous, std::ldexp(1.0, -max_cut_depth)) << p;
    previous = p;
  }
}

/// The bisection as a recursion (the driver's earlier form), for comparison.
void bisect_recursively(Analysis& analysis, double from, double to, int cuts_left,
                        std::vector<double>& positions) {
  try {
    positions.push_back(analysis.advance_to(to).position);
  } catch (const NumericalError&) {
    if (cuts_left == 0) throw;
    bisect_recursively(analysis, from, 0.5 * (from + to), cuts_left - 1, positions);
    bisect_recursively(analysis, 0.5 * (from + to), to, cuts_left - 1, positions);
  }
}

// Cut increments that converge are solved at the same positions, in the same
// order and with the same results (bit for bit) as by recursive bisection.
// Nine contact iterations do not solve the jump of this program's increment
// 4 (reloading from a quarter) of case C's law, but its halves converge.
TEST(SolverEdgeCases, CuttingSolvesThePiecesOfARecursiveBisection) {
  const Mesh mesh = generate_cylinder({.core = 4, .ring = 4, .layers = 2});
  Case c = punch_case({0.3, 0.15, 0.05, 0.2}, 0.1);
  c.program.segments = {{0.25, 1, 0}, {1.0, 1, 0}, {0.25, 1, 1}, {1.0, 1, 1}};
  c.solver.max_iterations = 9;
  Analysis driven(c, mesh), recursive(c, mesh);
  std::vector<double> driven_positions, recursive_positions;
  run_load_program(driven, [&](const Analysis&, const StepResult& s) {
    driven_positions.push_back(s.position);
  });
  for (int k = 1; k <= c.program.n_increments(); ++k)
    bisect_recursively(recursive, k - 1.0, k, c.solver.max_cuts, recursive_positions);
  EXPECT_GT(driven_positions.size(), 4u) << "the case no longer needs cuts";
  EXPECT_EQ(driven_positions, recursive_positions);
  EXPECT_EQ((driven.displacement() - recursive.displacement()).lpNorm<Eigen::Infinity>(), 0.0);
  for (std::size_t i = 0; i < driven.contact_states().size(); ++i)
    EXPECT_EQ(driven.contact_states()[i].r, recursive.contact_states()[i].r);
}

// --- item 10: a gap at the start, rigid motions, a normal pointing away --------

// The punch 0.025 mm above the floor, its top pressed down by 0.02 mm per
// increment. Increment 1 is a rigid translation, without contact. From
// increment 2 on it is the punch without gap pressed by 0.025 mm less: the
// gap closes by a rigid translation normal to the plane (no slip), and the
// rest is the same linear elasticity and the same friction history, so
// forces, states and dissipation are those of the case without gap pressed
// by 0.015, 0.035, 0.055 and 0.075 mm.
TEST(SolverEdgeCases, ApproachThenContactIsTheCaseWithoutGapPressedByLess) {
  const Mesh mesh = generate_cylinder({.core = 4, .ring = 4, .layers = 2});
  const FrictionParams friction{0.2, 0.2, 0.2, 0.2};
  const double gap = 0.025;
  Case with_gap = punch_case(friction, 0.1, -gap);
  with_gap.program.segments = {{1.0, 5, 0}};
  Case without_gap = punch_case(friction, 0.075);
  without_gap.program.segments = {{0.2, 1, 0}, {1.0, 3, 0}};  // 0.015, then 0.02 per increment
  Analysis approach(with_gap, mesh), pressed(without_gap, mesh);

  const StepResult free = approach.advance_to(1.0);
  EXPECT_EQ(free.n_open, static_cast<int>(mesh.node_set("bottom").size()));
  EXPECT_EQ(free.contact_normal_force, 0.0);
  EXPECT_EQ(free.contact_force, Eigen::Vector3d::Zero());
  EXPECT_LE(free.equilibrium_residual, 1e-14);
  for (const ContactNodeState& s : approach.contact_states()) {
    EXPECT_EQ(s.r, Eigen::Vector3d::Zero());
    EXPECT_NEAR(s.gap, gap - 0.02, 1e-14);
  }
  for (int i = 0; i < mesh.n_nodes(); ++i)  // the prescribed translation everywhere
    EXPECT_LT((approach.displacement().segment<3>(3 * i) - Eigen::Vector3d(0.0, 0.0, -0.02)).norm(),
              1e-14)
        << "node " << i;

  for (int k = 2; k <= 5; ++k) {
    SCOPED_TRACE("increment " + std::to_string(k));
    const StepResult a = approach.advance_to(k);
    const StepResult b = pressed.advance_to(k - 1);
    ASSERT_GT(b.contact_normal_force, 0.0);
    const double force = b.contact_normal_force;
    EXPECT_NEAR(a.contact_normal_force, force, 1e-9 * force);
    EXPECT_NEAR(a.contact_tangential_force.x(), b.contact_tangential_force.x(), 1e-9 * force);
    EXPECT_NEAR(a.contact_tangential_force.y(), b.contact_tangential_force.y(), 1e-9 * force);
    EXPECT_NEAR(a.dirichlet_reactions[0].z(), b.dirichlet_reactions[0].z(), 1e-9 * force);
    EXPECT_EQ(a.n_open, b.n_open);
    EXPECT_EQ(a.n_stick, b.n_stick);
    EXPECT_EQ(a.n_slip, b.n_slip);
    EXPECT_NEAR(a.accumulated_dissipation, b.accumulated_dissipation,
                1e-9 * b.accumulated_dissipation + 1e-300);
    // The displacements differ by the rigid closing of the gap.
    const double scale = pressed.displacement().lpNorm<Eigen::Infinity>();
    for (int i = 0; i < mesh.n_nodes(); ++i)
      EXPECT_LT((approach.displacement().segment<3>(3 * i) -
                 pressed.displacement().segment<3>(3 * i) - Eigen::Vector3d(0.0, 0.0, -gap))
                    .norm(),
                1e-9 * scale)
          << "node " << i;
  }
  EXPECT_GT(approach.contact_states()[0].r(0), 0.0);
}

// A block translated rigidly by its top, nothing else: K u is round-off, and
// the equilibrium residual is measured against |K| |u|, not against K u.
TEST(SolverEdgeCases, RigidTranslationHasRoundOffResidual) {
  const Mesh mesh = generate_box({-1, -1, 0}, {1, 1, 1}, 3, 3, 2);
  Case c;
  c.source = "translation";
  c.material = {210000.0, 0.3};
  c.program.segments = {{1.0, 2, 0}};
  const Eigen::Vector3d motion(0.01, -0.02, 0.03);
  c.dirichlet.push_back({"zmax", {motion.x(), motion.y(), motion.z()}, std::nullopt});
  Analysis analysis(c, mesh);
  run_load_program(analysis, [&](const Analysis& a, const StepResult& s) {
    EXPECT_LE(s.equilibrium_residual, 1e-15);
    for (int i = 0; i < mesh.n_nodes(); ++i)
      EXPECT_LT((a.displacement().segment<3>(3 * i) - s.factor * motion).norm(), 1e-15);
    EXPECT_LT(s.dirichlet_reactions[0].norm(), 1e-9);  // vs 210000 x 0.03 = 6300 per unit area
  });
}

// A block lifted off the floor by its top: rigid, every node open, r = 0.
// The same block held while the floor moves away: nothing moves at all, u,
// the loads and the reactions are exactly 0, and so is the residual.
TEST(SolverEdgeCases, RigidMotionsAwayFromThePlaneRunWithoutResidual) {
  const Mesh mesh = generate_box({-1, -1, 0}, {1, 1, 1}, 3, 3, 2);
  const int m = static_cast<int>(mesh.node_set("zmin").size());
  for (const bool plane_moves : {false, true}) {
    SCOPED_TRACE(plane_moves ? "floor moves down" : "block lifted");
    Case c;
    c.source = "lift";
    c.material = {210000.0, 0.3};
    c.program.segments = {{1.0, 3, 0}};
    c.dirichlet.push_back({"zmax", {0.0, 0.0, plane_moves ? 0.0 : 0.05}, std::nullopt});
    ContactPlane plane = floor_plane({0.3, 0.3, 0.3, 0.3});
    plane.set = "zmin";
    if (plane_moves) plane.motion = {0.01, 0.0, -0.05};
    c.contacts.push_back(plane);
    Analysis analysis(c, mesh);
    int steps = 0;
    run_load_program(analysis, [&](const Analysis& a, const StepResult& s) {
      ++steps;
      EXPECT_EQ(s.n_open, m);
      EXPECT_EQ(s.contact_normal_force, 0.0);
      for (const ContactNodeState& state : a.contact_states()) {
        EXPECT_EQ(state.r, Eigen::Vector3d::Zero());
        EXPECT_NEAR(state.gap, 0.05 * s.factor, 1e-15);
      }
      if (plane_moves) {
        EXPECT_EQ(s.equilibrium_residual, 0.0);
        EXPECT_EQ(a.displacement().lpNorm<Eigen::Infinity>(), 0.0);
      } else {
        EXPECT_LE(s.equilibrium_residual, 1e-15);
      }
    });
    EXPECT_EQ(steps, 3);
  }
}

// A block held by its middle layer between a floor (plane 0, normal up)
// and a ceiling (plane 1, normal down): turning either normal puts the body
// on the plane's negative side, although the contact faces still have g = 0.
TEST(SolverEdgeCases, ANormalPointingAwayFromTheBodyIsAnInputError) {
  Mesh mesh = generate_box({-1, -1, 0}, {1, 1, 1}, 2, 2, 2);
  for (int i = 0; i < mesh.n_nodes(); ++i)
    if (mesh.nodes[i].z() == 0.5) mesh.node_sets["middle"].push_back(i);
  Case c;
  c.source = "/cases/between.yaml";
  c.material = {210000.0, 0.3};
  c.program.segments = {{1.0, 1, 0}};
  c.dirichlet.push_back({"middle", {0.0, 0.0, 0.0}, std::nullopt});
  ContactPlane floor = floor_plane({0.2, 0.2, 0.2, 0.2});
  floor.set = "zmin";
  ContactPlane ceiling = floor;
  ceiling.name = "ceiling";
  ceiling.set = "zmax";
  ceiling.point = {0.0, 0.0, 1.0};
  ceiling.normal = {0.0, 0.0, -1.0};
  c.contacts = {floor, ceiling};
  EXPECT_NO_THROW(Analysis(c, mesh));
  for (const int turned : {0, 1}) {
    Case wrong = c;
    wrong.contacts[turned].normal *= -1.0;
    std::string message = "no InputError";
    try {
      Analysis analysis(wrong, mesh);
    } catch (const InputError& e) {
      message = e.what();
    }
    const std::string key =
        "/cases/between.yaml: contact[" + std::to_string(turned) + "].plane.normal: the normal ";
    EXPECT_NE(message.find(key), std::string::npos) << message;
    EXPECT_NE(message.find("of contact plane '" + wrong.contacts[turned].name +
                           "' points away from the body"),
              std::string::npos)
        << message;
  }
}

// --- item 11: nodes clear of the plane are open --------------------------------

// A block whose bottom is the paraboloid z = (x^2 + y^2) / (2 R) (a sphere-like
// body of radius R near its apex), the mapping fading linearly to the flat
// top z = 5, pressed down by `depth` at its top onto the floor z = 0.
Mesh curved_block(double radius) {
  Mesh mesh = generate_box({-5, -5, 0}, {5, 5, 5}, 20, 20, 4);
  for (Eigen::Vector3d& x : mesh.nodes)
    x.z() += (1.0 - x.z() / 5.0) * (x.x() * x.x() + x.y() * x.y()) / (2.0 * radius);
  return mesh;
}

// Most of the 441 bottom nodes never come near the floor; they must be open,
// with r = 0 exactly. Before, round-off reactions (r_n of 1e-26 to 1e-17)
// made about half of them stick or slip, 10 times the nodes that touch.
TEST(SolverEdgeCases, NodesClearOfTheFloorOfACurvedBodyAreOpen) {
  const double radius = 10.0, depth = 0.2;
  const Mesh mesh = curved_block(radius);
  Case c;
  c.source = "curved";
  c.material = {210000.0, 0.3};
  c.program.segments = {{1.0, 3, 0}};
  c.dirichlet.push_back({"zmax", {0.0, 0.0, -depth}, std::nullopt});
  ContactPlane plane = floor_plane({0.3, 0.3, 0.3, 0.3});
  plane.set = "zmin";
  c.contacts.push_back(plane);
  Analysis analysis(c, mesh);
  const int m = static_cast<int>(mesh.node_set("zmin").size());
  int steps = 0;
  run_load_program(analysis, [&](const Analysis& a, const StepResult& s) {
    SCOPED_TRACE("step " + std::to_string(++steps));
    const double approach = depth * s.factor;
    int touching = 0, reachable = 0;
    for (int i = 0; i < m; ++i) {
      const ContactNodeState& state = a.contact_states()[i];
      const double initial_gap = mesh.nodes[a.contact_mesh_nodes()[i]].z();
      if (state.gap <= 1e-9 * approach) ++touching;
      // Squeezed between the platen and the floor, no bottom node moves
      // down by more than the platen: only these can reach the floor.
      if (initial_gap < approach) ++reachable;
      if (state.gap > 1e-9 * approach) {
        EXPECT_EQ(state.state, ContactState::open) << "node " << i << ", gap " << state.gap;
        EXPECT_EQ(state.r, Eigen::Vector3d::Zero()) << "node " << i;
      }
    }
    EXPECT_EQ(m - s.n_open, touching);
    EXPECT_GT(touching, 0);
    EXPECT_LE(touching, reachable);
    EXPECT_GT(s.n_open, m / 2);
    for (int i = 0; i < m; ++i) {
      if (mesh.nodes[a.contact_mesh_nodes()[i]].head<2>().isZero(0.0)) {  // the apex touches
        EXPECT_NE(a.contact_states()[i].state, ContactState::open);
      }
    }
  });
  EXPECT_EQ(steps, 3);
}

// --- item 12: the signs and the cone the outputs promise -------------------------

/// The documented signs and the cone, exactly, at every step (docs/outputs.md).
struct SignChecks {
  double accumulated = 0.0;
  int steps = 0;

  void operator()(const Analysis& a, const StepResult& s) {
    SCOPED_TRACE("position " + std::to_string(s.position));
    ++steps;
    const NodeToPlaneContact& contact = a.contact();
    for (int i = 0; i < contact.n_nodes(); ++i) {
      const ContactNodeState& state = a.contact_states()[i];
      const FrictionLaw& law = contact.planes()[contact.nodes()[i].plane].law;
      ASSERT_GE(state.r(0), 0.0) << "node " << i;
      ASSERT_LE(law.norm_mu(state.r.tail<2>()), state.r(0)) << "node " << i;
      ASSERT_LE(state.f, 0.0) << "node " << i;
      ASSERT_GE(state.dissipation, 0.0) << "node " << i;
      ASSERT_GE(a.accumulated_dissipation()[i], 0.0) << "node " << i;
      ASSERT_GE(state.certificate, 0.0) << "node " << i;
      if (state.state == ContactState::open) {
        ASSERT_EQ(state.r, Eigen::Vector3d::Zero()) << "node " << i;
        ASSERT_EQ(state.f, 0.0) << "node " << i;
      }
    }
    EXPECT_GE(s.dissipation, 0.0);
    EXPECT_GE(s.accumulated_dissipation, accumulated);
    accumulated = s.accumulated_dissipation;
    EXPECT_GE(s.scaled_certificate, 0.0);
    EXPECT_LE(s.scaled_certificate, a.certificate_acceptance());
    EXPECT_LE(s.scaled_penetration, a.certificate_acceptance());
    EXPECT_LE(s.equilibrium_residual, a.case_description().solver.force_tolerance);
  }
};

// mu = p = 1e6: every node sticks, its slip is round-off, and round-off
// amplified by mu is what the certificate measures: up to 6e-10 here, above
// law_tolerance (1e-10) and below the acceptance threshold (1e-8).
TEST(SolverEdgeCases, BondedPunchKeepsEverySignAndTheCone) {
#if defined(BIPO_TEST_SANITIZED)
  // Thousands of contact iterations per increment: over 15 minutes in the
  // Debug sanitizer build, 2 s in Release, where the default suite runs it.
  // The sanitizer build runs the same code on the seed punch cases below.
  GTEST_SKIP() << "too slow in the Debug sanitizer build; run in Release";
#endif
  const Mesh mesh = generate_cylinder({.core = 4, .ring = 4, .layers = 2});
  Case c = punch_case({1e6, 1e6, 1e6, 1e6}, 0.1);
  c.program.segments = {{1.0, 5, 0}, {0.5, 10, 1}};
  Analysis analysis(c, mesh);
  SignChecks checks;
  run_load_program(analysis, std::ref(checks));
  EXPECT_EQ(analysis.position(), 15.0);  // some increments are cut
  for (const ContactNodeState& state : analysis.contact_states())
    EXPECT_EQ(state.state, ContactState::stick);
}

// The shipped seed punch cases, as `bipo run` runs them.
TEST(SolverEdgeCases, SeedPunchCasesKeepEverySignAndTheCone) {
  for (const char* name : {"punch_A", "punch_B", "punch_C"}) {
    SCOPED_TRACE(name);
    const Case c = read_case(std::string(BIPO_SOURCE_DIR) + "/cases/" + name + ".yaml");
    const Mesh mesh = load_mesh(c);
    Analysis analysis(c, mesh);
    SignChecks checks;
    run_load_program(analysis, std::ref(checks));
    EXPECT_EQ(checks.steps, c.program.n_increments());
  }
}

}  // namespace
}  // namespace bipo
