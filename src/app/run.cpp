#include "app/run.hpp"

#include <sys/resource.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <iomanip>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>
#include <system_error>
#include <thread>

#include "app/exit_status.hpp"
#include "core/errors.hpp"
#include "core/text_encoding.hpp"
#include "io/result_folder.hpp"
#include "io/vtk_output.hpp"
#include "mesh/generate.hpp"
#include "mesh/gmsh_io.hpp"
#include "mesh/quality.hpp"
#include "solver/analysis.hpp"
#include "solver/blas_threads.hpp"
#include "solver/driver.hpp"
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

/// Where the progress and error lines of one case go. Cases may run at once
/// (RunOptions::jobs): each line is written whole under one lock, prefixed
/// with its case file's name when several cases run at once.
class CaseLog {
 public:
  CaseLog(std::ostream& out, std::mutex& mutex, std::string prefix)
      : out_(out), mutex_(mutex), prefix_(std::move(prefix)) {}
  /// Writes `text` (whole lines, each ending in a newline) and flushes;
  /// without the prefix for lines that name their case themselves.
  void write(const std::string& text, bool with_prefix = true) {
    std::string prefixed;
    std::size_t begin = 0;
    while (with_prefix && begin < text.size()) {
      const std::size_t end = std::min(text.find('\n', begin), text.size() - 1) + 1;
      prefixed += prefix_;
      prefixed.append(text, begin, end - begin);
      begin = end;
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    out_ << (with_prefix ? prefixed : text) << std::flush;
  }

 private:
  std::ostream& out_;
  std::mutex& mutex_;
  std::string prefix_;
};

/// A probe resolved to a contact node.
struct ResolvedProbe {
  std::string name;
  int contact_index = -1;
  Eigen::Vector3d radial = Eigen::Vector3d::UnitX();  // unit in-plane direction from the centre
};

/// Which contact nodes and faces the case's contact surface has, with the
/// tributary area of each contact node (a quarter of each adjacent face).
struct ContactSurface {
  std::vector<int> local_of_node;         // mesh node -> contact index or -1
  std::vector<std::array<int, 4>> quads;  // in contact indices
  std::vector<double> area;               // per contact node
};

ContactSurface contact_surface(const Analysis& analysis) {
  const Mesh& mesh = analysis.mesh();
  ContactSurface s;
  s.local_of_node.assign(mesh.nodes.size(), -1);
  const auto& nodes = analysis.contact_mesh_nodes();
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) s.local_of_node[nodes[i]] = i;
  s.area.assign(nodes.size(), 0.0);
  for (const auto& cp : analysis.case_description().contacts)
    for (const auto& face : faces_on_node_set(mesh, mesh.node_set(cp.set))) {
      std::array<int, 4> q{};
      for (int a = 0; a < 4; ++a) q[a] = s.local_of_node[face[a]];
      const Eigen::Vector3d& x0 = mesh.nodes[face[0]];
      const Eigen::Vector3d& x1 = mesh.nodes[face[1]];
      const Eigen::Vector3d& x2 = mesh.nodes[face[2]];
      const Eigen::Vector3d& x3 = mesh.nodes[face[3]];
      const double area = 0.5 * (x2 - x0).cross(x3 - x1).norm();
      for (int a = 0; a < 4; ++a) s.area[q[a]] += 0.25 * area;
      s.quads.push_back(q);
    }
  return s;
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

/// Writes every result file of a run as the steps converge, into a
/// ResultFolder: staged until the first converged step (or the end of a run
/// that fails before one), then in place of the earlier run's results.
class ResultWriter {
 public:
  /// `label` names the setting that chose `directory` (for messages).
  ResultWriter(const Analysis& analysis, const fs::path& directory, const std::string& label,
               bool quiet, CaseLog& log)
      : analysis_(analysis), quiet_(quiet), log_(log) {
    const Case& c = analysis.case_description();
    // Everything that can be wrong with the case is checked before the
    // results folder is touched.
    surface_ = contact_surface(analysis);
    resolve_probes();
    check_set_field_names();

    std::vector<std::string> columns{"step", "position", "load_factor", "cycle"};
    for (const std::string& label_of_bc : reaction_labels(c))
      for (const char* comp : {"x", "y", "z"}) columns.push_back(label_of_bc + "_" + comp);
    for (const char* name :
         {"contact_force_x", "contact_force_y", "contact_force_z", "normal_force",
          "tangential_force_t1", "tangential_force_t2", "n_open", "n_stick", "n_slip",
          "dissipation", "accumulated_dissipation", "newton_iterations", "sweeps",
          "equilibrium_residual", "scaled_certificate", "seconds"})
      columns.emplace_back(name);
    folder_.emplace(directory, label);
    history_ = std::make_unique<CsvWriter>(folder_->path({"history.csv"}), columns);
    // clang-format off
    const std::vector<std::string> probe_columns{
        "step", "position", "load_factor", "cycle", "ux", "uy", "uz", "slip_increment_t1",
        "slip_increment_t2", "accumulated_slip_x", "accumulated_slip_y", "accumulated_slip_z",
        "accumulated_slip_length", "radial_slip", "normal_force", "friction_force_t1",
        "friction_force_t2", "friction_force_x", "friction_force_y", "friction_force_z", "state",
        "f", "gap", "applied_force"};
    // clang-format on
    for (const auto& probe : probes_) {
      probe_csv_.push_back(std::make_unique<CsvWriter>(
          folder_->path({"probes", probe.name + ".csv"}), probe_columns));
    }
    if (c.output.vtk) {
      pvd_ = std::make_unique<PvdCollection>(folder_->path({"bipo.pvd"}));
      if (!c.contacts.empty())
        contact_pvd_ = std::make_unique<PvdCollection>(folder_->path({"contact.pvd"}));
    }
    cycle_dissipation_node_.assign(analysis.contact_mesh_nodes().size(), 0.0);
    write_summary("running", "");
  }

