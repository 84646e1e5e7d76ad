#include "io/result_writer.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/errors.hpp"
#include "core/text_encoding.hpp"
#include "fem/hex8.hpp"
#include "io/mesh_cells.hpp"
#include "version.hpp"

namespace bipo {

namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double peak_memory_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

std::string padded(int value) {
  std::ostringstream s;
  s << std::setw(6) << std::setfill('0') << value;
  return s.str();
}

bool wants(const OutputSettings& o, const std::string& field) {
  for (const auto& f : o.fields)
    if (f == field) return true;
  return false;
}

/// The label of the reaction columns of each boundary condition, in the
/// case's order: "reaction_<set>", and for the second, third... condition on
/// one set "reaction_<set>#2", "#3"... (docs/outputs.md); a label is never
/// given twice (a number already taken, e.g. by a set whose name ends in
/// "#2", is skipped).
std::vector<std::string> reaction_labels(const Case& c) {
  std::vector<std::string> labels;
  std::set<std::string> taken;
  for (const auto& bc : c.dirichlet) {
    const std::string base = "reaction_" + bc.set;
    std::string label = base;
    for (int n = 2; taken.count(label) != 0; ++n) label = base + "#" + std::to_string(n);
    taken.insert(label);
    labels.push_back(label);
  }
  return labels;
}

std::vector<std::string> history_columns(const Case& c) {
  std::vector<std::string> columns{"step", "position", "load_factor", "cycle"};
  for (const std::string& label_of_bc : reaction_labels(c))
    for (const char* comp : {"x", "y", "z"}) columns.push_back(label_of_bc + "_" + comp);
  for (const char* name : {"contact_force_x", "contact_force_y", "contact_force_z", "normal_force",
                           "tangential_force_t1", "tangential_force_t2", "n_open", "n_stick",
                           "n_slip", "dissipation", "accumulated_dissipation", "newton_iterations",
                           "sweeps", "equilibrium_residual", "scaled_certificate"})
    columns.emplace_back(name);
  // Per contact, by its name: its rigid displacement and its total reaction
  // on the body; then the fretting loop's point (docs/outputs.md).
  for (const auto& cp : c.contacts) {
    for (const char* comp : {"x", "y", "z"}) columns.push_back("w_" + cp.name + "_" + comp);
    for (const char* comp : {"x", "y", "z"}) columns.push_back("force_" + cp.name + "_" + comp);
    for (const char* part : {"normal_force_", "tangential_force_"}) {
      if (part[0] == 'n') {
        columns.push_back(part + cp.name);
      } else {
        columns.push_back(part + cp.name + "_t1");
        columns.push_back(part + cp.name + "_t2");
      }
    }
  }
  columns.emplace_back("loop_displacement");
  columns.emplace_back("loop_force");
  // Last, as always: the one column that differs between identical runs.
  columns.emplace_back("seconds");
  return columns;
}

// clang-format off
const std::vector<std::string> probe_columns{
    "step", "position", "load_factor", "cycle", "ux", "uy", "uz", "slip_increment_t1",
    "slip_increment_t2", "accumulated_slip_x", "accumulated_slip_y", "accumulated_slip_z",
    "accumulated_slip_length", "radial_slip", "normal_force", "friction_force_t1",
    "friction_force_t2", "friction_force_x", "friction_force_y", "friction_force_z", "state",
    "f", "gap", "applied_force"};
// clang-format on

/// The applied force: magnitude of the total reaction of the first
/// boundary condition (the loading platen in the punch cases).
double applied_force(const StepResult& step) {
  return step.dirichlet_reactions.empty() ? 0.0 : step.dirichlet_reactions.front().norm();
}

double radial_slip(const ProbeSite& probe, const StepSnapshot& snapshot) {
  return snapshot.accumulated_slip[probe.contact_index].dot(probe.radial);
}

/// The body's VTK fields that the case asks for (output.fields):
/// displacement, stress, von_mises, sets.
void body_fields(const RunDescription& run, const StepSnapshot& snapshot,
                 std::vector<PointField>& points, std::vector<CellField>& cells) {
  const OutputSettings& output = run.case_description.output;
  const Mesh& mesh = run.mesh;
  const std::size_t n = mesh.nodes.size();
  if (wants(output, "displacement")) {
    PointField u{"displacement", 3, {}};
    u.values.assign(snapshot.displacement.data(), snapshot.displacement.data() + 3 * n);
    points.push_back(std::move(u));
  }
  if (wants(output, "stress") || wants(output, "von_mises")) {
    const auto stresses = element_stresses(mesh, run.elasticity, snapshot.displacement);
    CellField tensor{"stress", 9, {}}, mises{"von_mises", 1, {}};
    for (const auto& s : stresses) {
      // Voigt (xx, yy, zz, yz, xz, xy) to a full row-major tensor.
      tensor.values.insert(tensor.values.end(),
                           {s(0), s(5), s(4), s(5), s(1), s(3), s(4), s(3), s(2)});
      mises.values.push_back(von_mises(s));
    }
    if (wants(output, "stress")) cells.push_back(std::move(tensor));
    if (wants(output, "von_mises")) cells.push_back(std::move(mises));
  }
  if (wants(output, "sets"))
    for (const auto& [name, nodes] : mesh.node_sets) {
      PointField flag{"set_" + name, 1, std::vector<double>(n, 0.0), ValueType::uint8};
      for (int node : nodes) flag.values[node] = 1.0;
      points.push_back(std::move(flag));
    }
}

/// VTK's compressor for the case's choice.
VtuCompression compression_of(VtuCompressionChoice choice) {
  switch (choice) {
    case VtuCompressionChoice::lz4:
      return VtuCompression::lz4;
    case VtuCompressionChoice::lzma:
      return VtuCompression::lzma;
    case VtuCompressionChoice::none:
      return VtuCompression::none;
    case VtuCompressionChoice::zlib:
      break;
  }
  return VtuCompression::zlib;
}

/// Where a step is in its load program: the increment it belongs to (the
/// one that ends at or after it), the 1-based segment of that increment, and
/// the segment's kind: +1 loading (its target above the previous one), -1
/// unloading, 0 hold.
struct ProgramPlace {
  int increment = 0, segment = 0, kind = 0;
};

ProgramPlace place_in_program(const LoadProgram& program, double position) {
  ProgramPlace place;
  place.increment = static_cast<int>(std::ceil(position - 1e-9));
  int last = 0;
  double before = 0.0;
  for (const auto& segment : program.segments) {
    ++place.segment;
    last += segment.n_increments;
    if (place.increment <= last) {
      place.kind = segment.target > before ? 1 : segment.target < before ? -1 : 0;
      break;
    }
    before = segment.target;
  }
  return place;
}

/// Contact fields spread over the full mesh: zero away from the contact
/// nodes (contact_state is -1 there).
void add_on_full_mesh(const std::vector<PointField>& contact_fields,
                      const std::vector<int>& contact_mesh_nodes, std::size_t n,
                      std::vector<PointField>& points) {
  const auto& nodes = contact_mesh_nodes;
  for (const auto& field : contact_fields) {
    PointField full{
        field.name, field.n_components,
        std::vector<double>(n * field.n_components, field.name == "contact_state" ? -1.0 : 0.0),
        field.type};
    for (std::size_t i = 0; i < nodes.size(); ++i)
      for (int k = 0; k < field.n_components; ++k)
        full.values[nodes[i] * field.n_components + k] = field.values[i * field.n_components + k];
    points.push_back(std::move(full));
  }
}

/// The fretting loop's driver as summary.json names it.
std::string driver_name(const Case& c, const LoopDriver& driver) {
  const std::string i = std::to_string(driver.index);
  switch (driver.kind) {
    case LoopDriver::Kind::contact:
      return "contact." + c.contacts[static_cast<std::size_t>(driver.index)].name + ".motion";
    case LoopDriver::Kind::condition:
      return "boundary_conditions[" + i + "]";
    case LoopDriver::Kind::load:
      return "loads[" + i + "]";
    case LoopDriver::Kind::none:
      break;
  }
  return "none";
}

/// Whether the maps (and the VTK files at segment ends and extremes) of this
/// cycle are written: cycles 0 and 1, the last, and the multiples of
/// output.cycle_every (docs/case-file.md, `output`). Thinning them keeps a
/// run of thousands of cycles from spending its time writing maps.
bool writes_cycle_snapshots(const Case& c, int cycle) {
  const int every = c.output.cycle_every;
  return every == 1 || cycle <= 1 || cycle % every == 0 || cycle >= cycle_program(c).n_cycles();
}

}  // namespace

