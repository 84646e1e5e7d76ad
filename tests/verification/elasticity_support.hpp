// Test support of the elasticity verification tests: the static solve of a
// mesh with displacements prescribed on some nodes (test_elasticity.cpp for
// hexahedra, test_tet_wedge.cpp for tetrahedra and wedges).
#pragma once

#include <Eigen/Core>
#include <vector>

#include "fem/elasticity.hpp"
#include "mesh/mesh.hpp"
#include "solver/linear_solver.hpp"

namespace bipo {

/// Solves K u = 0 with u prescribed on the nodes `fixed_nodes` by value(x);
/// `reactions` gets K u.
template <class Field>
Eigen::VectorXd solve_with_prescribed(const Mesh& mesh, const Matrix6d& d,
                                      const std::vector<int>& fixed_nodes, Field value,
                                      Eigen::VectorXd* reactions = nullptr) {
  const SparseMatrix k_lower = assemble_stiffness(mesh, d, StoredTriangle::lower);
  std::vector<bool> prescribed(3 * mesh.nodes.size(), false);
  for (int node : fixed_nodes)
    for (int c = 0; c < 3; ++c) prescribed[3 * node + c] = true;
  const DofPartition partition(prescribed);
  SparseMatrix k_ff_lower, k_fp;
  partition.split_lower_triangle(k_lower, k_ff_lower, k_fp);
  Eigen::VectorXd u_p(partition.n_prescribed());
  for (int p = 0; p < partition.n_prescribed(); ++p) {
    const int dof = partition.prescribed_dofs()[p];
    u_p(p) = value(mesh.nodes[dof / 3])(dof % 3);
  }
  auto solver = make_cholmod_solver();
  solver->factorize_lower(k_ff_lower, false);
  Eigen::MatrixXd rhs = -(k_fp * u_p), x;
  solver->solve(rhs, x);
  Eigen::VectorXd u(3 * mesh.nodes.size());
  for (int i = 0; i < partition.n_free(); ++i) u(partition.free_dofs()[i]) = x(i, 0);
  for (int p = 0; p < partition.n_prescribed(); ++p) u(partition.prescribed_dofs()[p]) = u_p(p);
  if (reactions) *reactions = k_lower.selfadjointView<Eigen::Lower>() * u;
  return u;
}

}  // namespace bipo
