// Owns the storage of the dense condensed operators (docs/physics.md section
// 3.3): the condensed stiffness S and its inverse W, both exactly symmetric,
// in one buffer of half the memory of the two whole matrices, with the
// products, blocks and columns the contact solvers read. Plain linear
// algebra: no contact law, no mesh.
#pragma once

#include <Eigen/Core>
#include <stdexcept>

namespace bipo {

/// S and W = S^-1 of n condensed unknowns, each exactly symmetric, held in
/// one (n + 1) x n column-major buffer: W's upper triangle (diagonal
/// included) at (i, j) for i <= j, and S's lower triangle (diagonal
/// included) one row down, at (i + 1, j) for i >= j. The two never overlap
/// (W's entries of column j sit in rows 0..j, S's in rows j+1..n), so the
/// pair costs one matrix where two whole ones cost two: the dense contact
/// path's largest items besides the stiffness' factor (docs/performance.md,
/// "S and W in one buffer"). Each whole product reads its own triangle by
/// the BLAS's dsymv (S with uplo L from the second row, W with uplo U).
///
/// The 3 x 3 block accessors and the node-column products number nodes:
/// node i owns the unknowns 3i, 3i+1, 3i+2 (n a multiple of 3).
class CondensedMatrices {
 public:
  CondensedMatrices() = default;
  /// S = W = 0 of size n. (Inline, like the entries' accessors: the PETSc
  /// plugin compiles the generic condensation in and uses no more.)
  explicit CondensedMatrices(int n) {
    if (n < 0) throw std::invalid_argument("CondensedMatrices: negative size");
    buffer_.setZero(n + 1, n);
  }
  /// From whole matrices: S's lower triangle and W's upper one are taken
  /// (each must be symmetric for the result to be the same matrices).
  [[nodiscard]] static CondensedMatrices from_whole(const Eigen::MatrixXd& s,
                                                    const Eigen::MatrixXd& w);

  [[nodiscard]] int size() const { return static_cast<int>(buffer_.cols()); }

  /// S(i, j) and W(i, j) for any i, j.
  [[nodiscard]] double stiffness(int i, int j) const {
    return i >= j ? buffer_(i + 1, j) : buffer_(j + 1, i);
  }
  [[nodiscard]] double delassus(int i, int j) const {
    return i <= j ? buffer_(i, j) : buffer_(j, i);
  }
  /// S(i, j) for i >= j and W(i, j) for i <= j, writable: the entries held.
  double& stiffness_lower(int i, int j) { return buffer_(i + 1, j); }
  double& delassus_upper(int i, int j) { return buffer_(i, j); }

  /// The 3 x 3 blocks of nodes i and j.
  [[nodiscard]] Eigen::Matrix3d stiffness_block(int i, int j) const;
  [[nodiscard]] Eigen::Matrix3d delassus_block(int i, int j) const;
  /// Sets S's block (i, j), i >= j, from `block` (of a diagonal block, its
  /// lower triangle: S stays exactly symmetric).
  void set_stiffness_block(int i, int j, const Eigen::Matrix3d& block);
  /// Sets W's block (i, j), i <= j, from `block` (of a diagonal block, its
  /// upper triangle).
  void set_delassus_block(int i, int j, const Eigen::Matrix3d& block);

  /// y += S x and y += W x (whole products, one triangle read by dsymv).
  /// x and y must not overlap.
  void add_stiffness_product(const Eigen::Ref<const Eigen::VectorXd>& x,
                             Eigen::Ref<Eigen::VectorXd> y) const;
  void add_delassus_product(const Eigen::Ref<const Eigen::VectorXd>& x,
                            Eigen::Ref<Eigen::VectorXd> y) const;
  /// y += S(:, node's columns) x and y += W(:, node's columns) x: a product
  /// with node `node`'s three columns only (read as the held column below
  /// or above the node's block, and the held row of blocks on its other
  /// side).
  void add_stiffness_columns(int node, const Eigen::Vector3d& x,
                             Eigen::Ref<Eigen::VectorXd> y) const;
  void add_delassus_columns(int node, const Eigen::Vector3d& x,
                            Eigen::Ref<Eigen::VectorXd> y) const;
  /// W's row `row` times x (row `row` of W x alone).
  [[nodiscard]] double delassus_row_dot(int row, const Eigen::VectorXd& x) const;

  /// Whole copies (tests, tools; the solvers never make them).
  [[nodiscard]] Eigen::MatrixXd whole_stiffness() const;
  [[nodiscard]] Eigen::MatrixXd whole_delassus() const;

  /// The buffer, for a set-up that forms S and W in place by LAPACK
  /// (leading dimension size() + 1; S's lower triangle starts at data() + 1).
  [[nodiscard]] double* data() { return buffer_.data(); }
  [[nodiscard]] const double* data() const { return buffer_.data(); }
  [[nodiscard]] int leading_dimension() const { return size() + 1; }

 private:
  Eigen::MatrixXd buffer_;
};

}  // namespace bipo
