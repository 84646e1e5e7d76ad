// Owns the wear laws of the contact nodes (docs/physics.md section 2.2, the worn gap;
// docs/case-file.md, `wear`): the worn depth of a node in one step by Archard's law or by the
// energy law, its sum over the steps of a cycle, and the depth accumulated
// over the cycles, a cycle's wear counted K times when cycles are jumped.
// Pure: it knows no mesh; each node's tributary area comes from the solver
// layer.
#pragma once

#include <span>
#include <vector>

#include "contact/node_to_plane.hpp"

namespace bipo {

/// Archard: dh = k p |du_t| (p = r_n / A, the nodal pressure); energy: dh =
/// k D / A (D = -r_t . du_t, the node's dissipation). Both coefficients are
/// in 1 / pressure (length^2 / force).
enum class WearLaw { archard, energy };

/// The worn depth of one node in one step: `normal_force` r_n, the slip
/// increment's length |du_t|, the dissipation D and the tributary area A.
/// 0 for a node without area (not on a contact face) or without force.
[[nodiscard]] double step_wear_depth(WearLaw law, double coefficient, double normal_force,
                                     double slip_length, double dissipation, double area);

/// The wear of the contact nodes: the depth worn in the current cycle, and
/// the depth applied to the gaps (the sum of the ended cycles, each counted
/// as many times as it stands for).
class NodalWear {
 public:
  /// `area`: each node's tributary area; `wears`: whether each node wears
  /// (its plane is the wear's contact).
  NodalWear(WearLaw law, double coefficient, std::vector<double> area, std::vector<bool> wears);

  /// Adds one converged step's wear (states of the step, one per node).
  void add_step(std::span<const ContactNodeState> states);
  /// Ends the current cycle, counting it `times` times: the depth grows by
  /// times x the cycle's depth. Returns the volume so added, sum_i dh_i A_i.
  double end_cycle(int times);

  [[nodiscard]] const std::vector<double>& depth() const { return depth_; }
  [[nodiscard]] const std::vector<double>& cycle_depth() const { return cycle_depth_; }
  /// The depth the last ended cycle added (times its count).
  [[nodiscard]] const std::vector<double>& last_cycle_depth() const { return last_cycle_depth_; }
  [[nodiscard]] const std::vector<double>& area() const { return area_; }
  [[nodiscard]] double max_depth() const { return max_depth_; }
  /// The total worn volume, sum_i h_i A_i.
  [[nodiscard]] double volume() const { return volume_; }

 private:
  WearLaw law_;
  double coefficient_;
  std::vector<double> area_;
  std::vector<bool> wears_;
  std::vector<double> depth_, cycle_depth_, last_cycle_depth_;
  double max_depth_ = 0.0, volume_ = 0.0;
};

}  // namespace bipo