ResultWriter::ResultWriter(const RunDescription& run, const fs::path& directory,
                           const std::string& label)
    : run_(run), last_position_(run.start_position) {
  const Case& c = run.case_description;
  // Everything that can be wrong with the case is checked before the
  // results folder is touched.
  surface_ = contact_surface(run);
  check_probes();
  check_set_field_names();
  for (std::size_t p = 0; p < run.probes.size(); ++p)
    if (run.probes[p].name == c.probe_p) probe_p_ = static_cast<int>(p);

  folder_.emplace(directory, label);
  history_ = std::make_unique<CsvWriter>(folder_->path({"history.csv"}), history_columns(c));
  for (const auto& probe : run.probes) {
    probe_csv_.push_back(
        std::make_unique<CsvWriter>(folder_->path({"probes", probe.name + ".csv"}), probe_columns));
  }
  if (c.output.vtk) {
    pvd_ = std::make_unique<PvdCollection>(folder_->path({"bipo.pvd"}));
    if (!c.contacts.empty())
      contact_pvd_ = std::make_unique<PvdCollection>(folder_->path({"contact.pvd"}));
  }
  cycle_nodes_ = CycleNodeRecord(run.contact_mesh_nodes.size());
  driver_ = loop_driver(run);
  extremes_ = cycle_program(c).extremes();
  last_contact_u_.assign(run.contact_mesh_nodes.size(), Eigen::Vector3d::Zero());
  write_summary("running", "");
}

