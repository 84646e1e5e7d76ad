// Owns the PETSc backend of LinearSolver (docs/case-file.md, solver.petsc):
// K_ff's rows distributed over PETSC_COMM_WORLD by a graph partition
// (row_partition.hpp), solved by MUMPS Cholesky or by conjugate gradients
// with GAMG or BoomerAMG. Every
// rank calls it with the same replicated matrix and right-hand sides (the
// analysis runs redundantly on all ranks); each rank inserts its own rows,
// and every solution is gathered back to all ranks, so that all ranks hold
// bitwise the same result.
#pragma once

#include <memory>

#include "model/case.hpp"
#include "solver/linear_solver.hpp"

namespace bipo::petsc {

/// A solver over PETSC_COMM_WORLD (PETSc initialized); collective.
[[nodiscard]] std::unique_ptr<LinearSolver> make_solver(const PetscSolverSettings& settings);

}  // namespace bipo::petsc
