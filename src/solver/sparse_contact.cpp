// The sparse Delassus operator and its Newton step solver (issue 13). See
// sparse_contact.hpp and docs/architecture.md, "The sparse contact path".
#include "solver/sparse_contact.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "core/errors.hpp"
#include "parallel/parallel_runtime.hpp"
#include "solver/contact_path.hpp"
#include "solver/gmres.hpp"

namespace bipo {

namespace {

/// Index in `lower`'s value array of entry (row, col), row >= col; -1 if it
/// is not stored.
int position_in_lower(const SparseMatrix& lower, int row, int col) {
  const int* begin = lower.innerIndexPtr() + lower.outerIndexPtr()[col];
  const int* end = lower.innerIndexPtr() + lower.outerIndexPtr()[col + 1];
  const int* found = std::lower_bound(begin, end, row);
  return found != end && *found == row ? static_cast<int>(found - lower.innerIndexPtr()) : -1;
}

// Keys of remembered products (SparseDelassusOperator::add_product): one
// per operator and factor, never reused.
std::atomic<std::uint64_t> next_product_key{1};

/// The last exact product W r of this thread: the key of the operator and
/// factor it came from, r, and each node's part of K_ff^-1 E r (the held
/// springs' part is added again at each use, in the order of a fresh
/// product, so that a remembered product adds to v bit for bit what a solve
/// would).
struct RememberedProduct {
  std::uint64_t key = 0;
  Eigen::VectorXd r, local_motion;
  // With an iterative backend: the last exact product's K_ff solution (the
  // whole free rows, or this rank's under MPI) and the key it was made
  // with, the start of the next exact product's solve.
  std::uint64_t solution_key = 0;
  Eigen::VectorXd solution;
};

double largest_eigenvalue(const Eigen::Matrix3d& a) {
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es;
  es.computeDirect(0.5 * (a + a.transpose()), Eigen::EigenvaluesOnly);
  return es.eigenvalues().maxCoeff();
}

}  // namespace

// ---------------------------------------------------------------------------
// The operator

std::shared_ptr<const SparseDelassusOperator> SparseDelassusOperator::create(
    std::shared_ptr<const SparseMatrix> k_lower, std::shared_ptr<LinearSolver> k_factor,
    ContactDofs dofs, SparseOperatorChoices choices) {
  std::shared_ptr<SparseDelassusOperator> op(
      new SparseDelassusOperator(std::move(k_lower), std::move(k_factor), std::move(dofs)));
  op->preconditioner_ = choices.preconditioner;
  op->available_memory_ = std::move(choices.available_memory);
  op->stiffness_lower_entries_ = choices.stiffness_lower_entries >= 0.0
                                     ? choices.stiffness_lower_entries
                                     : static_cast<double>(op->k_lower_->nonZeros());
  op->estimate_diagonal_blocks(choices.progress);
  return op;
}

Eigen::Vector3d ContactDofs::local_part(Eigen::Ref<const Eigen::VectorXd> free_vector,
                                        int i) const {
  Eigen::Vector3d global;
  for (int c = 0; c < 3; ++c) {
    const int dof = free_dofs[3 * i + c];
    global(c) = dof >= 0 ? free_vector(dof) : 0.0;
  }
  return frames[i] * global;
}

ContactNodesByRank::ContactNodesByRank(const ContactDofs& dofs, const std::vector<int>& held_slot,
                                       KrylovRows* rows)
    : dofs_(dofs), free_position_(dofs.free_dofs) {
  const int m = dofs.n_nodes();
  held_position_ =
      held_slot.empty() ? std::vector<int>(static_cast<std::size_t>(3 * m), -1) : held_slot;
  if (rows == nullptr) {
    kept_nodes_.resize(static_cast<std::size_t>(m));
    std::iota(kept_nodes_.begin(), kept_nodes_.end(), 0);
    return;
  }
  const std::vector<int> position = rows->position_of_each_row();
  const auto at = [&position](int row) { return row >= 0 ? position[row] : -1; };
  for (int i = 0; i < m; ++i) {
    for (int c = 0; c < 3; ++c) {
      free_position_[3 * i + c] = at(dofs.free_dofs[3 * i + c]);
      held_position_[3 * i + c] = at(held_position_[3 * i + c]);
    }
    if (at(dofs.first_free_dof(i)) >= 0) kept_nodes_.push_back(i);
  }
  // Every rank's nodes, rank by rank: the rows of the nodes' vectors.
  const std::vector<double> nodes_here(kept_nodes_.begin(), kept_nodes_.end());
  std::vector<double> every;
  std::vector<int> node_counts;
  rows->gather_parts(nodes_here.data(), static_cast<int>(nodes_here.size()), every, &node_counts);
  LinearSolver::RowShare nodes;
  for (const double i : every)
    for (int c = 0; c < 3; ++c) nodes.rows.push_back(3 * static_cast<int>(i) + c);
  for (const int count : node_counts) nodes.counts.push_back(3 * count);
  node_rows_.emplace(nodes, std::vector<int>(), rows->rank(),
                     [rows](const double* mine, int count, double* all,
                            const std::vector<int>& counts, const std::vector<int>& displacements) {
                       rows->all_gather(mine, count, all, counts, displacements);
                     });
}

Eigen::Vector3d ContactNodesByRank::local_part(Eigen::Ref<const Eigen::VectorXd> x, int i) const {
  Eigen::Vector3d global;
  for (int c = 0; c < 3; ++c) {
    const int at = free_position_[3 * i + c];
    global(c) = at >= 0 ? x(at) : 0.0;
  }
  return dofs_.frames[i] * global;
}

void ContactNodesByRank::gather(const Eigen::VectorXd& kept, Eigen::VectorXd& all) {
  if (!node_rows_) throw std::logic_error("ContactNodesByRank::gather on one process");
  node_rows_->gather(kept, all);
}

double SparseDelassusOperator::available_memory() const {
  return available_memory_ ? available_memory_() : available_memory_bytes();
}

int long_restart_that_fits(int wanted, int short_restart, double unknowns, double available_bytes) {
  const double per_unit = (8.0 + 4.0) * unknowns;  // a basis vector and a single-precision z
  const double units = std::floor((0.5 * available_bytes - 8.0 * unknowns) / per_unit);
  if (!(units > short_restart)) return 0;  // also a memory figure that is not a number
  return units >= wanted ? wanted : static_cast<int>(units);
}

double second_factor_bytes(double factor_nonzeros, double stiffness_nonzeros) {
  return (1.1 * 8.0 - 4.0) * factor_nonzeros + 12.0 * stiffness_nonzeros;
}

bool second_factor_fits(double factor_nonzeros, double stiffness_nonzeros, double available_bytes) {
  return second_factor_bytes(factor_nonzeros, stiffness_nonzeros) <= 0.5 * available_bytes;
}

double second_multigrid_bytes_per_process(double stiffness_lower_nonzeros, int processes) {
  // Its matrix and hierarchy: three copies of the full matrix at most, at
  // 12 bytes per nonzero, divided among the processes like K_ff's own.
  return 3.0 * 12.0 * (2.0 * stiffness_lower_nonzeros) / std::max(1, processes);
}

SparsePreconditionerChoice SparseDelassusOperator::preconditioner() const {
  std::call_once(preconditioner_decided_, [this] {
    using enum SparsePreconditionerChoice;
    if (preconditioner_ != automatic) {
      preconditioner_reason_ = std::string("solver.sparse_preconditioner: ") +
                               (preconditioner_ == own_factor ? "own_factor" : "stiffness_factor");
      return;
    }
    const double available = available_memory();
    const auto weighed = [&](SparsePreconditionerChoice chosen, const std::string& what,
                             double bytes, const std::string& per) {
      preconditioner_ = chosen;
      preconditioner_reason_ = "solver.sparse_preconditioner: auto; " + what + " takes about " +
                               memory_text(bytes) + per + ", " +
                               (chosen == stiffness_factor ? "within" : "more than") +
                               " half of the " + memory_text(available) + " available" + per;
    };
    // With PETSc's Krylov methods the second "factorization" is a second
    // multigrid set-up, of about K_ff's own size, and it saves most of
    // own_factor's solves (docs/performance.md, "The second preconditioner
    // under PETSc"). Each rank holds its share of it, and the memory given
    // is already a rank's share: a whole hierarchy counted against one
    // rank's share sent two ranks at N = 64 to own_factor, whose first
    // Newton step did not end in two hours.
    if (k_factor_->is_iterative()) {
      const int processes = k_factor_->processes();
      const double second = second_multigrid_bytes_per_process(stiffness_lower_entries_, processes);
      weighed(second <= 0.5 * available ? stiffness_factor : own_factor,
              "a second multigrid set-up on P", second, processes > 1 ? " a rank" : "");
      return;
    }
    // A direct distributed one (MUMPS) would be a second factor on the ranks.
    if (!k_factor_->is_serial_factorization()) {
      preconditioner_ = own_factor;
      preconditioner_reason_ =
          "solver.sparse_preconditioner: auto; a direct distributed solver would factorize P a "
          "second time";
      return;
    }
    const double factor = k_factor_->factor_nonzeros();
    const double stiffness = stiffness_lower_entries_;
    weighed(second_factor_fits(factor, stiffness, available) ? stiffness_factor : own_factor,
            "a second factorization of P", second_factor_bytes(factor, stiffness), "");
  });
  return preconditioner_;
}

std::vector<int> SparseDelassusOperator::newton_step_rows_per_rank() const {
  if (preconditioner_ != SparsePreconditionerChoice::stiffness_factor) return {};
  const std::optional<KrylovRows> rows = krylov_rows_of(stiffness_solver(), held_slots_beside());
  return rows ? rows->counts() : std::vector<int>();
}

std::vector<int> SparseDelassusOperator::newton_step_received_rows_per_rank() const {
  if (preconditioner_ != SparsePreconditionerChoice::stiffness_factor) return {};
  std::optional<KrylovRows> rows = krylov_rows_of(stiffness_solver(), held_slots_beside());
  if (!rows) return {};
  std::size_t received = 0;
  for (const std::vector<int>& from_rank : rows_needed_from_each_rank(*rows, *k_lower_))
    received += from_rank.size();
  const std::vector<double>& every = rows->parts_of_every_rank(static_cast<double>(received));
  return {every.begin(), every.end()};
}

std::vector<int> SparseDelassusOperator::held_slots_beside() const {
  std::vector<int> beside;
  for (std::size_t j = 0; j < held_springs_.size(); ++j)
    if (held_springs_[j] > 0.0) beside.push_back(dofs_.first_free_dof(static_cast<int>(j / 3)));
  return beside;
}

const std::string& SparseDelassusOperator::preconditioner_reason() const {
  static_cast<void>(preconditioner());
  return preconditioner_reason_;
}

SparseDelassusOperator::SparseDelassusOperator(std::shared_ptr<const SparseMatrix> k_lower,
                                               std::shared_ptr<LinearSolver> k_factor,
                                               ContactDofs dofs)
    : k_lower_(std::move(k_lower)),
      k_factor_(std::move(k_factor)),
      dofs_(std::move(dofs)),
      product_key_(next_product_key++) {
  const int m = dofs_.n_nodes();
  held_springs_.assign(static_cast<std::size_t>(3 * m), 0.0);
  for (int i = 0; i < m; ++i) {
    double sum = 0.0;
    int count = 0;
    for (int c = 0; c < 3; ++c)
      if (const int dof = dofs_.free_dofs[3 * i + c]; dof >= 0) {
        sum += k_lower_->coeff(dof, dof);
        ++count;
      }
    for (int c = 0; c < 3; ++c) {
      if (dofs_.free_dofs[3 * i + c] >= 0) continue;
      // The held global component c is the local component k along it.
      int k = 0;
      dofs_.frames[i].col(c).cwiseAbs().maxCoeff(&k);
      held_springs_[3 * i + k] = sum / count;  // count >= 1: the normal is never held
    }
  }
}

void SparseDelassusOperator::add_product(const Eigen::VectorXd& r, Eigen::VectorXd& v) const {
  add_inexact_product(r, v, 0.0);
}

void SparseDelassusOperator::add_inexact_product(const Eigen::VectorXd& r, Eigen::VectorXd& v,
                                                 double relative_tolerance) const {
  const int m = dofs_.n_nodes();
  // The operator is shared by analyses running at once: the force vector and
  // the remembered product are each thread's own, sized once (no allocation
  // per application).
  thread_local RememberedProduct remembered;
  const bool exact = !(relative_tolerance > 0.0);
  const std::uint64_t key = product_key_.load();
  if (exact) {
    bool same = remembered.key == key && remembered.r.size() == r.size() && remembered.r == r;
    // Under MPI every rank must take the same branch (the solve is a
    // collective); their r are the same gathered values, but a rank that
    // disagreed would hang the others.
    if (parallel_size() > 1) {
      double least = 0.0, most = 0.0;
      parallel_min_max(same ? 1.0 : 0.0, least, most);
      same = least > 0.0;
    }
    if (same) {
      for (int i = 0; i < m; ++i) {
        v.segment<3>(3 * i) += remembered.local_motion.segment<3>(3 * i);
        for (int k = 0; k < 3; ++k)
          if (held_springs_[3 * i + k] > 0.0)
            v(3 * i + k) += r(3 * i + k) / held_springs_[3 * i + k];
      }
      return;
    }
    remembered.key = 0;  // until the product below is complete
    remembered.local_motion.resize(3 * m);
  }
  thread_local Eigen::VectorXd motion, load;
  ProductRows* own = product_rows();
  // An exact product under an iterative backend starts from the last exact
  // one's solution: in the contact Newton iteration r moves by the step,
  // and the residual of that start is E F^T dr, not E F^T r. Every rank
  // takes the same branch (the solve's start is a collective's).
  const Eigen::Index solved_rows = own != nullptr ? own->rows.share_kept() : n_free();
  bool from_last = exact && k_factor_->is_iterative() && remembered.solution_key == key &&
                   remembered.solution.size() == solved_rows;
  if (exact && k_factor_->is_iterative() && parallel_size() > 1) {
    double least = 0.0, most = 0.0;
    parallel_min_max(from_last ? 1.0 : 0.0, least, most);
    from_last = least > 0.0;
  }
  if (own != nullptr) {
    solve_product_on_own_rows(*own, r, relative_tolerance,
                              from_last ? &remembered.solution : nullptr);
  } else {
    motion.setZero(n_free());
    for (int i = 0; i < m; ++i) {
      const Eigen::Vector3d global = dofs_.frames[i].transpose() * r.segment<3>(3 * i);
      for (int c = 0; c < 3; ++c)
        if (const int dof = dofs_.free_dofs[3 * i + c]; dof >= 0) motion(dof) += global(c);
    }
    if (from_last) {
      load = motion;
      motion = remembered.solution;
      k_factor_->solve_from_guess(load, motion);
    } else {
      k_factor_->solve_in_place_to_tolerance(motion, relative_tolerance);
    }
  }
  if (exact && k_factor_->is_iterative()) {
    remembered.solution = own != nullptr ? own->motion : motion;
    remembered.solution_key = key;
  }
  for (int i = 0; i < m; ++i) {
    const Eigen::Vector3d local = own != nullptr ? Eigen::Vector3d(own->local.segment<3>(3 * i))
                                                 : dofs_.local_part(motion, i);
    v.segment<3>(3 * i) += local;
    if (exact) remembered.local_motion.segment<3>(3 * i) = local;
    for (int k = 0; k < 3; ++k)
      if (held_springs_[3 * i + k] > 0.0) v(3 * i + k) += r(3 * i + k) / held_springs_[3 * i + k];
  }
  if (exact) {
    remembered.r = r;
    remembered.key = key;
  }
}

SparseDelassusOperator::ProductRows* SparseDelassusOperator::product_rows() const {
  std::call_once(product_rows_made_, [this] {
    std::optional<KrylovRows> rows = krylov_rows_of(*k_factor_, {});
    if (!rows) return;
    product_rows_ = std::make_unique<ProductRows>(ProductRows{std::move(*rows), {}, {}, {}, {}});
    product_rows_->nodes.emplace(dofs_, std::vector<int>(), &product_rows_->rows);
  });
  return product_rows_.get();
}

void SparseDelassusOperator::solve_product_on_own_rows(ProductRows& own,
                                                       Eigen::Ref<const Eigen::VectorXd> r,
                                                       double relative_tolerance,
                                                       const Eigen::VectorXd* start) const {
  const ContactNodesByRank& nodes = *own.nodes;
  const std::vector<int>& kept = nodes.kept_nodes();
  own.motion.setZero(own.rows.share_kept());
  for (const int i : kept) {
    const Eigen::Vector3d global = dofs_.frames[i].transpose() * r.segment<3>(3 * i);
    for (int c = 0; c < 3; ++c)
      if (const int at = nodes.free_positions()[3 * i + c]; at >= 0) own.motion(at) += global(c);
  }
  if (start != nullptr) {
    thread_local Eigen::VectorXd load;
    load = own.motion;
    own.motion = *start;
    k_factor_->solve_own_rows_from_guess(load, own.motion);
  } else {
    k_factor_->solve_own_rows_to_tolerance(own.motion, relative_tolerance);
  }
  own.kept_local.resize(3 * static_cast<Eigen::Index>(kept.size()));
  for (std::size_t k = 0; k < kept.size(); ++k)
    own.kept_local.segment<3>(3 * static_cast<Eigen::Index>(k)) =
        nodes.local_part(own.motion, kept[k]);
  own.nodes->gather(own.kept_local, own.local);
}

void SparseDelassusOperator::product_columns(const Eigen::MatrixXd& r, Eigen::MatrixXd& v,
                                             double relative_tolerance) const {
  const int m = dofs_.n_nodes();
  const auto n_columns = static_cast<int>(r.cols());
  v.setZero(3 * m, n_columns);
  if (ProductRows* own = product_rows(); own != nullptr && k_factor_->is_iterative()) {
    for (int column = 0; column < n_columns; ++column) {
      solve_product_on_own_rows(*own, r.col(column), relative_tolerance);
      for (int i = 0; i < m; ++i) {
        v.block<3, 1>(3 * i, column) = own->local.segment<3>(3 * i);
        for (int k = 0; k < 3; ++k)
          if (held_springs_[3 * i + k] > 0.0)
            v(3 * i + k, column) += r(3 * i + k, column) / held_springs_[3 * i + k];
      }
    }
    return;
  }
  Eigen::MatrixXd forces, motion;
  // A node's rows of one block of columns: on the stack, not the heap.
  using NodeRows =
      Eigen::Matrix<double, 3, Eigen::Dynamic, Eigen::ColMajor, 3, 3 * sample_nodes_per_solve>;
  for (int first = 0; first < n_columns; first += 3 * sample_nodes_per_solve) {
    const int width = std::min(3 * sample_nodes_per_solve, n_columns - first);
    forces.setZero(n_free(), width);
    for (int i = 0; i < m; ++i) {
      const NodeRows global = dofs_.frames[i].transpose() * r.block(3 * i, first, 3, width);
      for (int c = 0; c < 3; ++c)
        if (const int dof = dofs_.free_dofs[3 * i + c]; dof >= 0) forces.row(dof) += global.row(c);
    }
    k_factor_->solve_to_tolerance(forces, motion, relative_tolerance);
    for (int i = 0; i < m; ++i) {
      NodeRows global = NodeRows::Zero(3, width);
      for (int c = 0; c < 3; ++c)
        if (const int dof = dofs_.free_dofs[3 * i + c]; dof >= 0) global.row(c) = motion.row(dof);
      v.block(3 * i, first, 3, width) = dofs_.frames[i] * global;
      for (int k = 0; k < 3; ++k)
        if (held_springs_[3 * i + k] > 0.0)
          v.block(3 * i + k, first, 1, width) +=
              r.block(3 * i + k, first, 1, width) / held_springs_[3 * i + k];
    }
  }
}

Eigen::Matrix3d SparseDelassusOperator::local_stiffness_block(int i) const {
  Eigen::Matrix3d global = Eigen::Matrix3d::Zero();
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      const int da = dofs_.free_dofs[3 * i + a], db = dofs_.free_dofs[3 * i + b];
      if (da >= 0 && db >= 0) global(a, b) = k_lower_->coeff(std::max(da, db), std::min(da, db));
    }
  Eigen::Matrix3d local = dofs_.frames[i] * global * dofs_.frames[i].transpose();
  for (int k = 0; k < 3; ++k)
    if (held_springs_[3 * i + k] > 0.0) local(k, k) = held_springs_[3 * i + k];
  return local;
}

