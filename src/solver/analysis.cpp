#include "solver/analysis.hpp"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "core/errors.hpp"
#include "parallel/parallel_runtime.hpp"
#include "solver/contact_path.hpp"
#include "solver/distributed_assembly.hpp"
#include "solver/sparse_contact.hpp"

namespace bipo {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool same_program(const std::optional<LoadProgram>& a, const std::optional<LoadProgram>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if (a->segments.size() != b->segments.size()) return false;
  for (std::size_t s = 0; s < a->segments.size(); ++s)
    if (a->segments[s].target != b->segments[s].target ||
        a->segments[s].n_increments != b->segments[s].n_increments)
      return false;
  return true;
}

const char* component_name(int c) {
  return c == 0 ? "x" : (c == 1 ? "y" : "z");
}

std::vector<double> rho_overrides(const Case& c) {
  std::vector<double> rho_override;
  for (const auto& cp : c.contacts) rho_override.push_back(cp.rho.value_or(0.0));
  return rho_override;
}

/// The contact module's surface of contact `cp` (physics.md 2, 2.1).
RigidPlane rigid_surface_of(const ContactPlane& cp) {
  RigidPlane surface;
  surface.shape = cp.shape == ContactShape::sphere     ? SurfaceShape::sphere
                  : cp.shape == ContactShape::cylinder ? SurfaceShape::cylinder
                                                       : SurfaceShape::plane;
  surface.point = cp.point;
  surface.normal = cp.normal;
  surface.axis = cp.axis;
  surface.radius = cp.radius;
  surface.t1 = cp.direction;
  surface.t1_angle = cp.direction_angle;
  surface.law =
      FrictionLaw::orthotropic(cp.friction.mu1, cp.friction.mu2, cp.friction.p1, cp.friction.p2);
  return surface;
}

/// The key path of contact `pi`'s surface, for messages.
std::string surface_key(const ContactPlane& cp, int pi) {
  const std::string key = "contact[" + std::to_string(pi) + "].";
  if (cp.shape == ContactShape::sphere) return key + "sphere";
  if (cp.shape == ContactShape::cylinder) return key + "cylinder";
  return key + "plane.normal";
}

/// The frame of contact node `node` on contact `pi`'s surface (physics.md
/// 2.1); an input error where an indenter gives it no normal (the node at
/// the centre or on the axis) or no friction direction (the given vector
/// along the node's normal).
Eigen::Matrix3d contact_node_frame(const Case& c, const Mesh& mesh, int pi, int node,
                                   const RigidPlane& surface) {
  if (const std::optional<Eigen::Matrix3d> frame = surface.node_frame(mesh.nodes[node]))
    return *frame;
  const ContactPlane& cp = c.contacts[pi];
  const Eigen::Vector3d& x = mesh.nodes[node];
  std::ostringstream msg;
  msg << "contact node " << mesh.node_tags[node] << " at (" << x.x() << ", " << x.y() << ", "
      << x.z() << ") of set '" << cp.set << "' ";
  if (!surface.surface_point(x)) {
    msg << (cp.shape == ContactShape::sphere ? "is at the sphere's centre"
                                             : "is on the cylinder's axis")
        << " (within 1e-9 R), where the normal is undefined; a contact node must lie off it";
    throw InputError(located(c, surface_key(cp, pi)) + msg.str());
  }
  msg << "has its normal along the friction direction vector, whose projection on its tangent "
         "plane is zero; give the direction as an angle, or a vector not normal to the indenter "
         "at any contact node";
  throw InputError(located(c, "contact[" + std::to_string(pi) + "].direction") + msg.str());
}

/// An indenter's body must be outside it (physics.md 2.1): the mean signed
/// distance to its surface of the elements at its contact nodes (`distance`
/// their sum, of `count` elements) must not be negative.
void check_body_outside_indenter(const Case& c, int pi, double distance, int count) {
  const ContactPlane& cp = c.contacts[pi];
  if (count == 0 || distance >= 0.0) return;
  std::ostringstream msg;
  msg << located(c, surface_key(cp, pi)) << "the body is inside the "
      << (cp.shape == ContactShape::sphere ? "sphere" : "cylinder") << " of contact '" << cp.name
      << "': the elements at its contact nodes (set '" << cp.set
      << "') lie inside it (their mean signed distance to its surface is " << distance / count
      << "); an indenter touches a body outside it";
  throw InputError(msg.str());
}

/// A plane's normal must point into the body (physics.md 2). The body near a
/// plane is the elements that hold its contact nodes; if their centroid is
/// on the plane's negative side, the normal points away from the body. (Not
/// the gaps of the contact nodes: a face resting on the plane has g = 0
/// either way; not the whole body's centroid: a plane may touch a hook's
/// arm with the rest of the body behind it.)
void check_normals_point_into_body(const Case& c, const Mesh& mesh,
                                   const std::vector<int>& plane_of_node) {
  const auto n_planes = c.contacts.size();
  std::vector<Eigen::Vector3d> sum(n_planes, Eigen::Vector3d::Zero());
  std::vector<int> count(n_planes, 0);
  std::vector<bool> seen(n_planes);
  std::vector<double> indenter_distance(n_planes, 0.0);  // sum of signed distances
  std::vector<RigidPlane> surfaces;
  for (const ContactPlane& cp : c.contacts) surfaces.push_back(rigid_surface_of(cp));
  for (int e = 0; e < mesh.n_elements(); ++e) {
    const auto element = mesh.element_nodes(e);
    std::fill(seen.begin(), seen.end(), false);
    Eigen::Vector3d centroid = Eigen::Vector3d::Zero();
    for (int node : element) centroid += mesh.nodes[node];
    centroid /= static_cast<double>(element.size());
    for (int node : element) {
      const int plane = plane_of_node[node];
      if (plane < 0 || seen[plane]) continue;
      seen[plane] = true;
      sum[plane] += centroid;
      ++count[plane];
      if (const auto at = surfaces[plane].surface_point(centroid))
        indenter_distance[plane] += (centroid - at->anchor).dot(at->normal) - at->offset;
    }
  }
  for (std::size_t pi = 0; pi < n_planes; ++pi) {
    if (count[pi] == 0) continue;
    const ContactPlane& cp = c.contacts[pi];
    if (cp.shape != ContactShape::plane) {
      check_body_outside_indenter(c, static_cast<int>(pi), indenter_distance[pi], count[pi]);
      continue;
    }
    const double distance = (sum[pi] / count[pi] - cp.point).dot(cp.normal);
    if (distance < 0.0) {
      std::ostringstream msg;
      msg << located(c, "contact[" + std::to_string(pi) + "].plane.normal") << "the normal ("
          << cp.normal.x() << ", " << cp.normal.y() << ", " << cp.normal.z()
          << ") of contact plane '" << cp.name
          << "' points away from the body: the elements at its contact nodes (set '" << cp.set
          << "') lie on its negative side (their centroid is at signed distance " << distance
          << " from the plane); the normal must point from the plane into the body";
      throw InputError(msg.str());
    }
  }
}

/// Each plane's friction law for the increment that `position` belongs to
/// (contact[i].friction_program): the parts of a cut increment k, at
/// positions in (k - 1, k], have increment k's law, as they have its cycle
/// (begin_increment).
void set_increment_laws(const Case& c, NodeToPlaneContact& contact, double position) {
  const int increment = static_cast<int>(std::ceil(position - 1e-9));
  for (int pi = 0; pi < static_cast<int>(c.contacts.size()); ++pi) {
    const ContactPlane& cp = c.contacts[pi];
    if (cp.friction_program.empty()) continue;
    const FrictionParams& f = cp.friction_at(increment);
    contact.set_law(pi, FrictionLaw::orthotropic(f.mu1, f.mu2, f.p1, f.p2));
  }
}

/// The backend of K_ff (docs/case-file.md, solver.linear): CHOLMOD in one
/// process; PETSc when the case asks for it, or by default when MPI runs
/// several ranks (CHOLMOD cannot use them).
std::unique_ptr<LinearSolver> make_linear_solver(const Case& c) {
  const int ranks = parallel_size();
  if (c.solver.linear == LinearSolverChoice::cholmod && ranks > 1)
    throw InputError(c.source.string() + ": solver.linear: cholmod solves in one process, but " +
                     "this run has " + std::to_string(ranks) +
                     " MPI ranks: use solver.linear: petsc (or auto) under mpirun");
  return solves_with_petsc(c) ? make_petsc_solver(effective_petsc_settings(c))
                              : make_cholmod_solver();
}

/// The six rigid-body motions of the body restricted to the free dofs
/// (columns: translations x, y, z, rotations about x, y, z through the
/// centroid): an algebraic multigrid's near-null space.
Eigen::MatrixXd rigid_body_modes(const Mesh& mesh, const DofPartition& partition) {
  Eigen::Vector3d centroid = Eigen::Vector3d::Zero();
  for (const Eigen::Vector3d& x : mesh.nodes) centroid += x;
  centroid /= std::max(1, mesh.n_nodes());
  Eigen::MatrixXd modes = Eigen::MatrixXd::Zero(partition.n_free(), 6);
  for (int i = 0; i < partition.n_free(); ++i) {
    const int dof = partition.free_dofs()[i];
    const int component = dof % 3;
    const Eigen::Vector3d x = mesh.nodes[dof / 3] - centroid;
    modes(i, component) = 1.0;
    // Rotation about axis a: the displacement e_a x X, its component here.
    for (int axis = 0; axis < 3; ++axis)
      modes(i, 3 + axis) = Eigen::Vector3d::Unit(axis).cross(x)(component);
  }
  return modes;
}

}  // namespace