void ResultWriter::on_step(const StepSnapshot& snapshot) {
  const auto start = std::chrono::steady_clock::now();
  const StepResult& step = snapshot.step;
  const Case& c = run_.case_description;
  ++n_steps_;
  last_position_ = step.position;
  max_certificate_ = std::max(max_certificate_, step.scaled_certificate);
  max_residual_ = std::max(max_residual_, step.equilibrium_residual);
  total_sweeps_ += step.sweeps;
  total_newton_ += step.newton_iterations;
  total_contact_factorizations_ += step.contact_factorizations;
  total_contact_linear_iterations_ += step.contact_linear_iterations;
  total_contact_preconditioner_iterations_ += step.contact_preconditioner_krylov_iterations;
  total_contact_preconditioner_fallbacks_ += step.contact_preconditioner_fallbacks;
  total_contact_long_restart_steps_ += step.contact_long_restart_steps;
  total_contact_motion_corrections_ += step.contact_motion_corrections;
  total_contact_long_restart_refused_steps_ += step.contact_long_restart_refused_steps;
  total_contact_single_precision_steps_ += step.contact_single_precision_steps;
  total_contact_dense_steps_ += step.contact_dense_steps;
  last_counts_ = {snapshot.linear_solves, snapshot.krylov_iterations};
  seconds_linear_ += step.seconds_linear;
  seconds_contact_ += step.seconds_contact;

  const double applied = applied_force(step);
  update_cycle(snapshot, applied);
  if (snapshot.wear) record_wear(snapshot);
  const bool segment_end = is_segment_end(step.position);
  const int extreme = extreme_at(step.position);
  if (segment_end || extreme != 0) record_segment_end(snapshot, extreme);
  write_history_row(snapshot);
  for (std::size_t p = 0; p < run_.probes.size(); ++p) write_probe(p, snapshot, applied);

  const int n_total = c.program.n_increments();
  const bool last = step.position >= n_total - 1e-12;
  const bool at_turn = (segment_end || extreme != 0) && writes_cycle_snapshots(c, step.cycle);
  if (c.output.vtk && (n_steps_ % c.output.every == 0 || last || at_turn)) write_vtk(snapshot);
  // The first step is written whole: the new run replaces the earlier one.
  commit();
  seconds_output_ += seconds_since(start);
}

void ResultWriter::finish(const std::string& status, const std::string& message,
                          double total_seconds) {
  history_->finish();
  for (auto& csv : probe_csv_) csv->finish();
  if (!cycles_.empty()) write_text_atomically(folder_->path({"cycles.csv"}), cycles_csv(cycles_));
  total_seconds_ = total_seconds;
  write_summary(status, message);
  // A run that fails before its first step has a result too: its summary.
  commit();
}

