#include "solver/step_snapshot.hpp"

#include "contact/rigid_plane.hpp"

namespace bipo {

namespace {

/// The contact node of `probe` and its radial direction; contact_index -1
/// if the probe's set (by default the first contact plane's) is not the set
/// of any contact plane. Of equally near nodes, the first.
ProbeSite probe_site(const Analysis& analysis, const Probe& probe) {
  const Case& c = analysis.case_description();
  const NodeToPlaneContact& contact = analysis.contact();
  const auto& nodes = analysis.contact_mesh_nodes();
  const std::string set = probe.set.empty() && !c.contacts.empty() ? c.contacts[0].set : probe.set;
  int best = -1;
  double best_distance = 0.0;
  for (int pi = 0; pi < static_cast<int>(c.contacts.size()); ++pi) {
    if (c.contacts[pi].set != set) continue;
    for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
      if (contact.nodes()[i].plane != pi) continue;
      const double d = (analysis.mesh().nodes[nodes[i]] - probe.point).norm();
      if (best < 0 || d < best_distance) best = i, best_distance = d;
    }
  }
  ProbeSite site{probe.name, best, Eigen::Vector3d::UnitX()};
  if (best < 0) return site;
  const ContactNode& node = contact.nodes()[best];
  site.radial = contact.planes()[node.plane].radial_direction(node.position);
  return site;
}

/// The axes of a contact's history columns (RunDescription::contact_axes).
/// A plane: its n, t1 and n x t1 as the case gives them. An indenter: the
/// frame that its friction direction gives at the normal n0 of the node it
/// touches first (RigidPlane::normal), the frame of a flat face under a
/// sphere or cylinder pressed along -n0.
std::array<Eigen::Vector3d, 3> contact_axes(const ContactPlane& cp, const RigidPlane& surface) {
  if (cp.shape == ContactShape::plane)
    return {cp.normal, cp.direction, cp.normal.cross(cp.direction)};
  const Eigen::Vector3d& n0 = surface.normal;
  const Eigen::Vector3d t1 =
      surface.t1_angle ? direction_at_angle(n0, *surface.t1_angle)
                       : direction_along(n0, surface.t1).value_or(reference_direction(n0));
  return {n0, t1, n0.cross(t1)};
}

}  // namespace

RunDescription describe_run(const Analysis& analysis) {
  RunDescription run{
      analysis.case_description(),
      analysis.mesh(),
      analysis.elasticity(),
      analysis.contact_mesh_nodes(),
      {},
      analysis.n_held_contact_components(),
      analysis.n_dofs(),
      analysis.n_free(),
      analysis.factor_nonzeros(),
      analysis.blas_threads(),
      analysis.contact_solver(),
      analysis.contact_path().reason,
      std::string(analysis.contact_preconditioner()),
      analysis.contact_preconditioner_reason(),
      analysis.shares_setup(),
      analysis.certificate_acceptance(),
      analysis.position(),
      analysis.timings(),
      {},
      {},
      analysis.linear_solver().name(),
      1,
      {analysis.linear_solver().solve_count(), analysis.linear_solver().krylov_iterations()},
      analysis.contact_newton_step_rows_per_rank(),
      analysis.stiffness_entries_per_rank(),
      analysis.contact_newton_step_received_rows_per_rank(),
      analysis.equilibrium_check_received_rows_per_rank()};
  for (const ContactNode& node : analysis.contact().nodes())
    run.contact_of_node.push_back(node.plane);
  for (const Probe& probe : analysis.case_description().probes)
    run.probes.push_back(probe_site(analysis, probe));
  for (std::size_t pi = 0; pi < run.case_description.contacts.size(); ++pi)
    run.contact_axes.push_back(
        contact_axes(run.case_description.contacts[pi], analysis.contact().planes()[pi]));
  return run;
}

StepSnapshot snapshot_of(const Analysis& analysis, const StepResult& step) {
  return snapshot_of(analysis, step, analysis.displacement());
}

StepSnapshot snapshot_of(const Analysis& analysis, const StepResult& step,
                         const Eigen::VectorXd& displacement) {
  StepSnapshot snapshot{step,
                        displacement,
                        analysis.contact_states(),
                        analysis.accumulated_slip(),
                        analysis.accumulated_slip_length(),
                        analysis.accumulated_dissipation(),
                        {},
                        {},
                        {},
                        {},
                        {},
                        analysis.wear(),
                        analysis.represented_cycles(),
                        analysis.stop_reason(),
                        analysis.linear_solver().solve_count(),
                        analysis.linear_solver().krylov_iterations()};
  const auto& states = analysis.contact_states();
  snapshot.friction_force.reserve(states.size());
  snapshot.slip_increment.reserve(states.size());
  for (std::size_t i = 0; i < states.size(); ++i) {
    const Eigen::Matrix3d& frame = analysis.contact().frame(static_cast<int>(i));
    snapshot.friction_force.emplace_back(tangential_to_global(frame, states[i].r.tail<2>()));
    snapshot.slip_increment.emplace_back(tangential_to_global(frame, states[i].slip));
  }
  const Case& c = analysis.case_description();
  snapshot.contact_reaction.assign(c.contacts.size(), Eigen::Vector3d::Zero());
  snapshot.reaction.reserve(states.size());
  for (std::size_t i = 0; i < states.size(); ++i) {
    const Eigen::Matrix3d& frame = analysis.contact().frame(static_cast<int>(i));
    snapshot.reaction.emplace_back(frame.transpose() * states[i].r);
    snapshot.contact_reaction[analysis.contact().nodes()[i].plane] += snapshot.reaction.back();
  }
  for (const ContactPlane& cp : c.contacts) {
    snapshot.contact_motion.emplace_back(cp.motion *
                                         motion_program_of(c, cp).factor(step.position));
  }
  return snapshot;
}

}  // namespace bipo
