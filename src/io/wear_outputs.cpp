// The wear results: the scar profile and the summary's wear entry. See
// wear_outputs.hpp.
#include "io/wear_outputs.hpp"

#include <iomanip>
#include <sstream>

namespace bipo {

std::string wear_profile_csv(const RunDescription& run, const StepSnapshot& snapshot) {
  const NodalWear& wear = *snapshot.wear;
  std::ostringstream out;
  out << std::setprecision(17);
  out << "node,x,y,z,area,wear_depth,wear_depth_cycle,pressure\n";
  for (std::size_t i = 0; i < run.contact_mesh_nodes.size(); ++i) {
    const Eigen::Vector3d& x = run.mesh.nodes[run.contact_mesh_nodes[i]];
    const double area = wear.area()[i];
    const double rn = snapshot.contact_states[i].r(0);
    out << run.contact_mesh_nodes[i] << ',' << x.x() << ',' << x.y() << ',' << x.z() << ',' << area
        << ',' << wear.depth()[i] << ',' << wear.last_cycle_depth()[i] << ','
        << (area > 0.0 ? rn / area : 0.0) << '\n';
  }
  return out.str();
}

nlohmann::json wear_summary(const WearSettings& settings, const WearTotals& totals) {
  nlohmann::json j;
  j["law"] = settings.law == WearLawChoice::archard ? "archard" : "energy";
  j["coefficient"] = settings.coefficient;
  j["cycle_jump"] = settings.cycle_jump;
  j["represented_cycles"] = totals.represented_cycles;
  j["max_depth"] = totals.max_depth;
  j["volume"] = totals.volume;
  j["stop_reason"] = totals.stop_reason.empty() ? "end of load_program" : totals.stop_reason;
  return j;
}

}  // namespace bipo