/// Replaces the earlier run's results by this run's (once), and points the
/// open writers at the files' new places.
void ResultWriter::commit() {
  if (folder_->committed()) return;
  folder_->commit();
  history_->relocate(folder_->path({"history.csv"}));
  for (std::size_t p = 0; p < run_.probes.size(); ++p)
    probe_csv_[p]->relocate(folder_->path({"probes", run_.probes[p].name + ".csv"}));
  if (pvd_) pvd_->relocate(folder_->path({"bipo.pvd"}));
  if (contact_pvd_) contact_pvd_->relocate(folder_->path({"contact.pvd"}));
}

void ResultWriter::check_probes() const {
  const Case& c = run_.case_description;
  // Probe names become file names (probes/<name>.csv): names that could
  // leave the folder are refused here, and the folder refuses them again;
  // two probes of one name would write one file.
  std::set<std::string> names;
  for (std::size_t i = 0; i < c.probes.size(); ++i) {
    const std::string key = c.source.string() + ": probes[" + std::to_string(i) + "].name: '" +
                            printable(c.probes[i].name) + "'";
    const std::string reason = unsafe_name_reason(c.probes[i].name);
    if (!reason.empty())
      throw InputError(key + " cannot be a file name (probes/<name>.csv): " + reason);
    if (!names.insert(c.probes[i].name).second)
      throw InputError(key + " is the name of an earlier probe too");
  }
  for (std::size_t i_probe = 0; i_probe < c.probes.size(); ++i_probe) {
    if (run_.probes[i_probe].contact_index >= 0) continue;
    const Probe& probe = c.probes[i_probe];
    const std::string set =
        probe.set.empty() && !c.contacts.empty() ? c.contacts[0].set : probe.set;
    throw InputError(located(c, "probes[" + std::to_string(i_probe) + "].set") + "probe '" +
                     probe.name + "': set '" + set + "' is not the node set of any contact plane");
  }
}

/// Node set names become VTK field names ("set_<name>"), written as valid
/// UTF-8: two names that differ only in bytes that are not UTF-8 would be
/// written alike.
void ResultWriter::check_set_field_names() const {
  const Case& c = run_.case_description;
  if (!c.output.vtk || !wants(c.output, "sets")) return;
  std::map<std::string, std::string> written;
  for (const auto& [name, nodes] : run_.mesh.node_sets) {
    const auto [at, inserted] = written.emplace(valid_utf8(name), name);
    if (!inserted) {
      throw InputError(c.source.string() + ": output.fields: sets: the mesh's node sets '" +
                       printable(at->second) + "' and '" + printable(name) +
                       "' differ only in bytes that are not UTF-8, so their VTK fields would "
                       "have one name; rename one, or leave sets out of output.fields");
    }
  }
}

/// Cycles: dissipation per cycle, per node, and the (radial slip of P,
/// applied force) path of the cycle.
void ResultWriter::update_cycle(const StepSnapshot& snapshot, double applied) {
  const StepResult& step = snapshot.step;
  if (step.cycle != current_cycle_ || !cycle_open_) {
    current_cycle_ = step.cycle;
    cycle_open_ = true;
    cycle_nodes_.start(snapshot);
  }
  cycle_nodes_.add(snapshot);
  CycleRecord& record = cycles_[step.cycle];
  update_fretting(snapshot, record);
  record.dissipation += step.dissipation;
  const double radial = probe_p_ >= 0 ? radial_slip(run_.probes[probe_p_], snapshot) : 0.0;
  if (record.steps == 0) {
    record.loop.emplace_back(last_radial_slip_, last_applied_);
  }
  record.loop.emplace_back(radial, applied);
  ++record.steps;
  last_radial_slip_ = radial;
  last_applied_ = applied;
}

/// The cycle's fretting loop, the work of the contact forces on the body's
/// contact nodes (with the loop's driver work and the dissipation, the
/// exact balance of docs/outputs.md, "Cycles"), and its slip regime.
void ResultWriter::update_fretting(const StepSnapshot& snapshot, CycleRecord& record) {
  const auto point = driver_point(driver_, run_, snapshot);
  record.driver_loop.add(last_driver_point_.first, last_driver_point_.second, point.first,
                         point.second);
  last_driver_point_ = point;
  const auto& states = snapshot.contact_states;
  for (std::size_t i = 0; i < states.size(); ++i) {
    const Eigen::Vector3d u = snapshot.displacement.segment<3>(3 * run_.contact_mesh_nodes[i]);
    record.work_on_body += snapshot.reaction[i].dot(u - last_contact_u_[i]);
    last_contact_u_[i] = u;
  }
  record.n_stuck = cycle_nodes_.n_stuck();
  record.n_slipped = cycle_nodes_.n_slipped();
  for (const double a : cycle_nodes_.slip_amplitude)
    record.max_slip_amplitude = std::max(record.max_slip_amplitude, a);
}