void SparseDelassusOperator::estimate_diagonal_blocks(
    const std::function<void(const std::string&)>& progress) {
  // The exact W_jj of a sample of nodes, spread over the list, by
  // multi-column solves; their ratio to the inverse of the node's own
  // stiffness block scales that inverse at every node. W_ii only chooses
  // rho (law/one_node.hpp), which changes how fast Newton converges, not
  // where to.
  const int m = dofs_.n_nodes();
  const int n_sample = sample_count();
  std::vector<double> ratios;
  if (probes_samples_together()) {
    sample_compliance_ratios(0, n_sample, true, ratios);
  } else {
    for (int first = 0; first < n_sample; first += sample_nodes_per_solve) {
      const int last = std::min(n_sample, first + sample_nodes_per_solve);
      sample_compliance_ratios(first, last, false, ratios);
      if (progress && last < n_sample)
        progress("estimating the Delassus operator's diagonal blocks: " + std::to_string(last) +
                 " of " + std::to_string(n_sample) + " sample nodes solved");
    }
  }
  std::nth_element(ratios.begin(), ratios.begin() + n_sample / 2, ratios.end());
  const double ratio = n_sample > 0 ? ratios[n_sample / 2] : 1.0;
  if (!(ratio > 0.0) || !std::isfinite(ratio))
    throw NumericalError("the compliance of the contact nodes is not positive");
  diagonal_estimates_.resize(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i) diagonal_estimates_[i] = ratio * local_stiffness_block(i).inverse();
}