bool solves_with_petsc(const Case& c) {
  return c.solver.linear == LinearSolverChoice::petsc ||
         (c.solver.linear == LinearSolverChoice::automatic && parallel_size() > 1);
}

PetscSolverSettings effective_petsc_settings(const Case& c) {
  PetscSolverSettings settings = c.solver.petsc;
  if (settings.relative_tolerance_given || settings.method == PetscMethod::direct) return settings;
  double largest = 0.0;
  const auto take = [&largest](const FrictionParams& f) {
    largest = std::max({largest, f.mu1, f.mu2, f.p1, f.p2});
  };
  for (const ContactPlane& plane : c.contacts) {
    take(plane.friction);
    for (const FrictionChange& change : plane.friction_program) take(change.friction);
  }
  constexpr double high_friction = 100.0;
  if (largest > high_friction) settings.relative_tolerance = 1e-15;
  return settings;
}

/// The prescribed dofs, and the (condition index, component) that sets each.
struct Analysis::PrescribedDofs {
  std::vector<bool> prescribed;
  std::vector<std::pair<int, int>> source;
};

/// The state of an increment between its steps (advance_to).
struct Analysis::Increment {
  StepResult result;
  Eigen::VectorXd u_p;  // prescribed values
  // Each load pattern's factor at this position (0 for a pattern at rest).
  std::vector<double> pattern_factors;
  // The free-dof load (one column) and its solution, made by the recovery
  // (recover_displacements): no vector of the free dofs is made before the
  // contact iteration, whose memory peak they would raise. Under MPI this
  // rank's rows only (free_rows_' kept rows).
  Eigen::MatrixXd b, x;
  Eigen::VectorXd q;         // contact kinematics of the free motion K_ff^-1 b
  double step_factor = 0.0;  // main load factor change of the increment
  Eigen::VectorXd r;         // the reactions (local frames)
  double motion_scale = 0.0;
  Eigen::VectorXd forces;  // C^T r at the contact nodes, global components
  Eigen::VectorXd u;       // the recovered displacements (as u_: this rank's under MPI)
  Eigen::VectorXd u_contact;
  std::vector<ContactNodeState> states;
  Eigen::VectorXd reactions_motion;  // W r (the sparse path only)
  std::chrono::steady_clock::time_point recovery_start;
};

// The set-up: the case checked against the mesh, the dofs partitioned, the
// contact nodes found; what the application decides (SetupChoices); then the
// stiffness assembled, factorized and condensed, or a donor's shared; the
// load patterns and their free motions; the state at rest.
Analysis::Analysis(const Case& c, const Mesh& mesh, std::unique_ptr<LinearSolver> solver,
                   const SetupChoices& choices)
    : case_(c), mesh_(mesh), solver_(std::move(solver)) {
  const PrescribedDofs dofs = validate_and_partition();
  set_up_contact_nodes(dofs);
  blas_threads_ = choices.blas_threads ? choices.blas_threads(partition_->n_free()) : "not set";
  const Analysis* donor = choices.setup_donor ? choices.setup_donor(*this) : nullptr;
  const std::vector<double> rho_override = rho_overrides(case_);
  setup_progress_ = choices.progress;
  if (donor != nullptr) {
    share_setup_from(*donor, rho_override);
  } else {
    assemble_and_split_stiffness();
    const auto choice_start = std::chrono::steady_clock::now();
    contact_path_ = choose_contact_path_for_setup(choices);
    const double choice_seconds = seconds_since(choice_start);  // a symbolic analysis, at most
    if (contact_path_.sparse)
      set_up_sparse_contact_operator(rho_override, choices.available_memory);
    else
      condense_contact_operators(rho_override);
    timings_.factorization += choice_seconds;
  }
  set_up_rank_maps();
  report_setup_phase("solving for the free motions of the load patterns");
  set_up_load_patterns();
  // The sparse path's preconditioner is chosen now (a collective under
  // MPI: every rank is here), not at the first contact step, so that the
  // run says which before that step, which can take an hour at 10^6
  // unknowns.
  if (const std::string reason = contact_preconditioner_reason(); !reason.empty())
    report_setup_phase("the contact Newton steps' preconditioner: " +
                       std::string(contact_preconditioner()) + " (" + reason + ")");
  if (const SparseDelassusOperator* sparse = sparse_operator())
    newton_step_received_rows_per_rank_ = sparse->newton_step_received_rows_per_rank();
  setup_progress_ = nullptr;  // the application's callback may not outlive the set-up
  start_at_rest();
  if (case_.wear) set_up_wear();
}

Analysis::PrescribedDofs Analysis::validate_and_partition() {
  PrescribedDofs dofs = prescribed_by_conditions();
  check_load_sets();
  partition_ = std::make_unique<DofPartition>(dofs.prescribed);
  record_condition_dofs(dofs);
  assert(partition_->n_dofs() == 3 * mesh_.n_nodes());
  return dofs;
}

/// Dirichlet conditions: which dofs, set by which condition; two conditions
/// may set a dof only to the same value with the same program.
Analysis::PrescribedDofs Analysis::prescribed_by_conditions() const {
  const int n_dofs = 3 * mesh_.n_nodes();
  PrescribedDofs dofs{std::vector<bool>(n_dofs, false),
                      std::vector<std::pair<int, int>>(n_dofs, {-1, -1})};
  std::vector<bool>& prescribed = dofs.prescribed;
  std::vector<std::pair<int, int>>& source = dofs.source;
  for (int ci = 0; ci < static_cast<int>(case_.dirichlet.size()); ++ci) {
    const DirichletCondition& bc = case_.dirichlet[ci];
    const std::vector<int>* nodes = nullptr;
    try {
      nodes = &mesh_.node_set(bc.set);
    } catch (const InputError& e) {
      throw InputError(located(case_, "boundary_conditions[" + std::to_string(ci) + "].set") +
                       e.what());
    }
    for (int node : *nodes)
      for (int comp = 0; comp < 3; ++comp) {
        if (!bc.value[comp]) continue;
        const int dof = 3 * node + comp;
        if (prescribed[dof]) {
          const DirichletCondition& other = case_.dirichlet[source[dof].first];
          if (*other.value[comp] != *bc.value[comp] || !same_program(other.program, bc.program))
            throw InputError(located(case_, "boundary_conditions[" + std::to_string(ci) + "].set") +
                             "boundary_conditions[" + std::to_string(ci) + "] (set '" + bc.set +
                             "') and boundary_conditions[" + std::to_string(source[dof].first) +
                             "] (set '" + other.set + "') prescribe different values of u" +
                             component_name(comp) + " at node " +
                             std::to_string(mesh_.node_tags[node]));
          continue;
        }
        prescribed[dof] = true;
        source[dof] = {ci, comp};
      }
  }
  return dofs;
}

void Analysis::check_load_sets() const {
  for (std::size_t li = 0; li < case_.loads.size(); ++li) {
    try {
      (void)mesh_.node_set(case_.loads[li].set);
    } catch (const InputError& e) {
      throw InputError(located(case_, "loads[" + std::to_string(li) + "].set") + e.what());
    }
  }
}

void Analysis::record_condition_dofs(const PrescribedDofs& dofs) {
  const std::vector<std::pair<int, int>>& source = dofs.source;
  prescribed_source_.resize(partition_->n_prescribed());
  condition_dofs_.assign(case_.dirichlet.size(), {});
  for (int p = 0; p < partition_->n_prescribed(); ++p) {
    const int dof = partition_->prescribed_dofs()[p];
    prescribed_source_[p] = source[dof];
  }
  for (int ci = 0; ci < static_cast<int>(case_.dirichlet.size()); ++ci) {
    const auto& bc = case_.dirichlet[ci];
    for (int node : mesh_.node_set(bc.set))
      for (int comp = 0; comp < 3; ++comp)
        if (bc.value[comp]) condition_dofs_[ci].push_back(3 * node + comp);
  }
}

/// The contact nodes of each plane or indenter, with their frames
/// (physics.md 2.1); a node touches one surface, a plane's normal points
/// into the body, an indenter's body is outside it.
void Analysis::set_up_contact_nodes(const PrescribedDofs& dofs) {
  std::vector<RigidPlane> planes;
  std::vector<ContactNode> contact_nodes;
  std::vector<int> plane_of_node(mesh_.nodes.size(), -1);
  for (int pi = 0; pi < static_cast<int>(case_.contacts.size()); ++pi) {
    const ContactPlane& cp = case_.contacts[pi];
    planes.push_back(rigid_surface_of(cp));
    const RigidPlane& plane = planes.back();
    const std::vector<int>* nodes = nullptr;
    try {
      nodes = &mesh_.node_set(cp.set);
    } catch (const InputError& e) {
      throw InputError(located(case_, "contact[" + std::to_string(pi) + "].set") + e.what());
    }
    double nearest_gap = std::numeric_limits<double>::infinity();
    Eigen::Vector3d nearest_normal = plane.normal;
    for (int node : *nodes) {
      const Eigen::Matrix3d frame = contact_node_frame(case_, mesh_, pi, node, plane);
      if (const auto at = plane.surface_point(mesh_.nodes[node])) {
        const double gap = (mesh_.nodes[node] - at->anchor).dot(at->normal) - at->offset;
        if (gap < nearest_gap) {
          nearest_gap = gap;
          nearest_normal = at->normal;
        }
      }
      if (plane_of_node[node] >= 0)
        throw InputError(located(case_, "contact[" + std::to_string(pi) + "].set") + "node " +
                         std::to_string(mesh_.node_tags[node]) +
                         " is in the contact sets of two planes ('" +
                         case_.contacts[plane_of_node[node]].name + "' of contact[" +
                         std::to_string(plane_of_node[node]) + "] and '" + cp.name +
                         "'); a node may touch one plane only");
      check_contact_node_supports(pi, node, frame, dofs);
      plane_of_node[node] = pi;
      contact_nodes.push_back({pi, mesh_.nodes[node]});
      contact_mesh_nodes_.push_back(node);
    }
    // An indenter's axis of approach, for probes' radial directions: the
    // normal where the body is nearest to it (first touch).
    if (plane.shape != SurfaceShape::plane) planes.back().normal = nearest_normal;
  }
  check_normals_point_into_body(case_, mesh_, plane_of_node);
  contact_ = std::make_unique<NodeToPlaneContact>(std::move(planes), std::move(contact_nodes));
  // -1 for a tangential component held at zero (see above).
  for (int node : contact_mesh_nodes_)
    for (int comp = 0; comp < 3; ++comp)
      contact_free_dofs_.push_back(partition_->free_index(3 * node + comp));
  assert(static_cast<int>(contact_mesh_nodes_.size()) == contact_->n_nodes() &&
         contact_free_dofs_.size() == 3 * contact_mesh_nodes_.size());
}