/// +1 / -1 where the cycle program's factor has a maximum / minimum
/// (LoadProgram::extremes), 0 elsewhere and between increments.
int ResultWriter::extreme_at(double position) const {
  if (std::abs(position - std::round(position)) > 1e-9) return 0;
  const auto k = static_cast<std::size_t>(std::lround(position));
  return k < extremes_.size() ? extremes_[k] : 0;
}

/// Wear: at the end of a cycle (the represented cycles advance), the
/// cycle's volume for cycles.csv and the scar profile wear/cycle_NNNN.csv.
void ResultWriter::record_wear(const StepSnapshot& snapshot) {
  const StepResult& step = snapshot.step;
  wear_.stop_reason = snapshot.stop_reason;
  if (snapshot.represented_cycles == wear_.represented_cycles) return;
  wear_.represented_cycles = snapshot.represented_cycles;
  wear_.max_depth = snapshot.wear->max_depth();
  wear_.volume = snapshot.wear->volume();
  CycleRecord& record = cycles_[step.cycle];
  record.wear_volume = step.wear_volume;
  record.represented_cycles = snapshot.represented_cycles;
  std::ostringstream name;
  name << "cycle_" << std::setw(4) << std::setfill('0') << step.cycle << ".csv";
  write_text_atomically(folder_->path({"wear", name.str()}), wear_profile_csv(run_, snapshot));
}

bool ResultWriter::is_segment_end(double position) const {
  const LoadProgram& program = run_.case_description.program;
  if (std::abs(position - std::round(position)) > 1e-9) return false;
  int k = 0;
  for (const auto& segment : program.segments) {
    k += segment.n_increments;
    if (static_cast<int>(std::lround(position)) == k) return true;
  }
  return false;
}

/// The state of the contact face at the end of a loading or unloading
/// segment, for cycles.csv, and its map.
void ResultWriter::record_segment_end(const StepSnapshot& snapshot, int extreme) {
  const StepResult& step = snapshot.step;
  if (!is_segment_end(step.position)) {
    write_map(snapshot, "none", extreme);
    return;
  }
  const double before = run_.case_description.program.factor(std::ceil(step.position - 1e-9) - 1.0);
  const bool unloading = step.factor < before;
  CycleRecord& record = cycles_[step.cycle];
  (unloading ? record.end_unloading : record.end_loading) =
      segment_end(snapshot, n_steps_, surface_);
  const char* kind = step.factor < before ? "unloading" : step.factor > before ? "loading" : "hold";
  write_map(snapshot, kind, extreme);
}

void ResultWriter::write_history_row(const StepSnapshot& snapshot) {
  const StepResult& step = snapshot.step;
  std::vector<double> row{static_cast<double>(n_steps_), step.position, step.factor,
                          static_cast<double>(step.cycle)};
  for (const auto& reaction : step.dirichlet_reactions)
    row.insert(row.end(), {reaction.x(), reaction.y(), reaction.z()});
  const double seconds = step.seconds_linear + step.seconds_contact;
  row.insert(
      row.end(),
      {step.contact_force.x(), step.contact_force.y(), step.contact_force.z(),
       step.contact_normal_force, step.contact_tangential_force.x(),
       step.contact_tangential_force.y(), static_cast<double>(step.n_open),
       static_cast<double>(step.n_stick), static_cast<double>(step.n_slip), step.dissipation,
       step.accumulated_dissipation, static_cast<double>(step.newton_iterations),
       static_cast<double>(step.sweeps), step.equilibrium_residual, step.scaled_certificate});
  const auto& contacts = run_.case_description.contacts;
  for (std::size_t pi = 0; pi < contacts.size(); ++pi) {
    const Eigen::Vector3d& w = snapshot.contact_motion[pi];
    const Eigen::Vector3d& force = snapshot.contact_reaction[pi];
    const auto& [n, t1, t2] = run_.contact_axes[pi];
    row.insert(row.end(), {w.x(), w.y(), w.z(), force.x(), force.y(), force.z(), force.dot(n),
                           force.dot(t1), force.dot(t2)});
  }
  row.insert(row.end(), {last_driver_point_.first, last_driver_point_.second, seconds});
  history_->append_row(row);
}