  void on_step(const StepResult& step) {
    const auto start = std::chrono::steady_clock::now();
    const Case& c = analysis_.case_description();
    ++n_steps_;
    max_certificate_ = std::max(max_certificate_, step.scaled_certificate);
    max_residual_ = std::max(max_residual_, step.equilibrium_residual);
    total_sweeps_ += step.sweeps;
    total_newton_ += step.newton_iterations;
    seconds_linear_ += step.seconds_linear;
    seconds_contact_ += step.seconds_contact;

    // Cycles: dissipation per cycle, per node, and the state at segment ends.
    if (step.cycle != current_cycle_) {
      current_cycle_ = step.cycle;
      std::fill(cycle_dissipation_node_.begin(), cycle_dissipation_node_.end(), 0.0);
    }
    const auto& states = analysis_.contact_states();
    for (std::size_t i = 0; i < states.size(); ++i)
      cycle_dissipation_node_[i] += states[i].dissipation;
    CycleRecord& record = cycles_[step.cycle];
    record.dissipation += step.dissipation;
    const double applied = applied_force(step);
    const double radial = probe_p_ >= 0 ? probe_radial_slip(probes_[probe_p_]) : 0.0;
    if (record.steps == 0) {
      record.loop.emplace_back(last_radial_slip_, last_applied_);
    }
    record.loop.emplace_back(radial, applied);
    ++record.steps;
    last_radial_slip_ = radial;
    last_applied_ = applied;

    const bool segment_end = is_segment_end(step.position);
    if (segment_end) {
      const double before = c.program.factor(std::ceil(step.position - 1e-9) - 1.0);
      const bool unloading = step.factor < before;
      SegmentEnd end{step.position, n_steps_, 0, 0, 0, 0.0, 0.0, 0.0};
      for (std::size_t i = 0; i < states.size(); ++i) {
        switch (states[i].state) {
          case ContactState::open:
            ++end.n_open;
            end.area_open += surface_.area[i];
            break;
          case ContactState::stick:
            ++end.n_stick;
            end.area_stick += surface_.area[i];
            break;
          case ContactState::slip:
            ++end.n_slip;
            end.area_slip += surface_.area[i];
            break;
        }
      }
      (unloading ? record.end_unloading : record.end_loading) = end;
      const char* kind = step.factor < before   ? "unloading"
                         : step.factor > before ? "loading"
                                                : "hold";
      write_map(step, kind);
    }

    // History row.
    std::vector<double> row{static_cast<double>(n_steps_), step.position, step.factor,
                            static_cast<double>(step.cycle)};
    for (const auto& reaction : step.dirichlet_reactions)
      row.insert(row.end(), {reaction.x(), reaction.y(), reaction.z()});
    const double seconds = step.seconds_linear + step.seconds_contact;
    row.insert(row.end(),
               {step.contact_force.x(), step.contact_force.y(), step.contact_force.z(),
                step.contact_normal_force, step.contact_tangential_force.x(),
                step.contact_tangential_force.y(), static_cast<double>(step.n_open),
                static_cast<double>(step.n_stick), static_cast<double>(step.n_slip),
                step.dissipation, step.accumulated_dissipation,
                static_cast<double>(step.newton_iterations), static_cast<double>(step.sweeps),
                step.equilibrium_residual, step.scaled_certificate, seconds});
    history_->append_row(row);
    for (std::size_t p = 0; p < probes_.size(); ++p) write_probe(p, step, applied);

    const int n_total = c.program.n_increments();
    const bool last = step.position >= n_total - 1e-12;
    if (c.output.vtk && (n_steps_ % c.output.every == 0 || last || segment_end)) write_vtk(step);
    // The first step is written whole: the new run replaces the earlier one.
    commit();
    seconds_output_ += seconds_since(start);

    if (!quiet_) {
      std::ostringstream line;
      line << "increment " << std::setw(4) << std::defaultfloat << step.position << "/" << n_total
           << "  factor " << std::fixed << std::setprecision(4) << step.factor << "  newton "
           << std::setw(2) << step.newton_iterations << "  sweeps " << std::setw(4) << step.sweeps
           << "  G " << std::scientific << std::setprecision(1) << step.scaled_certificate
           << "  open/stick/slip " << step.n_open << "/" << step.n_stick << "/" << step.n_slip
           << "  " << std::fixed << std::setprecision(3) << seconds << " s\n";
      log_.write(line.str());
    }
  }

