// Friction that follows the load program (contact[i].friction_program): the
// Cattaneo-Mindlin set-up, a block pressed frictionless on a rigid plane,
// then friction switched on and the top moved sideways. Exact truths:
// while frictionless every tangential reaction is exactly zero; after the
// switch every node obeys the new law (certificate, cone), with the rho the
// new law derives; a cut increment has the law of the increment it belongs
// to; a program that switches to the law already in force changes nothing
// (bit for bit); and a block pressed WITH friction from the start is not the
// same state, since at nu = 0.3 the pressed face expands and friction holds
// it back (the Spence-type shear that the frictionless pressing avoids,
// tests/verification/contact_analytic.hpp).
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "contact/law/one_node.hpp"
#include "mesh/generate.hpp"
#include "solver/analysis.hpp"

namespace bipo {
namespace {

constexpr double kMu = 0.3;

Mesh small_block() {
  BlockParams p;
  p.size = {2.0, 2.0, 1.0};
  p.elements = {6, 6, 3};
  return generate_block(p);
}

/// Increments 1-2 press the top down by 0.01 (y held), 3-4 move it by
/// `shear_x` along x; friction `initial` from increment 1, then `program`.
Case pressed_then_sheared(double initial, const std::vector<FrictionChange>& program,
                          double shear_x = 0.006) {
  Case c;
  c.source = "friction_program";
  c.material = {1000.0, 0.3};
  c.program.segments = {{1.0, 4, 0}};
  LoadProgram press, shear;
  press.segments = {{1.0, 2, 0}, {1.0, 2, 0}};
  shear.segments = {{0.0, 2, 0}, {1.0, 2, 0}};
  c.dirichlet.push_back({"top", {std::nullopt, 0.0, -0.01}, press});
  c.dirichlet.push_back({"top", {shear_x, std::nullopt, std::nullopt}, shear});
  ContactPlane plane;
  plane.name = "floor";
  plane.set = "bottom";
  plane.friction = {initial, initial, initial, initial};
  plane.friction_program = program;
  c.contacts.push_back(plane);
  return c;
}

const std::vector<FrictionChange> kSwitchOn{{3, {kMu, kMu, kMu, kMu}}};

double max_tangential(const Analysis& a) {
  double t = 0.0;
  for (const auto& s : a.contact_states()) t = std::max(t, s.r.tail<2>().norm());
  return t;
}

TEST(FrictionProgram, FrictionlessPressingThenTheNewLaw) {
  const Mesh mesh = small_block();
  Analysis a(pressed_then_sheared(0.0, kSwitchOn), mesh);
  for (int k = 1; k <= 2; ++k) {
    (void)a.advance_to(k);
    EXPECT_TRUE(a.contact().law(0).frictionless());
    for (const auto& s : a.contact_states()) {
      EXPECT_EQ(s.r(1), 0.0);
      EXPECT_EQ(s.r(2), 0.0);
    }
  }
  std::array<StepResult, 5> steps;
  for (int k = 3; k <= 4; ++k) {
    const StepResult step = a.advance_to(k);
    steps[k] = step;
    EXPECT_LE(step.scaled_certificate, 1e-8);
    EXPECT_EQ(step.n_open, 0);
    double max_r = 0.0;
    for (const auto& s : a.contact_states()) max_r = std::max(max_r, s.r.norm());
    for (int i = 0; i < a.contact().n_nodes(); ++i) {
      const ContactNodeState& s = a.contact_states()[i];
      EXPECT_EQ(a.contact().law(i).mu1(), kMu);
      EXPECT_LE(s.r.tail<2>().norm(), kMu * s.r(0) * (1.0 + 1e-12) + 1e-14 * max_r);
      if (s.state == ContactState::slip) {
        EXPECT_NEAR(s.f, 0.0, 1e-9 * max_r);
      }
      // The rho of the new law, derived from the node's compliance.
      EXPECT_EQ(
          a.contact().rho(i),
          automatic_rho(a.contact().condensed_operators()->diagonal_block(i), a.contact().law(i)));
    }
    EXPECT_GT(max_tangential(a), 0.05 * max_r);
  }
  // Half the shear: every node sticks; all of it: the edges slip (partial
  // slip, as in Cattaneo-Mindlin), so the force falls short of twice the
  // half-shear's (the stick response is linear from the pressed state).
  EXPECT_EQ(steps[3].n_slip, 0);
  EXPECT_GT(steps[4].n_slip, 0);
  EXPECT_GT(steps[4].n_stick, 0);
  EXPECT_LT(std::abs(steps[4].contact_tangential_force(0)),
            2.0 * std::abs(steps[3].contact_tangential_force(0)));
}

TEST(FrictionProgram, ACutIncrementHasTheLawOfItsIncrement) {
  const Mesh mesh = small_block();
  Analysis a(pressed_then_sheared(0.0, kSwitchOn), mesh);
  (void)a.advance_to(1.5);  // part of increment 2: still frictionless
  EXPECT_TRUE(a.contact().law(0).frictionless());
  (void)a.advance_to(2.0);
  EXPECT_TRUE(a.contact().law(0).frictionless());
  (void)a.advance_to(2.25);  // part of increment 3: the new law
  EXPECT_EQ(a.contact().law(0).mu1(), kMu);
}

TEST(FrictionProgram, SwitchingToTheLawInForceChangesNothing) {
  const Mesh mesh = small_block();
  Analysis plain(pressed_then_sheared(kMu, {}), mesh);
  Analysis same(pressed_then_sheared(kMu, kSwitchOn), mesh);
  for (int k = 1; k <= 4; ++k) {
    (void)plain.advance_to(k);
    (void)same.advance_to(k);
    EXPECT_EQ(plain.displacement(), same.displacement()) << k;
  }
}

TEST(FrictionProgram, FrictionDuringPressingIsAnotherState) {
  const Mesh mesh = small_block();
  Analysis switched(pressed_then_sheared(0.0, kSwitchOn), mesh);
  Analysis from_start(pressed_then_sheared(kMu, {}), mesh);
  for (int k = 1; k <= 2; ++k) {
    (void)switched.advance_to(k);
    (void)from_start.advance_to(k);
  }
  // Pressed with friction, the face's Poisson expansion is held back: shear
  // reactions of a good fraction of the pressure, where the other has none.
  double max_n = 0.0;
  for (const auto& s : from_start.contact_states()) max_n = std::max(max_n, s.r(0));
  EXPECT_GT(max_tangential(from_start), 0.05 * max_n);
  EXPECT_EQ(max_tangential(switched), 0.0);
  StepResult a, b;
  for (int k = 3; k <= 4; ++k) {
    a = switched.advance_to(k);
    b = from_start.advance_to(k);
  }
  // Same law, same final loads, different history: the tangential force
  // differs by more than the solver's tolerance by far.
  EXPECT_GT(std::abs(a.contact_tangential_force(0) - b.contact_tangential_force(0)),
            1e-3 * std::abs(a.contact_tangential_force(0)));
}

}  // namespace
}  // namespace bipo
