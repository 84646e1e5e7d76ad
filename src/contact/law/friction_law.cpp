// The friction law's coefficients (docs/physics.md section 3): their validation, the
// law's construction. See friction_law.hpp.
#include "contact/law/friction_law.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/errors.hpp"

namespace bipo {

namespace {

std::string describe(double mu1, double mu2, double p1, double p2) {
  return "(mu1=" + std::to_string(mu1) + ", mu2=" + std::to_string(mu2) +
         ", p1=" + std::to_string(p1) + ", p2=" + std::to_string(p2) + ")";
}

}  // namespace

const char* coefficient_name(FrictionCoefficient c) {
  switch (c) {
    case FrictionCoefficient::mu1:
      return "mu1";
    case FrictionCoefficient::mu2:
      return "mu2";
    case FrictionCoefficient::p1:
      return "p1";
    case FrictionCoefficient::p2:
      return "p2";
  }
  return "?";
}

std::optional<FrictionParameterProblem> friction_parameters_problem(double mu1, double mu2,
                                                                    double p1, double p2) {
  using C = FrictionCoefficient;
  const double values[4] = {mu1, mu2, p1, p2};
  for (int k = 0; k < 4; ++k)
    if (!std::isfinite(values[k]) || values[k] < 0.0)
      return FrictionParameterProblem{static_cast<C>(k), "a finite number >= 0"};
  if ((mu1 == 0.0) != (mu2 == 0.0))
    return FrictionParameterProblem{mu1 == 0.0 ? C::mu1 : C::mu2,
                                    "mu1 and mu2 both > 0 (or both 0: frictionless)"};
  // Frictionless, p > 0 would be a sliding rule without friction; with
  // friction, p = 0 would make omega = p / mu vanish.
  const bool frictionless = mu1 == 0.0;
  const char* expected_p = frictionless ? "0 or no value (the contact is frictionless)"
                                        : "a number > 0 (the contact has friction)";
  if ((p1 == 0.0) != frictionless) return FrictionParameterProblem{C::p1, expected_p};
  if ((p2 == 0.0) != frictionless) return FrictionParameterProblem{C::p2, expected_p};
  return std::nullopt;
}

FrictionLaw::FrictionLaw(double mu1, double mu2, double p1, double p2)
    : mu1_(mu1),
      mu2_(mu2),
      p1_(p1),
      p2_(p2),
      omega_sq_(Eigen::Vector2d::Zero()),
      scales_(Eigen::Vector2d::Ones()),
      frictionless_(mu1 == 0.0 && mu2 == 0.0),
      unscaled_(true) {
  if (!frictionless_) {
    const double w1 = p1 / mu1;
    const double w2 = p2 / mu2;
    omega_sq_ = Eigen::Vector2d(w1 * w1, w2 * w2);
    const double beta = std::max({1.0, p1, p2});
    scales_ = Eigen::Vector2d(beta * (mu1 / p1), beta * (mu2 / p2));
    unscaled_ = scales_(0) == 1.0 && scales_(1) == 1.0;
  }
}

FrictionLaw FrictionLaw::isotropic(double mu) {
  return orthotropic(mu, mu, mu, mu);
}

FrictionLaw FrictionLaw::orthotropic(double mu1, double mu2, double p1, double p2) {
  if (const auto problem = friction_parameters_problem(mu1, mu2, p1, p2))
    throw InputError("friction law " + describe(mu1, mu2, p1, p2) + ": " +
                     coefficient_name(problem->coefficient) + ": expected " + problem->expected);
  return FrictionLaw(mu1, mu2, p1, p2);
}

}  // namespace bipo