void Analysis::check_contact_node_supports(int pi, int node, const Eigen::Matrix3d& frame,
                                           const PrescribedDofs& dofs) const {
  const std::vector<bool>& prescribed = dofs.prescribed;
  const std::vector<std::pair<int, int>>& source = dofs.source;
  const ContactPlane& cp = case_.contacts[pi];
  // A contact node may have one tangential component held at zero (a
  // symmetry plane through the contact face): the component must be
  // along t1 or t2, so that the local frame separates it. Anything else
  // prescribed would fight the contact law.
  for (int comp = 0; comp < 3; ++comp) {
    if (!prescribed[3 * node + comp]) continue;
    const int ci = source[3 * node + comp].first;
    const DirichletCondition& bc = case_.dirichlet[ci];
    const bool along_tangent = std::abs(std::abs(frame(1, comp)) - 1.0) <= 1e-12 ||
                               std::abs(std::abs(frame(2, comp)) - 1.0) <= 1e-12;
    if (!along_tangent || *bc.value[comp] != 0.0)
      throw InputError(located(case_, "boundary_conditions[" + std::to_string(ci) + "].set") +
                       "node " + std::to_string(mesh_.node_tags[node]) + " of contact set '" +
                       cp.set + "' (contact[" + std::to_string(pi) + "]) has u" +
                       component_name(comp) + " prescribed by the condition on set '" + bc.set +
                       "'; on a contact node only a component along t1 or t2 of its plane "
                       "may be prescribed, and only to 0 (a symmetry plane)");
  }
}

void Analysis::share_setup_from(const Analysis& donor, const std::vector<double>& rho_override) {
  assert(can_share_setup_with(donor));
  // The same body, supports and contact nodes: the stiffness, its
  // factorization and the condensed operators are those of the donor.
  shares_setup_ = true;
  setup_donor_case_ = donor.case_.source;
  d_ = donor.d_;
  k_ff_lower_ = donor.k_ff_lower_;
  k_fp_ = donor.k_fp_;
  k_pp_ = donor.k_pp_;
  dof_rows_ = donor.dof_rows_;
  free_rows_ = donor.free_rows_;
  stiffness_lower_entries_ = donor.stiffness_lower_entries_;
  stiffness_entries_per_rank_ = donor.stiffness_entries_per_rank_;
  stiffness_norm_ = donor.stiffness_norm_;
  solver_ = donor.solver_;
  contact_path_ = donor.contact_path_;
  contact_path_.reason += " (the set-up of " + donor.case_.source.filename().string() + ")";
  contact_->set_condensed_operators(donor.contact_->condensed_operators(), rho_override);
}

/// The stiffness, once (physics.md 1).
void Analysis::assemble_and_split_stiffness() {
  if (!solver_) solver_ = make_linear_solver(case_);
  auto start = std::chrono::steady_clock::now();
  d_ = isotropic_elasticity(case_.material.young, case_.material.poisson);
  // Under MPI the rows are divided before the assembly, and each rank
  // assembles the elements of its rows (and of the contact nodes).
  std::optional<AssemblyShare> share;
  if (const int ranks = solver_->processes(); ranks > 1) {
    report_setup_phase("dividing the " + std::to_string(partition_->n_free()) + " unknowns among " +
                       std::to_string(ranks) + " ranks by the mesh's node graph");
    // Each rank makes and gives its slice of the graph: the partitioner
    // runs on all of them.
    solver_->divide_rows(free_row_graph(mesh_, *partition_, parallel_rank(), ranks));
    share = assembly_share(mesh_, *partition_, solver_->row_share(), contact_mesh_nodes_,
                           parallel_rank());
    dof_rows_ = KrylovRows(share->dofs, {}, parallel_rank(), gather_over_ranks);
    free_rows_ = krylov_rows_of(*solver_, {});
    // Rank 0 prints, its own count (the others' are alike).
    report_setup_phase(
        "assembling the stiffness: each rank the elements of its rows and of the contact nodes "
        "(rank " +
        std::to_string(parallel_rank()) + ": " +
        std::to_string(std::count(share->elements.begin(), share->elements.end(), 1)) + " of " +
        std::to_string(mesh_.n_elements()) + " elements)");
  } else {
    report_setup_phase("assembling the stiffness of " + std::to_string(mesh_.n_elements()) +
                       " elements");
  }
  {
    // Only K's lower triangle is ever made (half of K), and only K_ff's
    // lower triangle out of it: the set-up's peak is K's triangle beside
    // K_ff's (docs/performance.md, "The set-up's copies of the stiffness").
    const SparseMatrix k_lower =
        assemble_stiffness(mesh_, d_, StoredTriangle::lower, share ? &share->elements : nullptr);
    SparseMatrix k_ff_lower;
    partition_->split_lower_triangle(k_lower, k_ff_lower, k_fp_, &k_pp_);
    k_ff_lower_ = std::make_shared<const SparseMatrix>(std::move(k_ff_lower));
    // |K| for check_equilibrium: the largest over every rank's own rows.
    stiffness_norm_ = symmetric_infinity_norm(k_lower, share ? &share->own_dofs : nullptr);
    if (share) {
      double least = 0.0;
      parallel_min_max(stiffness_norm_, least, stiffness_norm_);
    }
  }  // K itself is not kept: its blocks are
  // Column j of K_ff's triangle holds the entries of row j at and below
  // the diagonal: complete on the rank of row j.
  const int* outer = k_ff_lower_->outerIndexPtr();
  long entries = 0;
  for (int j = 0; j < k_ff_lower_->outerSize(); ++j)
    if (!share || share->own_dofs[partition_->free_dofs()[j]] != 0)
      entries += outer[j + 1] - outer[j];
  stiffness_lower_entries_ =
      free_rows_ ? free_rows_->sum(static_cast<double>(entries)) : static_cast<double>(entries);
  if (!share) {
    stiffness_entries_per_rank_ = {stiffness_entries_held()};
  } else {
    const std::vector<double>& held =
        free_rows_->parts_of_every_rank(static_cast<double>(stiffness_entries_held()));
    stiffness_entries_per_rank_.assign(held.begin(), held.end());
  }
  if (solver_->uses_rigid_body_modes())
    solver_->set_rigid_body_modes(rigid_body_modes(mesh_, *partition_));
  timings_.assembly = seconds_since(start);
}

/// The factorization of K_ff and the condensed operators of the contact
/// problem (S, and W from it) in the nodes' local frames.
void Analysis::condense_contact_operators(const std::vector<double>& rho_override) {
  const int m = contact_->n_nodes();
  // One factorization, which also condenses K onto the contact dofs: S_xyz
  // is the stiffness the body offers at the contact nodes (physics.md 3.3).
  auto start = std::chrono::steady_clock::now();
  // The free contact dofs, and where each sits among the 3m (a held one
  // is not a free dof).
  std::vector<int> condensed_dofs, condensed_rows;
  for (int j = 0; j < 3 * m; ++j)
    if (contact_free_dofs_[j] >= 0) {
      condensed_dofs.push_back(contact_free_dofs_[j]);
      condensed_rows.push_back(j);
    }
  report_setup_phase(
      m == 0 ? "factorizing the stiffness (" + std::to_string(k_ff_lower_->rows()) + " unknowns)"
             : "factorizing the stiffness (" + std::to_string(k_ff_lower_->rows()) +
                   " unknowns) with the contact unknowns last and condensing onto them (dense "
                   "contact path: " +
                   std::to_string(condensed_dofs.size()) + " contact unknowns)");
  CondensedMatrices pair = solver_->factorize_lower_and_condense(*k_ff_lower_, condensed_dofs);
  timings_.factorization = seconds_since(start);
  start = std::chrono::steady_clock::now();
  if (static_cast<int>(condensed_dofs.size()) < 3 * m) {
    // A held component gets a decoupled stiffness of the size of the
    // node's other diagonal entries: it keeps S SPD and the automatic rho
    // of the node sane; W = S^-1 gets its inverse there. Then v = q + W r
    // along it is v = r / S_held with q = 0, and the law, symmetric under
    // the reflection that flips t1 (or t2), gives r = 0 there: no friction
    // force along a held direction, as the mirror image of a symmetric
    // solution has on its symmetry plane.
    const auto n_c = static_cast<int>(condensed_rows.size());
    CondensedMatrices whole(3 * m);
    // condensed_rows increases: each triangle maps onto the same triangle.
    for (int b = 0; b < n_c; ++b) {
      for (int a = b; a < n_c; ++a)
        whole.stiffness_lower(condensed_rows[a], condensed_rows[b]) = pair.stiffness(a, b);
      for (int a = 0; a <= b; ++a)
        whole.delassus_upper(condensed_rows[a], condensed_rows[b]) = pair.delassus(a, b);
    }
    pair = std::move(whole);
    for (int j = 0; j < 3 * m; ++j) {
      if (contact_free_dofs_[j] >= 0) continue;
      double sum = 0.0;
      int count = 0;
      for (int i = 3 * (j / 3); i < 3 * (j / 3) + 3; ++i)
        if (contact_free_dofs_[i] >= 0) {
          sum += pair.stiffness(i, i);
          ++count;
        }
      pair.stiffness_lower(j, j) = sum / count;  // count >= 1: the normal is never held
      pair.delassus_upper(j, j) = 1.0 / pair.stiffness(j, j);
    }
  }

  // In the nodes' local frames: S_ij = F_i S_xyz,ij F_j^T, and W likewise
  // (W = S^-1 in either frame: the frames are orthonormal). In place, block
  // by block, each held block once (S's on and below the diagonal, W's on
  // and above it, the latter rotated as the transpose of the block below
  // it, so that both formulas are those of S's blocks), walking down the
  // buffer's columns.
  if (m > 0) report_setup_phase("rotating the condensed stiffness and the Delassus operator W");
  for (int j = 0; j < m; ++j)
    for (int i = j; i < m; ++i)
      pair.set_stiffness_block(
          i, j, block_to_local(contact_->frame(i), pair.stiffness_block(i, j), contact_->frame(j)));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j <= i; ++j) {
      // W's block (i, j), i >= j, is the transpose of the held block (j, i).
      const Eigen::Matrix3d local =
          block_to_local(contact_->frame(i), pair.delassus_block(i, j), contact_->frame(j));
      pair.set_delassus_block(j, i, local.transpose());
    }
  contact_->set_condensed_operators(CondensedOperators::from_matrices(std::move(pair)),
                                    rho_override);
  timings_.delassus = seconds_since(start);
}

