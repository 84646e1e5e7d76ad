// The condensed contact problem (NodeToPlaneContact::problem) and its solvers
// (contact/solvers.hpp; physics.md 3.2, 3.3) on a synthetic SPD condensed stiffness with open,
// stick and slip nodes at once, for the three kinds of law: the semi-smooth Newton iteration must
// reach the law at every node (checked independently with the certificate G of physics.md 3.1, the
// cone and the gap), and for associated laws, whose increment problem has a unique solution, agree
// with the Gauss-Seidel sweeps; the continuation from the associated law must reach the
// non-associated one, and so must the cascade that chains them; a copy of a problem shares its
// operators.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <random>
#include <stdexcept>

#include "contact/node_to_plane.hpp"
#include "contact/solvers.hpp"

namespace bipo {
namespace {

constexpr int kNodes = 60;

/// A contact module of kNodes nodes on the plane z = 0 (gap 0 at the start)
/// with a random SPD condensed stiffness: k (I + R R^T / n) in N/mm.
NodeToPlaneContact make_contact(const FrictionLaw& law) {
  RigidPlane plane;
  plane.law = law;
  std::vector<ContactNode> nodes(kNodes);
  for (int i = 0; i < kNodes; ++i) nodes[i].position = Eigen::Vector3d(i, 0.0, 0.0);
  NodeToPlaneContact contact({plane}, nodes);
  std::mt19937 generator(12345);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const int n = 3 * kNodes;
  Eigen::MatrixXd random(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) random(i, j) = uniform(generator);
  const double k = 1e4;
  Eigen::MatrixXd s = k * (Eigen::MatrixXd::Identity(n, n) + random * random.transpose() / n);
  contact.set_condensed_stiffness(std::move(s), {});
  return contact;
}

/// Free motion: a quarter of the nodes lift off (g > 0), the others would
/// penetrate by up to 2e-3 mm; tangential motions of the same size, so that
/// some nodes stick and some slip.
Eigen::VectorXd free_motion() {
  std::mt19937 generator(777);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  Eigen::VectorXd q(3 * kNodes);
  for (int i = 0; i < kNodes; ++i) {
    q(3 * i) = i % 4 == 0 ? 1e-3 * uniform(generator) : -1e-3 * (0.5 + uniform(generator));
    q(3 * i + 1) = 2e-3 * (uniform(generator) - 0.5);
    q(3 * i + 2) = 2e-3 * (uniform(generator) - 0.5);
  }
  return q;
}

/// Checks the law at every node independently of the solver's own test:
/// G_i (physics.md 3.1) scaled by max|r| and the motion scale, the reaction in the
/// cone, no penetration; and that all three states occur.
void expect_law_holds(const NodeToPlaneContact& contact, const FrictionLaw& law,
                      const Eigen::VectorXd& q, const Eigen::VectorXd& r) {
  const Eigen::VectorXd v = q + contact.delassus_times(r);
  const double max_r = r.lpNorm<Eigen::Infinity>();
  const double scale = max_r * contact.motion_scale(q);
  ASSERT_GT(max_r, 0.0);
  for (int i = 0; i < kNodes; ++i) {
    const Eigen::Vector3d r_i = r.segment<3>(3 * i);
    const Eigen::Vector3d v_i = v.segment<3>(3 * i);
    EXPECT_LE(std::abs(law_certificate(r_i, v_i(0), v_i.tail<2>(), law)), 1e-10 * scale)
        << "node " << i;
    EXPECT_LE(friction_function(r_i, law), 1e-10 * max_r) << "node " << i;
    EXPECT_GE(v_i(0), -1e-10 * contact.motion_scale(q)) << "node " << i;
  }
  int count[3] = {0, 0, 0};
  for (const ContactNodeState& s : contact.evaluate(v, r)) ++count[static_cast<int>(s.state)];
  EXPECT_GT(count[0], 0) << "no open node";
  EXPECT_GT(count[1], 0) << "no stick node";
  EXPECT_GT(count[2], 0) << "no slip node";
}

struct LawCase {
  const char* name;
  FrictionLaw law;
  bool associated;
};

class CondensedContact : public ::testing::TestWithParam<int> {};

const LawCase& law_case(int index) {
  static const LawCase cases[] = {
      {"isotropic", FrictionLaw::isotropic(0.3), true},
      {"orthotropic associated", FrictionLaw::orthotropic(0.3, 0.15, 0.3, 0.15), true},
      {"orthotropic non-associated", FrictionLaw::orthotropic(0.3, 0.15, 0.2, 0.25), false},
  };
  return cases[index];
}

TEST_P(CondensedContact, NewtonReachesTheLawAtEveryNode) {
  const LawCase& c = law_case(GetParam());
  SCOPED_TRACE(c.name);
  const NodeToPlaneContact contact = make_contact(c.law);
  const Eigen::VectorXd q = free_motion();
  Eigen::VectorXd r = Eigen::VectorXd::Zero(3 * kNodes);
  ContactWorkspace workspace;
  const ContactSolveReport report =
      solve_semismooth_newton(contact.problem(q), r, 1e-12, 60, workspace);
  ASSERT_TRUE(report.converged) << "scaled certificate " << report.scaled_certificate;
  EXPECT_GT(report.newton_iterations, 0);
  expect_law_holds(contact, c.law, q, r);
}

TEST_P(CondensedContact, NewtonAgreesWithGaussSeidelWhenTheSolutionIsUnique) {
  const LawCase& c = law_case(GetParam());
  if (!c.associated) GTEST_SKIP() << "a non-associated law may have several solutions";
  SCOPED_TRACE(c.name);
  const NodeToPlaneContact contact = make_contact(c.law);
  const Eigen::VectorXd q = free_motion();
  Eigen::VectorXd r_newton = Eigen::VectorXd::Zero(3 * kNodes), r_sweeps = r_newton;
  ContactWorkspace workspace;
  const CondensedContactProblem problem = contact.problem(q);
  ASSERT_TRUE(solve_semismooth_newton(problem, r_newton, 1e-12, 60, workspace).converged);
  ASSERT_TRUE(solve_gauss_seidel(problem, r_sweeps, 1e-12, 100000).converged);
  expect_law_holds(contact, c.law, q, r_sweeps);
  EXPECT_LE((r_newton - r_sweeps).lpNorm<Eigen::Infinity>(),
            1e-8 * r_sweeps.lpNorm<Eigen::Infinity>());
}

TEST_P(CondensedContact, ReportsEveryIterationToTheProgressCallback) {
  // The progress lines of long increments come from on_iteration: one call
  // per Newton step and per sweep, each with the measures of the iterate
  // reached, the last one converged.
  const LawCase& c = law_case(GetParam());
  SCOPED_TRACE(c.name);
  const NodeToPlaneContact contact = make_contact(c.law);
  const Eigen::VectorXd q = free_motion();
  const CondensedContactProblem problem = contact.problem(q);
  std::vector<ContactIterationProgress> calls;
  ContactWorkspace workspace;
  workspace.on_iteration = [&](const ContactIterationProgress& p) { calls.push_back(p); };
  Eigen::VectorXd r = Eigen::VectorXd::Zero(3 * kNodes);
  const ContactSolveReport newton = solve_semismooth_newton(problem, r, 1e-12, 60, workspace);
  ASSERT_TRUE(newton.converged);
  ASSERT_EQ(static_cast<int>(calls.size()), newton.newton_iterations);
  for (const ContactIterationProgress& p : calls) EXPECT_FALSE(p.sweep);
  EXPECT_GT(calls.front().scaled_residual, 1e-12);
  EXPECT_LE(calls.back().scaled_residual, 1e-12);
  EXPECT_LE(calls.back().scaled_certificate, 1e-10);

  if (!c.associated) return;  // the sweeps below, as in the test above
  calls.clear();
  r.setZero();
  const ContactSolveReport sweeps =
      solve_gauss_seidel(problem, r, 1e-12, 100000, workspace.on_iteration);
  ASSERT_TRUE(sweeps.converged);
  ASSERT_EQ(static_cast<int>(calls.size()), sweeps.sweeps);
  for (const ContactIterationProgress& p : calls) EXPECT_TRUE(p.sweep);
  EXPECT_DOUBLE_EQ(calls.back().scaled_residual, sweeps.scaled_residual);
}

INSTANTIATE_TEST_SUITE_P(Laws, CondensedContact, ::testing::Values(0, 1, 2));

TEST(CondensedContactContinuation, ReachesTheNonAssociatedLawFromTheAssociatedOne) {
  // The fallback of solve_contact for non-associated laws, called directly:
  // its end point must satisfy the target law (not an intermediate stage's)
  // at every node, and the problem it was given must keep its laws.
  const FrictionLaw law = law_case(2).law;
  const NodeToPlaneContact contact = make_contact(law);
  const Eigen::VectorXd q = free_motion();
  const CondensedContactProblem problem = contact.problem(q);
  Eigen::VectorXd r = Eigen::VectorXd::Zero(3 * kNodes);
  ContactWorkspace workspace;
  const ContactSolveReport report = solve_by_continuation(problem, r, 1e-12, 500, workspace);
  ASSERT_TRUE(report.converged) << "scaled certificate " << report.scaled_certificate;
  EXPECT_GT(report.newton_iterations, 0);
  expect_law_holds(contact, law, q, r);
  for (const FrictionLaw& node_law : problem.laws) {
    EXPECT_EQ(node_law.p1(), law.p1());
    EXPECT_EQ(node_law.p2(), law.p2());
  }
  EXPECT_EQ(contact.planes()[0].law.p1(), law.p1());
  EXPECT_EQ(contact.planes()[0].law.p2(), law.p2());
}

TEST(CondensedContactContinuation, OnlyTheLastStageIsSolvedToTheLawTolerance) {
  // Stages before the last end at the stage tolerance, the last one at the
  // law tolerance whatever the stages' is: with a stage tolerance of 1
  // (stages of few Newton steps or none) the end point still satisfies the
  // target law.
  const FrictionLaw law = law_case(2).law;
  const NodeToPlaneContact contact = make_contact(law);
  const Eigen::VectorXd q = free_motion();
  const CondensedContactProblem problem = contact.problem(q);
  std::vector<int> steps;
  for (const double stage_tolerance :
       {1e-12, ContactWorkspace().options.continuation_stage_tolerance, 1.0}) {
    SCOPED_TRACE(stage_tolerance);
    Eigen::VectorXd r = Eigen::VectorXd::Zero(3 * kNodes);
    ContactWorkspace workspace;
    workspace.options.continuation_stage_tolerance = stage_tolerance;
    const ContactSolveReport report = solve_by_continuation(problem, r, 1e-12, 500, workspace);
    ASSERT_TRUE(report.converged) << "scaled certificate " << report.scaled_certificate;
    EXPECT_LE(report.scaled_residual, 1e-12);
    expect_law_holds(contact, law, q, r);
    steps.push_back(report.newton_iterations);
  }
  // The associated stage (t = 0) is one before the last: stopped at the
  // default (1e-3) it takes fewer steps than solved to 1e-12.
  EXPECT_LT(steps[1], steps[0]);
}

TEST(CondensedContactCascade, SolvesEveryKindOfLaw) {
  for (int index = 0; index < 3; ++index) {
    const LawCase& c = law_case(index);
    SCOPED_TRACE(c.name);
    const NodeToPlaneContact contact = make_contact(c.law);
    const Eigen::VectorXd q = free_motion();
    Eigen::VectorXd r = Eigen::VectorXd::Zero(3 * kNodes);
    ContactWorkspace workspace;
    const ContactSolveReport report = solve_contact(contact.problem(q), r, 1e-12, 500, workspace);
    ASSERT_TRUE(report.converged) << "scaled certificate " << report.scaled_certificate;
    expect_law_holds(contact, c.law, q, r);
  }
}

TEST(CondensedContactProblemValue, CopiesShareTheOperatorsAndHoldTheIncrementsData) {
  const FrictionLaw law = law_case(1).law;
  const NodeToPlaneContact contact = make_contact(law);
  const Eigen::VectorXd q = free_motion();
  const CondensedContactProblem problem = contact.problem(q);
  const CondensedContactProblem copy = problem;  // NOLINT: the copy is the point
  EXPECT_EQ(copy.operators.get(), contact.condensed_operators().get());
  ASSERT_NE(copy.dense(), nullptr);
  ASSERT_EQ(copy.n_nodes(), kNodes);
  EXPECT_EQ(copy.q, q);
  EXPECT_EQ(copy.motion_scale, contact.motion_scale(q));
  EXPECT_FALSE(copy.has_non_associated_law());
  for (int i = 0; i < kNodes; ++i) {
    EXPECT_EQ(copy.rho[i], contact.rho(i));
    EXPECT_EQ(copy.laws[i].mu2(), law.mu2());
  }
  // W S = I: the operators are each other's inverse.
  const Eigen::MatrixXd product =
      copy.dense()->matrices().whole_delassus() * copy.dense()->matrices().whole_stiffness();
  EXPECT_LE((product - Eigen::MatrixXd::Identity(3 * kNodes, 3 * kNodes)).lpNorm<Eigen::Infinity>(),
            1e-10);
}

}  // namespace
}  // namespace bipo
