// Test support of the verification tests on the generated cylinder: the
// punch case pressed 0.1 at its top onto a floor plane under its bottom
// face, with the friction law and contact path given (test_sparse_contact.cpp,
// test_stiffness_memory.cpp).
#pragma once

#include <optional>

#include "solver/analysis.hpp"

namespace bipo::test {

/// Load 3 increments to 1, unload to 0.5 in 4, reload to 1 in 2.
inline Case cylinder_case(const FrictionParams& friction, ContactSolverChoice kind) {
  Case c;
  c.source = "sparse-contact";
  c.material = {210000.0, 0.3};
  c.program.segments = {{1.0, 3, 0}, {0.5, 4, 0}, {1.0, 2, 0}};
  c.dirichlet.push_back({"top", {0.0, 0.0, -0.1}, std::nullopt});
  ContactPlane plane;
  plane.name = "floor";
  plane.set = "bottom";
  plane.friction = friction;
  c.contacts.push_back(plane);
  c.solver.contact_solver = kind;
  return c;
}

}  // namespace bipo::test