void ResultWriter::write_probe(std::size_t p, const StepSnapshot& snapshot, double applied) {
  const StepResult& step = snapshot.step;
  const ProbeSite& probe = run_.probes[p];
  const int i = probe.contact_index;
  const ContactNodeState& s = snapshot.contact_states[i];
  const int node = run_.contact_mesh_nodes[i];
  const Eigen::Vector3d u = snapshot.displacement.segment<3>(3 * node);
  const Eigen::Vector3d& friction = snapshot.friction_force[i];
  const Eigen::Vector3d& acc = snapshot.accumulated_slip[i];
  probe_csv_[p]->append_row({static_cast<double>(n_steps_),
                             step.position,
                             step.factor,
                             static_cast<double>(step.cycle),
                             u.x(),
                             u.y(),
                             u.z(),
                             s.slip.x(),
                             s.slip.y(),
                             acc.x(),
                             acc.y(),
                             acc.z(),
                             snapshot.accumulated_slip_length[i],
                             radial_slip(probe, snapshot),
                             s.r(0),
                             s.r(1),
                             s.r(2),
                             friction.x(),
                             friction.y(),
                             friction.z(),
                             static_cast<double>(s.state),
                             s.f,
                             s.gap,
                             applied});
}

/// The contact face at the end of a segment of the load program, one row
/// per contact node, as maps/step_NNNNNN.csv, and the list of the maps
/// written so far as maps/index.csv (both complete or absent).
void ResultWriter::write_map(const StepSnapshot& snapshot, const char* kind, int extreme) {
  const StepResult& step = snapshot.step;
  if (!writes_cycle_snapshots(run_.case_description, step.cycle)) return;
  const std::string name = "step_" + padded(n_steps_) + ".csv";
  write_text_atomically(folder_->path({"maps", name}),
                        contact_map_csv(run_, snapshot, surface_, cycle_nodes_));
  std::ostringstream line;
  line << std::setprecision(17) << n_steps_ << ',' << step.position << ',' << step.factor << ','
       << step.cycle << ',' << kind << ',' << name << ','
       << (extreme > 0   ? "max"
           : extreme < 0 ? "min"
                         : "none")
       << '\n';
  map_index_ += line.str();
  write_text_atomically(folder_->path({"maps", "index.csv"}),
                        "step,position,load_factor,cycle,segment,file,extreme\n" + map_index_);
}

void ResultWriter::write_vtk(const StepSnapshot& snapshot) {
  const Case& c = run_.case_description;
  const Mesh& mesh = run_.mesh;
  std::vector<PointField> points;
  std::vector<CellField> cells;
  body_fields(run_, snapshot, points, cells);
  std::vector<PointField> contact_fields;
  if (wants(c.output, "contact") && !c.contacts.empty())
    contact_fields = contact_point_fields(snapshot, surface_, cycle_nodes_);
  add_on_full_mesh(contact_fields, run_.contact_mesh_nodes, mesh.nodes.size(), points);
  const std::string name = "bipo_" + padded(n_steps_) + ".vtu";
  const VtuOptions options = vtu_options(snapshot);
  write_vtu(folder_->path({"vtk", name}), mesh.nodes, volume_cells(mesh), points, cells, options);
  pvd_->add(snapshot.step.position, "vtk/" + name);
  if (contact_pvd_) write_contact_vtu(snapshot, std::move(contact_fields), options);
}

/// The case's compressor, and the step data as VTK field data
/// (docs/outputs.md, "Step data"): TimeValue (VTK's name for a data set's
/// time, which ParaView reads from a lone .vtu or a file series) is the
/// position, as in the .pvd.
VtuOptions ResultWriter::vtu_options(const StepSnapshot& snapshot) const {
  const StepResult& step = snapshot.step;
  const ProgramPlace place = place_in_program(run_.case_description.program, step.position);
  VtuOptions options;
  options.compression = compression_of(run_.case_description.output.vtu_compression);
  options.field_data = {
      {"TimeValue", step.position},
      {"position", step.position},
      {"load_factor", step.factor},
      {"cycle", static_cast<double>(step.cycle), ValueType::int32},
      {"step", static_cast<double>(n_steps_), ValueType::int32},
      {"increment", static_cast<double>(place.increment), ValueType::int32},
      {"segment", static_cast<double>(place.segment), ValueType::int32},
      {"segment_kind", static_cast<double>(place.kind), ValueType::int32},
      {"segment_end", is_segment_end(step.position) ? 1.0 : 0.0, ValueType::int32}};
  return options;
}

