// Wear laws per contact node and their accumulation over steps and cycles.
// See wear.hpp.
#include "contact/wear.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

namespace bipo {

double step_wear_depth(WearLaw law, double coefficient, double normal_force, double slip_length,
                       double dissipation, double area) {
  if (!(area > 0.0) || normal_force <= 0.0) return 0.0;
  if (law == WearLaw::archard) return coefficient * (normal_force / area) * slip_length;
  return coefficient * dissipation / area;
}

NodalWear::NodalWear(WearLaw law, double coefficient, std::vector<double> area,
                     std::vector<bool> wears)
    : law_(law),
      coefficient_(coefficient),
      area_(std::move(area)),
      wears_(std::move(wears)),
      depth_(area_.size(), 0.0),
      cycle_depth_(area_.size(), 0.0),
      last_cycle_depth_(area_.size(), 0.0) {
  assert(wears_.size() == area_.size());
}

void NodalWear::add_step(std::span<const ContactNodeState> states) {
  assert(states.size() == area_.size());
  for (std::size_t i = 0; i < states.size(); ++i) {
    if (!wears_[i]) continue;
    const ContactNodeState& s = states[i];
    cycle_depth_[i] +=
        step_wear_depth(law_, coefficient_, s.r(0), s.slip.norm(), s.dissipation, area_[i]);
  }
}

double NodalWear::end_cycle(int times) {
  double added = 0.0;
  for (std::size_t i = 0; i < depth_.size(); ++i) {
    const double dh = times * cycle_depth_[i];
    depth_[i] += dh;
    last_cycle_depth_[i] = dh;
    added += dh * area_[i];
    max_depth_ = std::max(max_depth_, depth_[i]);
    cycle_depth_[i] = 0.0;
  }
  volume_ += added;
  return added;
}

}  // namespace bipo