  void finish(const std::string& status, const std::string& message, double total_seconds) {
    history_->finish();
    for (auto& csv : probe_csv_) csv->finish();
    write_cycles();
    total_seconds_ = total_seconds;
    write_summary(status, message);
    // A run that fails before its first step has a result too: its summary.
    commit();
  }

 private:
  struct SegmentEnd {
    double position = -1.0;
    int step = 0;
    int n_open = 0, n_stick = 0, n_slip = 0;
    double area_open = 0.0, area_stick = 0.0, area_slip = 0.0;
  };
  struct CycleRecord {
    double dissipation = 0.0;
    int steps = 0;
    SegmentEnd end_loading, end_unloading;
    std::vector<std::pair<double, double>> loop;  // (radial slip of P, applied force)
  };

  /// Replaces the earlier run's results by this run's (once), and points the
  /// open writers at the files' new places.
  void commit() {
    if (folder_->committed()) return;
    folder_->commit();
    history_->relocate(folder_->path({"history.csv"}));
    for (std::size_t p = 0; p < probes_.size(); ++p)
      probe_csv_[p]->relocate(folder_->path({"probes", probes_[p].name + ".csv"}));
    if (pvd_) pvd_->relocate(folder_->path({"bipo.pvd"}));
    if (contact_pvd_) contact_pvd_->relocate(folder_->path({"contact.pvd"}));
  }

  /// Node set names become VTK field names ("set_<name>"), written as valid
  /// UTF-8: two names that differ only in bytes that are not UTF-8 would be
  /// written alike.
  void check_set_field_names() const {
    const Case& c = analysis_.case_description();
    if (!c.output.vtk || !wants(c.output, "sets")) return;
    std::map<std::string, std::string> written;
    for (const auto& [name, nodes] : analysis_.mesh().node_sets) {
      const auto [at, inserted] = written.emplace(valid_utf8(name), name);
      if (!inserted) {
        throw InputError(c.source.string() + ": output.fields: sets: the mesh's node sets '" +
                         printable(at->second) + "' and '" + printable(name) +
                         "' differ only in bytes that are not UTF-8, so their VTK fields would "
                         "have one name; rename one, or leave sets out of output.fields");
      }
    }
  }