void Analysis::report_setup_phase(const std::string& phase) const {
  if (setup_progress_) setup_progress_(phase);
}

ContactPathChoice Analysis::choose_contact_path_for_setup(const SetupChoices& choices) {
  const double available =
      choices.available_memory ? choices.available_memory() : available_memory_bytes();
  // Called only where the dense path's matrices alone do not decide.
  const auto stiffness_run = [this]() {
    report_setup_phase("analysing the stiffness' factor to choose the contact path");
    const double factor_bytes = solver_->analyzed_factor_bytes(*k_ff_lower_);
    return factor_bytes < 0.0
               ? -1.0
               : stiffness_run_bytes(factor_bytes, static_cast<int>(k_ff_lower_->rows()));
  };
  return choose_contact_path(case_.solver.contact_solver, contact_->n_nodes(), available,
                             stiffness_run);
}

/// The factorization of K_ff (CHOLMOD's own ordering) and the sparse
/// Delassus operator over it: W is never formed (solver/sparse_contact.hpp).
void Analysis::set_up_sparse_contact_operator(const std::vector<double>& rho_override,
                                              const std::function<double()>& available_memory) {
  auto start = std::chrono::steady_clock::now();
  report_setup_phase("factorizing the stiffness (" + std::to_string(k_ff_lower_->rows()) +
                     " unknowns; sparse contact path)");
  solver_->factorize_lower(*k_ff_lower_, false);
  timings_.factorization = seconds_since(start);
  start = std::chrono::steady_clock::now();
  report_setup_phase("estimating the Delassus operator's diagonal blocks");
  ContactDofs dofs{contact_free_dofs_, {}, {}};
  for (int i = 0; i < contact_->n_nodes(); ++i) {
    dofs.frames.push_back(contact_->frame(i));
    dofs.positions.push_back(contact_->nodes()[i].position);
  }
  contact_->set_condensed_operators(
      SparseDelassusOperator::create(
          k_ff_lower_, solver_, std::move(dofs),
          {case_.solver.sparse_preconditioner,
           [this](const std::string& phase) { report_setup_phase(phase); }, available_memory,
           stiffness_lower_entries_}),
      rho_override);
  timings_.delassus = seconds_since(start);
}

namespace {

/// The other ranks' free rows (of `rows`, n_free in all) that K u on this
/// rank's dofs reads: those that the entries of its own rows of K_ff
/// (`k_ff_lower`) reach, and the rows of K_fp's columns of its prescribed
/// dofs (their reactions; `dof_source` as RankMaps'), by rank, ascending.
std::vector<std::vector<int>> free_rows_read_by_the_check(const KrylovRows& rows,
                                                          const SparseMatrix& k_ff_lower,
                                                          const SparseMatrix& k_fp,
                                                          const std::vector<int>& dof_source) {
  std::vector<char> read = rows_reached_from_own_rows(rows, k_ff_lower);
  for (const int source : dof_source)
    if (source < 0)
      for (SparseMatrix::InnerIterator it(k_fp, -1 - source); it; ++it) read[it.row()] = 1;
  return rows_by_rank(rows, read);  // the rows kept here left out
}

}  // namespace

/// Under MPI: which of the rank's dofs are free rows kept here, and which
/// contact rows it keeps (RankMaps). Nothing in one process.
void Analysis::set_up_rank_maps() {
  if (!dof_rows_ && !free_rows_) return;
  if (!dof_rows_ || !free_rows_) throw std::logic_error("the dofs divided, not the free rows");
  RankMaps maps;
  const std::vector<int> free_position = free_rows_->position_of_each_row();
  maps.dof_source.resize(static_cast<std::size_t>(dof_rows_->kept()));
  maps.free_row_dof.assign(static_cast<std::size_t>(free_rows_->kept()), -1);
  for (int k = 0; k < dof_rows_->kept(); ++k) {
    const int dof = dof_rows_->kept_rows()[k];
    const int free = partition_->free_index(dof);
    if (free < 0) {
      maps.dof_source[k] = -1 - partition_->prescribed_index(dof);
      continue;
    }
    const int position = free_position[free];
    // A node's dofs are its free rows' rank's (assembly_share).
    if (position < 0) throw std::logic_error("a rank's dof whose free row another rank keeps");
    maps.dof_source[k] = position;
    maps.free_row_dof[position] = k;
  }
  if (std::count(maps.free_row_dof.begin(), maps.free_row_dof.end(), -1) != 0)
    throw std::logic_error("a rank's free row whose dof another rank keeps");
  maps.contact_position.assign(contact_free_dofs_.size(), -1);
  for (std::size_t j = 0; j < contact_free_dofs_.size(); ++j) {
    if (contact_free_dofs_[j] < 0) continue;
    maps.contact_position[j] = free_position[contact_free_dofs_[j]];
    if (maps.contact_position[j] >= 0) maps.contact_rows_here.push_back(static_cast<int>(j));
  }
  const std::vector<double> here(maps.contact_rows_here.begin(), maps.contact_rows_here.end());
  std::vector<double> every;
  free_rows_->gather_parts(here.data(), static_cast<int>(here.size()), every);
  maps.contact_rows_of_every_rank.assign(every.begin(), every.end());
  // The dofs kept here are ascending (a node's three, nodes in order).
  const int* dofs_here = dof_rows_->kept_rows();
  const int* dofs_end = dofs_here + dof_rows_->kept();
  maps.contact_dof_position.assign(contact_free_dofs_.size(), -1);
  for (std::size_t j = 0; j < contact_free_dofs_.size(); ++j) {
    const int dof = 3 * contact_mesh_nodes_[j / 3] + static_cast<int>(j % 3);
    const int* at = std::lower_bound(dofs_here, dofs_end, dof);
    if (at != dofs_end && *at == dof)
      maps.contact_dof_position[j] = static_cast<int>(at - dofs_here);
  }
  std::vector<double> prescribed;
  for (const int source : maps.dof_source)
    if (source < 0) prescribed.push_back(-1 - source);
  free_rows_->gather_parts(prescribed.data(), static_cast<int>(prescribed.size()), every);
  maps.prescribed_of_every_rank.assign(every.begin(), every.end());
  check_border_rows_.emplace(
      *free_rows_, free_rows_read_by_the_check(*free_rows_, *k_ff_lower_, k_fp_, maps.dof_source),
      partition_->n_free(), exchange_over_ranks);
  const std::vector<double>& received =
      free_rows_->parts_of_every_rank(check_border_rows_->received_rows());
  check_received_rows_per_rank_.assign(received.begin(), received.end());
  rank_maps_ = std::move(maps);
}

/// The contact rows (3 a node, global components; 0 for a held component)
/// of a vector of the free dofs: whole in one process; under MPI its rows
/// kept here (free_rows_' order), and every rank's contact rows gathered,
/// 3 values a node at most (collective).
Eigen::VectorXd Analysis::contact_rows_of(Eigen::Ref<const Eigen::VectorXd> free_vector) const {
  Eigen::VectorXd contact =
      Eigen::VectorXd::Zero(static_cast<Eigen::Index>(contact_free_dofs_.size()));
  if (!rank_maps_) {
    for (Eigen::Index j = 0; j < contact.size(); ++j)
      if (const int dof = contact_free_dofs_[j]; dof >= 0) contact(j) = free_vector(dof);
    return contact;
  }
  const RankMaps& maps = *rank_maps_;
  std::vector<double> mine(maps.contact_rows_here.size()), every;
  for (std::size_t k = 0; k < mine.size(); ++k)
    mine[k] = free_vector(maps.contact_position[maps.contact_rows_here[k]]);
  free_rows_->gather_parts(mine.data(), static_cast<int>(mine.size()), every);
  for (std::size_t k = 0; k < every.size(); ++k)
    contact(maps.contact_rows_of_every_rank[k]) = every[k];
  return contact;
}