/// The contact face alone, with its displacement.
void ResultWriter::write_contact_vtu(const StepSnapshot& snapshot,
                                     std::vector<PointField> contact_fields,
                                     const VtuOptions& options) {
  const Mesh& mesh = run_.mesh;
  const auto& nodes = run_.contact_mesh_nodes;
  std::vector<Eigen::Vector3d> surface_points;
  for (int node : nodes) surface_points.push_back(mesh.nodes[node]);
  PointField u{"displacement", 3, {}};
  for (int node : nodes)
    for (int k = 0; k < 3; ++k) u.values.push_back(snapshot.displacement(3 * node + k));
  std::vector<CellField> face_fields;
  if (!contact_fields.empty()) face_fields.push_back(contact_face_states(snapshot, surface_));
  contact_fields.push_back(std::move(u));
  const std::string surface_name = "contact_" + padded(n_steps_) + ".vtu";
  write_vtu(folder_->path({"vtk", surface_name}), surface_points,
            face_cells(surface_.quads, surface_.triangles), contact_fields, face_fields, options);
  contact_pvd_->add(snapshot.step.position, "vtk/" + surface_name);
}

namespace {

/// Per contact plane, its friction laws and the increment each holds from
/// (contact[i].friction and friction_program; docs/outputs.md).
nlohmann::json friction_laws(const Case& c) {
  nlohmann::json planes = nlohmann::json::array();
  const auto law = [](int from, const FrictionParams& f) {
    return nlohmann::json{
        {"from_increment", from}, {"mu1", f.mu1}, {"mu2", f.mu2}, {"p1", f.p1}, {"p2", f.p2}};
  };
  for (const ContactPlane& cp : c.contacts) {
    nlohmann::json laws = nlohmann::json::array({law(1, cp.friction)});
    for (const FrictionChange& change : cp.friction_program)
      laws.push_back(law(change.from_increment, change.friction));
    planes.push_back({{"plane", cp.name}, {"laws", laws}});
  }
  return planes;
}

}  // namespace

