// Owns the global linear-elastic system of a mesh of hexahedra, wedges and
// tetrahedra (any mix; fem/hex8.hpp, fem/solid_elements.hpp): the sparse
// stiffness K (3 dofs per node, dof = 3 * node + component), assembled once
// (docs/physics.md section 1), its partition into free and prescribed dofs for
// Dirichlet conditions by elimination, and the post-processed stresses.
#pragma once

#include <Eigen/SparseCore>
#include <vector>

#include "fem/hex8.hpp"
#include "mesh/mesh.hpp"

namespace bipo {

using SparseMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

/// Which entries of the symmetric stiffness an assembly stores.
enum class StoredTriangle {
  whole,  ///< both triangles
  lower,  ///< row >= column only: about half the memory, and all that a
          ///< run keeps (DofPartition::split_lower_triangle)
};

/// Assembles the stiffness of the whole mesh. The element loop runs in
/// parallel (OpenMP) over colours of elements that share no node, so every
/// entry receives its contributions in the same order whatever the number of
/// threads: the result is bitwise deterministic, and the lower triangle's
/// entries are those of the whole matrix, bit for bit.
///
/// With `elements` (one flag per element), only the elements flagged
/// non-zero, pattern and values: the rows of every node whose elements are
/// all flagged are then those of the whole matrix, bit for bit (the same
/// contributions in the same order), and the other rows hold partial sums
/// or nothing. An MPI rank assembles so the elements of its rows
/// (Analysis, docs/parallel.md).
[[nodiscard]] SparseMatrix assemble_stiffness(const Mesh& mesh, const Matrix6d& d,
                                              StoredTriangle stored = StoredTriangle::whole,
                                              const std::vector<char>* elements = nullptr);

/// Element colouring used by the assembly (exposed for tests): no two
/// elements of the same colour share a node.
[[nodiscard]] std::vector<std::vector<int>> colour_elements(const Mesh& mesh);

/// The split of the dofs into free ones (unknowns of the reduced system) and
/// prescribed ones (Dirichlet values).
class DofPartition {
 public:
  /// `prescribed` flags each of the 3 * n_nodes dofs.
  explicit DofPartition(const std::vector<bool>& prescribed);

  [[nodiscard]] int n_dofs() const { return static_cast<int>(free_index_.size()); }
  [[nodiscard]] int n_free() const { return static_cast<int>(free_dofs_.size()); }
  [[nodiscard]] int n_prescribed() const { return static_cast<int>(prescribed_dofs_.size()); }
  /// Index of a dof among the free ones, or -1 if it is prescribed.
  [[nodiscard]] int free_index(int dof) const { return free_index_[dof]; }
  /// Index of a dof among the prescribed ones, or -1 if it is free.
  [[nodiscard]] int prescribed_index(int dof) const { return prescribed_index_[dof]; }
  [[nodiscard]] const std::vector<int>& free_dofs() const { return free_dofs_; }
  [[nodiscard]] const std::vector<int>& prescribed_dofs() const { return prescribed_dofs_; }

  /// From the lower triangle of a symmetric K (compressed, rows sorted in
  /// each column: assemble_stiffness's StoredTriangle::lower): the lower
  /// triangle of K_ff (free x free), K_fp (free x prescribed) whole, and
  /// K_pp (prescribed x prescribed) whole where asked. K_ff's triangle is
  /// copied column by column in storage of exactly its entries (free dofs
  /// keep their order, so its rows stay sorted): no list of triplets and no
  /// transposed copy, which were four times K's size at once during the
  /// set-up (docs/performance.md, "The set-up's copies of the stiffness").
  void split_lower_triangle(const SparseMatrix& k_lower, SparseMatrix& k_ff_lower,
                            SparseMatrix& k_fp, SparseMatrix* k_pp = nullptr) const;

 private:
  std::vector<int> free_index_, prescribed_index_;
  std::vector<int> free_dofs_, prescribed_dofs_;
};

/// Stress of every element in the mesh's element numbering (Voigt, see
/// hex8.hpp) for the full displacement vector u (3 * n_nodes): the mean over
/// the Gauss points for hexahedra and wedges, the constant stress of a
/// tetrahedron.
[[nodiscard]] std::vector<Vector6d> element_stresses(const Mesh& mesh, const Matrix6d& d,
                                                     const Eigen::VectorXd& u);

}  // namespace bipo
