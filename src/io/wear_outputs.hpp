// Owns the wear results (docs/outputs.md, "Wear"): the scar profile of a
// cycle's end (wear/cycle_NNNN.csv) and the wear entry of summary.json.
// Pure functions of a run description and step snapshots; the files are
// written by io/result_writer.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "io/contact_face_outputs.hpp"
#include "solver/step_snapshot.hpp"

namespace bipo {

/// The scar profile at the end of a cycle, one row per contact node: its
/// position, tributary area, worn depth, the depth the cycle added (times
/// its count), and its pressure at that step.
[[nodiscard]] std::string wear_profile_csv(const RunDescription& run, const StepSnapshot& snapshot);

/// What a run's wear came to, as of the last step (`snapshot`, or none).
struct WearTotals {
  long long represented_cycles = 0;
  double max_depth = 0.0, volume = 0.0;
  std::string stop_reason;
};

/// summary.json's `wear` entry: the case's settings and the totals.
[[nodiscard]] nlohmann::json wear_summary(const WearSettings& settings, const WearTotals& totals);

}  // namespace bipo
