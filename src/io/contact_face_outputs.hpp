// Owns the results about the contact face (docs/outputs.md): its nodes'
// tributary areas and faces, the map of the face at a segment end
// (maps/step_NNNNNN.csv), the per-cycle record and its cycles.csv, and the
// contact fields of the VTK output. Pure functions of a run description and
// step snapshots; the files themselves are written by io/result_writer.
#pragma once

#include <array>
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

/// What cycles.csv says of one cycle of the load program.
struct CycleRecord {
  double dissipation = 0.0;
  int steps = 0;
  SegmentEnd end_loading, end_unloading;
  std::vector<std::pair<double, double>> loop;  // (radial slip of P, applied force)
  /// Wear (case `wear`): the volume the cycle wore, applied K times, and the
  /// cycles represented at its end; unset without wear.
  std::optional<double> wear_volume;
  long long represented_cycles = 0;
};

/// The text of cycles.csv, one row per cycle.
[[nodiscard]] std::string cycles_csv(const std::map<int, CycleRecord>& cycles);

/// The text of a contact map: one row per contact node. `cycle_dissipation`
/// is each node's dissipation in the current cycle.
[[nodiscard]] std::string contact_map_csv(const RunDescription& run, const StepSnapshot& snapshot,
                                          const ContactSurface& surface,
                                          const std::vector<double>& cycle_dissipation);

/// Contact fields on the contact nodes (docs/outputs.md), among them the
/// contact pressure r_n / A and tangential traction r_t / A, with A the
/// node's tributary area (0 where A = 0).
[[nodiscard]] std::vector<PointField> contact_point_fields(
    const StepSnapshot& snapshot, const ContactSurface& surface,
    const std::vector<double>& cycle_dissipation);

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