  void resolve_probes() {
    const Case& c = analysis_.case_description();
    const auto& nodes = analysis_.contact_mesh_nodes();
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
      const Probe& probe = c.probes[i_probe];
      const std::string set =
          probe.set.empty() && !c.contacts.empty() ? c.contacts[0].set : probe.set;
      int best = -1;
      double best_distance = 0.0;
      for (int pi = 0; pi < static_cast<int>(c.contacts.size()); ++pi) {
        if (c.contacts[pi].set != set) continue;
        for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
          if (analysis_.contact().nodes()[i].plane != pi) continue;
          const double d = (analysis_.mesh().nodes[nodes[i]] - probe.point).norm();
          if (best < 0 || d < best_distance) best = i, best_distance = d;
        }
      }
      if (best < 0)
        throw InputError(located(c, "probes[" + std::to_string(i_probe) + "].set") + "probe '" +
                         probe.name + "': set '" + set +
                         "' is not the node set of any contact plane");
      ResolvedProbe resolved{probe.name, best, Eigen::Vector3d::UnitX()};
      const auto& node = analysis_.contact().nodes()[best];
      const RigidPlane& plane = analysis_.contact().planes()[node.plane];
      Eigen::Vector3d in_plane = node.position - plane.point;
      in_plane -= in_plane.dot(plane.normal) * plane.normal;
      resolved.radial = in_plane.norm() > 1e-12 ? Eigen::Vector3d(in_plane.normalized()) : plane.t1;
      if (probe.name == c.probe_p) probe_p_ = static_cast<int>(probes_.size());
      probes_.push_back(resolved);
    }
  }

  [[nodiscard]] double probe_radial_slip(const ResolvedProbe& probe) const {
    return analysis_.accumulated_slip()[probe.contact_index].dot(probe.radial);
  }

  /// The applied force: magnitude of the total reaction of the first
  /// boundary condition (the loading platen in the punch cases).
  [[nodiscard]] static double applied_force(const StepResult& step) {
    return step.dirichlet_reactions.empty() ? 0.0 : step.dirichlet_reactions.front().norm();
  }

  [[nodiscard]] bool is_segment_end(double position) const {
    const LoadProgram& program = analysis_.case_description().program;
    if (std::abs(position - std::round(position)) > 1e-9) return false;
    int k = 0;
    for (const auto& segment : program.segments) {
      k += segment.n_increments;
      if (static_cast<int>(std::lround(position)) == k) return true;
    }
    return false;
  }

  void write_probe(std::size_t p, const StepResult& step, double applied) {
    const ResolvedProbe& probe = probes_[p];
    const int i = probe.contact_index;
    const ContactNodeState& s = analysis_.contact_states()[i];
    const int node = analysis_.contact_mesh_nodes()[i];
    const Eigen::Vector3d u = analysis_.displacement().segment<3>(3 * node);
    const Eigen::Matrix3d& frame = analysis_.contact().frame(i);
    const Eigen::Vector3d friction = frame.bottomRows<2>().transpose() * s.r.tail<2>();
    const Eigen::Vector3d& acc = analysis_.accumulated_slip()[i];
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
                               analysis_.accumulated_slip_length()[i],
                               probe_radial_slip(probe),
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
  void write_map(const StepResult& step, const char* kind) {
    const auto& states = analysis_.contact_states();
    const auto& nodes = analysis_.contact_mesh_nodes();
    std::string out =
        "node,x,y,z,state,f,r_n,r_t1,r_t2,gap,slip_increment_t1,slip_increment_t2,"
        "accumulated_slip_x,accumulated_slip_y,accumulated_slip_z,accumulated_slip_length,"
        "dissipation_cycle,dissipation_accumulated,area\n";
    for (std::size_t i = 0; i < states.size(); ++i) {
      const ContactNodeState& s = states[i];
      const Eigen::Vector3d& x = analysis_.mesh().nodes[nodes[i]];
      const Eigen::Vector3d& a = analysis_.accumulated_slip()[i];
      out += std::to_string(nodes[i]);
      for (const double value :
           {x.x(), x.y(), x.z(), static_cast<double>(s.state), s.f, s.r(0), s.r(1), s.r(2), s.gap,
            s.slip.x(), s.slip.y(), a.x(), a.y(), a.z(), analysis_.accumulated_slip_length()[i],
            cycle_dissipation_node_[i], analysis_.accumulated_dissipation()[i], surface_.area[i]}) {
        out += ',';
        append_number(out, value);
      }
      out += '\n';
    }
    const std::string name = "step_" + padded(n_steps_) + ".csv";
    write_text_atomically(folder_->path({"maps", name}), out);
    std::ostringstream line;
    line << std::setprecision(17) << n_steps_ << ',' << step.position << ',' << step.factor << ','
         << step.cycle << ',' << kind << ',' << name << '\n';
    map_index_ += line.str();
    write_text_atomically(folder_->path({"maps", "index.csv"}),
                          "step,position,load_factor,cycle,segment,file\n" + map_index_);
  }

  void write_vtk(const StepResult& step) {
    const Case& c = analysis_.case_description();
    const Mesh& mesh = analysis_.mesh();
    const std::size_t n = mesh.nodes.size();
    std::vector<PointField> points;
    std::vector<CellField> cells;
    if (wants(c.output, "displacement")) {
      PointField u{"displacement", 3, {}};
      u.values.assign(analysis_.displacement().data(), analysis_.displacement().data() + 3 * n);
      points.push_back(std::move(u));
    }
    if (wants(c.output, "stress") || wants(c.output, "von_mises")) {
      const auto stresses =
          element_stresses(mesh, analysis_.elasticity(), analysis_.displacement());
      CellField tensor{"stress", 9, {}}, mises{"von_mises", 1, {}};
      for (const auto& s : stresses) {
        // Voigt (xx, yy, zz, yz, xz, xy) to a full row-major tensor.
        tensor.values.insert(tensor.values.end(),
                             {s(0), s(5), s(4), s(5), s(1), s(3), s(4), s(3), s(2)});
        mises.values.push_back(von_mises(s));
      }
      if (wants(c.output, "stress")) cells.push_back(std::move(tensor));
      if (wants(c.output, "von_mises")) cells.push_back(std::move(mises));
    }
    if (wants(c.output, "sets"))
      for (const auto& [name, nodes] : mesh.node_sets) {
        PointField flag{"set_" + name, 1, std::vector<double>(n, 0.0)};
        for (int node : nodes) flag.values[node] = 1.0;
        points.push_back(std::move(flag));
      }
    std::vector<PointField> contact_fields;
    if (wants(c.output, "contact") && !c.contacts.empty()) contact_fields = contact_point_fields();
    // On the full mesh, contact fields are zero away from the contact nodes
    // (contact_state is -1 there).
    const auto& nodes = analysis_.contact_mesh_nodes();
    for (const auto& field : contact_fields) {
      PointField full{
          field.name, field.n_components,
          std::vector<double>(n * field.n_components, field.name == "contact_state" ? -1.0 : 0.0)};
      for (std::size_t i = 0; i < nodes.size(); ++i)
        for (int k = 0; k < field.n_components; ++k)
          full.values[nodes[i] * field.n_components + k] = field.values[i * field.n_components + k];
      points.push_back(std::move(full));
    }
    const std::string name = "bipo_" + padded(n_steps_) + ".vtu";
    write_vtu(folder_->path({"vtk", name}), mesh.nodes, mesh.hexes, points, cells);
    pvd_->add(step.position, "vtk/" + name);

    if (contact_pvd_) {
      std::vector<Eigen::Vector3d> surface_points;
      for (int node : nodes) surface_points.push_back(mesh.nodes[node]);
      PointField u{"displacement", 3, {}};
      for (int node : nodes)
        for (int k = 0; k < 3; ++k) u.values.push_back(analysis_.displacement()(3 * node + k));
      contact_fields.push_back(std::move(u));
      const std::string surface_name = "contact_" + padded(n_steps_) + ".vtu";
      write_vtu(folder_->path({"vtk", surface_name}), surface_points, surface_.quads,
                contact_fields, {});
      contact_pvd_->add(step.position, "vtk/" + surface_name);
    }
  }

  /// Contact fields on the contact nodes (docs/outputs.md).
  [[nodiscard]] std::vector<PointField> contact_point_fields() const {
    const auto& states = analysis_.contact_states();
    const std::size_t m = states.size();
    PointField rn{"contact_rn", 1, {}}, rt{"contact_rt", 3, {}}, f{"contact_f", 1, {}},
        state{"contact_state", 1, {}}, gap{"contact_gap", 1, {}}, slip{"slip_increment", 3, {}},
        acc{"accumulated_slip", 3, {}}, acc_len{"accumulated_slip_length", 1, {}},
        diss{"dissipation_increment", 1, {}}, diss_acc{"dissipation_accumulated", 1, {}},
        diss_cycle{"dissipation_cycle", 1, {}}, cert{"law_certificate_G", 1, {}};
    for (std::size_t i = 0; i < m; ++i) {
      const ContactNodeState& s = states[i];
      const Eigen::Matrix3d& frame = analysis_.contact().frame(static_cast<int>(i));
      const Eigen::Vector3d r_t = frame.bottomRows<2>().transpose() * s.r.tail<2>();
      const Eigen::Vector3d du = frame.bottomRows<2>().transpose() * s.slip;
      const Eigen::Vector3d& a = analysis_.accumulated_slip()[i];
      rn.values.push_back(s.r(0));
      rt.values.insert(rt.values.end(), {r_t.x(), r_t.y(), r_t.z()});
      f.values.push_back(s.f);
      state.values.push_back(static_cast<double>(s.state));
      gap.values.push_back(s.gap);
      slip.values.insert(slip.values.end(), {du.x(), du.y(), du.z()});
      acc.values.insert(acc.values.end(), {a.x(), a.y(), a.z()});
      acc_len.values.push_back(analysis_.accumulated_slip_length()[i]);
      diss.values.push_back(s.dissipation);
      diss_acc.values.push_back(analysis_.accumulated_dissipation()[i]);
      diss_cycle.values.push_back(cycle_dissipation_node_[i]);
      cert.values.push_back(s.certificate);
    }
    return {rn, rt, f, state, gap, slip, acc, acc_len, diss, diss_acc, diss_cycle, cert};
  }

  void write_cycles() {
    if (cycles_.empty()) return;
    std::ostringstream out;
    out << std::setprecision(17);
    out << "cycle,dissipation,hysteresis_area_P,"
           "step_end_loading,n_open_end_loading,n_stick_end_loading,n_slip_end_loading,"
           "area_open_end_loading,area_stick_end_loading,area_slip_end_loading,"
           "step_end_unloading,n_open_end_unloading,n_stick_end_unloading,n_slip_end_unloading,"
           "area_open_end_unloading,area_stick_end_unloading,area_slip_end_unloading\n";
    for (const auto& [cycle, r] : cycles_) {
      // Area enclosed by the (radial slip of P, applied force) path of the
      // cycle, closed back to its start: the shoelace formula.
      double area = 0.0;
      for (std::size_t j = 0; j < r.loop.size(); ++j) {
        const auto& a = r.loop[j];
        const auto& b = r.loop[(j + 1) % r.loop.size()];
        area += a.first * b.second - b.first * a.second;
      }
      out << cycle << ',' << r.dissipation << ',' << 0.5 * std::abs(area);
      for (const SegmentEnd* e : {&r.end_loading, &r.end_unloading})
        out << ',' << e->step << ',' << e->n_open << ',' << e->n_stick << ',' << e->n_slip << ','
            << e->area_open << ',' << e->area_stick << ',' << e->area_slip;
      out << '\n';
    }
    write_text_atomically(folder_->path({"cycles.csv"}), out.str());
  }

  void write_summary(const std::string& status, const std::string& message) {
    const Case& c = analysis_.case_description();
    nlohmann::json j;
    j["bipo_version"] = version_string;
    j["case"] = c.source.string();
    j["title"] = c.title;
    j["status"] = status;
    if (!message.empty()) j["message"] = message;
    j["mesh"] = {{"nodes", analysis_.mesh().n_nodes()},
                 {"hexahedra", analysis_.mesh().n_hexes()},
                 {"contact_nodes", analysis_.contact_mesh_nodes().size()},
                 {"held_contact_components", analysis_.n_held_contact_components()}};
    j["dofs"] = {{"total", analysis_.n_dofs()}, {"free", analysis_.n_free()}};
    j["linear_solver"] = {{"factor_nonzeros", analysis_.factor_nonzeros()},
                          {"blas_threads", analysis_.blas_threads()}};
    j["steps_converged"] = n_steps_;
    j["last_position"] = analysis_.position();
    j["increments_in_program"] = c.program.n_increments();
    j["setup_shared"] = analysis_.shares_setup();
    j["total_newton_iterations"] = total_newton_;
    j["total_sweeps"] = total_sweeps_;
    j["max_scaled_certificate"] = max_certificate_;
    j["max_equilibrium_residual"] = max_residual_;
    // What the two maxima above were held to (docs/case-file.md, solver).
    j["tolerances"] = {{"force_tolerance", c.solver.force_tolerance},
                       {"law_tolerance", c.solver.law_tolerance},
                       {"certificate_acceptance", analysis_.certificate_acceptance()}};
    double total = 0.0;
    for (const auto& [cycle, r] : cycles_) total += r.dissipation;
    j["dissipation_total"] = total;
    const SetupTimings& t = analysis_.timings();
    j["seconds"] = {{"assembly", t.assembly},
                    {"factorization", t.factorization},
                    {"delassus", t.delassus},
                    {"linear_solves", seconds_linear_},
                    {"contact_sweeps", seconds_contact_},
                    {"output", seconds_output_},
                    {"total", total_seconds_}};
    j["peak_memory_mib"] = peak_memory_mib();
    // Names and paths are any bytes (a Latin-1 folder, a title with 0xFF):
    // bytes that are not UTF-8 are written as U+FFFD rather than fail.
    write_text_atomically(folder_->path({"summary.json"}),
                          j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  }

  const Analysis& analysis_;
  // First of the members that hold files: destroyed last, after the writers
  // have closed theirs, it removes what an unfinished run staged.
  std::optional<ResultFolder> folder_;
  bool quiet_;
  CaseLog& log_;
  ContactSurface surface_;
  std::vector<ResolvedProbe> probes_;
  int probe_p_ = -1;
  std::unique_ptr<CsvWriter> history_;
  std::vector<std::unique_ptr<CsvWriter>> probe_csv_;
  std::unique_ptr<PvdCollection> pvd_, contact_pvd_;
  std::map<int, CycleRecord> cycles_;
  std::vector<double> cycle_dissipation_node_;
  int current_cycle_ = 0;
  double last_radial_slip_ = 0.0, last_applied_ = 0.0;
  std::string map_index_;
  int n_steps_ = 0;
  long total_sweeps_ = 0, total_newton_ = 0;
  double max_certificate_ = 0.0, max_residual_ = 0.0;
  double seconds_linear_ = 0.0, seconds_contact_ = 0.0, seconds_output_ = 0.0;
  double total_seconds_ = 0.0;
};

}  // namespace