bool SparseDelassusOperator::probes_samples_together() const {
  // Under an iterative backend every column is a whole Krylov solve (at
  // N = 64 on two ranks the 36 columns took 409 of the set-up's 532 s).
  // One solve per local direction for all the sample nodes at once, with
  // alternating signs, gives each node's W_jj plus the couplings W_jk of
  // the others, which decay with distance: where the samples lie far
  // apart on a large contact zone that shifts the median ratio by 3 % at
  // N = 16 (1,313 nodes) and 0.3 % at N = 24, and by 35 % on the seed
  // punch (337 nodes, 24 samples): only with at least this many nodes per
  // sample (docs/performance.md, "W_ii's estimate in three solves").
  constexpr int nodes_per_sample_probed_together = 64;
  return k_factor_->is_iterative() &&
         dofs_.n_nodes() >= nodes_per_sample_probed_together * sample_count();
}

int SparseDelassusOperator::sample_count() const {
  // Under an iterative backend every column is a whole Krylov solve: at
  // N = 64 with PETSc's CG the 72 columns took 13.5 of the set-up's 15
  // minutes. Half the nodes there (and two digits, below) moved the ratio
  // by 4 % and no Newton step: 303 on the seed punch, 11 at N = 16 and 13
  // at N = 32 (case A, 5 increments), the estimate 3.2 times faster.
  return std::min(dofs_.n_nodes(), k_factor_->is_iterative() ? 12 : 24);
}

void SparseDelassusOperator::sample_compliance_ratios(int first, int last, bool together,
                                                      std::vector<double>& ratios) const {
  const int m = dofs_.n_nodes();
  const int n_sample = sample_count();
  const auto node = [&](int s) { return static_cast<int>((static_cast<long>(s) * m) / n_sample); };
  // Node s's load in local direction k: its own column, or column k shared
  // by every node, with alternating signs (probes_samples_together).
  const auto column = [&](int s, int k) { return together ? k : 3 * (s - first) + k; };
  const auto sign = [&](int s) { return together && s % 2 == 1 ? -1.0 : 1.0; };
  Eigen::MatrixXd forces = Eigen::MatrixXd::Zero(n_free(), together ? 3 : 3 * (last - first));
  Eigen::MatrixXd motion;
  for (int s = first; s < last; ++s)
    for (int k = 0; k < 3; ++k) {
      const Eigen::Vector3d global = dofs_.frames[node(s)].row(k).transpose();
      for (int c = 0; c < 3; ++c)
        if (const int dof = dofs_.free_dofs[3 * node(s) + c]; dof >= 0)
          forces(dof, column(s, k)) += sign(s) * global(c);
    }
  k_factor_->solve_to_tolerance(forces, motion, estimate_tolerance);
  for (int s = first; s < last; ++s) {
    const int i = node(s);
    Eigen::Matrix3d w = Eigen::Matrix3d::Zero();
    for (int k = 0; k < 3; ++k) {
      Eigen::Vector3d global = Eigen::Vector3d::Zero();
      for (int c = 0; c < 3; ++c)
        if (const int dof = dofs_.free_dofs[3 * i + c]; dof >= 0)
          global(c) = sign(s) * motion(dof, column(s, k));
      w.col(k) = dofs_.frames[i] * global;
      if (held_springs_[3 * i + k] > 0.0) w(k, k) = 1.0 / held_springs_[3 * i + k];
    }
    ratios.push_back(largest_eigenvalue(w) /
                     largest_eigenvalue(local_stiffness_block(i).inverse()));
  }
}

// ---------------------------------------------------------------------------
// The Newton step

