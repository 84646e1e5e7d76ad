// Owns the results about the contact face (docs/outputs.md): its nodes'
// tributary areas and faces, the map of the face at a segment end
// (maps/step_NNNNNN.csv), the per-cycle record and its cycles.csv, and the
// contact fields of the VTK output. Pure functions of a run description and
// step snapshots; the files themselves are written by io/result_writer.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/vtk_output.hpp"
#include "solver/step_snapshot.hpp"

namespace bipo {

/// Which contact nodes and faces the case's contact surface has, with the
/// tributary area of each contact node: an equal share of each adjacent
/// boundary face, a quarter of a quadrilateral, a third of a triangle.
struct ContactSurface {
  std::vector<int> local_of_node;             // mesh node -> contact index or -1
  std::vector<std::array<int, 4>> quads;      // in contact indices
  std::vector<std::array<int, 3>> triangles;  // in contact indices
  std::vector<double> area;                   // per contact node
};

[[nodiscard]] ContactSurface contact_surface(const RunDescription& run);

/// The contact face at the end of a segment of the load program: how many
/// nodes are open, stuck and sliding, and their areas.
struct SegmentEnd {
  double position = -1.0;
  int step = 0;
  int n_open = 0, n_stick = 0, n_slip = 0;
  double area_open = 0.0, area_stick = 0.0, area_slip = 0.0;
};

/// The segment end of converged step number `step_number`.
[[nodiscard]] SegmentEnd segment_end(const StepSnapshot& snapshot, int step_number,
                                     const ContactSurface& surface);

/// What each contact node did in the current cycle so far (docs/outputs.md,
/// "Cycles"): its dissipation; its slip amplitude, half the diagonal of the
/// box that holds its accumulated slip s (global components) over the cycle,
/// from before its first step on: |max_k s - min_k s| / 2, componentwise
/// max and min (half the peak-to-peak slip of a back-and-forth slip along a
/// line); whether it was stuck at every step, and whether it slipped at some.
/// Sized once; no allocation per step.
struct CycleNodeRecord {
  std::vector<double> dissipation, slip_amplitude;
  std::vector<std::uint8_t> stuck, slipped;  ///< at every step / at some step
  std::vector<Eigen::Vector3d> slip_min, slip_max;

  explicit CycleNodeRecord(std::size_t n_nodes = 0);
  /// Starts a cycle at `first_step`, the snapshot of its first step.
  void start(const StepSnapshot& first_step);
  /// Adds a step of the cycle.
  void add(const StepSnapshot& snapshot);
  [[nodiscard]] int n_stuck() const;
  [[nodiscard]] int n_slipped() const;
};

/// The fretting loop of a cycle: the driver's (displacement x, force y)
/// path, integrated as it grows (docs/outputs.md, "Cycles").
struct CycleLoop {
  bool started = false;
  double x0 = 0.0, y0 = 0.0, x = 0.0, y = 0.0;  ///< first and last points
  double twice_signed_area = 0.0;               ///< shoelace sum, without its closing term
  double driver_work = 0.0;                     ///< sum of y(k) (x(k) - x(k-1)): end-of-step force
  /// Adds the point of a step; the first point of a cycle is where the
  /// previous step ended.
  void add(double x_before, double y_before, double x_now, double y_now);
  /// The area enclosed by the path closed back to its start.
  [[nodiscard]] double area() const;
};

/// What the fretting loop plots against what (docs/case-file.md, `cycles`):
/// the displacement and force of the cycle program's driver, both along
/// `direction`.
struct LoopDriver {
  enum class Kind { none, contact, condition, load };
  Kind kind = Kind::none;
  int index = -1;
  Eigen::Vector3d direction = Eigen::Vector3d::UnitX();
  std::vector<int> nodes;  ///< a load's node set (its mean displacement)
};

/// The driver of the case's `cycles.program`.
[[nodiscard]] LoopDriver loop_driver(const RunDescription& run);

/// The driver's (displacement, force) at a step: the force is what the
/// driver exerts on the body.
[[nodiscard]] std::pair<double, double> driver_point(const LoopDriver& driver,
                                                     const RunDescription& run,
                                                     const StepSnapshot& snapshot);

/// What cycles.csv says of one cycle of the load program.
struct CycleRecord {
  double dissipation = 0.0;
  int steps = 0;
  SegmentEnd end_loading, end_unloading;
  std::vector<std::pair<double, double>> loop;  // (radial slip of P, applied force)
  CycleLoop driver_loop;
  double work_on_body = 0.0;  ///< sum over steps and contact nodes of r_i . (u_i(k) - u_i(k-1))
  int n_stuck = 0, n_slipped = 0;  ///< stuck at every step / slipping at some step
  double max_slip_amplitude = 0.0;
  /// Wear (case `wear`): the volume the cycle wore, applied K times, and the
  /// cycles represented at its end; unset without wear.
  std::optional<double> wear_volume;
  long long represented_cycles = 0;
};

/// The text of cycles.csv, one row per cycle.
[[nodiscard]] std::string cycles_csv(const std::map<int, CycleRecord>& cycles);

/// The text of a contact map: one row per contact node, with what each did
/// in the current cycle so far.
[[nodiscard]] std::string contact_map_csv(const RunDescription& run, const StepSnapshot& snapshot,
                                          const ContactSurface& surface,
                                          const CycleNodeRecord& cycle);

/// Contact fields on the contact nodes (docs/outputs.md), among them the
/// contact pressure r_n / A and tangential traction r_t / A, with A the
/// node's tributary area (0 where A = 0).
[[nodiscard]] std::vector<PointField> contact_point_fields(const StepSnapshot& snapshot,
                                                           const ContactSurface& surface,
                                                           const CycleNodeRecord& cycle);

/// contact_state_face's value on a face whose four nodes are not all in
/// one state: it straddles a boundary between open, stick and slip.
inline constexpr double kMixedFaceState = 3.0;

/// The state of each contact face (surface.quads, then surface.triangles:
/// the written cells' order), as an integer cell field: the state of its
/// nodes when they all agree, else
/// kMixedFaceState. States are nodal; a cell field is what ParaView colours
/// without interpolating between nodes (docs/outputs.md).
[[nodiscard]] CellField contact_face_states(const StepSnapshot& snapshot,
                                            const ContactSurface& surface);

}  // namespace bipo