/// Load patterns and their free motions, all in one multi-column solve
/// (under MPI, one solve a pattern on the rank's rows, nothing gathered but
/// the contact rows).
void Analysis::set_up_load_patterns() {
  const int n_free = partition_->n_free();
  const int n_patterns = static_cast<int>(case_.dirichlet.size() + case_.loads.size());
  Eigen::MatrixXd pattern_loads = Eigen::MatrixXd::Zero(n_free, n_patterns);
  for (int ci = 0; ci < static_cast<int>(case_.dirichlet.size()); ++ci) {
    const DirichletCondition& bc = case_.dirichlet[ci];
    Eigen::VectorXd u_p = Eigen::VectorXd::Zero(partition_->n_prescribed());
    for (int p = 0; p < partition_->n_prescribed(); ++p)
      if (prescribed_source_[p].first == ci) u_p(p) = *bc.value[prescribed_source_[p].second];
    // Under MPI this rank's rows are complete, and only they are read.
    pattern_loads.col(ci).noalias() = -(k_fp_ * u_p);
    pattern_programs_.push_back(bc.program ? &*bc.program : &case_.program);
  }
  for (const auto& load : case_.loads) {
    const int k = static_cast<int>(pattern_programs_.size());
    for (int node : mesh_.node_set(load.set))
      for (int comp = 0; comp < 3; ++comp) {
        const int free = partition_->free_index(3 * node + comp);
        if (free >= 0) pattern_loads(free, k) += load.force_per_node(comp);
      }
    pattern_programs_.push_back(load.program ? &*load.program : &case_.program);
  }
  // The free rows kept here: all of them in one process.
  const int kept = free_rows_ ? free_rows_->kept() : n_free;
  const auto kept_row = [&](int k) { return free_rows_ ? free_rows_->kept_rows()[k] : k; };
  const auto start = std::chrono::steady_clock::now();
  pattern_contact_motions_.setZero(static_cast<Eigen::Index>(contact_free_dofs_.size()),
                                   n_patterns);
  if (!free_rows_) {
    if (n_patterns > 0) solver_->solve(pattern_loads, pattern_motions_);
    for (int p = 0; p < n_patterns; ++p)
      pattern_contact_motions_.col(p) = contact_rows_of(pattern_motions_.col(p));
  } else {
    // The same solves as the multi-column one, on the rank's rows (the
    // backend reads no other row of b): the same bits at the contact rows.
    Eigen::VectorXd b(kept), x(kept);
    for (int p = 0; p < n_patterns; ++p) {
      for (int k = 0; k < kept; ++k) b(k) = pattern_loads(kept_row(k), p);
      x.setZero();
      solver_->solve_own_rows_from_guess(b, x);
      pattern_contact_motions_.col(p) = contact_rows_of(x);
    }
  }
  timings_.load_patterns = seconds_since(start);
  // Only the nonzero entries of the kept rows are kept: adding the others to
  // an increment's load added zeros, so the load is the same, bit for bit.
  std::vector<Eigen::Triplet<double, int>> entries;
  for (int p = 0; p < n_patterns; ++p)
    for (int k = 0; k < kept; ++k)
      if (const double value = pattern_loads(kept_row(k), p); value != 0.0)
        entries.emplace_back(k, p, value);
  pattern_loads_.resize(kept, n_patterns);
  pattern_loads_.setFromTriplets(entries.begin(), entries.end());
  assert(n_patterns == 0 || free_rows_ ||
         (pattern_motions_.rows() == n_free && pattern_motions_.cols() == n_patterns));
}

void Analysis::start_at_rest() {
  const int m = contact_->n_nodes();
  u_ = Eigen::VectorXd::Zero(dof_rows_ ? dof_rows_->kept() : 3 * mesh_.n_nodes());
  r_ = Eigen::VectorXd::Zero(3 * m);
  r_previous_ = r_;
  if (sparse_operator() != nullptr) {
    reactions_motion_ = Eigen::VectorXd::Zero(3 * m);  // W 0
    reactions_motion_previous_ = reactions_motion_;
  }
  states_ = contact_->evaluate(contact_->kinematics(Eigen::VectorXd::Zero(3 * m)), r_);
  slip_sum_.assign(m, Eigen::Vector3d::Zero());
  slip_length_.assign(m, 0.0);
  dissipation_sum_.assign(m, 0.0);
}

const SparseDelassusOperator* Analysis::sparse_operator() const {
  return dynamic_cast<const SparseDelassusOperator*>(contact_->condensed_operators().get());
}

std::string_view Analysis::contact_preconditioner() const {
  const SparseDelassusOperator* sparse = sparse_operator();
  if (sparse == nullptr) return "";
  switch (sparse->preconditioner_chosen()) {
    case SparsePreconditionerChoice::stiffness_factor:
      return "stiffness_factor";
    case SparsePreconditionerChoice::own_factor:
      return "own_factor";
    case SparsePreconditionerChoice::automatic:
      break;
  }
  return "";
}

std::string Analysis::contact_preconditioner_reason() const {
  const SparseDelassusOperator* sparse = sparse_operator();
  return sparse == nullptr ? std::string() : sparse->preconditioner_reason();
}

std::vector<int> Analysis::contact_newton_step_rows_per_rank() const {
  const SparseDelassusOperator* sparse = sparse_operator();
  return sparse == nullptr ? std::vector<int>() : sparse->newton_step_rows_per_rank();
}

bool Analysis::can_share_setup_with(const Analysis& other) const {
  // Compared on what the set-up is made of, not on the case text: the same
  // mesh object, material, prescribed dofs, contact dofs and local frames.
  if (&other.mesh_ != &mesh_ || other.case_.material.young != case_.material.young ||
      other.case_.material.poisson != case_.material.poisson ||
      other.partition_->prescribed_dofs() != partition_->prescribed_dofs() ||
      other.contact_free_dofs_ != contact_free_dofs_)
    return false;
  // So do the solver's choices: a case that asks for another backend,
  // method or contact path gets them, not the donor's.
  const SolverSettings& mine = case_.solver;
  const SolverSettings& theirs = other.case_.solver;
  if (mine.contact_solver != theirs.contact_solver ||
      mine.sparse_preconditioner != theirs.sparse_preconditioner ||
      solves_with_petsc(case_) != solves_with_petsc(other.case_))
    return false;
  if (solves_with_petsc(case_)) {
    const PetscSolverSettings a = effective_petsc_settings(case_);
    const PetscSolverSettings b = effective_petsc_settings(other.case_);
    if (a.method != b.method || a.relative_tolerance != b.relative_tolerance ||
        a.max_iterations != b.max_iterations)
      return false;
  }
  for (int i = 0; i < contact_->n_nodes(); ++i)
    if (other.contact_->frame(i) != contact_->frame(i)) return false;
  return true;
}

void Analysis::prescribed_values(double position, Eigen::VectorXd& u_prescribed) const {
  u_prescribed.resize(partition_->n_prescribed());
  for (int p = 0; p < partition_->n_prescribed(); ++p) {
    const auto [ci, comp] = prescribed_source_[p];
    const DirichletCondition& bc = case_.dirichlet[ci];
    const LoadProgram& program = bc.program ? *bc.program : case_.program;
    u_prescribed(p) = *bc.value[comp] * program.factor(position);
  }
}

void Analysis::external_forces_at(double position, Eigen::VectorXd& f) const {
  f.setZero(3 * mesh_.n_nodes());
  for (const auto& load : case_.loads) {
    const LoadProgram& program = load.program ? *load.program : case_.program;
    const Eigen::Vector3d force = load.force_per_node * program.factor(position);
    for (int node : mesh_.node_set(load.set)) f.segment<3>(3 * node) += force;
  }
}

Eigen::Vector3d Analysis::contact_reaction(int i) const {
  return to_global(contact_->frame(i), r_.segment<3>(3 * i));
}

// An increment: its loads and free motion, the contact problem, the
// recovery solve, the checks on the recovered displacements, the commit.
// A step that throws leaves the converged state unchanged.
StepResult Analysis::advance_to(double position) {
  assert(std::isfinite(position));
  Increment inc;
  inc.result.position = position;
  begin_increment(inc);
  apply_loads(inc);
  solve_contact_problem(inc);
  recover_displacements(inc);
  check_equilibrium(inc);
  check_law_on_recovered(inc);
  commit_step(inc);
  return inc.result;
}

void Analysis::begin_increment(Increment& inc) const {
  StepResult& result = inc.result;
  const double position = result.position;
  result.factor = case_.program.factor(position);
  // The cycles follow the program the case names (`cycles.program`).
  result.cycle = cycle_program(case_).cycle(static_cast<int>(std::ceil(position - 1e-9)));
}

/// Load of the increment: prescribed values, the load patterns' factors,
/// plane motion; the contact kinematics q of the free motion (no contact
/// forces). The free motion is summed at the contact nodes' rows only: the
/// whole vector is made by the recovery, if it needs it.
void Analysis::apply_loads(Increment& inc) {
  const double position = inc.result.position;
  auto start = std::chrono::steady_clock::now();
  prescribed_values(position, inc.u_p);
  inc.pattern_factors.resize(pattern_programs_.size());
  for (std::size_t k = 0; k < pattern_programs_.size(); ++k)
    inc.pattern_factors[k] = pattern_programs_[k]->factor(position);
  for (int pi = 0; pi < static_cast<int>(case_.contacts.size()); ++pi) {
    const ContactPlane& cp = case_.contacts[pi];
    contact_->set_plane_motion(pi, cp.motion * motion_program_of(case_, cp).factor(position));
  }
  set_increment_laws(case_, *contact_, position);

  Eigen::VectorXd motion_at_contact;
  free_motion_at_contact(inc, motion_at_contact);
  inc.q = contact_->kinematics(motion_at_contact);
  assert(inc.q.size() == 3 * contact_->n_nodes());
  inc.result.seconds_linear = seconds_since(start);
}