namespace {

/// The BLAS threads of one case run alone: its solver.blas_threads, or auto
/// for its number of unknowns.
std::function<std::string(int)> case_blas_threads(const Case& c) {
  return [requested = c.solver.blas_threads](int n_free) {
    return apply_blas_threads(blas_threads_for(requested, n_free));
  };
}

}  // namespace

Mesh load_mesh(const Case& c) {
  if (c.mesh.file) return read_msh(*c.mesh.file);
  return generate_cylinder(*c.mesh.cylinder);
}

void check_case(const Case& c, std::ostream& log) {
  const Mesh mesh = load_mesh(c);
  // Validation against the mesh happens in the Analysis constructor; the
  // factorization it also does costs about one increment and proves that the
  // conditions remove every rigid-body motion.
  const Analysis analysis(c, mesh, nullptr, {nullptr, case_blas_threads(c)});
  log << c.source.string() << ": OK: " << mesh.n_nodes() << " nodes, " << mesh.n_hexes()
      << " hexahedra, " << analysis.n_free() << " free dofs, "
      << analysis.contact_mesh_nodes().size() << " contact nodes, " << c.program.n_increments()
      << " increments in " << c.program.n_cycles() << " cycles\n";
}

namespace {

/// The set-ups that the cases of one mesh share (see run_cases). The first
/// case to start sets up; cases that start meanwhile wait for it rather than
/// repeat the factorization, then share it or, for another body or supports,
/// set up on their own, and their set-up is offered to the later cases too.
class SharedSetups {
 public:
  struct Claim {
    std::vector<std::shared_ptr<const Analysis>> donors;  ///< to try, in order
    bool first = false;  ///< no donor yet: call publish() or abandon() after set-up
  };
  Claim claim() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return !first_in_progress_; });
    Claim c{donors_, donors_.empty()};
    if (c.first) first_in_progress_ = true;
    return c;
  }
  /// Offers a set-up to the cases that start later.
  void publish(const Claim& claim, std::shared_ptr<const Analysis> analysis) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      donors_.push_back(std::move(analysis));
      if (claim.first) first_in_progress_ = false;
    }
    ready_.notify_all();
  }
  /// The set-up failed (an input error of that case): the next case tries.
  void abandon(const Claim& claim) {
    if (!claim.first) return;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      first_in_progress_ = false;
    }
    ready_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  bool first_in_progress_ = false;
  std::vector<std::shared_ptr<const Analysis>> donors_;
};