namespace {

/// Node i's rows of the step, scaled by M_i = (B_i + C_i / rho_i)^-1:
/// X_i = M_i B_i, Y_i = M_i C_i = rho_i (I - X_i) and the right-hand side
/// -M_i F_i. M_i is I for an open node, rho C^-1 for a stick one; any
/// invertible M_i leaves the step unchanged, so where it is singular the
/// rows are taken as they are. Invertibility is judged on the rows brought
/// to a common size: with the scaled update (physics.md 3.2 in scaled
/// variables, S = diag(1, s1, s2)) a stick node's rows differ by s^2, 1e12
/// at mu = 1e6, and are not singular. Returns the rows' right-hand side;
/// `distortion` receives |M_i^-1| |M_i| (infinity norms), by which a
/// residual of the scaled rows can grow back in F's (see
/// scaled_rows_tolerance).
Eigen::Vector3d scaled_node_rows(const NewtonStepEquations& equations, int i, Eigen::Matrix3d& x,
                                 Eigen::Matrix3d& y, double& distortion) {
  const Eigen::Matrix3d& b = equations.b[i];
  const Eigen::Matrix3d& c = equations.c[i];
  const Eigen::Matrix3d sum = b + c / equations.rho[i];
  const Eigen::Vector3d row_size = sum.cwiseAbs().rowwise().sum();
  const bool rows_nonzero = (row_size.array() > 0.0).all();
  const Eigen::Vector3d equilibration =
      rows_nonzero ? Eigen::Vector3d(row_size.cwiseInverse()) : Eigen::Vector3d::Ones();
  const Eigen::FullPivLU<Eigen::Matrix3d> lu(equilibration.asDiagonal() * sum);
  const bool invertible = rows_nonzero && lu.isInvertible() && lu.rcond() > 1e-12;
  const Eigen::Matrix3d scale = invertible
                                    ? Eigen::Matrix3d(lu.inverse() * equilibration.asDiagonal())
                                    : Eigen::Matrix3d(Eigen::Matrix3d::Identity());
  distortion = invertible ? row_size.maxCoeff() * scale.cwiseAbs().rowwise().sum().maxCoeff() : 1.0;
  x = scale * b;
  y = scale * c;
  return -(scale * equations.f.segment<3>(3 * i));
}

/// The relative residual of the scaled rows that bounds the step's own
/// residual |B dr + C dv + F| by `tolerance` |F|: the inexact Newton step
/// must leave a residual small against |F|, the norm its line search
/// decreases, and the rows' scaling M distorts that norm by up to
/// max_i |M_i^-1| |M_i| (about s^2 with the scaled update: a relative
/// residual of 1e-7 in the scaled rows left a step residual of 10 |F| at mu =
/// 1e4, and the line search rejected the step). Not below the round-off of
/// the rows (Gmres stops where the residual stagnates).
double scaled_rows_tolerance(double tolerance, double distortion) {
  return std::max(tolerance / distortion, 16.0 * std::numeric_limits<double>::epsilon());
}

/// The largest share of |F| that a step accepted at a stagnation may leave
/// in its own equations (step_is_a_descent_direction). Measured (the
/// steps' |B dr + C dv + F| / |F|): CHOLMOD's stagnated steps on the N = 16
/// cylinder, case C, 5e-3 to 9e-3, which the Newton iteration used well;
/// PETSc's GAMG at mu = 1e6 either 2e-8 or less, or 3 to 11, where the
/// line search found no decrease. 0.1 lies between the two.
constexpr double stagnated_step_forcing = 0.1;

/// Whether (dr, dv) leaves at most max(tolerance, stagnated_step_forcing)
/// |F| in the Newton step's own equations, |B dr + C dv + F|: an inexact
/// Newton step under a forcing term below 1 is a descent direction of |F|,
/// the line search's norm. For a Gmres solve accepted at a stagnation of
/// the scaled rows' residual, which says little about this one: at mu = 1e6
/// under PETSc's GAMG (the verification tests' cylinder) steps stalled at a
/// relative 2e-4 of the scaled rows left either 2e-8 or less of |F| here or
/// 3 to 11 times |F|, as the BLAS kernels' round-off fell; with the latter
/// the line search found no decrease and the increment failed.
bool step_is_a_descent_direction(const NewtonStepEquations& equations, const Eigen::VectorXd& dr,
                                 const Eigen::VectorXd& dv, double tolerance) {
  double squared = 0.0;
  for (std::size_t i = 0; i < equations.b.size(); ++i) {
    const Eigen::Index k = 3 * static_cast<Eigen::Index>(i);
    squared += (equations.b[i] * dr.segment<3>(k) + equations.c[i] * dv.segment<3>(k) +
                equations.f.segment<3>(k))
                   .squaredNorm();
  }
  return std::sqrt(squared) <= std::max(tolerance, stagnated_step_forcing) * equations.f.norm();
}

}  // namespace

namespace {

/// The Newton step on the sparse system. Unknowns: the displacement step
/// du of every free dof, with the contact nodes' components read in their
/// local frames (plus one slot per held component), so that a node's dv_i
/// is its own entries and its reaction step dr_i = (K du)_i. Equations: K du
/// = 0 at every other dof (the load is in q), and at each contact node its
/// step equation B_i dr_i + C_i dv_i = -F_i multiplied by M_i = (B_i +
/// C_i / rho_i)^-1, i.e. X_i (K du)_i + Y_i du_i = -M_i F_i with X = M B, Y
/// = M C = rho (I - X). For a symmetric X these rows are X_i times the rows
/// of K plus a spring rho (X^-1 - I) at the node, a symmetric positive
/// definite matrix P (a stick node's spring is a penalty, an open node's is
/// zero): GMRES on the step's equations, preconditioned by P's Cholesky
/// factorization (and X^-1 on the node rows), converges in one iteration
/// then, and in a few while X is nearly symmetric or P was factorized a few
/// steps before. P is factorized again only when the nodes' states have
/// changed or GMRES slowed down.
class SparseNewtonStepSolver final : public SparseNewtonStep {
 public:
  explicit SparseNewtonStepSolver(std::shared_ptr<const SparseDelassusOperator> op);
  // Its Gmres objects point at krylov_rows_.
  SparseNewtonStepSolver(const SparseNewtonStepSolver&) = delete;
  SparseNewtonStepSolver& operator=(const SparseNewtonStepSolver&) = delete;
  SparseNewtonStepSolver(SparseNewtonStepSolver&&) = delete;
  SparseNewtonStepSolver& operator=(SparseNewtonStepSolver&&) = delete;

  bool solve(const NewtonStepEquations& equations, double tolerance, Eigen::VectorXd& dr,
             Eigen::VectorXd& dv) override;
  [[nodiscard]] Work work() const override {
    return {steps_,
            factorizations_,
            iterations_,
            p_factor_->krylov_iterations(),
            fallbacks_,
            long_restart_steps_,
            long_restart_refused_steps_,
            corrections_,
            single_precision_steps_};
  }

 private:
  // Smallest eigenvalue of X kept in P (times rho W_ii where that is below
  // 1): below it a direction is held by a spring of rho / this, a million
  // times the node's stiffness (a penalty; GMRES corrects the difference).
  static constexpr double smallest_x = 1e-6;
  // With an iterative backend for P (PETSc's CG with GAMG). Measured on the
  // seed punch, case A (docs/performance.md, "The second preconditioner
  // under PETSc"), as Newton steps / P's set-ups / GMRES iterations / P's
  // CG iterations; the values kept then gave 301 / 41 / 4618 / 19,372 with
  // P solved at every application (317 / 52 / 10,873 / 10,873 V-cycles
  // since P is first applied once, below):
  // - The floor of X's eigenvalues is 1e-1, not 1e-6: springs of up to ten
  //   times (not a million times) the node's own stiffness. With stiffer
  //   ones GAMG's CG on P failed (DIVERGED_INDEFINITE_PC: at increment 1
  //   with 1e-6, at increment 6 with 1e-2); 0.5 works but takes 7707 GMRES
  //   and 39,179 CG iterations. GMRES corrects the difference.
  static constexpr double smallest_x_iterative = 1e-1;
  // - P is first applied as one V-cycle (apply_approximate_inverse), the
  //   step's GMRES held to its tolerance without accepting a stagnation;
  //   where that fails, P is solved to this relative residual for the
  //   rest of the run (a flexible GMRES: Gmres keeps the preconditioned
  //   vectors, so a preconditioner that changes from one application to
  //   the next is allowed). Solving P alone: 1e-1: 71 set-ups, 6033 GMRES,
  //   12,007 CG; 1e-3: 4318 GMRES, 28,430 CG; 1e-12: 4113 GMRES, 155,500
  //   CG. One V-cycle alone: at N = 24 (docs/performance.md, "One V-cycle
  //   per application of P") 1.85 times fewer V-cycles than 1e-2 for one
  //   Newton step more (23 against 22), but at mu = 1e6 and in case C the weak
  //   preconditioner made GMRES stagnate (increment 1 failed; case C 608
  //   Newton steps against 501).
  static constexpr double iterative_preconditioner_tolerance = 1e-2;
  // - The step is solved to at least this tolerance: with a direct P, GMRES
  //   overshoots the Newton iteration's loose forcing term by itself; with
  //   an inexact one it would stop there, and the Newton steps grow (without
  //   this bound, and with the stiff springs: 620 against the CHOLMOD
  //   path's 317). 1e-6: 340 steps; 1e-10: 280 steps but 5038 GMRES.
  static constexpr double iterative_step_tolerance = 1e-8;
  // - P is set up again when a step takes this many GMRES iterations more
  //   than the first step after the last set-up (no flop count to weigh;
  //   counts keep the Newton path independent of the machine's load). 4:
  //   67 set-ups, 4075 GMRES; 12: 32 and 5149. A set-up is the costly part
  //   on large meshes (a GAMG hierarchy), hence not fewer iterations.
  //   And at the run's second step, whatever the counts: the first is
  //   usually the bonded start's (solve_contact: every node stuck, the
  //   springs at their floor), a state that the Newton steps leave for
  //   good, and its count, several times a later step's, is no reference
  //   (the N = 32 cylinder, case A: a P kept from there took 100-124 GMRES
  //   iterations a step, a P set up again at the second step about 55;
  //   docs/performance.md, "P after the first step").
  static constexpr int iterative_refresh_excess = 8;
  // With a direct P (CHOLMOD): a triangular sweep runs at the speed of
  // memory, a supernodal factorization at BLAS 3's once its supernodes are
  // large, so that on large factors a flop of an iteration costs several of
  // a factorization's. Measured (factorization / iteration, in time against
  // in flops): about 1 on the seed punch (1.2e6 factor entries), 5.6 on the
  // N = 16 cylinder (1.9e7), 5-8 at N = 24. Hence the factor's entries /
  // 3e6 within [1, 5]: the seed punch unchanged bit for bit (5 made it
  // slower), the N = 16 cylinder's case A twice as fast
  // (docs/performance.md, "The refresh rule of a direct P").
  static double solve_flop_weight(double factor_nonzeros) {
    return std::clamp(factor_nonzeros / 3e6, 1.0, 5.0);
  }
  // make_motion_consistent: no correction where the rows off the contact
  // nodes are already this small against K du (an exact product's
  // accuracy); else the correction's solve to this relative residual.
  static constexpr double consistent_force_share = 1e-12;
  static constexpr double correction_tolerance = 1e-4;
  // The restart of the step's GMRES, and of the one that a step falls back
  // to when the short one fails on a fresh P (less where its vectors would
  // not fit in half of the memory available then: long_restart_that_fits).
  static constexpr int short_restart = 40;
  static constexpr int long_restart = 160;
  // CHOLMOD's P from the first long-restart step on: applied by CG on P
  // preconditioned by its single-precision factor, to this relative
  // residual (refine_approximate_inverse). One sweep alone (about 1e-6 on
  // the N = 16 cylinder) doubled the Newton steps of those stages at N = 24
  // (case C); 1e-8 took about 2 CG iterations an application at N = 16,
  // where a direct solve's backward error took 3, and a third fewer than
  // that at N = 24, for the same Newton steps (docs/performance.md, "The
  // long restart's stages at a single P's memory").
  static constexpr double refined_preconditioner_tolerance = 1e-8;