/// out = sum_k factor_k K_ff^-1 b_k, the free motion, at the contact rows
/// (0 at a held component), summed in the patterns' order as free_motion()
/// sums it: the same bits as its rows there.
void Analysis::free_motion_at_contact(const Increment& inc, Eigen::VectorXd& out) const {
  out.setZero(pattern_contact_motions_.rows());
  for (int k = 0; k < static_cast<int>(inc.pattern_factors.size()); ++k) {
    const double factor = inc.pattern_factors[k];
    if (factor == 0.0) continue;
    for (Eigen::Index j = 0; j < out.size(); ++j)
      if (contact_free_dofs_[j] >= 0) out(j) += factor * pattern_contact_motions_(j, k);
  }
}

/// The same on every free dof, in one process (the motions are whole only
/// there).
void Analysis::free_motion(const Increment& inc, Eigen::VectorXd& out) const {
  assert(!free_rows_);
  out.setZero(partition_->n_free());
  for (int k = 0; k < static_cast<int>(inc.pattern_factors.size()); ++k)
    if (const double factor = inc.pattern_factors[k]; factor != 0.0)
      out += factor * pattern_motions_.col(k);
}

/// Contact: the condensed problem, from the last converged reactions.
void Analysis::solve_contact_problem(Increment& inc) {
  StepResult& result = inc.result;
  const int m = contact_->n_nodes();
  const Eigen::VectorXd& q = inc.q;
  auto start = std::chrono::steady_clock::now();
  // Starting point: the last converged reactions, extrapolated linearly along
  // the load path while it keeps its direction (r changes nearly in
  // proportion to the load within a monotone segment); this saves Newton
  // steps, and the solution does not depend on it. Where the load turns
  // back, solve_contact also weighs the bonded start (turns_back).
  inc.r = r_;
  Eigen::VectorXd& r = inc.r;
  inc.step_factor = result.factor - case_.program.factor(position_);
  const double step_factor = inc.step_factor;
  const bool motion_known = reactions_motion_.size() == 3 * m;
  Eigen::VectorXd& start_motion = contact_workspace_.known_motion.v;
  if (motion_known) start_motion = q + reactions_motion_;
  if (previous_step_factor_ != 0.0 && step_factor * previous_step_factor_ > 0.0) {
    const double ratio = std::min(step_factor / previous_step_factor_, 1.0);
    r += ratio * (r_ - r_previous_);
    if (motion_known) start_motion += ratio * (reactions_motion_ - reactions_motion_previous_);
  }
  // The sparse path: v = q + W r of this start, by linearity from the last
  // two steps' recovered motions, instead of a K_ff solve (a proportional
  // increment then costs its recovery solve alone). It carries those
  // solves' rounding, so the Newton iteration only accepts a start on it
  // (solve_semismooth_newton), and what it accepts is checked on the
  // increment's own recovery (check_law_on_recovered).
  contact_workspace_.load_turned_back = turns_back(result.position);
  if (motion_known)
    contact_workspace_.known_motion.r = r;
  else
    contact_workspace_.known_motion.r.resize(0);
  const auto work_before = contact_work();
  const ContactWorkspace::Counts dense_before = contact_workspace_.counts;
  IncrementProgress progress{result.position};
  if (increment_progress_)
    contact_workspace_.on_iteration = [&](const ContactIterationProgress& iteration) {
      ++(iteration.sweep ? progress.sweeps : progress.newton_iterations);
      progress.scaled_residual = iteration.scaled_residual;
      progress.scaled_certificate = iteration.scaled_certificate;
      progress.pass_ended = iteration.pass_ended;
      progress.seconds = seconds_since(start);
      const auto work = contact_work();
      progress.contact_linear_iterations = work.iterations - work_before.iterations;
      progress.contact_factorizations = work.factorizations - work_before.factorizations;
      progress.contact_long_restart_steps =
          work.long_restart_steps - work_before.long_restart_steps;
      increment_progress_(progress);
    };
  // The callback refers to this frame, and the start's motion and the
  // load's turn to this increment: they go with it, also on an error.
  struct ForgetCallback {
    ContactWorkspace& workspace;
    ~ForgetCallback() {
      workspace.on_iteration = nullptr;
      workspace.known_motion.r.resize(0);
      workspace.load_turned_back = false;
    }
  } forget_callback{contact_workspace_};
  const ContactSolveReport report =
      m > 0 ? solve_contact(contact_->problem(q), r, case_.solver.law_tolerance,
                            case_.solver.max_iterations, contact_workspace_)
            : ContactSolveReport{0, 0, true, 0.0, 0.0, 0.0};
  result.newton_iterations = report.newton_iterations;
  result.sweeps = report.sweeps;
  const auto work_after = contact_work();
  result.contact_factorizations = work_after.factorizations - work_before.factorizations;
  result.contact_linear_iterations = work_after.iterations - work_before.iterations;
  result.contact_preconditioner_krylov_iterations =
      work_after.preconditioner_krylov_iterations - work_before.preconditioner_krylov_iterations;
  result.contact_preconditioner_fallbacks =
      work_after.preconditioner_fallbacks - work_before.preconditioner_fallbacks;
  result.contact_long_restart_steps =
      work_after.long_restart_steps - work_before.long_restart_steps;
  result.contact_motion_corrections =
      work_after.motion_corrections - work_before.motion_corrections;
  result.contact_long_restart_refused_steps =
      work_after.long_restart_refused_steps - work_before.long_restart_refused_steps;
  result.contact_single_precision_steps =
      work_after.single_precision_steps - work_before.single_precision_steps;
  result.contact_dense_steps = contact_workspace_.counts.since(dense_before);
  if (!report.converged) throw_contact_not_converged(report, inc);
  // The reactions applied and reported: exactly in the cone, exactly zero at
  // nodes clear of the plane (changes within the tolerance just met).
  inc.motion_scale = m > 0 ? contact_->motion_scale(q) : 0.0;
  const double motion_scale = inc.motion_scale;
  if (m > 0)
    contact_->settle_reactions(
        q, r, case_.solver.law_tolerance, motion_scale,
        contact_workspace_.known_motion.of(r) ? &contact_workspace_.known_motion.v : nullptr);
  assert(r.size() == 3 * m);
  // With the settling: its gaps come from a product W r, which on the sparse
  // path is a K_ff solve unless the operator remembers it (it left a whole
  // Krylov solve of each increment out of every reported time).
  result.seconds_contact = seconds_since(start);
}

SparseNewtonStep::Work Analysis::contact_work() const {
  return contact_workspace_.sparse_step ? contact_workspace_.sparse_step->work()
                                        : SparseNewtonStep::Work{};
}

void Analysis::throw_contact_not_converged(const ContactSolveReport& report,
                                           const Increment& inc) const {
  const int m = contact_->n_nodes();
  const Eigen::VectorXd& q = inc.q;
  const Eigen::VectorXd& r = inc.r;
  std::ostringstream msg;
  msg << "contact iterations did not converge in " << report.newton_iterations
      << " Newton steps and " << report.sweeps << " Gauss-Seidel sweeps: scaled certificate "
      << report.scaled_certificate << ", scaled penetration " << report.scaled_penetration
      << " (tolerance " << case_.solver.law_tolerance << ")";
  const Eigen::VectorXd v = q + contact_->delassus_times(r);
  // The raw G of the iterate (negative where a node penetrates).
  std::vector<double> g(m);
  for (int i = 0; i < m; ++i)
    g[i] =
        law_certificate(r.segment<3>(3 * i), v(3 * i), v.segment<2>(3 * i + 1), contact_->law(i));
  std::vector<int> order(m);
  std::iota(order.begin(), order.end(), 0);
  const int n_show = std::min(m, 5);
  std::partial_sort(order.begin(), order.begin() + n_show, order.end(),
                    [&](int a, int c) { return std::abs(g[a]) > std::abs(g[c]); });
  msg << "; largest G at nodes";
  for (int j = 0; j < n_show; ++j)
    msg << ' ' << mesh_.node_tags[contact_mesh_nodes_[order[j]]] << " (G " << g[order[j]] << ")";
  throw NumericalError(msg.str());
}

