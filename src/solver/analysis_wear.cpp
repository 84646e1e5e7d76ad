// Owns the wear step of an analysis (docs/case-file.md, `wear`): the contact
// nodes' tributary areas, each step's wear added within the cycles, and at a
// cycle's end the worn depth applied to the gaps (K times with cycle
// jumping) and the stop criteria checked. The condensed operators depend on
// the stiffness and the frames only, not on the gaps: they stay valid, and
// so does a set-up shared with other analyses.
#include <cmath>
#include <sstream>

#include "mesh/quality.hpp"
#include "solver/analysis.hpp"

namespace bipo {

namespace {

/// Each contact node's tributary area: an equal share of each boundary
/// face of its plane's node set (a quarter of a quadrilateral, a third of a
/// triangle), as the outputs' pressure uses (io/contact_face_outputs).
std::vector<double> tributary_areas(const Case& c, const Mesh& mesh,
                                    const std::vector<int>& contact_mesh_nodes) {
  std::vector<int> local_of_node(mesh.nodes.size(), -1);
  for (int i = 0; i < static_cast<int>(contact_mesh_nodes.size()); ++i)
    local_of_node[contact_mesh_nodes[i]] = i;
  std::vector<double> area(contact_mesh_nodes.size(), 0.0);
  for (const auto& cp : c.contacts) {
    const BoundaryFaces faces = boundary_faces_on_node_set(mesh, mesh.node_set(cp.set));
    for (const auto& f : faces.quads) {
      const auto& x = mesh.nodes;
      const double a = 0.5 * (x[f[2]] - x[f[0]]).cross(x[f[3]] - x[f[1]]).norm();
      for (int node : f) area[local_of_node[node]] += 0.25 * a;
    }
    for (const auto& f : faces.triangles) {
      const auto& x = mesh.nodes;
      const double a = 0.5 * (x[f[1]] - x[f[0]]).cross(x[f[2]] - x[f[0]]).norm();
      for (int node : f) area[local_of_node[node]] += a / 3.0;
    }
  }
  return area;
}

}  // namespace

void Analysis::set_up_wear() {
  const WearSettings& w = *case_.wear;
  const int m = contact_->n_nodes();
  std::vector<bool> wears(m);
  for (int i = 0; i < m; ++i)
    wears[i] = w.contact.empty() || case_.contacts[contact_->nodes()[i].plane].name == w.contact;
  wear_.emplace(w.law == WearLawChoice::archard ? WearLaw::archard : WearLaw::energy, w.coefficient,
                tributary_areas(case_, mesh_, contact_mesh_nodes_), std::move(wears));
}

/// After a converged step: its wear if it is within a cycle; at the end of a
/// cycle (the last whole increment of the cycle), the cycle's wear applied.
void Analysis::wear_step(StepResult& result) {
  if (result.cycle == 0) return;
  wear_->add_step(states_);
  // The cycles are those of the program the case names (`cycles.program`),
  // as result.cycle is.
  const LoadProgram& program = cycle_program(case_);
  const double position = result.position;
  if (position != std::floor(position)) return;  // a cut piece ends inside its increment
  const int k = static_cast<int>(position);
  if (k < program.n_increments() && program.cycle(k + 1) == result.cycle) return;
  const WearSettings& w = *case_.wear;
  // Cycle jumping: the simulated cycle stands for K cycles, the last jump
  // shortened so as to end exactly at max_cycles.
  long long times = w.cycle_jump;
  if (w.max_cycles) times = std::min(times, *w.max_cycles - represented_cycles_);
  result.wear_volume = wear_->end_cycle(static_cast<int>(times));
  represented_cycles_ += times;
  const std::vector<double>& depth = wear_->depth();
  contact_->set_gap_offset(
      Eigen::Map<const Eigen::VectorXd>(depth.data(), static_cast<Eigen::Index>(depth.size())));
  std::ostringstream why;
  if (w.max_cycles && represented_cycles_ >= *w.max_cycles)
    why << "wear.max_cycles: " << represented_cycles_ << " cycles represented";
  else if (w.max_depth && wear_->max_depth() >= *w.max_depth)
    why << "wear.max_depth: worn depth " << wear_->max_depth() << " reached " << *w.max_depth;
  stop_reason_ = why.str();
}

}  // namespace bipo
