#include "io/contact_face_outputs.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <optional>
#include <sstream>

#include "mesh/quality.hpp"

namespace bipo {

namespace {

/// A nodal force per tributary area A (a pressure or traction), 0 for a
/// node without contact faces (A = 0).
double per_area(double force, double area) {
  return area > 0.0 ? force / area : 0.0;
}

}  // namespace

ContactSurface contact_surface(const RunDescription& run) {
  const Mesh& mesh = run.mesh;
  ContactSurface s;
  s.local_of_node.assign(mesh.nodes.size(), -1);
  const auto& nodes = run.contact_mesh_nodes;
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) s.local_of_node[nodes[i]] = i;
  s.area.assign(nodes.size(), 0.0);
  for (const auto& cp : run.case_description.contacts) {
    const BoundaryFaces faces = boundary_faces_on_node_set(mesh, mesh.node_set(cp.set));
    for (const auto& face : faces.quads) {
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
    for (const auto& face : faces.triangles) {
      std::array<int, 3> t{};
      for (int a = 0; a < 3; ++a) t[a] = s.local_of_node[face[a]];
      const Eigen::Vector3d& x0 = mesh.nodes[face[0]];
      const double area = 0.5 * (mesh.nodes[face[1]] - x0).cross(mesh.nodes[face[2]] - x0).norm();
      for (int a = 0; a < 3; ++a) s.area[t[a]] += area / 3.0;
      s.triangles.push_back(t);
    }
  }
  return s;
}

CycleNodeRecord::CycleNodeRecord(std::size_t n_nodes)
    : dissipation(n_nodes, 0.0),
      slip_amplitude(n_nodes, 0.0),
      stuck(n_nodes, 1),
      slipped(n_nodes, 0),
      slip_min(n_nodes, Eigen::Vector3d::Zero()),
      slip_max(n_nodes, Eigen::Vector3d::Zero()) {}

void CycleNodeRecord::start(const StepSnapshot& first_step) {
  std::fill(dissipation.begin(), dissipation.end(), 0.0);
  std::fill(slip_amplitude.begin(), slip_amplitude.end(), 0.0);
  std::fill(stuck.begin(), stuck.end(), std::uint8_t{1});
  std::fill(slipped.begin(), slipped.end(), std::uint8_t{0});
  // The accumulated slip grows by exactly the step's slip increment.
  for (std::size_t i = 0; i < slip_min.size(); ++i)
    slip_min[i] = slip_max[i] = first_step.accumulated_slip[i] - first_step.slip_increment[i];
}

void CycleNodeRecord::add(const StepSnapshot& snapshot) {
  for (std::size_t i = 0; i < stuck.size(); ++i) {
    const ContactNodeState& s = snapshot.contact_states[i];
    dissipation[i] += s.dissipation;
    slip_min[i] = slip_min[i].cwiseMin(snapshot.accumulated_slip[i]);
    slip_max[i] = slip_max[i].cwiseMax(snapshot.accumulated_slip[i]);
    slip_amplitude[i] = 0.5 * (slip_max[i] - slip_min[i]).norm();
    stuck[i] = stuck[i] != 0 && s.state == ContactState::stick ? 1 : 0;
    slipped[i] = slipped[i] != 0 || s.state == ContactState::slip ? 1 : 0;
  }
}

int CycleNodeRecord::n_stuck() const {
  return static_cast<int>(std::count(stuck.begin(), stuck.end(), std::uint8_t{1}));
}

int CycleNodeRecord::n_slipped() const {
  return static_cast<int>(std::count(slipped.begin(), slipped.end(), std::uint8_t{1}));
}

void CycleLoop::add(double x_before, double y_before, double x_now, double y_now) {
  if (!started) {
    started = true;
    x0 = x = x_before;
    y0 = y = y_before;
  }
  twice_signed_area += x * y_now - x_now * y;
  driver_work += y_now * (x_now - x);
  x = x_now;
  y = y_now;
}

double CycleLoop::area() const {
  return 0.5 * std::abs(twice_signed_area + x * y0 - x0 * y);
}

namespace {

/// `v` made unit, or none if it is zero.
std::optional<Eigen::Vector3d> unit(const Eigen::Vector3d& v) {
  const double n = v.norm();
  if (!(n > 0.0)) return std::nullopt;
  return v / n;
}

Eigen::Vector3d condition_vector(const DirichletCondition& bc) {
  return {bc.value[0].value_or(0.0), bc.value[1].value_or(0.0), bc.value[2].value_or(0.0)};
}

LoopDriver driver_of(const RunDescription& run, LoopDriver::Kind kind, int index) {
  const Case& c = run.case_description;
  LoopDriver d;
  d.index = index;
  std::optional<Eigen::Vector3d> direction;
  const auto i = static_cast<std::size_t>(index);
  if (kind == LoopDriver::Kind::contact) direction = unit(c.contacts.at(i).motion);
  if (kind == LoopDriver::Kind::condition) direction = unit(condition_vector(c.dirichlet.at(i)));
  if (kind == LoopDriver::Kind::load) {
    direction = unit(c.loads.at(i).force_per_node);
    d.nodes = run.mesh.node_set(c.loads[i].set);
  }
  // A driver that does not move or push has no loop.
  if (!direction) return {};
  d.kind = kind;
  d.direction = *direction;
  return d;
}

}  // namespace

LoopDriver loop_driver(const RunDescription& run) {
  const Case& c = run.case_description;
  using K = CycleProgramRef::Kind;
  switch (c.cycles.kind) {
    case K::contact_motion:
      return driver_of(run, LoopDriver::Kind::contact, c.cycles.index);
    case K::boundary_condition:
      return driver_of(run, LoopDriver::Kind::condition, c.cycles.index);
    case K::load:
      return driver_of(run, LoopDriver::Kind::load, c.cycles.index);
    case K::load_program:
      break;
  }
  for (std::size_t i = 0; i < c.contacts.size(); ++i)
    if (!c.contacts[i].motion_program && c.contacts[i].motion.norm() > 0.0)
      return driver_of(run, LoopDriver::Kind::contact, static_cast<int>(i));
  for (std::size_t i = 0; i < c.dirichlet.size(); ++i)
    if (!c.dirichlet[i].program && condition_vector(c.dirichlet[i]).norm() > 0.0)
      return driver_of(run, LoopDriver::Kind::condition, static_cast<int>(i));
  return {};
}

std::pair<double, double> driver_point(const LoopDriver& driver, const RunDescription& run,
                                       const StepSnapshot& snapshot) {
  const Case& c = run.case_description;
  const auto i = static_cast<std::size_t>(driver.index);
  const double position = snapshot.step.position;
  const Eigen::Vector3d& d = driver.direction;
  switch (driver.kind) {
    case LoopDriver::Kind::contact:
      return {snapshot.contact_motion[i].dot(d), snapshot.contact_reaction[i].dot(d)};
    case LoopDriver::Kind::condition: {
      const DirichletCondition& bc = c.dirichlet[i];
      const LoadProgram& program = bc.program ? *bc.program : c.program;
      return {condition_vector(bc).dot(d) * program.factor(position),
              snapshot.step.dirichlet_reactions[i].dot(d)};
    }
    case LoopDriver::Kind::load: {
      const NodalLoad& load = c.loads[i];
      const LoadProgram& program = load.program ? *load.program : c.program;
      double mean = 0.0;
      for (int node : driver.nodes) mean += snapshot.displacement.segment<3>(3 * node).dot(d);
      const auto n = static_cast<double>(driver.nodes.size());
      return {n > 0 ? mean / n : 0.0, n * load.force_per_node.dot(d) * program.factor(position)};
    }
    case LoopDriver::Kind::none:
      break;
  }
  return {0.0, 0.0};
}

SegmentEnd segment_end(const StepSnapshot& snapshot, int step_number,
                       const ContactSurface& surface) {
  const auto& states = snapshot.contact_states;
  SegmentEnd end{snapshot.step.position, step_number, 0, 0, 0, 0.0, 0.0, 0.0};
  for (std::size_t i = 0; i < states.size(); ++i) {
    switch (states[i].state) {
      case ContactState::open:
        ++end.n_open;
        end.area_open += surface.area[i];
        break;
      case ContactState::stick:
        ++end.n_stick;
        end.area_stick += surface.area[i];
        break;
      case ContactState::slip:
        ++end.n_slip;
        end.area_slip += surface.area[i];
        break;
    }
  }
  return end;
}

std::string cycles_csv(const std::map<int, CycleRecord>& cycles) {
  std::ostringstream out;
  out << std::setprecision(17);
  out << "cycle,dissipation,hysteresis_area_P,"
         "step_end_loading,n_open_end_loading,n_stick_end_loading,n_slip_end_loading,"
         "area_open_end_loading,area_stick_end_loading,area_slip_end_loading,"
         "step_end_unloading,n_open_end_unloading,n_stick_end_unloading,n_slip_end_unloading,"
         "area_open_end_unloading,area_stick_end_unloading,area_slip_end_unloading,"
         "loop_area,driver_work,work_on_body,n_stuck_cycle,n_slipped_cycle,regime,"
         "max_slip_amplitude";
  const bool wear = std::any_of(cycles.begin(), cycles.end(),
                                [](const auto& c) { return c.second.wear_volume.has_value(); });
  out << (wear ? ",wear_volume,represented_cycles\n" : "\n");
  for (const auto& [cycle, r] : cycles) {
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
    // 1 partial slip (a node stuck through the cycle), 2 gross slip (none
    // stuck, some slipping), 0 neither (no node in contact throughout).
    const int regime = r.n_stuck > 0 ? 1 : r.n_slipped > 0 ? 2 : 0;
    out << ',' << r.driver_loop.area() << ',' << r.driver_loop.driver_work << ',' << r.work_on_body
        << ',' << r.n_stuck << ',' << r.n_slipped << ',' << regime << ',' << r.max_slip_amplitude;
    if (wear) out << ',' << r.wear_volume.value_or(0.0) << ',' << r.represented_cycles;
    out << '\n';
  }
  return out.str();
}

std::string contact_map_csv(const RunDescription& run, const StepSnapshot& snapshot,
                            const ContactSurface& surface, const CycleNodeRecord& cycle) {
  const auto& states = snapshot.contact_states;
  const auto& nodes = run.contact_mesh_nodes;
  std::string out =
      "node,x,y,z,state,f,r_n,r_t1,r_t2,gap,slip_increment_t1,slip_increment_t2,"
      "accumulated_slip_x,accumulated_slip_y,accumulated_slip_z,accumulated_slip_length,"
      "dissipation_cycle,dissipation_accumulated,area,pressure,traction_t1,traction_t2,"
      "slip_amplitude_cycle,stuck_cycle";
  out += snapshot.wear ? ",wear_depth\n" : "\n";
  for (std::size_t i = 0; i < states.size(); ++i) {
    const ContactNodeState& s = states[i];
    const Eigen::Vector3d& x = run.mesh.nodes[nodes[i]];
    const Eigen::Vector3d& a = snapshot.accumulated_slip[i];
    const double area = surface.area[i];
    out += std::to_string(nodes[i]);
    for (const double value : {x.x(),
                               x.y(),
                               x.z(),
                               static_cast<double>(s.state),
                               s.f,
                               s.r(0),
                               s.r(1),
                               s.r(2),
                               s.gap,
                               s.slip.x(),
                               s.slip.y(),
                               a.x(),
                               a.y(),
                               a.z(),
                               snapshot.accumulated_slip_length[i],
                               cycle.dissipation[i],
                               snapshot.accumulated_dissipation[i],
                               area,
                               per_area(s.r(0), area),
                               per_area(s.r(1), area),
                               per_area(s.r(2), area),
                               cycle.slip_amplitude[i],
                               static_cast<double>(cycle.stuck[i])}) {
      out += ',';
      append_number(out, value);
    }
    if (snapshot.wear) {
      out += ',';
      append_number(out, snapshot.wear->depth()[i]);
    }
    out += '\n';
  }
  return out;
}

std::vector<PointField> contact_point_fields(const StepSnapshot& snapshot,
                                             const ContactSurface& surface,
                                             const CycleNodeRecord& cycle) {
  const auto& states = snapshot.contact_states;
  const std::size_t m = states.size();
  PointField rn{"contact_rn", 1, {}}, rt{"contact_rt", 3, {}}, f{"contact_f", 1, {}},
      state{"contact_state", 1, {}, ValueType::int32}, gap{"contact_gap", 1, {}},
      slip{"slip_increment", 3, {}}, acc{"accumulated_slip", 3, {}},
      acc_len{"accumulated_slip_length", 1, {}}, diss{"dissipation_increment", 1, {}},
      diss_acc{"dissipation_accumulated", 1, {}}, diss_cycle{"dissipation_cycle", 1, {}},
      cert{"law_certificate_G", 1, {}}, area{"contact_area", 1, {}},
      pressure{"contact_pressure", 1, {}}, traction{"contact_traction_t", 3, {}},
      amplitude{"slip_amplitude_cycle", 1, {}}, stuck{"stuck_cycle", 1, {}, ValueType::int32};
  for (std::size_t i = 0; i < m; ++i) {
    const ContactNodeState& s = states[i];
    const Eigen::Vector3d& r_t = snapshot.friction_force[i];
    const Eigen::Vector3d& du = snapshot.slip_increment[i];
    const Eigen::Vector3d& a = snapshot.accumulated_slip[i];
    const double a_i = surface.area[i];
    rn.values.push_back(s.r(0));
    rt.values.insert(rt.values.end(), {r_t.x(), r_t.y(), r_t.z()});
    f.values.push_back(s.f);
    state.values.push_back(static_cast<double>(s.state));
    gap.values.push_back(s.gap);
    slip.values.insert(slip.values.end(), {du.x(), du.y(), du.z()});
    acc.values.insert(acc.values.end(), {a.x(), a.y(), a.z()});
    acc_len.values.push_back(snapshot.accumulated_slip_length[i]);
    diss.values.push_back(s.dissipation);
    diss_acc.values.push_back(snapshot.accumulated_dissipation[i]);
    diss_cycle.values.push_back(cycle.dissipation[i]);
    amplitude.values.push_back(cycle.slip_amplitude[i]);
    stuck.values.push_back(static_cast<double>(cycle.stuck[i]));
    cert.values.push_back(s.certificate);
    area.values.push_back(a_i);
    pressure.values.push_back(per_area(s.r(0), a_i));
    traction.values.insert(traction.values.end(), {per_area(r_t.x(), a_i), per_area(r_t.y(), a_i),
                                                   per_area(r_t.z(), a_i)});
  }
  std::vector<PointField> fields{rn,   rt,       f,        state,     gap,        slip,
                                 acc,  acc_len,  diss,     diss_acc,  diss_cycle, cert,
                                 area, pressure, traction, amplitude, stuck};
  if (snapshot.wear) fields.push_back({"wear_depth", 1, snapshot.wear->depth()});
  return fields;
}

CellField contact_face_states(const StepSnapshot& snapshot, const ContactSurface& surface) {
  CellField face_state{"contact_state_face", 1, {}, ValueType::int32};
  face_state.values.reserve(surface.quads.size() + surface.triangles.size());
  const auto& states = snapshot.contact_states;
  // The faces in the order of the written cells: quads, then triangles.
  const auto add_face = [&](const auto& face) {
    const ContactState first = states[face[0]].state;
    bool same = true;
    for (std::size_t a = 1; a < face.size(); ++a) same = same && states[face[a]].state == first;
    face_state.values.push_back(same ? static_cast<double>(first) : kMixedFaceState);
  };
  for (const auto& q : surface.quads) add_face(q);
  for (const auto& t : surface.triangles) add_face(t);
  return face_state;
}

}  // namespace bipo