/// Recovery: K_ff u_f = rhs + E r, then everything is checked on this u.
// The recovery K_ff x = b + E r when few contact nodes carry a reaction (a
// sphere or cylinder on a flat, whose candidate set is mostly open): x is the
// load's free motion (already solved, apply_loads) plus the responses
// K_ff^-1 E_i of the loaded nodes times their reactions. Each node's response
// (3 columns) is solved once, the first time it carries a reaction, and
// kept: the per-increment cost is then n_free x 3 x (loaded nodes) instead
// of a full solve, whose triangular sweeps dominated long fretting runs
// (docs/performance.md, "Fretting: 1000 cycles"). Not used when more than a
// quarter of the nodes are loaded (a punch: the full solve is as cheap, and
// its results stay the same to the last bit) or when the kept responses
// would pass kContactResponseBytes, nor under MPI (the responses are
// vectors of the whole mesh, which no rank holds there). False: recover
// with a full solve.
bool Analysis::recover_from_contact_responses(Increment& inc) {
  constexpr std::size_t kContactResponseBytes = std::size_t{256} << 20;
  if (free_rows_) return false;
  const int m = contact_->n_nodes();
  const int n_free = partition_->n_free();
  const Eigen::VectorXd& r = inc.r;
  int loaded = 0, missing = 0;
  for (int i = 0; i < m; ++i) {
    if (r.segment<3>(3 * i).isZero(0.0)) continue;
    ++loaded;
    if (contact_responses_.empty() || contact_responses_[i].size() == 0) ++missing;
  }
  const std::size_t bytes_per_node = sizeof(double) * 3 * static_cast<std::size_t>(n_free);
  if (4 * loaded > m ||
      (contact_response_nodes_ + static_cast<std::size_t>(missing)) * bytes_per_node >
          kContactResponseBytes)
    return false;
  if (contact_responses_.empty()) contact_responses_.resize(m);
  Eigen::VectorXd motion;
  free_motion(inc, motion);
  inc.x = motion;
  for (int i = 0; i < m; ++i) {
    if (r.segment<3>(3 * i).isZero(0.0)) continue;
    Eigen::MatrixXd& response = contact_responses_[i];
    if (response.size() == 0) {
      // E_i: local component a of node i -> the global force frame(a, :)
      // on its free dofs (a component held by a symmetry support has none).
      Eigen::MatrixXd e = Eigen::MatrixXd::Zero(n_free, 3);
      for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 3; ++c)
          if (contact_free_dofs_[3 * i + c] >= 0)
            e(contact_free_dofs_[3 * i + c], a) = contact_->frame(i)(a, c);
      solver_->solve(e, response);
      ++contact_response_nodes_;
    }
    inc.x.col(0).noalias() += response * r.segment<3>(3 * i);
  }
  return true;
}

void Analysis::recover_displacements(Increment& inc) {
  const int m = contact_->n_nodes();
  const Eigen::VectorXd& r = inc.r;
  const Eigen::VectorXd& u_p = inc.u_p;
  Eigen::MatrixXd& b = inc.b;
  Eigen::MatrixXd& x = inc.x;
  inc.recovery_start = std::chrono::steady_clock::now();
  inc.forces = contact_->nodal_forces(r);
  const Eigen::VectorXd& forces = inc.forces;
  if (!recover_from_contact_responses(inc)) {
    // The increment's load, sum_k factor_k b_k, then the contact forces, on
    // the free rows kept here (all of them in one process).
    b.setZero(pattern_loads_.rows(), 1);
    for (int k = 0; k < pattern_loads_.outerSize(); ++k) {
      const double factor = inc.pattern_factors[k];
      if (factor == 0.0) continue;
      for (SparseMatrix::InnerIterator it(pattern_loads_, k); it; ++it)
        b(it.row(), 0) += factor * it.value();
    }
    for (int j = 0; j < 3 * m; ++j) {
      const int row = rank_maps_ ? rank_maps_->contact_position[j] : contact_free_dofs_[j];
      if (row >= 0) b(row, 0) += forces(j);
    }
    if (rank_maps_) {
      // Each rank its rows: nothing of the whole mesh is gathered.
      x.resize(b.rows(), 1);
      x.col(0) = recovery_guess(inc);
      solver_->solve_own_rows_from_guess(b.col(0), x.col(0));
    } else if (solver_->is_iterative()) {
      x.resize(b.rows(), 1);
      x.col(0) = recovery_guess(inc);
      solver_->solve_from_guess(b.col(0), x.col(0));
    } else {
      solver_->solve(b, x);
    }
  }
  Eigen::VectorXd& u = inc.u;
  if (rank_maps_) {
    const std::vector<int>& source = rank_maps_->dof_source;
    u.resize(static_cast<Eigen::Index>(source.size()));
    for (std::size_t k = 0; k < source.size(); ++k)
      u(static_cast<Eigen::Index>(k)) = source[k] >= 0 ? x(source[k], 0) : u_p(-1 - source[k]);
  } else {
    u.resize(3 * mesh_.n_nodes());
    for (int i = 0; i < partition_->n_free(); ++i) u(partition_->free_dofs()[i]) = x(i, 0);
    for (int p = 0; p < partition_->n_prescribed(); ++p)
      u(partition_->prescribed_dofs()[p]) = u_p(p);
  }
  // Every rank fails alike (a collective would otherwise wait for one).
  bool finite = u.allFinite();
  if (rank_maps_) finite = free_rows_->sum(finite ? 0.0 : 1.0) == 0.0;
  if (!finite) throw NumericalError("non-finite displacements");
}

// The start of an iterative backend's recovery solve: the last converged
// free displacements, extrapolated as the starting reactions are
// (solve_contact_problem) while the load keeps its direction. In a
// proportional increment that is the solution to round-off, and the solve
// stops after a few iterations instead of starting from zero; the
// solution accepted meets the same residual test either way. Under MPI
// this rank's rows only (free_rows_' kept rows): the backend reads no
// other row of a guess.
Eigen::VectorXd Analysis::recovery_guess(const Increment& inc) const {
  Eigen::VectorXd guess;
  if (rank_maps_) {
    guess.resize(static_cast<Eigen::Index>(rank_maps_->free_row_dof.size()));
    for (Eigen::Index i = 0; i < guess.size(); ++i) guess(i) = u_(rank_maps_->free_row_dof[i]);
  } else {
    guess = u_(partition_->free_dofs());
  }
  if (previous_step_factor_ != 0.0 && inc.step_factor * previous_step_factor_ > 0.0 &&
      free_displacement_previous_.size() == guess.size()) {
    const double ratio = std::min(inc.step_factor / previous_step_factor_, 1.0);
    guess += ratio * (guess - free_displacement_previous_);
  }
  return guess;
}

/// The free displacements of the last converged state, for the next
/// recovery's start (recovery_guess): this rank's rows under MPI.
void Analysis::keep_free_displacement() {
  if (!rank_maps_) {
    free_displacement_previous_ = u_(partition_->free_dofs());
    return;
  }
  const std::vector<int>& dof = rank_maps_->free_row_dof;
  free_displacement_previous_.resize(static_cast<Eigen::Index>(dof.size()));
  for (Eigen::Index i = 0; i < free_displacement_previous_.size(); ++i)
    free_displacement_previous_(i) = u_(dof[i]);
}

Eigen::VectorXd Analysis::displacement_on_first_rank() const {
  if (!dof_rows_) return u_;
  Eigen::VectorXd whole;
  dof_rows_->gather_on_first_rank(u_, whole, exchange_over_ranks);
  return whole;
}

long Analysis::stiffness_entries_held() const {
  long entries = 0;
  for (const SparseMatrix* k : {&k_fp_, &k_pp_, k_ff_lower_.get()})
    if (k != nullptr) entries += static_cast<long>(k->data().allocatedSize());
  return entries;
}

/// K u on every dof, from the blocks the run keeps (K_ff's lower triangle,
/// K_fp, K_pp): [K_ff u_f + K_fp u_p; K_fp^T u_f + K_pp u_p], in one
/// process (under MPI the blocks are complete on the rank's rows only:
/// check_equilibrium_by_rank).
Eigen::VectorXd Analysis::stiffness_times(const Eigen::VectorXd& u) const {
  assert(!dof_rows_);
  const std::vector<int>& free = partition_->free_dofs();
  const std::vector<int>& prescribed = partition_->prescribed_dofs();
  const Eigen::VectorXd u_f = u(free);
  const Eigen::VectorXd u_p = u(prescribed);
  Eigen::VectorXd k_u(u.size());
  Eigen::VectorXd part = k_ff_lower_->selfadjointView<Eigen::Lower>() * u_f;
  part.noalias() += k_fp_ * u_p;
  k_u(free) = part;
  part = k_fp_.transpose() * u_f;
  part.noalias() += k_pp_ * u_p;
  k_u(prescribed) = part;
  return k_u;
}

// Equilibrium (physics.md 3.3): K u - f_ext - C^T r vanishes on the free dofs;
// on the prescribed ones it is the reaction of the supports. Its reference
// force is the largest of |f_ext|, |C^T r| and |K| |u| (max norms; |K| the
// largest row sum of |K_ij|): a bound of the terms whose sum is K u, hence
// of its rounding. Not |K u|: a rigid motion with no contact force (a gap
// at the start, a plane moving away) has K u ~ round-off, and the residual
// divided by it was 1. The reference is 0 only if u, f_ext and r all are,
// and then the residual is exactly 0 too (docs/case-file.md,
// solver.force_tolerance).
void Analysis::check_equilibrium(Increment& inc) const {
  if (rank_maps_) {
    check_equilibrium_by_rank(inc);
    return;
  }
  StepResult& result = inc.result;
  const int m = contact_->n_nodes();
  const Eigen::VectorXd& u = inc.u;
  Eigen::VectorXd f_ext;
  external_forces_at(result.position, f_ext);
  const Eigen::VectorXd& forces = inc.forces;
  Eigen::VectorXd residual = stiffness_times(u);
  const double reference =
      std::max({f_ext.lpNorm<Eigen::Infinity>(), forces.lpNorm<Eigen::Infinity>(),
                stiffness_norm_ * u.lpNorm<Eigen::Infinity>()});
  residual -= f_ext;
  for (int j = 0; j < m; ++j)
    residual.segment<3>(3 * contact_mesh_nodes_[j]) -= forces.segment<3>(3 * j);
  double max_free = 0.0;
  for (int dof : partition_->free_dofs()) max_free = std::max(max_free, std::abs(residual(dof)));
  accept_equilibrium(result, max_free, reference, [&](int dof) { return residual(dof); });
}

