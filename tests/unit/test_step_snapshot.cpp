// What an analysis hands to the result writers (solver/step_snapshot): the
// probes placed on the contact face, and the global components of the
// contact vectors of a step, checked against the geometry of a punch pressed
// on the floor z = 0 (normal +z).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "mesh/generate.hpp"
#include "solver/analysis.hpp"
#include "solver/step_snapshot.hpp"

namespace bipo {
namespace {

/// The punch pressed down 0.05 mm at its top (in-plane held) on a floor with
/// friction 0.2: its bottom spreads and slides outwards.
Case pressed_punch() {
  Case c;
  c.source = "punch";
  c.material = {210000.0, 0.3};
  c.program.segments = {{1.0, 1, 0}};
  c.dirichlet.push_back({"top", {0.0, 0.0, -0.05}, std::nullopt});
  ContactPlane floor;
  floor.name = "floor";
  floor.set = "bottom";
  floor.friction = {0.2, 0.2, 0.2, 0.2};
  c.contacts.push_back(floor);
  return c;
}

/// The index in `nodes` of the node at `x`, or -1.
int contact_index_at(const Mesh& mesh, const std::vector<int>& nodes, const Eigen::Vector3d& x) {
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i)
    if ((mesh.nodes[nodes[i]] - x).norm() == 0.0) return i;
  return -1;
}

TEST(StepSnapshot, ProbesSitOnTheNearestContactNodeWithTheirRadialDirection) {
  const Mesh mesh = generate_cylinder({.core = 4, .ring = 4, .layers = 2});
  Case c = pressed_punch();
  // The bottom nodes nearest to and farthest from the axis.
  Eigen::Vector3d centre = mesh.nodes[mesh.node_set("bottom").front()], rim = centre;
  for (int node : mesh.node_set("bottom")) {
    if (mesh.nodes[node].norm() < centre.norm()) centre = mesh.nodes[node];
    if (mesh.nodes[node].x() > rim.x()) rim = mesh.nodes[node];
  }
  ASSERT_EQ(centre.z(), 0.0);
  ASSERT_GT(rim.x(), 9.0);
  c.probes = {{"centre", {0.0, 0.0, 0.0}, ""},
              {"rim", rim + 0.1 * Eigen::Vector3d::UnitX(), "bottom"},
              {"above", rim, "top"}};
  const Analysis analysis(c, mesh);
  const RunDescription run = describe_run(analysis);
  ASSERT_EQ(run.probes.size(), 3u);
  EXPECT_EQ(run.contact_mesh_nodes.size(), mesh.node_set("bottom").size());

  EXPECT_EQ(run.probes[0].contact_index, contact_index_at(mesh, run.contact_mesh_nodes, centre));
  // Unit and in the plane (the plane's t1 at the plane's point itself).
  EXPECT_NEAR(run.probes[0].radial.norm(), 1.0, 1e-15);
  EXPECT_EQ(run.probes[0].radial.z(), 0.0);

  EXPECT_EQ(run.probes[1].name, "rim");
  EXPECT_EQ(run.probes[1].contact_index, contact_index_at(mesh, run.contact_mesh_nodes, rim));
  const Eigen::Vector3d outwards = Eigen::Vector3d(rim.x(), rim.y(), 0.0).normalized();
  EXPECT_NEAR((run.probes[1].radial - outwards).norm(), 0.0, 1e-15);

  EXPECT_EQ(run.probes[2].contact_index, -1);  // "top" is no contact plane's set
}

TEST(StepSnapshot, ContactVectorsOfAStepAreInThePlaneInGlobalComponents) {
  const Mesh mesh = generate_cylinder({.core = 4, .ring = 4, .layers = 2});
  Analysis analysis(pressed_punch(), mesh);
  const StepResult step = analysis.advance_to(1.0);
  const StepSnapshot snapshot = snapshot_of(analysis, step);
  const RunDescription run = describe_run(analysis);
  const std::size_t m = run.contact_mesh_nodes.size();
  ASSERT_EQ(snapshot.contact_states.size(), m);
  ASSERT_EQ(snapshot.friction_force.size(), m);
  ASSERT_EQ(snapshot.slip_increment.size(), m);
  EXPECT_EQ(&snapshot.step, &step);
  EXPECT_EQ(snapshot.displacement.size(), 3 * mesh.nodes.size());
  int n_sliding_outwards = 0;
  for (std::size_t i = 0; i < m; ++i) {
    const ContactNodeState& s = snapshot.contact_states[i];
    const Eigen::Vector3d& r_t = snapshot.friction_force[i];
    const Eigen::Vector3d& du = snapshot.slip_increment[i];
    // Tangent to the floor, with the lengths of the local vectors.
    EXPECT_NEAR(r_t.z(), 0.0, 1e-12 * (1.0 + s.r.norm()));
    EXPECT_NEAR(du.z(), 0.0, 1e-15);
    EXPECT_NEAR(r_t.norm(), s.r.tail<2>().norm(), 1e-12 * (1.0 + s.r.norm()));
    EXPECT_NEAR(du.norm(), s.slip.norm(), 1e-15);
    // One step from rest: the accumulated slip is this step's.
    EXPECT_EQ(snapshot.accumulated_slip[i], du);
    EXPECT_EQ(snapshot.accumulated_slip_length[i], s.slip.norm());
    EXPECT_EQ(snapshot.accumulated_dissipation[i], s.dissipation);
    // The bottom spreads: it slides away from the axis, friction resists.
    const Eigen::Vector3d x = mesh.nodes[run.contact_mesh_nodes[i]];
    if (s.state == ContactState::slip && x.norm() > 1.0) {
      EXPECT_GT(du.dot(x), 0.0) << i;
      EXPECT_LT(r_t.dot(x), 0.0) << i;
      ++n_sliding_outwards;
    }
  }
  EXPECT_GT(n_sliding_outwards, 0);
}

}  // namespace
}  // namespace bipo
