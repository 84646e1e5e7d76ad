// Verification of the frictional contact solver (issue 4) against exact
// answers: limits that reduce to linear problems (mu = 0: roller; huge mu:
// clamped), full sliding of a block (isotropic and orthotropic
// non-associated, physics.md 3), and the discrete energy identity of a
// load-unload cycle. Every converged step must also satisfy the law
// certificate (physics.md 3.1) at every node.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "contact/solvers.hpp"
#include "core/errors.hpp"
#include "fem/elasticity.hpp"
#include "mesh/generate.hpp"
#include "solver/analysis.hpp"
#include "solver/driver.hpp"

namespace bipo {
namespace {

ContactPlane floor_plane(const std::string& set, double mu1, double mu2, double p1, double p2) {
  ContactPlane plane;
  plane.name = "floor";
  plane.set = set;
  plane.friction = {mu1, mu2, p1, p2};
  return plane;
}

/// Punch pressed by its top (bonded platen: in-plane fixed), one increment.
Case punch_case(double mu, int n_increments = 1) {
  Case c;
  c.source = "punch";
  c.material = {210000.0, 0.3};
  c.program.segments = {{1.0, n_increments, 0}};
  c.dirichlet.push_back({"top", {0.0, 0.0, -0.1}, std::nullopt});
  c.contacts.push_back(floor_plane("bottom", mu, mu, mu, mu));
  return c;
}

/// Checks the law at every node of a converged state.
void expect_law_holds(const Analysis& analysis, const StepResult& step) {
  EXPECT_LE(step.scaled_certificate, 1e-8);
  EXPECT_LE(step.equilibrium_residual, 1e-10);
  double max_r = 0.0;
  for (const auto& s : analysis.contact_states()) max_r = std::max(max_r, s.r.norm());
  const bool frictionless = analysis.contact().planes()[0].law.frictionless();
  for (const auto& s : analysis.contact_states()) {
    EXPECT_GE(s.gap, -1e-9 * 0.1);
    switch (s.state) {
      case ContactState::open:
        EXPECT_EQ(s.r.norm(), 0.0);
        break;
      case ContactState::stick:
        EXPECT_LT(s.f, 0.0);
        EXPECT_LT(s.slip.norm(), 1e-8 * 0.1);
        break;
      case ContactState::slip:  // frictionless nodes always slide (f = -r_n there)
        if (!frictionless) {
          EXPECT_NEAR(s.f, 0.0, 1e-9 * max_r);
        }
        break;
    }
  }
}

double max_abs_difference(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  return (a - b).lpNorm<Eigen::Infinity>();
}

TEST(ContactSolver, FrictionlessPunchEqualsRollerSolution) {
  const Mesh mesh = generate_cylinder({});
  Analysis contact(punch_case(0.0), mesh);
  const StepResult with_contact = contact.advance_to(1.0);
  expect_law_holds(contact, with_contact);
  EXPECT_EQ(with_contact.n_open, 0);

  Case roller = punch_case(0.0);
  roller.contacts.clear();
  roller.dirichlet.push_back({"bottom", {std::nullopt, std::nullopt, 0.0}, std::nullopt});
  Analysis linear(roller, mesh);
  const StepResult reference = linear.advance_to(1.0);
  const double scale = linear.displacement().lpNorm<Eigen::Infinity>();
  EXPECT_LT(max_abs_difference(contact.displacement(), linear.displacement()), 1e-8 * scale);
  const Eigen::Vector3d top_force = with_contact.dirichlet_reactions[0];
  EXPECT_LT((top_force - reference.dirichlet_reactions[0]).norm(), 1e-8 * top_force.norm());
  // The plane carries what the platen pushes.
  EXPECT_LT((with_contact.contact_force + top_force).norm(), 1e-8 * top_force.norm());
}

TEST(ContactSolver, HugeFrictionPunchEqualsClampedSolution) {
  const Mesh mesh = generate_cylinder({});
  Analysis contact(punch_case(1e4), mesh);
  const StepResult with_contact = contact.advance_to(1.0);
  expect_law_holds(contact, with_contact);
  EXPECT_EQ(with_contact.n_stick, static_cast<int>(mesh.node_set("bottom").size()));

  Case clamped = punch_case(0.0);
  clamped.contacts.clear();
  clamped.dirichlet.push_back({"bottom", {0.0, 0.0, 0.0}, std::nullopt});
  Analysis linear(clamped, mesh);
  const StepResult reference = linear.advance_to(1.0);
  const double scale = linear.displacement().lpNorm<Eigen::Infinity>();
  EXPECT_LT(max_abs_difference(contact.displacement(), linear.displacement()), 1e-8 * scale);
  EXPECT_LT((with_contact.dirichlet_reactions[0] - reference.dirichlet_reactions[0]).norm(),
            1e-8 * reference.dirichlet_reactions[0].norm());
}

/// The first increment in contact starts from the bonded state (every node
/// stuck, r = -S q made admissible): where the solution sticks everywhere,
/// that start is the solution, and Newton confirms it without a step, on
/// both contact paths (from r = 0 it took one). A body lifted off the plane
/// (q opens every node) keeps r = 0, which is its solution: no step, and no
/// step solve or factorization for a bonded start it does not need.
TEST(ContactSolver, FirstIncrementStartsFromTheBondedStateWhereTheFreeMotionPenetrates) {
  const Mesh mesh = generate_cylinder({});
  for (const ContactSolverChoice path : {ContactSolverChoice::dense, ContactSolverChoice::sparse}) {
    SCOPED_TRACE(path == ContactSolverChoice::dense ? "dense" : "sparse");
    Case stuck = punch_case(1e4);
    stuck.solver.contact_solver = path;
    Analysis pressed(stuck, mesh);
    const StepResult first = pressed.advance_to(1.0);
    expect_law_holds(pressed, first);
    EXPECT_EQ(first.n_stick, static_cast<int>(mesh.node_set("bottom").size()));
    EXPECT_EQ(first.newton_iterations, 0);

    Case lifted = punch_case(0.2);
    lifted.solver.contact_solver = path;
    lifted.dirichlet[0].value = {0.0, 0.0, 0.1};
    Analysis away(lifted, mesh);
    const StepResult open = away.advance_to(1.0);
    EXPECT_EQ(open.n_open, static_cast<int>(mesh.node_set("bottom").size()));
    EXPECT_EQ(open.newton_iterations, 0);
    EXPECT_EQ(open.contact_factorizations, 0);
    EXPECT_EQ(open.contact_force.norm(), 0.0);
  }
}

/// A block pressed onto the plane by its top (displacement control: bipo
/// needs Dirichlet conditions that remove the rigid-body motions, so a body
/// held by contact alone is not supported), then its top moved in-plane by
/// `slide` in 10 steps. N is the normal force the plane then carries.
Case sliding_block_case(const Eigen::Vector2d& slide, const FrictionParams& friction) {
  Case c;
  c.source = "sliding_block";
  c.material = {210000.0, 0.3};
  c.program.segments = {{0.0, 1, 0}, {1.0, 10, 0}};  // the slide
  LoadProgram press;
  press.segments = {{1.0, 1, 0}, {1.0, 10, 0}};
  c.dirichlet.push_back({"zmax", {std::nullopt, std::nullopt, -0.002}, press});
  c.dirichlet.push_back({"zmax", {slide.x(), slide.y(), std::nullopt}, std::nullopt});
  c.contacts.push_back(floor_plane("zmin", friction.mu1, friction.mu2, friction.p1, friction.p2));
  return c;
}

TEST(ContactSolver, SlidingBlockIsotropicReachesMuN) {
  const Mesh mesh = generate_box({-1, -1, 0}, {1, 1, 1}, 4, 4, 2);
  const double mu = 0.3;
  Analysis analysis(sliding_block_case({0.02, 0.0}, {mu, mu, mu, mu}), mesh);
  int n_partial = 0;
  StepResult last;
  run_load_program(analysis, [&](const Analysis& a, const StepResult& step) {
    expect_law_holds(a, step);
    if (step.n_stick > 0 && step.n_slip > 0) ++n_partial;
    last = step;
  });
  EXPECT_GT(n_partial, 0) << "partial slip should precede full sliding";
  EXPECT_EQ(last.n_slip, static_cast<int>(mesh.node_set("zmin").size()));
  const double n_total = last.contact_normal_force;
  ASSERT_GT(n_total, 0.0);
  EXPECT_NEAR(n_total, -last.dirichlet_reactions[0].z(), 1e-8 * n_total);
  EXPECT_NEAR(last.contact_tangential_force.x(), -mu * n_total, 1e-8 * n_total);
  EXPECT_NEAR(last.contact_tangential_force.y(), 0.0, 1e-8 * n_total);
}

TEST(ContactSolver, SlidingBlockOrthotropicNonAssociatedFollowsSlidingRule) {
  const Mesh mesh = generate_box({-1, -1, 0}, {1, 1, 1}, 4, 4, 2);
  const FrictionParams law{0.3, 0.15, 0.05, 0.2};  // case C of physics.md 4
  const Eigen::Vector2d direction = Eigen::Vector2d(std::cos(0.5), std::sin(0.5));
  Analysis analysis(sliding_block_case(0.03 * direction, law), mesh);
  StepResult last;
  run_load_program(analysis, [&](const Analysis& a, const StepResult& step) {
    expect_law_holds(a, step);
    last = step;
  });
  ASSERT_EQ(last.n_slip, static_cast<int>(mesh.node_set("zmin").size()));
  // Full sliding is a rigid translation along `direction`, so every node
  // slips along it; the sliding rule du_t = -lambda p^-2 r_t / |r_t|_p
  // (physics.md 3) then fixes r_t = -r_n p^2 d / |p^2 d|_mu on the elliptic cone.
  const Eigen::Vector2d p2d(law.p1 * law.p1 * direction.x(), law.p2 * law.p2 * direction.y());
  const double norm_mu = std::hypot(p2d.x() / law.mu1, p2d.y() / law.mu2);
  const double n_total = last.contact_normal_force;
  ASSERT_GT(n_total, 0.0);
  const Eigen::Vector2d expected = -n_total * p2d / norm_mu;
  EXPECT_LT((last.contact_tangential_force - expected).norm(), 1e-8 * n_total);
  for (const auto& s : analysis.contact_states()) {
    const Eigen::Vector2d rt = s.r.tail<2>();
    EXPECT_NEAR(std::hypot(rt.x() / law.mu1, rt.y() / law.mu2), s.r(0), 1e-8 * s.r(0));
    // Slip along -p^-2 r_t, and not along the associated direction -mu^-2 r_t.
    const Eigen::Vector2d rule(-rt.x() / (law.p1 * law.p1), -rt.y() / (law.p2 * law.p2));
    const double cross = rule.x() * s.slip.y() - rule.y() * s.slip.x();
    EXPECT_LT(std::abs(cross), 1e-8 * rule.norm() * s.slip.norm());
    EXPECT_GT(rule.dot(s.slip), 0.0);
  }
}

TEST(ContactSolver, LoadUnloadCycleSatisfiesDiscreteEnergyIdentity) {
  const Mesh mesh = generate_cylinder({});
  Case c = punch_case(0.2);
  c.program.segments = {{1.0, 5, 0}, {0.5, 10, 1}, {1.0, 5, 1}};
  Analysis analysis(c, mesh);
  const SparseMatrix k = assemble_stiffness(mesh, analysis.elasticity());
  Eigen::VectorXd u_prev = Eigen::VectorXd::Zero(analysis.n_dofs());
  std::vector<double> gap_prev(analysis.contact_mesh_nodes().size(), 0.0);
  double total_dissipation = 0.0;
  int n_steps = 0;
  Eigen::VectorXd first_cycle_state;
  run_load_program(analysis, [&](const Analysis& a, const StepResult& step) {
    expect_law_holds(a, step);
    const Eigen::VectorXd& u = a.displacement();
    const Eigen::VectorXd du = u - u_prev;
    const Eigen::VectorXd ku = k * u;
    // Work of the Dirichlet reactions over the increment.
    double work = 0.0;
    for (int dof : a.partition().prescribed_dofs()) work += ku(dof) * du(dof);
    const double energy_change = 0.5 * u.dot(ku) - 0.5 * u_prev.dot(k * u_prev);
    const double energy_norm = 0.5 * du.dot(k * du);
    double closing = 0.0;
    for (std::size_t i = 0; i < gap_prev.size(); ++i)
      closing += a.contact_states()[i].r(0) * gap_prev[i];
    const double balance = energy_change + energy_norm + step.dissipation + closing;
    EXPECT_NEAR(work, balance, 1e-8 * std::abs(work)) << "step " << step.position;
    EXPECT_GE(step.dissipation, 0.0);
    total_dissipation += step.dissipation;
    u_prev = u;
    for (std::size_t i = 0; i < gap_prev.size(); ++i) gap_prev[i] = a.contact_states()[i].gap;
    if (++n_steps == 5) first_cycle_state = u;
  });
  EXPECT_GT(total_dissipation, 0.0);
  // Path dependence: back at the same top displacement after unloading and
  // reloading, the state differs from the first loading's.
  EXPECT_GT(max_abs_difference(first_cycle_state, analysis.displacement()),
            1e-6 * first_cycle_state.lpNorm<Eigen::Infinity>());
}

CylinderParams small_cylinder(int core, int ring, int layers) {
  CylinderParams p;
  p.core = core;
  p.ring = ring;
  p.layers = layers;
  return p;
}

/// The punch of punch_case() on the quarter x >= 0, y >= 0 of the same mesh,
/// held by the symmetry conditions ux = 0 on x = 0 and uy = 0 on y = 0.
Case quarter_punch_case(const FrictionParams& friction, int n_increments) {
  Case c = punch_case(0.0, n_increments);
  c.contacts[0].friction = friction;
  c.dirichlet.push_back({"symmetry_x0", {0.0, std::nullopt, std::nullopt}, std::nullopt});
  c.dirichlet.push_back({"symmetry_y0", {std::nullopt, 0.0, std::nullopt}, std::nullopt});
  return c;
}

// A mirror-symmetric case (the laws' axes t1 = x, t2 = y along the mirrors)
// has a mirror-symmetric solution; its quarter, held by the symmetry
// conditions, must be that solution's restriction. A contact node on a
// symmetry plane has a tangential component held at zero, and the contact
// law must then give it no friction force along that component (the mirror
// image of a symmetric friction force has none there). Checked on the
// displacements of every node and on every node's reaction, for the three
// laws of the punch (isotropic; orthotropic associated; non-associated),
// through a loading that makes slip and stick zones.
TEST(ContactSolver, QuarterPunchWithSymmetryConditionsIsTheWholePunchRestricted) {
  const CylinderParams whole_params = small_cylinder(4, 4, 2);
  CylinderParams quarter_params = whole_params;
  quarter_params.sector = CylinderParams::Sector::quarter;
  const Mesh whole = generate_cylinder(whole_params);
  const Mesh quarter = generate_cylinder(quarter_params);
  std::map<std::array<double, 3>, int> whole_node;
  for (int i = 0; i < whole.n_nodes(); ++i)
    whole_node[{whole.nodes[i].x(), whole.nodes[i].y(), whole.nodes[i].z()}] = i;
  for (const FrictionParams& law :
       {FrictionParams{0.2, 0.2, 0.2, 0.2}, FrictionParams{0.3, 0.15, 0.3, 0.15},
        FrictionParams{0.3, 0.15, 0.05, 0.2}}) {
    SCOPED_TRACE("mu " + std::to_string(law.mu1) + " " + std::to_string(law.mu2) + ", p " +
                 std::to_string(law.p1) + " " + std::to_string(law.p2));
    Case whole_case = punch_case(0.0, 3);
    whole_case.contacts[0].friction = law;
    Analysis full(whole_case, whole);
    Analysis part(quarter_punch_case(law, 3), quarter);
    for (int step = 1; step <= 3; ++step) {
      const StepResult a = full.advance_to(step);
      const StepResult b = part.advance_to(step);
      expect_law_holds(part, b);
      ASSERT_GT(b.n_slip, 0);
      ASSERT_GT(b.n_stick, 0);
      const double scale = full.displacement().lpNorm<Eigen::Infinity>();
      for (int i = 0; i < quarter.n_nodes(); ++i) {
        const Eigen::Vector3d& x = quarter.nodes[i];
        const int j = whole_node.at({x.x(), x.y(), x.z()});
        EXPECT_LT((part.displacement().segment<3>(3 * i) - full.displacement().segment<3>(3 * j))
                      .lpNorm<Eigen::Infinity>(),
                  1e-9 * scale)
            << "node at " << x.transpose();
      }
      // Reactions: on a symmetry plane the quarter's node carries the share
      // of its half (quarter at the axis) of the whole's elements.
      double max_r = 0.0;
      for (const auto& s : full.contact_states()) max_r = std::max(max_r, s.r.norm());
      for (int k = 0; k < static_cast<int>(part.contact_mesh_nodes().size()); ++k) {
        const Eigen::Vector3d& x = quarter.nodes[part.contact_mesh_nodes()[k]];
        const double share = (x.x() == 0.0 ? 0.5 : 1.0) * (x.y() == 0.0 ? 0.5 : 1.0);
        const auto& nodes = full.contact_mesh_nodes();
        const int j = static_cast<int>(
            std::find(nodes.begin(), nodes.end(), whole_node.at({x.x(), x.y(), x.z()})) -
            nodes.begin());
        const Eigen::Vector3d r_part = part.contact_states()[k].r;
        const Eigen::Vector3d r_full = full.contact_states()[j].r;
        EXPECT_LT((r_part - share * r_full).norm(), 1e-9 * max_r) << "node at " << x.transpose();
        if (x.x() == 0.0) {
          EXPECT_LE(std::abs(r_part(1)), 1e-12 * max_r);  // r_t1, t1 = x
        }
        if (x.y() == 0.0) {
          EXPECT_LE(std::abs(r_part(2)), 1e-12 * max_r);  // r_t2, t2 = y
        }
        EXPECT_EQ(part.contact_states()[k].state, full.contact_states()[j].state);
      }
      EXPECT_NEAR(4.0 * b.contact_normal_force, a.contact_normal_force,
                  1e-10 * a.contact_normal_force);
      EXPECT_NEAR(4.0 * b.dissipation, a.dissipation, 1e-9 * a.dissipation + 1e-300);
    }
  }
}

// The set-up rotates S and W into the nodes' local frames in place, block by
// block, each held block once (S's on and below the diagonal, W's on and
// above it: contact/condensed_matrices.hpp), W's as the transpose of the
// block below. The rotated W must still be the rotated S's inverse, whole
// and on the quarter (held components), with t1 at 30 degrees from x
// (frames whose rotations round); a block of W rotated the wrong way round
// breaks it.
TEST(ContactSolver, DenseOperatorsInTheLocalFramesAreEachOthersInverse) {
  CylinderParams quarter_params = small_cylinder(4, 4, 2);
  quarter_params.sector = CylinderParams::Sector::quarter;
  const Mesh whole = generate_cylinder(small_cylinder(4, 4, 2));
  const Mesh quarter = generate_cylinder(quarter_params);
  const FrictionParams law{0.3, 0.15, 0.05, 0.2};
  Case whole_case = punch_case(0.0, 1);
  whole_case.contacts[0].friction = law;
  // t1 at 30 degrees from x: frames whose rotation of a block rounds.
  whole_case.contacts[0].direction = Eigen::Vector3d(std::sqrt(3.0) / 2.0, 0.5, 0.0);
  for (const auto& [c, mesh] :
       {std::pair<Case, const Mesh*>{whole_case, &whole},
        std::pair<Case, const Mesh*>{quarter_punch_case(law, 1), &quarter}}) {
    const Analysis analysis(c, *mesh);
    const CondensedOperators* dense = analysis.contact().condensed_operators()->dense();
    ASSERT_NE(dense, nullptr);
    const Eigen::MatrixXd s = dense->matrices().whole_stiffness();
    const Eigen::MatrixXd w = dense->matrices().whole_delassus();
    const Eigen::MatrixXd product = w * s;
    EXPECT_LE((product - Eigen::MatrixXd::Identity(s.rows(), s.cols())).lpNorm<Eigen::Infinity>(),
              1e-9);
  }
}

TEST(ContactSolver, ContactNodesAcceptOnlyATangentialComponentHeldAtZero) {
  const Mesh mesh = generate_cylinder(small_cylinder(4, 2, 1));
  const auto message = [&](const Case& c) {
    try {
      Analysis analysis(c, mesh);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto with_bottom_condition = [](std::array<std::optional<double>, 3> value) {
    Case c = punch_case(0.2);
    c.dirichlet.push_back({"bottom", value, std::nullopt});
    return c;
  };
  const std::string rule =
      "; on a contact node only a component along t1 or t2 of its plane may be prescribed, and "
      "only to 0 (a symmetry plane)";
  const std::string nonzero = message(with_bottom_condition({0.001, std::nullopt, std::nullopt}));
  EXPECT_NE(nonzero.find("has ux prescribed by the condition on set 'bottom'" + rule),
            std::string::npos)
      << nonzero;
  const std::string normal = message(with_bottom_condition({std::nullopt, std::nullopt, 0.0}));
  EXPECT_NE(normal.find("has uz prescribed by the condition on set 'bottom'" + rule),
            std::string::npos)
      << normal;
  Case turned = with_bottom_condition({0.0, std::nullopt, std::nullopt});
  turned.contacts[0].direction = {std::cos(0.5236), std::sin(0.5236), 0.0};  // t1 at 30 degrees
  const std::string oblique = message(turned);
  EXPECT_NE(oblique.find("has ux prescribed by the condition on set 'bottom'" + rule),
            std::string::npos)
      << oblique;
  EXPECT_EQ(message(with_bottom_condition({std::nullopt, 0.0, std::nullopt})), "no error");
}

/// A rigid indenter on the seed punch's bottom face at the solver level:
/// the free gap `gap(x, delta)` at a node at x. Pressing to delta = 0.05
/// then 0.1, then 4 increments of the indenter's tangential displacement
/// (`slide` each along t1): reactions are totals, the tangential kinematics
/// increments (q_t = -(W r_prev)_t - ds). Solves each increment with
/// `workspace` and returns the reactions after each.
template <class Gap>
std::vector<Eigen::VectorXd> solve_indenter_sequence(const NodeToPlaneContact& contact,
                                                     const FrictionLaw& law, Gap gap, double slide,
                                                     ContactWorkspace& workspace) {
  const int m = contact.n_nodes();
  CondensedContactProblem problem{contact.condensed_operators(),
                                  Eigen::VectorXd::Zero(3 * m),
                                  std::vector<FrictionLaw>(static_cast<std::size_t>(m), law),
                                  {},
                                  0.0};
  for (int i = 0; i < m; ++i) problem.rho.push_back(contact.rho(i));
  Eigen::VectorXd r = Eigen::VectorXd::Zero(3 * m), wr(3 * m);
  std::vector<Eigen::VectorXd> answers;
  for (int k = 0; k < 6; ++k) {
    const double delta = k == 0 ? 0.05 : 0.1, ds = k < 2 ? 0.0 : slide;
    wr.setZero();
    problem.operators->add_product(r, wr);
    // As NodeToPlaneContact::motion_scale: the largest free motion.
    problem.motion_scale = k < 2 ? 0.05 : 0.0;
    for (int i = 0; i < m; ++i) {
      const Eigen::Vector3d x = contact.nodes()[static_cast<std::size_t>(i)].position;
      problem.q(3 * i) = gap(x, delta);
      problem.q.segment<2>(3 * i + 1) = -wr.segment<2>(3 * i + 1);
      problem.q(3 * i + 1) -= ds;
      problem.motion_scale = std::max(problem.motion_scale, problem.q.segment<2>(3 * i + 1).norm());
    }
    const ContactSolveReport report = solve_contact(problem, r, 1e-10, 500, workspace);
    EXPECT_TRUE(report.converged) << "increment " << k;
    EXPECT_EQ(report.sweeps, 0) << "increment " << k;
    EXPECT_LE(report.scaled_certificate, 1e-10) << "increment " << k;
    answers.push_back(r);
  }
  return answers;
}

/// A rigid sphere (radius 80): a disc of radius 4 of the face's 10 touches
/// at delta = 0.1 and most nodes are open; it slides by 0.0005 an increment.
std::vector<Eigen::VectorXd> solve_sphere_sequence(const NodeToPlaneContact& contact,
                                                   const FrictionLaw& law,
                                                   ContactWorkspace& workspace) {
  const auto sphere = [](const Eigen::Vector3d& x, double delta) {
    return x.head<2>().squaredNorm() / 160.0 - delta;
  };
  return solve_indenter_sequence(contact, law, sphere, 0.0005, workspace);
}

/// A workspace whose Newton steps are the plain ones (unknowns dv, a fresh
/// double LU every step): the reference of the tests below.
ContactWorkspace plain_step_workspace() {
  ContactWorkspace plain;
  plain.options.choose_formulation = plain.options.reuse_factorization = false;
  plain.options.gmres_on_kept_factorization_enabled = false;
  plain.options.mixed_precision_lu = false;
  return plain;
}

/// Each increment's reactions within 1e-8 of the largest plain reaction of
/// that increment: the law tolerance's agreement.
void expect_plain_answers(const std::vector<Eigen::VectorXd>& expected,
                          const std::vector<Eigen::VectorXd>& answers, const FrictionLaw& law) {
  ASSERT_EQ(answers.size(), expected.size());
  for (std::size_t k = 0; k < answers.size(); ++k) {
    const double max_r = expected[k].lpNorm<Eigen::Infinity>();
    EXPECT_GT(max_r, 0.0);
    EXPECT_LE(max_abs_difference(answers[k], expected[k]), 1e-8 * max_r)
        << "law (" << law.mu1() << ", " << law.mu2() << ", " << law.p1() << ", " << law.p2()
        << "), increment " << k;
  }
}

// The Newton step in dr (when most nodes are open) and the reuse of the LU
// of an unchanged system give the answer of the plain step (unknowns dv, a
// fresh LU each step), which the verification above checks against exact
// solutions, to within the law tolerance; each converged state also passes
// the law certificate (physics.md 3.1). While the touching nodes stick the
// system repeats and its LU is reused.
TEST(ContactSolver, SphereOnFlatSolvedInReactionsAndWithReusedFactorizationGivesThePlainAnswer) {
  const Mesh mesh = generate_cylinder({});
  const Analysis analysis(punch_case(0.3), mesh);
  long reused = 0;
  for (const FrictionLaw& law :
       {FrictionLaw::orthotropic(0.3, 0.3, 0.3, 0.3), FrictionLaw::orthotropic(0.3, 0.2, 0.1, 0.05),
        FrictionLaw::orthotropic(1.0, 1.0, 1.0, 1.0)}) {
    ContactWorkspace plain = plain_step_workspace(), fast;
    const auto expected = solve_sphere_sequence(analysis.contact(), law, plain);
    const auto answers = solve_sphere_sequence(analysis.contact(), law, fast);
    expect_plain_answers(expected, answers, law);
    EXPECT_EQ(plain.counts.in_reactions + plain.counts.reused + plain.counts.gmres_solves, 0);
    EXPECT_GT(fast.counts.in_reactions, fast.counts.steps / 2) << "law mu1 " << law.mu1();
    reused += fast.counts.reused;
  }
  EXPECT_GT(reused, 0);
}

// A flat indenter pressed into the whole face and slid far enough that most
// nodes slide: the Newton steps are in dv with slip rows, which a fresh LU
// can no longer serve exactly; where a step's states and unknowns are those
// of the kept LU, GMRES preconditioned by it solves the step instead. The
// answers are the plain step's (a fresh LU every step) to within the law
// tolerance, each converged state passing the law certificate, for an
// associated and a non-associated law, and GMRES must have served steps.
// The fast steps' LUs are made in single precision and their solves
// refined in double (DenseLu), without a fallback to a double LU here; the
// plain ones are double LUs.
TEST(ContactSolver, SlidingFlatSolvedByGmresOnTheKeptFactorizationGivesThePlainAnswer) {
  const Mesh mesh = generate_cylinder({});
  const Analysis analysis(punch_case(0.3), mesh);
  const auto flat = [](const Eigen::Vector3d&, double delta) { return -0.2 * delta; };
  for (const FrictionLaw& law : {FrictionLaw::orthotropic(0.3, 0.3, 0.3, 0.3),
                                 FrictionLaw::orthotropic(0.2, 0.1, 0.2 / 6.0, 0.4 / 3.0)}) {
    ContactWorkspace plain = plain_step_workspace(), fast;
    // The non-associated law's sliding increments have several solutions;
    // the continuation's stages solved to the law tolerance follow one
    // branch from the associated law whatever the step's linear solver.
    // Stopped at 1e-3 (the default), their rest differs between the plain
    // and the fast steps, and the two ended on solutions 0.2 % apart, both
    // certified: the comparison is of the steps, with the stages solved.
    plain.options.continuation_stage_tolerance = fast.options.continuation_stage_tolerance = 1e-10;
    const auto expected = solve_indenter_sequence(analysis.contact(), law, flat, 0.002, plain);
    const auto answers = solve_indenter_sequence(analysis.contact(), law, flat, 0.002, fast);
    expect_plain_answers(expected, answers, law);
    EXPECT_EQ(plain.counts.gmres_solves + plain.counts.gmres_failures, 0);
    EXPECT_EQ(plain.counts.single_precision_lus + plain.counts.single_precision_fallbacks, 0);
    EXPECT_GT(fast.counts.gmres_solves, 0) << "law mu2 " << law.mu2();
    EXPECT_GE(fast.counts.gmres_iterations, fast.counts.gmres_solves);
    EXPECT_EQ(fast.counts.single_precision_lus, fast.counts.factorizations);
    EXPECT_GE(fast.counts.refinement_steps, fast.counts.single_precision_lus);
    EXPECT_EQ(fast.counts.single_precision_fallbacks, 0);
    std::printf(
        "law (%g, %g, %g, %g): %ld steps, %ld by GMRES (%ld iterations), %ld fell back; %ld in "
        "mixed precision (%ld refinement steps)\n",
        law.mu1(), law.mu2(), law.p1(), law.p2(), fast.counts.steps, fast.counts.gmres_solves,
        fast.counts.gmres_iterations, fast.counts.gmres_failures, fast.counts.single_precision_lus,
        fast.counts.refinement_steps);
  }
}

// The flat indenter slid in short increments: the slip zone spreads from
// the face's rim a few nodes a step, so most steps' states differ from the
// kept LU's in a few nodes. GMRES preconditioned by the kept LU bordered
// with those nodes (solvers.cpp, KeptLuBorder) solves them: the answers are
// the plain step's to within the law tolerance, for an isotropic and an
// orthotropic associated law, and the bordered steps converge in a few
// iterations each (the border is exact; only the slip rows' drift is left to
// GMRES): with A_DC left out of the border, or the D unknowns' solution
// mapped back wrong, steps fall back or take more iterations, and the test
// fails (tried). Here nodes mostly come (stick -> slip); the algebra of
// nodes leaving is BorderedFactorization's own test.
TEST(ContactSolver, StepsWithChangedStatesSolvedByGmresOnTheBorderedKeptLuGiveThePlainAnswer) {
  const Mesh mesh = generate_cylinder({});
  const Analysis analysis(punch_case(0.3), mesh);
  const auto flat = [](const Eigen::Vector3d&, double delta) { return -0.2 * delta; };
  for (const FrictionLaw& law : {FrictionLaw::orthotropic(0.3, 0.3, 0.3, 0.3),
                                 FrictionLaw::orthotropic(0.3, 0.15, 0.3, 0.15)}) {
    ASSERT_TRUE(law.associated());
    ContactWorkspace plain = plain_step_workspace(), fast;
    const auto expected = solve_indenter_sequence(analysis.contact(), law, flat, 0.0004, plain);
    const auto answers = solve_indenter_sequence(analysis.contact(), law, flat, 0.0004, fast);
    expect_plain_answers(expected, answers, law);
    EXPECT_GE(fast.counts.bordered_solves, 5) << "law mu2 " << law.mu2();
    EXPECT_EQ(fast.counts.gmres_failures, 0) << "law mu2 " << law.mu2();
    EXPECT_LE(fast.counts.gmres_iterations, 6 * fast.counts.gmres_solves)
        << "law mu2 " << law.mu2();
    std::printf(
        "law (%g, %g, %g, %g): %ld steps, %ld by GMRES (%ld bordered; %ld iterations), "
        "%ld fell back\n",
        law.mu1(), law.mu2(), law.p1(), law.p2(), fast.counts.steps, fast.counts.gmres_solves,
        fast.counts.bordered_solves, fast.counts.gmres_iterations, fast.counts.gmres_failures);
  }
}

/// W of a dense operator without its dense matrices, whose Newton steps'
/// linear solves all fail (as a sparse path's step that runs out of its
/// Krylov iterations or its memory does).
class FailingStepOperator final : public DelassusOperator {
 public:
  explicit FailingStepOperator(std::shared_ptr<const DelassusOperator> w) : w_(std::move(w)) {}
  [[nodiscard]] int size() const override { return w_->size(); }
  void add_product(const Eigen::VectorXd& r, Eigen::VectorXd& v) const override {
    w_->add_product(r, v);
  }
  [[nodiscard]] Eigen::Matrix3d diagonal_block(int i) const override {
    return w_->diagonal_block(i);
  }
  [[nodiscard]] std::unique_ptr<SparseNewtonStep> make_newton_step() const override {
    struct Failing final : SparseNewtonStep {
      bool solve(const NewtonStepEquations&, double, Eigen::VectorXd&, Eigen::VectorXd&) override {
        ++steps;
        return false;
      }
      [[nodiscard]] Work work() const override { return {steps, 0, 0}; }
      long steps = 0;
    };
    return std::make_unique<Failing>();
  }

 private:
  std::shared_ptr<const DelassusOperator> w_;
};

// The analysis tells the contact solve where the loading turns back: the
// load program's factor changing with the sign opposite to its last
// change, also after held steps, or a surface's own motion program doing
// so (also after a dwell) while the load is held; not at the first step,
// nor along a monotone segment, nor where a motion starts after standing
// still. Each increment converges and passes the law's checks.
TEST(ContactSolver, AnalysisSeesTheLoadAndASurfacesMotionTurnBack) {
  const Mesh mesh = generate_cylinder({});
  Case unloaded = punch_case(0.3, 2);
  unloaded.program.segments.push_back({0.5, 2, 0});
  unloaded.program.segments.push_back({0.5, 1, 0});  // held
  unloaded.program.segments.push_back({1.0, 1, 0});
  Analysis by_load(unloaded, mesh);
  std::vector<bool> turns;
  for (int k = 1; k <= 6; ++k) {
    turns.push_back(by_load.turns_back(k));
    expect_law_holds(by_load, by_load.advance_to(k));
  }
  EXPECT_EQ(turns, (std::vector<bool>{false, false, true, false, false, true}));

  Case slid = punch_case(0.3, 1);
  slid.program.segments.push_back({1.0, 6, 0});  // held while the plane moves
  slid.contacts[0].motion = {0.002, 0.0, 0.0};
  slid.contacts[0].motion_program =
      LoadProgram{{{0.0, 1, 0}, {1.0, 2, 0}, {1.0, 1, 0}, {0.0, 2, 0}, {0.5, 1, 0}}};
  Analysis by_motion(slid, mesh);
  turns.clear();
  for (int k = 1; k <= 7; ++k) {
    turns.push_back(by_motion.turns_back(k));
    expect_law_holds(by_motion, by_motion.advance_to(k));
  }
  EXPECT_EQ(turns, (std::vector<bool>{false, false, false, false, true, false, true}));
}

// A flat indenter pressed into the face, slid along t1 until the rim
// slides, then slid back: at the turn every node that slid reverses. From
// the last converged reactions (the caller's start) Newton takes several
// steps; with `load_turned_back` the bonded start (every node stuck where
// it is) has the smaller |F| and is taken, and Newton needs fewer. Both
// reach the same reactions to within the law tolerance, certified
// (physics.md 3.1), for an isotropic and an orthotropic associated law. A
// non-associated law keeps the caller's start (the flag is ignored): the
// same steps and the same bits.
TEST(ContactSolver, WhereTheLoadTurnsBackTheBondedStartIsTakenWhenNearer) {
  const Mesh mesh = generate_cylinder({});
  const Analysis analysis(punch_case(0.3), mesh);
  const NodeToPlaneContact& contact = analysis.contact();
  const int m = contact.n_nodes();
  for (const FrictionLaw& law : {FrictionLaw::orthotropic(0.3, 0.3, 0.3, 0.3),
                                 FrictionLaw::orthotropic(0.3, 0.15, 0.3, 0.15),
                                 FrictionLaw::orthotropic(0.2, 0.1, 0.2 / 6.0, 0.4 / 3.0)}) {
    SCOPED_TRACE("law mu2 " + std::to_string(law.mu2()) + ", p1 " + std::to_string(law.p1()));
    CondensedContactProblem problem{contact.condensed_operators(),
                                    Eigen::VectorXd::Zero(3 * m),
                                    std::vector<FrictionLaw>(static_cast<std::size_t>(m), law),
                                    {},
                                    0.0};
    for (int i = 0; i < m; ++i) problem.rho.push_back(contact.rho(i));
    ContactWorkspace workspace;
    Eigen::VectorXd r = Eigen::VectorXd::Zero(3 * m), wr(3 * m);
    // The problem of an increment from r (the last converged reactions):
    // pressed to `delta`, the indenter moved by `ds` along t1.
    const auto set_increment = [&](double delta, double ds) {
      wr.setZero();
      problem.operators->add_product(r, wr);
      // As NodeToPlaneContact::motion_scale (every node touches at delta = 0).
      problem.motion_scale = 0.0;
      for (int i = 0; i < m; ++i) {
        problem.q(3 * i) = -0.2 * delta;
        problem.q.segment<2>(3 * i + 1) = -wr.segment<2>(3 * i + 1);
        problem.q(3 * i + 1) -= ds;
        problem.motion_scale = std::max(problem.motion_scale, problem.q.segment<3>(3 * i).norm());
      }
    };
    for (const double ds : {0.0, 0.002, 0.002, 0.002}) {
      set_increment(0.1, ds);
      ASSERT_TRUE(solve_contact(problem, r, 1e-10, 500, workspace).converged);
    }
    // Nodes on the friction cone's surface (|r_t|_mu = r_n): the rim slides.
    int on_cone = 0;
    for (int i = 0; i < m; ++i) {
      const Eigen::Vector3d r_i = r.segment<3>(3 * i);
      on_cone += r_i(0) > 0.0 &&
                 std::hypot(r_i(1) / law.mu1(), r_i(2) / law.mu2()) >= (1.0 - 1e-9) * r_i(0);
    }
    EXPECT_GT(on_cone, 0);
    set_increment(0.1, -0.002);
    Eigen::VectorXd from_last = r, from_bonded = r;
    ContactWorkspace last_workspace, bonded_workspace;
    bonded_workspace.load_turned_back = true;
    const ContactSolveReport last = solve_contact(problem, from_last, 1e-10, 500, last_workspace);
    const ContactSolveReport bonded =
        solve_contact(problem, from_bonded, 1e-10, 500, bonded_workspace);
    ASSERT_TRUE(last.converged);
    ASSERT_TRUE(bonded.converged);
    EXPECT_LE(bonded.scaled_certificate, 1e-10);
    EXPECT_EQ(last.sweeps + bonded.sweeps, 0);
    std::printf("law (%g, %g, %g, %g): %d Newton steps from the last reactions, %d with the turn\n",
                law.mu1(), law.mu2(), law.p1(), law.p2(), last.newton_iterations,
                bonded.newton_iterations);
    if (law.associated()) {
      EXPECT_LE(max_abs_difference(from_bonded, from_last),
                1e-8 * from_last.lpNorm<Eigen::Infinity>());
      EXPECT_LT(bonded.newton_iterations, last.newton_iterations);
    } else {
      EXPECT_EQ(max_abs_difference(from_bonded, from_last), 0.0);
      EXPECT_EQ(bonded.newton_iterations, last.newton_iterations);
    }
  }
}

// A Newton step that is counted but not taken (here: its linear solve
// fails) has its own progress event, which says why the pass ended, so
// that the events count the report's Newton steps and a long increment's
// progress lines do not fall silent (docs/outputs.md).
TEST(ContactSolver, ReportsTheNewtonStepThatEndsItsPass) {
  const Mesh mesh = generate_cylinder({.core = 2, .ring = 2, .layers = 1});
  const Analysis analysis(punch_case(0.3), mesh);
  const NodeToPlaneContact& contact = analysis.contact();
  const int m = contact.n_nodes();
  CondensedContactProblem problem{
      std::make_shared<FailingStepOperator>(contact.condensed_operators()),
      Eigen::VectorXd::Zero(3 * m),
      std::vector<FrictionLaw>(static_cast<std::size_t>(m), FrictionLaw::isotropic(0.3)),
      {},
      0.01};
  for (int i = 0; i < m; ++i) {
    problem.rho.push_back(contact.rho(i));
    problem.q(3 * i) = -0.01;  // pressed: the zero reactions are not the answer
  }
  std::vector<ContactIterationProgress> events;
  ContactWorkspace workspace;
  workspace.on_iteration = [&events](const ContactIterationProgress& e) { events.push_back(e); };
  Eigen::VectorXd r = Eigen::VectorXd::Zero(3 * m);
  const ContactSolveReport report = solve_semismooth_newton(problem, r, 1e-10, 20, workspace);
  EXPECT_FALSE(report.converged);
  EXPECT_EQ(report.newton_iterations, 1);
  ASSERT_EQ(events.size(), 1U);
  EXPECT_FALSE(events[0].sweep);
  ASSERT_NE(events[0].pass_ended, nullptr);
  EXPECT_STREQ(events[0].pass_ended, "the step's linear solve failed");
  EXPECT_EQ(events[0].scaled_residual, report.scaled_residual);
  EXPECT_GT(events[0].scaled_residual, 0.0);
  EXPECT_EQ(r, Eigen::VectorXd::Zero(3 * m));  // not taken
}

// The caller may hand the iteration the motion v = q + W r of its start
// (ContactWorkspace::known_motion: the sparse path's, combined from earlier
// solves). It serves to accept a start that needs no step; one that it
// does not accept is judged again on the product, as without it, so that a
// known motion's rounding never costs a step: here, the converged
// reactions of a pressed punch as the start, with a known motion off by
// 1e-6 of the motion scale, converge without a step and are not moved.
TEST(ContactSolver, JudgesAStartOnTheProductWhereItsKnownMotionDoesNotAcceptIt) {
  const Mesh mesh = generate_cylinder({.core = 2, .ring = 2, .layers = 1});
  const Analysis analysis(punch_case(0.3), mesh);
  const NodeToPlaneContact& contact = analysis.contact();
  const int m = contact.n_nodes();
  Eigen::VectorXd q = Eigen::VectorXd::Zero(3 * m);
  for (int i = 0; i < m; ++i) q(3 * i) = -0.01;  // pressed
  const CondensedContactProblem problem = contact.problem(q);
  ContactWorkspace workspace;
  Eigen::VectorXd solved = Eigen::VectorXd::Zero(3 * m);
  ASSERT_TRUE(solve_semismooth_newton(problem, solved, 1e-10, 50, workspace).converged);
  Eigen::VectorXd exact = q + contact.delassus_times(solved);
  workspace.known_motion.r = solved;
  workspace.known_motion.v = exact;
  workspace.known_motion.v(0) += 1e-6 * problem.motion_scale;
  Eigen::VectorXd r = solved;
  const ContactSolveReport report = solve_semismooth_newton(problem, r, 1e-10, 50, workspace);
  EXPECT_TRUE(report.converged);
  EXPECT_EQ(report.newton_iterations, 0);
  EXPECT_EQ(r, solved);
  EXPECT_EQ(workspace.known_motion.r.size(), 0);  // dropped: not for the settling either
  // The same start with its exact motion known: accepted on it.
  workspace.known_motion.r = solved;
  workspace.known_motion.v = exact;
  r = solved;
  EXPECT_TRUE(solve_semismooth_newton(problem, r, 1e-10, 50, workspace).converged);
  EXPECT_EQ(r, solved);
  EXPECT_EQ(workspace.known_motion.r.size(), 3 * m);
}

}  // namespace
}  // namespace bipo