  /// The rows of the step's vectors: K_ff's and the held slots, all of
  /// them or (MPI) those kept here.
  [[nodiscard]] int size() const { return krylov_rows_ ? krylov_rows_->kept() : n_free_ + n_held_; }
  /// Node i's part of a step vector in its local frame (its held slots'
  /// values in the held components; without them, `with_held` false, 0
  /// there); 0 for a node whose rows another rank keeps.
  [[nodiscard]] Eigen::Vector3d local_part(Eigen::Ref<const Eigen::VectorXd> x, int i,
                                           bool with_held = true) const;
  /// Sets node i's part (nothing for a node whose rows another rank keeps).
  void set_local_part(const Eigen::Vector3d& l, int i, Eigen::VectorXd& x) const;
  /// Under MPI: the contact nodes whose rows are kept here, and the
  /// exchanges between the ranks that the step's vectors need.
  void distribute(const std::vector<int>& held_beside);
  void stiffness_times(const Eigen::VectorXd& x, Eigen::VectorXd& y) const;
  void step_matrix_times(const Eigen::VectorXd& x, Eigen::VectorXd& y) const;
  void preconditioner(Eigen::Ref<const Eigen::VectorXd> b, Eigen::VectorXd& z) const;
  /// GMRES on the step, P applied once (while that has not failed since
  /// P's set-up), else solved; the long restart once it was needed: its
  /// iterations, or -1.
  int solve_step_system(double rows_tolerance);
  /// The same with gmres_long_ and P solved.
  int solve_with_long_restart(double rows_tolerance);
  /// Creates gmres_long_, with the restart that fits; false (and never
  /// again asked: a refused step is counted) when none larger than the
  /// short one does.
  bool start_long_restart();
  /// P applied as one V-cycle: an iterative P, and no fallback yet.
  [[nodiscard]] bool applies_one_cycle() const {
    return p_factor_->is_iterative() && !one_cycle_failed_;
  }
  /// Sets the node rows; returns their largest distortion (scaled_node_rows).
  double set_node_rows(const NewtonStepEquations& equations);
  void factorize(const std::vector<double>& rho);
  [[nodiscard]] bool needs_factorization() const;
  template <class Z>
  int gmres(Gmres<Z>& solver, const Eigen::VectorXd& b, double tolerance, bool strict,
            Eigen::VectorXd& x);
  /// dv corrected to W dr (dr, dv from the step's du; see the definition).
  /// dv of the contact nodes kept here (ContactNodesByRank::kept_nodes).
  void make_motion_consistent(Eigen::VectorXd& dv);
  /// |v| over the ranks (a vector of rows kept here) or here.
  template <class Vector>
  [[nodiscard]] double norm(const Vector& v) const {
    return krylov_rows_ ? std::sqrt(krylov_rows_->sum(v.squaredNorm())) : v.norm();
  }
  /// (dr, dv) of the step's du (solution_), dv made consistent.
  void take_solution(Eigen::VectorXd& dr, Eigen::VectorXd& dv);
  /// Whether the last step solve was accepted at a stagnation: the long
  /// restart solves every step once it exists, the short one before.
  [[nodiscard]] bool last_solve_stagnated() const {
    return gmres_long_ ? gmres_long_->stagnated() : gmres_.stagnated();
  }

  std::shared_ptr<const SparseDelassusOperator> op_;
  int n_free_ = 0, n_held_ = 0;
  std::vector<int> held_slot_;  // 3 per node (local components): slot index or -1
  int share_rows_ = 0;          // the step vectors' first rows: K_ff's
  std::unique_ptr<LinearSolver> p_factor_;
  // K's pattern, P's values; shared with P's solver where its refined
  // solves iterate on it (refine_approximate_inverse). None where P's
  // solver keeps its own copy of P (PETSc): it gets K_ff's lower triangle
  // and the springs (p_changes_) instead, and no rank holds P twice.
  std::shared_ptr<SparseMatrix> p_lower_;
  LinearSolver::LowerChanges p_changes_;
  std::vector<std::array<int, 9>> block_positions_;  // per node: (a, b) with da >= db
  bool factorized_ = false;
  std::vector<Eigen::Matrix3d> x_inverse_;  // at the factorization
  std::vector<double> held_diagonal_;       // P at the held slots
  std::vector<Eigen::Matrix3d> x_, y_;      // the current step's node rows
  int last_iterations_ = 0, fresh_iterations_ = 0;
  bool fresh_ = false;             // no step solved since the factorization
  bool one_cycle_failed_ = false;  // a fallback has happened: P solved from then on
  bool recount_ = false;           // the next count is the first with P solved
  long factorizations_ = 0, iterations_ = 0, steps_ = 0, fallbacks_ = 0;
  long long_restart_steps_ = 0, long_restart_refused_steps_ = 0, corrections_ = 0;
  long single_precision_steps_ = 0;
  // Under MPI, the rows of the GMRES vectors that this rank keeps (its
  // buffers change in the const products: mutable; one thread a rank).
  mutable std::optional<KrylovRows> krylov_rows_;
  mutable std::optional<OwnRowsProduct> own_rows_product_;  // K_ff x on the rows kept here
  // Where each contact node's components are in the step's vectors (its
  // free dofs and held slots), and under MPI the nodes kept here.
  std::optional<ContactNodesByRank> nodes_;
  Gmres<double> gmres_{short_restart};  // vectors of the whole mesh: a short restart
  // For the steps that the short restart does not solve, created when first
  // needed (and used for every step from then on, gmres_'s vectors freed):
  // up to 161 vectors of the whole mesh in double and 160 in single (1.6 GB
  // at N = 48, 840k unknowns; under MPI each rank keeps its rows of them,
  // krylov_rows_, as of gmres_'s).
  std::optional<Gmres<float>> gmres_long_;
  Eigen::VectorXd rhs_, solution_, work2_, correction_;
  Eigen::VectorXd kept_dr_, kept_dv_;  // MPI: the kept nodes' dr and dv
  mutable Eigen::VectorXd scaled_;     // the preconditioner's scratch
};

SparseNewtonStepSolver::SparseNewtonStepSolver(std::shared_ptr<const SparseDelassusOperator> op)
    : op_(std::move(op)), p_factor_(op_->stiffness_solver().new_solver_for_preconditioning()) {
  if (!p_factor_->keeps_own_copy_of_matrix())
    p_lower_ = std::make_shared<SparseMatrix>(op_->stiffness_lower());
  const ContactDofs& dofs = op_->dofs();
  const int m = dofs.n_nodes();
  n_free_ = op_->n_free();
  held_slot_.assign(static_cast<std::size_t>(3 * m), -1);
  for (int j = 0; j < 3 * m; ++j)
    if (op_->held_springs()[j] > 0.0) held_slot_[j] = n_free_ + n_held_++;
  share_rows_ = n_free_;
  distribute(op_->held_slots_beside());
  nodes_.emplace(dofs, held_slot_, krylov_rows_ ? &*krylov_rows_ : nullptr);
  block_positions_.resize(static_cast<std::size_t>(m));
  for (int i = 0; i < m; ++i)
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) {
        const int da = dofs.free_dofs[3 * i + a], db = dofs.free_dofs[3 * i + b];
        block_positions_[i][3 * a + b] =
            da >= 0 && db >= 0 && da >= db ? position_in_lower(op_->stiffness_lower(), da, db) : -1;
      }
  x_inverse_.resize(static_cast<std::size_t>(m));
  x_.resize(static_cast<std::size_t>(m));
  y_.resize(static_cast<std::size_t>(m));
  held_diagonal_.assign(static_cast<std::size_t>(3 * m), 0.0);
}