/// The same under MPI, on each rank's dofs: K u of the rank's rows, from
/// the free displacements of its rows and those it receives from the ranks
/// that keep them (check_border_rows_; a vector of the whole mesh set there
/// alone, the only one beside K u's free rows and the external forces), the
/// largest free residual and |u| over the ranks, and the prescribed dofs'
/// residuals (the supports' reactions) gathered to every rank. The same
/// bits as the check on the whole vectors: each row's terms are computed in
/// the same order, and the reactions summed in the same order.
void Analysis::check_equilibrium_by_rank(Increment& inc) const {
  const RankMaps& maps = *rank_maps_;
  StepResult& result = inc.result;
  const Eigen::VectorXd& u_p = inc.u_p;
  const Eigen::VectorXd& forces = inc.forces;
  Eigen::VectorXd f_ext;
  external_forces_at(result.position, f_ext);
  Eigen::VectorXd k_u_free, k_u_prescribed;
  {
    // The free displacements that K u on the rank's dofs reads: its own
    // rows and those it receives from their ranks; the others stay 0 and
    // reach only other ranks' rows of K u.
    Eigen::VectorXd u_f = Eigen::VectorXd::Zero(partition_->n_free());
    const int* free_here = free_rows_->kept_rows();
    for (int k = 0; k < free_rows_->kept(); ++k) u_f(free_here[k]) = inc.x(k, 0);
    check_border_rows_->receive(inc.x.col(0), u_f);
    k_u_free.resize(u_f.size());  // made in place: no temporary of the whole mesh
    k_u_free.noalias() = k_ff_lower_->selfadjointView<Eigen::Lower>() * u_f;
    k_u_free.noalias() += k_fp_ * u_p;
    k_u_prescribed = k_fp_.transpose() * u_f;
    k_u_prescribed.noalias() += k_pp_ * u_p;
  }
  // The rank's rows of K u - f_ext - C^T r (the rows kept here of the
  // dofs; complete in this rank's blocks).
  const int* dofs = dof_rows_->kept_rows();
  Eigen::VectorXd residual(dof_rows_->kept());
  for (Eigen::Index k = 0; k < residual.size(); ++k) {
    const int dof = dofs[k];
    const int source = maps.dof_source[k];
    const double k_u =
        source >= 0 ? k_u_free(partition_->free_index(dof)) : k_u_prescribed(-1 - source);
    residual(k) = k_u - f_ext(dof);
  }
  for (std::size_t j = 0; j < maps.contact_dof_position.size(); ++j)
    if (const int k = maps.contact_dof_position[j]; k >= 0) residual(k) -= forces(j);
  double max_free = 0.0;
  for (Eigen::Index k = 0; k < residual.size(); ++k)
    if (maps.dof_source[k] >= 0) max_free = std::max(max_free, std::abs(residual(k)));
  double least = 0.0, largest_u = 0.0;
  parallel_min_max(max_free, least, max_free);
  parallel_min_max(inc.u.lpNorm<Eigen::Infinity>(), least, largest_u);
  const double reference =
      std::max({f_ext.lpNorm<Eigen::Infinity>(), forces.lpNorm<Eigen::Infinity>(),
                stiffness_norm_ * largest_u});
  std::vector<double> mine, every;
  for (Eigen::Index k = 0; k < residual.size(); ++k)
    if (maps.dof_source[k] < 0) mine.push_back(residual(k));
  free_rows_->gather_parts(mine.data(), static_cast<int>(mine.size()), every);
  Eigen::VectorXd prescribed_residual(partition_->n_prescribed());
  for (std::size_t k = 0; k < every.size(); ++k)
    prescribed_residual(maps.prescribed_of_every_rank[k]) = every[k];
  accept_equilibrium(result, max_free, reference, [&](int dof) {
    return prescribed_residual(partition_->prescribed_index(dof));
  });
}

/// The equilibrium residual against solver.force_tolerance, then the
/// supports' reactions: each condition's prescribed dofs' residuals, summed
/// in their order.
void Analysis::accept_equilibrium(StepResult& result, double max_free, double reference,
                                  const std::function<double(int dof)>& prescribed_residual) const {
  result.equilibrium_residual = reference > 0.0 ? max_free / reference : max_free;  // both 0
  if (!(result.equilibrium_residual <= case_.solver.force_tolerance))
    throw NumericalError("equilibrium residual " + std::to_string(result.equilibrium_residual) +
                         " above force_tolerance after the recovery solve");
  result.dirichlet_reactions.assign(case_.dirichlet.size(), Eigen::Vector3d::Zero());
  for (int ci = 0; ci < static_cast<int>(case_.dirichlet.size()); ++ci)
    for (int dof : condition_dofs_[ci])
      result.dirichlet_reactions[ci](dof % 3) += prescribed_residual(dof);
}

/// The law certificate on the recovered displacements (physics.md 3.1), then the
/// per-node states on them.
void Analysis::check_law_on_recovered(Increment& inc) {
  StepResult& result = inc.result;
  const int m = contact_->n_nodes();
  const Eigen::VectorXd& r = inc.r;
  const double motion_scale = inc.motion_scale;
  inc.u_contact = contact_rows_of(inc.x.col(0));
  const Eigen::VectorXd& u_contact = inc.u_contact;
  const Eigen::VectorXd v = contact_->kinematics(u_contact);
  ContactSolveReport check;
  if (m > 0) contact_->measure(v, r, motion_scale, check);
  result.scaled_certificate = check.scaled_certificate;
  result.scaled_penetration = check.scaled_penetration;
  const double accept = certificate_acceptance();
  if (!(check.scaled_certificate <= accept && check.scaled_penetration <= accept)) {
    std::ostringstream msg;
    msg << "law certificate on the recovered displacements " << check.scaled_certificate
        << " (penetration " << check.scaled_penetration << ") exceeds " << accept << " ("
        << recovered_certificate_factor
        << " x law_tolerance): the condensed operator is inaccurate";
    // The law's scaling multiplies a K_ff solve's error by about mu (mu =
    // 1e4 took 2e-8 at PETSc's default 1e-12, mu = 1e6 passed at 1e-15).
    if (solver_->is_iterative())
      msg << " (with an iterative linear solver, a smaller solver.petsc.relative_tolerance, "
             "down to 1e-15, makes it more accurate; high friction needs it)";
    throw NumericalError(msg.str());
  }
  inc.states = contact_->evaluate(v, r);
  record_reactions_motion(inc, v);
  result.seconds_linear += seconds_since(inc.recovery_start);
}

void Analysis::record_reactions_motion(Increment& inc, const Eigen::VectorXd& v) const {
  const SparseDelassusOperator* sparse = sparse_operator();
  if (sparse == nullptr) return;
  // v and q differ by the kinematics' linear part applied to K_ff^-1 E r
  // (the same u_prev, plane motion and gap offsets in both); a held
  // component has no displacement there, and W adds r / k for it.
  inc.reactions_motion = v - inc.q;
  const std::vector<double>& springs = sparse->held_springs();
  for (Eigen::Index j = 0; j < inc.reactions_motion.size(); ++j)
    if (springs[j] > 0.0) inc.reactions_motion(j) += inc.r(j) / springs[j];
}

std::vector<double> Analysis::motion_steps(double position) const {
  std::vector<double> steps;
  steps.reserve(case_.contacts.size());
  for (const ContactPlane& cp : case_.contacts) {
    const LoadProgram& program = motion_program_of(case_, cp);
    steps.push_back(cp.motion.isZero(0.0) ? 0.0
                                          : program.factor(position) - program.factor(position_));
  }
  return steps;
}

bool Analysis::turns_back(double position) const {
  const double step_factor = case_.program.factor(position) - case_.program.factor(position_);
  if (step_factor * last_load_step_ < 0.0) return true;
  if (last_motion_steps_.size() != case_.contacts.size()) return false;
  const std::vector<double> steps = motion_steps(position);
  for (std::size_t k = 0; k < steps.size(); ++k)
    if (steps[k] * last_motion_steps_[k] < 0.0) return true;
  return false;
}

void Analysis::commit_step(Increment& inc) {
  StepResult& result = inc.result;
  const int m = contact_->n_nodes();
  previous_step_factor_ = inc.step_factor;
  if (inc.step_factor != 0.0) last_load_step_ = inc.step_factor;
  const std::vector<double> motion_steps_now = motion_steps(result.position);
  last_motion_steps_.resize(motion_steps_now.size(), 0.0);
  for (std::size_t k = 0; k < motion_steps_now.size(); ++k)
    if (motion_steps_now[k] != 0.0) last_motion_steps_[k] = motion_steps_now[k];
  r_previous_ = r_;
  reactions_motion_previous_ = std::move(reactions_motion_);
  reactions_motion_ = std::move(inc.reactions_motion);
  position_ = result.position;
  if (solver_->is_iterative()) keep_free_displacement();
  u_ = std::move(inc.u);
  r_ = std::move(inc.r);
  states_ = std::move(inc.states);
  contact_->accept(inc.u_contact);
  for (int j = 0; j < m; ++j) {
    const ContactNodeState& s = states_[j];
    slip_sum_[j] += tangential_to_global(contact_->frame(j), s.slip);
    slip_length_[j] += s.slip.norm();
    dissipation_sum_[j] += s.dissipation;
    result.dissipation += s.dissipation;
    result.contact_force += to_global(contact_->frame(j), s.r);
    result.contact_normal_force += s.r(0);
    result.contact_tangential_force += s.r.tail<2>();
    (s.state == ContactState::open
         ? result.n_open
         : (s.state == ContactState::stick ? result.n_stick : result.n_slip))++;
  }
  dissipation_total_ += result.dissipation;
  result.accumulated_dissipation = dissipation_total_;
  if (wear_) wear_step(result);
  assert(u_.size() == (dof_rows_ ? dof_rows_->kept() : 3 * mesh_.n_nodes()) && r_.size() == 3 * m &&
         static_cast<int>(states_.size()) == m);
}

}  // namespace bipo