/// Runs case `c` on `mesh` (see run_cases), sharing the set-up of `shared`
/// when it can.
void run_on_mesh(const Case& c, const Mesh& mesh, SharedSetups& shared,
                 const std::optional<std::string>& blas_threads, const RunOptions& options,
                 CaseLog& log) {
  const auto start = std::chrono::steady_clock::now();
  const SharedSetups::Claim claim = shared.claim();
  SetupChoices choices;
  // The first set-up offered that fits this case's body, supports and contact nodes.
  choices.setup_donor = [&](const Analysis& being_set_up) -> const Analysis* {
    for (const auto& donor : claim.donors)
      if (being_set_up.can_share_setup_with(*donor)) return donor.get();
    return nullptr;
  };
  if (blas_threads)
    choices.blas_threads = [&](int) { return *blas_threads; };
  else
    choices.blas_threads = case_blas_threads(c);
  std::shared_ptr<Analysis> created;
  try {
    created = std::make_shared<Analysis>(c, mesh, nullptr, choices);
  } catch (...) {
    shared.abandon(claim);
    throw;
  }
  if (!created->shares_setup()) shared.publish(claim, created);
  Analysis& analysis = *created;
  const fs::path directory = options.output_directory.value_or(c.output.directory);
  if (!options.quiet) {
    std::ostringstream header;
    header << "bipo " << version_string << ": " << c.source.filename().string() << ": "
           << mesh.n_nodes() << " nodes, " << mesh.n_hexes() << " hexahedra, "
           << analysis.contact_mesh_nodes().size() << " contact nodes, " << analysis.n_free()
           << " unknowns; ";
    if (analysis.shares_setup())
      header << "set-up shared with " << analysis.setup_donor_case().filename().string();
    else
      header << "set-up " << std::fixed << std::setprecision(3)
             << analysis.timings().assembly + analysis.timings().factorization +
                    analysis.timings().delassus
             << " s";
    header << "; results in " << directory.string() << "\n";
    log.write(header.str(), false);
  }
  const std::string label =
      options.output_directory ? "--output" : c.source.string() + ": output.directory";
  ResultWriter writer(analysis, directory, label, options.quiet, log);
  try {
    run_load_program(analysis,
                     [&](const Analysis&, const StepResult& step) { writer.on_step(step); });
  } catch (const NumericalError& error) {
    writer.finish("failed", error.what(), seconds_since(start));
    throw;
  }
  writer.finish("completed", "", seconds_since(start));
  if (!options.quiet) {
    std::ostringstream done;
    done << "done in " << std::fixed << std::setprecision(3) << seconds_since(start)
         << " s; results in " << directory.string() << "\n";
    log.write(done.str());
  }
}