// Under MPI every vector of the step is the rows kept here, and a rank
// works on its own contact nodes (nodes_): K_ff x exchanges the rows on the
// borders between the ranks (OwnRowsProduct), P is applied on each rank's
// rows, and only the step's answer for the contact nodes (3 values a node)
// is gathered. One process keeps every row and every node, as it always did.
void SparseNewtonStepSolver::distribute(const std::vector<int>& held_beside) {
  krylov_rows_ = krylov_rows_of(op_->stiffness_solver(), held_beside);
  if (!krylov_rows_) return;
  gmres_.distribute(&*krylov_rows_);
  own_rows_product_.emplace(*krylov_rows_, op_->stiffness_lower(), exchange_over_ranks);
  share_rows_ = krylov_rows_->share_kept();
}

Eigen::Vector3d SparseNewtonStepSolver::local_part(Eigen::Ref<const Eigen::VectorXd> x, int i,
                                                   bool with_held) const {
  Eigen::Vector3d local = nodes_->local_part(x, i);
  if (with_held)
    for (int k = 0; k < 3; ++k)
      if (const int at = nodes_->held_positions()[3 * i + k]; at >= 0) local(k) = x(at);
  return local;
}

void SparseNewtonStepSolver::set_local_part(const Eigen::Vector3d& l, int i,
                                            Eigen::VectorXd& x) const {
  const Eigen::Vector3d global = op_->dofs().frames[i].transpose() * l;
  for (int c = 0; c < 3; ++c)
    if (const int at = nodes_->free_positions()[3 * i + c]; at >= 0) x(at) = global(c);
  for (int k = 0; k < 3; ++k)
    if (const int at = nodes_->held_positions()[3 * i + k]; at >= 0) x(at) = l(k);
}

void SparseNewtonStepSolver::stiffness_times(const Eigen::VectorXd& x, Eigen::VectorXd& y) const {
  y.resize(size());
  if (own_rows_product_)
    own_rows_product_->multiply(x.head(share_rows_), y.head(share_rows_));
  else
    y.head(n_free_).noalias() =
        op_->stiffness_lower().selfadjointView<Eigen::Lower>() * x.head(n_free_);
  const std::vector<double>& springs = op_->held_springs();
  const std::vector<int>& held = nodes_->held_positions();
  for (std::size_t j = 0; j < held.size(); ++j)
    if (held[j] >= 0) y(held[j]) = springs[j] * x(held[j]);
}

void SparseNewtonStepSolver::step_matrix_times(const Eigen::VectorXd& x, Eigen::VectorXd& y) const {
  stiffness_times(x, y);
  for (const int i : nodes_->kept_nodes()) {
    const Eigen::Vector3d row = x_[i] * local_part(y, i) + y_[i] * local_part(x, i);
    set_local_part(row, i, y);
  }
}

void SparseNewtonStepSolver::preconditioner(Eigen::Ref<const Eigen::VectorXd> b,
                                            Eigen::VectorXd& z) const {
  Eigen::VectorXd& scaled = scaled_;
  scaled = b;
  for (const int i : nodes_->kept_nodes())
    set_local_part(x_inverse_[i] * local_part(b, i), i, scaled);
  z.resize(size());
  z.head(share_rows_) = scaled.head(share_rows_);
  // A direct P's approximate inverse is its factor's solve, in single
  // precision where the backend keeps it so (CHOLMOD: about half the time
  // of a double sweep; Gmres is flexible, so its rounding is corrected).
  if (applies_one_cycle() || !p_factor_->is_iterative()) {
    if (krylov_rows_)
      p_factor_->apply_approximate_inverse_to_own_rows(z.head(share_rows_));
    else
      p_factor_->apply_approximate_inverse(z.head(n_free_));
  } else if (krylov_rows_) {
    p_factor_->solve_own_rows_to_tolerance(z.head(share_rows_), iterative_preconditioner_tolerance);
  } else {
    p_factor_->solve_in_place_to_tolerance(z.head(n_free_), iterative_preconditioner_tolerance);
  }
  const std::vector<int>& held = nodes_->held_positions();
  for (std::size_t j = 0; j < held.size(); ++j)
    if (held[j] >= 0) z(held[j]) = scaled(held[j]) / held_diagonal_[j];
}

double SparseNewtonStepSolver::set_node_rows(const NewtonStepEquations& equations) {
  rhs_.setZero(size());
  double largest = 1.0;
  // Every node's rows (P's springs need them all, and the largest
  // distortion is the same on every rank); the right-hand side's own.
  for (int i = 0; i < op_->dofs().n_nodes(); ++i) {
    double distortion = 1.0;
    set_local_part(scaled_node_rows(equations, i, x_[i], y_[i], distortion), i, rhs_);
    largest = std::max(largest, distortion);
  }
  return largest;
}

bool SparseNewtonStepSolver::needs_factorization() const {
  // A factorization pays when the GMRES iterations it would save (those of
  // the last step beyond the count right after a factorization) cost more
  // than half of it. The costs are counted, not timed, so that the Newton
  // path (and whether an increment is cut) does not depend on the machine's
  // load: an iteration is about two triangular sweeps of the factor (4 flops
  // per nonzero), weighted by solve_flop_weight(), a factorization its flop
  // count.
  if (!factorized_) return true;
  const int excess = last_iterations_ - fresh_iterations_;
  if (p_factor_->is_iterative()) return steps_ == 2 || excess > iterative_refresh_excess;
  const double nonzeros = p_factor_->factor_nonzeros();
  const double iteration_flops = solve_flop_weight(nonzeros) * 4.0 * nonzeros;
  return excess * iteration_flops > 0.5 * p_factor_->factorization_flops();
}

void SparseNewtonStepSolver::factorize(const std::vector<double>& rho) {
  const ContactDofs& dofs = op_->dofs();
  const SparseMatrix& k = op_->stiffness_lower();
  p_changes_.positions.clear();
  p_changes_.values.clear();
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es;
  const double smallest = p_factor_->is_iterative() ? smallest_x_iterative : smallest_x;
  for (int i = 0; i < dofs.n_nodes(); ++i) {
    es.computeDirect(0.5 * (x_[i] + x_[i].transpose()));
    // The penalty must outweigh the node's own stiffness (about 1 / W_ii):
    // with the scaled update rho W_ii is as small as 1 / s^2, and a floor
    // of smallest_x alone left a spring weaker than K (GMRES then stalled).
    const double floor_x =
        smallest * std::min(1.0, rho[i] * largest_eigenvalue(op_->diagonal_block(i)));
    const Eigen::Vector3d lambda = es.eigenvalues().cwiseMax(floor_x).cwiseMin(1.0);
    const Eigen::Matrix3d& q = es.eigenvectors();
    const Eigen::Vector3d spring_values = rho[i] * (lambda.cwiseInverse().array() - 1.0).matrix();
    const Eigen::Matrix3d spring = q * spring_values.asDiagonal() * q.transpose();
    x_inverse_[i] = q * lambda.cwiseInverse().asDiagonal() * q.transpose();
    const Eigen::Matrix3d global = dofs.frames[i].transpose() * spring * dofs.frames[i];
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        if (const int pos = block_positions_[i][3 * a + b]; pos >= 0) {
          p_changes_.positions.push_back(pos);
          p_changes_.values.push_back(global(a, b));
        }
    for (int kk = 0; kk < 3; ++kk)
      if (held_slot_[3 * i + kk] >= 0)
        held_diagonal_[3 * i + kk] = op_->held_springs()[3 * i + kk] + spring(kk, kk);
  }
  // The factorization's blocks that come from the heap (CHOLMOD's
  // workspace and permuted copy of P) then reuse the GMRES vectors' memory
  // instead of adding to it; the next solve allocates the vectors again.
  gmres_.release_storage();
  if (gmres_long_) gmres_long_->release_storage();
  if (p_lower_) {  // P kept here: K_ff's values plus the springs
    std::copy(k.valuePtr(), k.valuePtr() + k.nonZeros(), p_lower_->valuePtr());
    p_changes_.add_to(*p_lower_);
    p_factor_->factorize_lower(*p_lower_, factorized_);
  } else {
    p_factor_->factorize_lower_changed(k, p_changes_, factorized_);
  }
  factorized_ = true;
  fresh_ = true;
  ++factorizations_;
}

template <class Z>
int SparseNewtonStepSolver::gmres(Gmres<Z>& solver, const Eigen::VectorXd& b, double tolerance,
                                  bool strict, Eigen::VectorXd& x) {
  const int used = solver.solve(
      [this](const Eigen::VectorXd& in, Eigen::VectorXd& out) { step_matrix_times(in, out); },
      [this](Eigen::Ref<const Eigen::VectorXd> in, Eigen::VectorXd& out) {
        preconditioner(in, out);
      },
      b, tolerance, strict, x);
  iterations_ += solver.spent();  // every attempt's, failed or not (summary.json)
  return used;
}

int SparseNewtonStepSolver::solve_step_system(double rows_tolerance) {
  if (gmres_long_) return solve_with_long_restart(rows_tolerance);
  if (applies_one_cycle()) {
    const int used = gmres(gmres_, rhs_, rows_tolerance, true, solution_);
    if (used >= 0) return used;
    // On a P from earlier steps the failure may be P's age, not the
    // V-cycle's: solve() sets P up again and asks once more (the N = 32
    // cylinder, case A: the V-cycle failed on the first step's P and, given
    // up for the run, left every later step to P solved; docs/performance.md,
    // "P after the first step").
    if (!fresh_) return -1;
    ++fallbacks_;
    // For the rest of the run: where one V-cycle failed once on a fresh P
    // it tends to fail again (case C at N = 24: each set-up's first step),
    // and a failed attempt costs more than it saves.
    one_cycle_failed_ = true;
    recount_ = true;
  }
  return gmres(gmres_, rhs_, rows_tolerance, false, solution_);
}

