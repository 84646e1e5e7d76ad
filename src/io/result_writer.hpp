// Owns the layout of a run's results folder (docs/outputs.md): history.csv,
// probes/<name>.csv, maps/, cycles.csv, summary.json and the VTK series,
// written as the steps converge from a run description and step snapshots
// (solver/step_snapshot.hpp). Output files are complete or absent.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/contact_face_outputs.hpp"
#include "io/result_folder.hpp"
#include "io/vtk_output.hpp"
#include "io/wear_outputs.hpp"
#include "solver/step_snapshot.hpp"

namespace bipo {

/// Writes every result file of a run as the steps converge, into a
/// ResultFolder: staged until the first converged step (or the end of a run
/// that fails before one), then in place of the earlier run's results.
class ResultWriter {
 public:
  /// Checks what can be wrong with the case's outputs (probe names and
  /// sets, node set names as VTK fields; InputError) before the results
  /// folder is touched, then opens the folder and writes a "running"
  /// summary. `label` names the setting that chose `directory` (for
  /// messages). `run` must outlive the writer.
  ResultWriter(const RunDescription& run, const std::filesystem::path& directory,
               const std::string& label);

  /// Writes the outputs of one converged step.
  void on_step(const StepSnapshot& snapshot);

  /// Closes the histories and writes cycles.csv and the final summary.
  void finish(const std::string& status, const std::string& message, double total_seconds);

 private:
  void commit();
  void check_probes() const;
  void check_set_field_names() const;
  void update_cycle(const StepSnapshot& snapshot, double applied);
  [[nodiscard]] bool is_segment_end(double position) const;
  void record_segment_end(const StepSnapshot& snapshot, int extreme);
  [[nodiscard]] int extreme_at(double position) const;
  void update_fretting(const StepSnapshot& snapshot, CycleRecord& record);
  void write_history_row(const StepSnapshot& snapshot);
  void write_probe(std::size_t p, const StepSnapshot& snapshot, double applied);
  void write_map(const StepSnapshot& snapshot, const char* kind, int extreme);
  void write_vtk(const StepSnapshot& snapshot);
  [[nodiscard]] VtuOptions vtu_options(const StepSnapshot& snapshot) const;
  void write_contact_vtu(const StepSnapshot& snapshot, std::vector<PointField> contact_fields,
                         const VtuOptions& options);
  void write_summary(const std::string& status, const std::string& message);
  void record_wear(const StepSnapshot& snapshot);

  const RunDescription& run_;
  // First of the members that hold files: destroyed last, after the writers
  // have closed theirs, it removes what an unfinished run staged.
  std::optional<ResultFolder> folder_;
  ContactSurface surface_;
  int probe_p_ = -1;
  std::unique_ptr<CsvWriter> history_;
  std::vector<std::unique_ptr<CsvWriter>> probe_csv_;
  std::unique_ptr<PvdCollection> pvd_, contact_pvd_;
  std::map<int, CycleRecord> cycles_;
  CycleNodeRecord cycle_nodes_;
  bool cycle_open_ = false;
  int current_cycle_ = 0;
  // The fretting loop's driver, the cycle program's turning points (per
  // increment), and what the previous step left (docs/outputs.md, "Cycles").
  LoopDriver driver_;
  std::vector<int> extremes_;
  std::pair<double, double> last_driver_point_{0.0, 0.0};
  std::vector<Eigen::Vector3d> last_contact_u_;
  double last_radial_slip_ = 0.0, last_applied_ = 0.0;
  std::string map_index_;
  int n_steps_ = 0;
  double last_position_ = 0.0;
  long total_sweeps_ = 0, total_newton_ = 0;
  long total_contact_factorizations_ = 0, total_contact_linear_iterations_ = 0;
  long total_contact_preconditioner_iterations_ = 0;
  long total_contact_preconditioner_fallbacks_ = 0;
  long total_contact_long_restart_steps_ = 0, total_contact_motion_corrections_ = 0;
  long total_contact_long_restart_refused_steps_ = 0;
  long total_contact_single_precision_steps_ = 0;
  ContactWorkspace::Counts total_contact_dense_steps_;
  // K_ff's solver's counters at the last step (StepSnapshot).
  std::pair<long, long> last_counts_{0, 0};
  double max_certificate_ = 0.0, max_residual_ = 0.0;
  double seconds_linear_ = 0.0, seconds_contact_ = 0.0, seconds_output_ = 0.0;
  double total_seconds_ = 0.0;
  WearTotals wear_;
};

}  // namespace bipo