void ResultWriter::write_summary(const std::string& status, const std::string& message) {
  const Case& c = run_.case_description;
  nlohmann::json j;
  j["bipo_version"] = version_string;
  j["case"] = c.source.string();
  j["title"] = c.title;
  // The command-line values applied over the case file (--set, --sweep).
  j["overrides"] = nlohmann::json::array();
  for (const CaseOverride& o : c.overrides) j["overrides"].push_back(o.text());
  j["status"] = status;
  if (!message.empty()) j["message"] = message;
  j["mesh"] = {{"nodes", run_.mesh.n_nodes()},
               {"hexahedra", run_.mesh.n_hexes()},
               {"wedges", run_.mesh.n_wedges()},
               {"tetrahedra", run_.mesh.n_tets()},
               {"contact_nodes", run_.contact_mesh_nodes.size()},
               {"held_contact_components", run_.n_held_contact_components}};
  j["dofs"] = {{"total", run_.n_dofs}, {"free", run_.n_free}};
  j["linear_solver"] = {{"factor_nonzeros", run_.factor_nonzeros},
                        {"blas_threads", run_.blas_threads}};
  // Counted by the PETSc backend only (CHOLMOD's count is always 0).
  if (const long solves = last_counts_.first - run_.linear_counts.first; solves > 0) {
    j["linear_solver"]["solves"] = solves;
    j["linear_solver"]["krylov_iterations"] = last_counts_.second - run_.linear_counts.second;
  }
  // How the run was spread over MPI ranks (docs/parallel.md).
  j["parallel"] = {{"ranks", run_.parallel_ranks}, {"linear_solver", run_.linear_solver}};
  // The stiffness entries each rank assembled and keeps.
  if (!run_.stiffness_entries_per_rank.empty())
    j["parallel"]["stiffness_entries_per_rank"] = run_.stiffness_entries_per_rank;
  // The other ranks' rows that each rank receives at each equilibrium check.
  if (!run_.equilibrium_check_received_rows_per_rank.empty())
    j["parallel"]["equilibrium_check_received_rows_per_rank"] =
        run_.equilibrium_check_received_rows_per_rank;
  j["contact_solver"] = {{"kind", run_.contact_solver},
                         {"reason", run_.contact_solver_reason},
                         {"factorizations", total_contact_factorizations_},
                         {"gmres_iterations", total_contact_linear_iterations_},
                         {"long_restart_steps", total_contact_long_restart_steps_},
                         {"long_restart_refused_steps", total_contact_long_restart_refused_steps_},
                         {"motion_corrections", total_contact_motion_corrections_},
                         {"single_precision_steps", total_contact_single_precision_steps_}};
  if (run_.contact_solver == "dense") {
    const ContactWorkspace::Counts& dense = total_contact_dense_steps_;
    j["contact_solver"]["dense_steps"] = {
        {"fresh_lu", dense.factorizations},
        {"single_precision_lu", dense.single_precision_lus},
        {"single_precision_fallbacks", dense.single_precision_fallbacks},
        {"refinement_steps", dense.refinement_steps},
        {"reused_lu", dense.reused},
        {"in_reactions", dense.in_reactions},
        {"gmres_solves", dense.gmres_solves},
        {"bordered_solves", dense.bordered_solves},
        {"gmres_iterations", dense.gmres_iterations},
        {"gmres_failures", dense.gmres_failures}};
  }
  if (!run_.contact_preconditioner.empty()) {
    j["contact_solver"]["preconditioner"] = run_.contact_preconditioner;
    j["contact_solver"]["preconditioner_reason"] = run_.contact_preconditioner_reason;
  }
  // Under MPI, the rows of the Newton step's GMRES vectors on each rank,
  // and those that it receives from its neighbours in each product K_ff x.
  if (!run_.contact_newton_step_rows_per_rank.empty())
    j["contact_solver"]["newton_step_rows_per_rank"] = run_.contact_newton_step_rows_per_rank;
  if (!run_.contact_newton_step_received_rows_per_rank.empty())
    j["contact_solver"]["newton_step_received_rows_per_rank"] =
        run_.contact_newton_step_received_rows_per_rank;
  if (total_contact_preconditioner_iterations_ > 0)
    j["contact_solver"]["preconditioner_krylov_iterations"] =
        total_contact_preconditioner_iterations_;
  if (total_contact_preconditioner_iterations_ > 0)
    j["contact_solver"]["preconditioner_fallbacks"] = total_contact_preconditioner_fallbacks_;
  j["steps_converged"] = n_steps_;
  j["last_position"] = last_position_;
  j["increments_in_program"] = c.program.n_increments();
  j["setup_shared"] = run_.setup_shared;
  j["total_newton_iterations"] = total_newton_;
  j["total_sweeps"] = total_sweeps_;
  j["max_scaled_certificate"] = max_certificate_;
  j["max_equilibrium_residual"] = max_residual_;
  // What the two maxima above were held to (docs/case-file.md, solver).
  j["tolerances"] = {{"force_tolerance", c.solver.force_tolerance},
                     {"law_tolerance", c.solver.law_tolerance},
                     {"certificate_acceptance", run_.certificate_acceptance}};
  double total = 0.0;
  for (const auto& [cycle, r] : cycles_) total += r.dissipation;
  j["dissipation_total"] = total;
  j["cycles"] = {{"program", c.cycles.text}, {"driver", driver_name(c, driver_)}};
  if (c.wear) j["wear"] = wear_summary(*c.wear, wear_);
  j["friction_laws"] = friction_laws(c);
  const SetupTimings& t = run_.timings;
  j["seconds"] = {{"assembly", t.assembly},           {"factorization", t.factorization},
                  {"delassus", t.delassus},           {"load_patterns", t.load_patterns},
                  {"linear_solves", seconds_linear_}, {"contact_sweeps", seconds_contact_},
                  {"output", seconds_output_},        {"total", total_seconds_}};
  j["peak_memory_mib"] = peak_memory_mib();
  // Names and paths are any bytes (a Latin-1 folder, a title with 0xFF):
  // bytes that are not UTF-8 are written as U+FFFD rather than fail.
  write_text_atomically(folder_->path({"summary.json"}),
                        j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace bipo