/// Exit status of one case: 0 completed, 2 input error, 3 numerical failure,
/// 1 any other error; the error is written to `log`.
int run_one_case(const Case& c, const Mesh* mesh, const std::exception_ptr& mesh_error,
                 SharedSetups& shared, const std::optional<std::string>& blas_threads,
                 const RunOptions& options, CaseLog& log, const std::string& prefix) {
  try {
    if (mesh == nullptr) std::rethrow_exception(mesh_error);
    run_on_mesh(c, *mesh, shared, blas_threads, options, log);
    return 0;
  } catch (...) {
    const ErrorReport report = report_error(std::current_exception(), prefix);
    log.write(report.line + "\n", false);
    return report.exit_code;
  }
}

}  // namespace

int parse_jobs(const std::string& text) {
  if (text == "auto") return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  int jobs = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), jobs);
  if (error != std::errc() || end != text.data() + text.size() || jobs < 1)
    throw InputError("--jobs: expected a positive integer or auto, got '" + text + "'");
  return jobs;
}

int run_cases(const std::vector<Case>& cases, const RunOptions& options, std::ostream& log) {
  if (options.output_directory && cases.size() > 1)
    throw InputError("--output names one results folder: give a single case file with it");
  if (options.jobs < 1)
    throw InputError("--jobs must be at least 1, got " + std::to_string(options.jobs));
  // Two cases writing one folder would leave the results of neither (at once)
  // or silently only the last one's (one after the other).
  std::map<fs::path, const Case*> folders;
  for (const Case& c : cases) {
    const fs::path folder =
        options.output_directory.value_or(c.output.directory).lexically_normal();
    const auto [at, inserted] = folders.emplace(folder, &c);
    if (!inserted)
      throw InputError(c.source.string() + " and " + at->second->source.string() +
                       " write their results to the same folder " + folder.string() +
                       " (output.directory): give each case its own");
    ResultFolder::check(folder, options.output_directory
                                    ? std::string("--output")
                                    : c.source.string() + ": output.directory");
  }

  const int jobs = std::min<int>(options.jobs, static_cast<int>(cases.size()));
  // The BLAS thread count is process-wide: with cases at once each gets one
  // thread (the library's default if the environment sets it), whatever
  // their solver.blas_threads says.
  std::optional<std::string> blas_threads;
  if (jobs > 1)
    blas_threads = apply_blas_threads(blas_threads_for(std::nullopt, 0)) + ", " +
                   std::to_string(jobs) + " cases at once";
  std::mutex log_mutex;
  std::vector<int> status(cases.size(), 0);
  // Consecutive cases with the same mesh source form a group: one mesh, and
  // one set-up shared by those whose body, supports and contact nodes match.
  for (std::size_t begin = 0; begin < cases.size();) {
    std::size_t end = begin + 1;
    while (end < cases.size() && cases[end].mesh == cases[begin].mesh) ++end;
    std::optional<Mesh> mesh;
    // An error reading the mesh is each of its cases' error (an input error,
    // or a system error such as a refused permission).
    std::exception_ptr mesh_error;
    try {
      mesh = load_mesh(cases[begin]);
    } catch (...) {
      mesh_error = std::current_exception();
    }
    SharedSetups shared;
    std::atomic<std::size_t> next{begin};
    const auto work = [&] {
      for (std::size_t i = next++; i < end; i = next++) {
        const std::string prefix = cases.size() > 1 ? cases[i].source.string() + ": " : "";
        CaseLog case_log(log, log_mutex,
                         jobs > 1 ? cases[i].source.filename().string() + ": " : "");
        status[i] = run_one_case(cases[i], mesh ? &*mesh : nullptr, mesh_error, shared,
                                 blas_threads, options, case_log, prefix);
      }
    };
    const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(jobs), end - begin);
    std::vector<std::thread> threads;
    for (std::size_t w = 1; w < workers; ++w) {
      try {
        threads.emplace_back(work);
      } catch (const std::system_error&) {
        break;  // no more threads to be had: the ones running share the work
      }
    }
    work();
    for (auto& thread : threads) thread.join();
    begin = end;
  }
  const auto any = [&](int code) {
    return std::find(status.begin(), status.end(), code) != status.end();
  };
  if (any(2)) return 2;
  if (any(3)) return 3;
  return any(1) ? 1 : 0;
}

}  // namespace bipo
