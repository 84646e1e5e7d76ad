// The whole per-node contact law (docs/physics.md section 3) in one include: the
// friction law and its validation (friction_law.hpp), the cone and its
// projection (cone.hpp), the predictor and the certificate (predictor.hpp),
// automatic rho and the one-node problem (one_node.hpp). It depends on Eigen
// and core/errors.hpp only: a new law variant is written and tested here,
// without io/ or solver/.
#pragma once

#include "contact/law/cone.hpp"
#include "contact/law/friction_law.hpp"
#include "contact/law/one_node.hpp"
#include "contact/law/predictor.hpp"