int SparseNewtonStepSolver::solve_with_long_restart(double rows_tolerance) {
  ++long_restart_steps_;
  if (applies_one_cycle()) {
    // The long restart is for P solved: one V-cycle would only lengthen it.
    one_cycle_failed_ = true;
    recount_ = true;
  }
  return gmres(*gmres_long_, rhs_, rows_tolerance, false, solution_);
}

bool SparseNewtonStepSolver::start_long_restart() {
  if (long_restart_refused_steps_ > 0) return false;
  // Asked at the same step on every rank (their states are the same): the
  // memory available may be a collective.
  // The vectors' rows on the rank that keeps the most (the same on every rank).
  const int rows = krylov_rows_ ? krylov_rows_->largest_kept() : size();
  const int restart =
      long_restart_that_fits(long_restart, short_restart, rows, op_->available_memory());
  if (restart == 0) return false;
  gmres_long_.emplace(restart, 3 * long_restart);  // a shorter restart, as many iterations
  if (krylov_rows_) gmres_long_->distribute(&*krylov_rows_);
  return true;
}

bool SparseNewtonStepSolver::solve(const NewtonStepEquations& equations, double tolerance,
                                   Eigen::VectorXd& dr, Eigen::VectorXd& dv) {
  ++steps_;
  const double step_tolerance =
      p_factor_->is_iterative() ? std::min(tolerance, iterative_step_tolerance) : tolerance;
  const double rows_tolerance = scaled_rows_tolerance(step_tolerance, set_node_rows(equations));
  // A solve accepted at a stagnation counts only if its step is a descent
  // direction by the step's own equations; else it is a failed solve.
  const auto judged = [&](int used) {
    if (used < 0) return used;
    take_solution(dr, dv);
    return !last_solve_stagnated() || step_is_a_descent_direction(equations, dr, dv, tolerance)
               ? used
               : -1;
  };
  if (needs_factorization()) factorize(equations.rho);
  int used = judged(solve_step_system(rows_tolerance));
  if (used < 0 && !fresh_) {
    // A factorization from earlier steps may be too far off: once more with
    // a fresh one.
    factorize(equations.rho);
    used = judged(solve_step_system(rows_tolerance));
  }
  if (used < 0 && !gmres_long_) {
    // Restarted GMRES can stagnate where a long Krylov space converges: at
    // a non-associated law's slip nodes X is far from symmetric, and P
    // (symmetric by construction) far from the step's matrix there (the
    // N = 16 cylinder, case C, first unloading: a relative residual stuck
    // at 0.2-0.36 after two cycles of 40 on a fresh P; every stage of the
    // continuation at the law itself failed and the increment was cut;
    // docs/performance.md, "The Newton step's motion"). As with the
    // V-cycle's fallback, for the rest of the run: where it was needed
    // once, the short restart's failures cost more than they save.
    if (start_long_restart()) {
      gmres_.release_storage();  // never used again
      recount_ = true;           // the refresh rule compares long-restart steps from here on
      if (p_factor_->holds_lower_precision_factor() &&
          !(p_lower_ &&
            p_factor_->refine_approximate_inverse(p_lower_, refined_preconditioner_tolerance))) {
        // The stages that need the long restart are those where P's
        // single-precision rounding cost twice the Newton steps (N = 24,
        // case C; docs/performance.md, "P in single precision"): from here
        // on, like the long restart itself, P is applied by CG on P
        // preconditioned by its rounded factor (the fresh one of this step:
        // a single factor's memory; refined_preconditioner_tolerance), else
        // with its factor made again in double.
        p_factor_->keep_full_precision();
        factorize(equations.rho);
      }
      used = judged(solve_with_long_restart(rows_tolerance));
    } else {
      // The step fails, as it did before the fallback existed: the contact
      // iteration's continuation or a cut increment takes over.
      ++long_restart_refused_steps_;
    }
  }
  if (p_factor_->holds_lower_precision_factor()) ++single_precision_steps_;
  last_iterations_ = used < 0 ? gmres_max_iterations : used;
  if (fresh_ || recount_) fresh_iterations_ = last_iterations_;
  recount_ = false;
  fresh_ = false;
  return used >= 0;
}

void SparseNewtonStepSolver::take_solution(Eigen::VectorXd& dr, Eigen::VectorXd& dv) {
  stiffness_times(solution_, work2_);
  // One process: straight into dr and dv (every node kept).
  Eigen::VectorXd& kept_dr = nodes_->distributed() ? kept_dr_ : dr;
  Eigen::VectorXd& kept_dv = nodes_->distributed() ? kept_dv_ : dv;
  const auto kept = static_cast<Eigen::Index>(nodes_->kept_nodes().size());
  kept_dr.resize(3 * kept);
  kept_dv.resize(3 * kept);
  for (Eigen::Index k = 0; k < kept; ++k) {
    kept_dv.segment<3>(3 * k) = local_part(solution_, nodes_->kept_nodes()[k]);
    kept_dr.segment<3>(3 * k) = local_part(work2_, nodes_->kept_nodes()[k]);
  }
  make_motion_consistent(kept_dv);
  if (nodes_->distributed()) {
    nodes_->gather(kept_dr, dr);
    nodes_->gather(kept_dv, dv);
  }
}

void SparseNewtonStepSolver::make_motion_consistent(Eigen::VectorXd& dv) {
  // work2_ = K du. Its rows at the contact nodes are dr; its other rows,
  // e, are zero for an exact step, and du = K^-1 (E dr + e), so that dv =
  // W dr + E^T K^-1 e. GMRES leaves e at up to its tolerance times the
  // right-hand side, and K^-1 magnifies it by up to K's condition number:
  // the Newton iteration, which moves v along dv, then drifts from q + W r,
  // and converges to the wrong point until q + W r is recomputed (the
  // N = 12 cylinder, case C, under PETSc: a drift of 5.9e-8 mm by the first
  // step, a residual of 1.9e-6 after the recomputation, two more steps;
  // the seed punch A: 317 Newton steps without the correction, 279 with
  // it; docs/performance.md, "The Newton step's motion"). The correction
  // -E^T K^-1 e makes dv = W dr to about the accuracy of an exact product:
  // e is already small, and a solve to 1e-4 of it leaves 1e-4 of GMRES's
  // residual (1e-2: 284 steps on the seed punch A; 1e-1: 291).
  correction_ = work2_.head(share_rows_);
  for (const int at : nodes_->free_positions())
    if (at >= 0) correction_(at) = 0.0;
  const double e_norm = norm(correction_);
  const double force_norm = norm(work2_.head(share_rows_));
  if (e_norm <= consistent_force_share * force_norm) return;
  if (krylov_rows_)
    op_->stiffness_solver().solve_own_rows_to_tolerance(correction_, correction_tolerance);
  else
    op_->stiffness_solver().solve_in_place_to_tolerance(correction_, correction_tolerance);
  ++corrections_;
  for (std::size_t k = 0; k < nodes_->kept_nodes().size(); ++k)
    dv.segment<3>(3 * static_cast<Eigen::Index>(k)) -=
        local_part(correction_, nodes_->kept_nodes()[k], false);
}

/// Patches of contact nodes for the coarse space of OwnFactorNewtonStep:
/// the cells of a grid of about `target` cells over the nodes' positions
/// seen in the tangent plane of the first node's frame (empty cells
/// dropped); without positions, runs of consecutive nodes. Returns each
/// node's patch; `n_patches` is their number.
std::vector<int> contact_patches(const ContactDofs& dofs, int target, int& n_patches) {
  const int m = dofs.n_nodes();
  std::vector<int> cell(static_cast<std::size_t>(m));
  if (static_cast<int>(dofs.positions.size()) != m) {
    for (int i = 0; i < m; ++i) cell[i] = static_cast<int>((static_cast<long>(i) * target) / m);
  } else {
    const int side = std::max(1, static_cast<int>(std::ceil(std::sqrt(target))));
    Eigen::MatrixX2d uv(m, 2);
    for (int i = 0; i < m; ++i)
      uv.row(i) = (dofs.frames[0].bottomRows<2>() * dofs.positions[i]).transpose();
    const Eigen::RowVector2d low = uv.colwise().minCoeff();
    const Eigen::RowVector2d span = (uv.colwise().maxCoeff() - low).cwiseMax(1e-300);
    for (int i = 0; i < m; ++i) {
      const Eigen::RowVector2d t = (uv.row(i) - low).cwiseQuotient(span) * side;
      const int cu = std::min(side - 1, static_cast<int>(t(0)));
      const int cv = std::min(side - 1, static_cast<int>(t(1)));
      cell[i] = cu * side + cv;
    }
  }
  std::vector<int> number(static_cast<std::size_t>(*std::max_element(cell.begin(), cell.end()) + 1),
                          -1);
  n_patches = 0;
  for (int& c : cell) {
    if (number[c] < 0) number[c] = n_patches++;
    c = number[c];
  }
  return cell;
}

/// The Newton step with K_ff's own factor only (no second factorization):
/// GMRES on the contact unknowns, (X + Y W) dr = -M F (the scaled rows of
/// scaled_node_rows, dv = W dr), W applied by one solve with K_ff's factor
/// per iteration. Right preconditioner, two levels: a coarse solve on
/// patches of nodes (Z: each patch's nodes moved together, per local
/// component; W Z formed once by multi-column solves, so the Galerkin
/// matrix Z^T A Z of each step costs no solve), then per node
/// (X_i + Y_i W_ii)^-1 with the operator's estimate of W_ii on what the
/// coarse solve left. The per-node part alone leaves the smooth couplings
/// of the nodes through W, whose conditioning grows with the contact zone.
class OwnFactorNewtonStep final : public SparseNewtonStep {
 public:
  // The step's residual here is in the scaled node rows, where a stick
  // node's row is rho W dr: a loose relative residual there (the inexact
  // Newton asks for up to 1e-3) can leave a direction that the line search
  // only cuts (seen with mu = 100 on the verification tests' cylinder,
  // which pass with 1e-6).
  static constexpr double own_factor_step_tolerance = 1e-6;
  // Up to 128 patches (384 coarse unknowns, W Z by 32 solves of 12
  // columns), at least 8 nodes each. Measured on the cylinder N = 16 (1313
  // nodes), GMRES iterations per Newton step: per node only 28.5; 64
  // patches 26.3; 128 patches 22.4; 400 patches 16.5 (but W Z then grows
  // like m^2).
  static constexpr int max_patches = 128, nodes_per_patch = 8;
  // With an iterative K_ff backend (PETSc's CG), the solves inside the
  // step's GMRES (W applied) stop at this share of GMRES's own tolerance
  // (inexact Krylov: Simoncini and Szyld, SIAM J. Sci. Comput. 25, 2003).
  // Measured on the seed punch, case A, PETSc cg_gamg (docs/performance.md,
  // "Inexact solves"): a share of 1e-2 or 1e-3 costs Newton steps (277 ->
  // 305, 282), 1e-4 none. W Z only builds the preconditioner's coarse
  // operator: three digits (1e-2 changed no GMRES count there). A direct
  // backend solves exactly whatever is asked.
  static constexpr double inner_solve_share = 1e-4;
  static constexpr double coarse_space_tolerance = 1e-3;

  explicit OwnFactorNewtonStep(std::shared_ptr<const SparseDelassusOperator> op)
      : op_(std::move(op)) {
    const int m = op_->dofs().n_nodes();
    x_.resize(static_cast<std::size_t>(m));
    y_.resize(static_cast<std::size_t>(m));
    node_inverse_.resize(static_cast<std::size_t>(m));
    patch_ =
        contact_patches(op_->dofs(), std::clamp(m / nodes_per_patch, 1, max_patches), n_patches_);
    Eigen::MatrixXd z = Eigen::MatrixXd::Zero(3 * m, 3 * n_patches_);
    for (int i = 0; i < m; ++i) z.block<3, 3>(3 * i, 3 * patch_[i]).setIdentity();
    op_->product_columns(z, wz_, coarse_space_tolerance);
  }

  bool solve(const NewtonStepEquations& equations, double tolerance, Eigen::VectorXd& dr,
             Eigen::VectorXd& dv) override {
    const int m = op_->dofs().n_nodes();
    ++steps_;
    rhs_.resize(3 * m);
    double largest_distortion = 1.0;
    for (int i = 0; i < m; ++i) {
      double distortion = 1.0;
      rhs_.segment<3>(3 * i) = scaled_node_rows(equations, i, x_[i], y_[i], distortion);
      largest_distortion = std::max(largest_distortion, distortion);
      const Eigen::FullPivLU<Eigen::Matrix3d> lu(x_[i] + y_[i] * op_->diagonal_block(i));
      node_inverse_[i] = lu.isInvertible() ? Eigen::Matrix3d(lu.inverse())
                                           : Eigen::Matrix3d(Eigen::Matrix3d::Identity());
    }
    set_coarse_operator();
    const double gmres_tolerance =
        scaled_rows_tolerance(std::min(tolerance, own_factor_step_tolerance), largest_distortion);
    product_tolerance_ = inner_solve_share * gmres_tolerance;
    const int used =
        gmres_.solve([this](const Eigen::VectorXd& in, Eigen::VectorXd& out) { apply(in, out); },
                     [this](Eigen::Ref<const Eigen::VectorXd> in, Eigen::VectorXd& out) {
                       precondition(in, out);
                     },
                     rhs_, gmres_tolerance, false, dr);
    iterations_ += gmres_.spent();  // a failed solve's too (summary.json)
    if (used < 0) return false;
    // dv exactly W dr (a whole product, not one of GMRES's inexact ones):
    // the Newton iteration moves v along dv and must stay on q + W r
    // (SparseNewtonStepSolver::make_motion_consistent).
    dv.setZero(3 * m);
    op_->add_product(dr, dv);
    return !gmres_.stagnated() || step_is_a_descent_direction(equations, dr, dv, tolerance);
  }
  [[nodiscard]] Work work() const override { return {steps_, 0, iterations_, 0, 0}; }

 private:
  /// out = X in + Y W in, node by node.
  void apply(const Eigen::VectorXd& in, Eigen::VectorXd& out) {
    product_.setZero(in.size());
    op_->add_inexact_product(in, product_, product_tolerance_);
    out.resize(in.size());
    for (Eigen::Index i = 0; i < in.size() / 3; ++i)
      out.segment<3>(3 * i) = x_[i] * in.segment<3>(3 * i) + y_[i] * product_.segment<3>(3 * i);
  }

  /// A Z = X Z + Y (W Z) and the Galerkin matrix Z^T A Z of this step.
  void set_coarse_operator() {
    const int m = op_->dofs().n_nodes();
    az_.resize(3 * m, 3 * n_patches_);
    coarse_.setZero(3 * n_patches_, 3 * n_patches_);
    for (int i = 0; i < m; ++i) {
      az_.middleRows<3>(3 * i).noalias() = y_[i] * wz_.middleRows<3>(3 * i);
      az_.block<3, 3>(3 * i, 3 * patch_[i]) += x_[i];
      coarse_.middleRows<3>(3 * patch_[i]) += az_.middleRows<3>(3 * i);
    }
    coarse_lu_.compute(coarse_);
    coarse_usable_ = coarse_.allFinite() && coarse_lu_.rcond() > 1e-12;
  }

  /// out = Z A_c^-1 Z^T in + D^-1 (in - A Z A_c^-1 Z^T in), D the node blocks.
  void precondition(Eigen::Ref<const Eigen::VectorXd> in, Eigen::VectorXd& out) {
    const Eigen::Index m = in.size() / 3;
    out.resize(in.size());
    if (!coarse_usable_) {
      for (Eigen::Index i = 0; i < m; ++i)
        out.segment<3>(3 * i) = node_inverse_[i] * in.segment<3>(3 * i);
      return;
    }
    restricted_.setZero(3 * n_patches_);
    for (Eigen::Index i = 0; i < m; ++i)
      restricted_.segment<3>(3 * patch_[i]) += in.segment<3>(3 * i);
    coarse_solution_ = coarse_lu_.solve(restricted_);
    left_ = in;
    left_.noalias() -= az_ * coarse_solution_;
    for (Eigen::Index i = 0; i < m; ++i)
      out.segment<3>(3 * i) =
          coarse_solution_.segment<3>(3 * patch_[i]) + node_inverse_[i] * left_.segment<3>(3 * i);
  }

  std::shared_ptr<const SparseDelassusOperator> op_;
  std::vector<Eigen::Matrix3d> x_, y_, node_inverse_;
  std::vector<int> patch_;
  int n_patches_ = 0;
  Eigen::MatrixXd wz_, az_, coarse_;
  Eigen::PartialPivLU<Eigen::MatrixXd> coarse_lu_;
  bool coarse_usable_ = false;
  // Vectors of the contact unknowns only (3m): no restart, which would
  // lose the slowly converging coarse components.
  Gmres<double> gmres_{gmres_max_iterations};
  Eigen::VectorXd rhs_, product_, restricted_, coarse_solution_, left_;
  double product_tolerance_ = 0.0;  // of the solves in this step's products
  long iterations_ = 0, steps_ = 0;
};

}  // namespace

std::unique_ptr<SparseNewtonStep> SparseDelassusOperator::make_newton_step() const {
  if (preconditioner() == SparsePreconditionerChoice::own_factor)
    return std::make_unique<OwnFactorNewtonStep>(shared_from_this());
  // P's factor is as large as K_ff's: with both in double the run would
  // hold twice the roller run's factor at P's factorization. K_ff's is kept
  // in single precision before P's is first made, and its solves refined
  // (LinearSolver::keep_factor_in_single_precision): a few per increment,
  // against P's dozens, each a few single-precision sweeps.
  std::call_once(stiffness_factor_rounded_, [this] {
    if (k_factor_->keep_factor_in_single_precision(k_lower_)) product_key_ = next_product_key++;
  });
  return std::make_unique<SparseNewtonStepSolver>(shared_from_this());
}

}  // namespace bipo
