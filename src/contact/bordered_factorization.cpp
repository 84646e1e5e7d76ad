// A factorized matrix bordered for unknowns taken out and added; see
// bordered_factorization.hpp.
#include "contact/bordered_factorization.hpp"

#include <utility>

namespace bipo {

namespace {

/// Below it, T or Sigma is taken as singular: a fresh factorization is
/// then the caller's safer course.
constexpr double smallest_reciprocal_condition = 1e-13;

}  // namespace

void BorderedFactorization::hold_removed_at_zero(Eigen::Ref<Eigen::MatrixXd> x) {
  if (removed_.empty() || x.cols() == 0) return;
  removed_values_ = -x(removed_, Eigen::all);
  lambda_ = t_.solve(removed_values_);
  x.noalias() += z_ * lambda_;
  x(removed_, Eigen::all).setZero();  // zero up to round-off: exactly, as a solve returns
}

bool BorderedFactorization::set_up(const SolveWithM& solve_with_m, int n, std::vector<int> removed,
                                   Eigen::MatrixXd a_cd, Eigen::MatrixXd a_dc,
                                   const Eigen::MatrixXd& a_dd) {
  n_ = n;
  removed_ = std::move(removed);
  const auto p_r = static_cast<Eigen::Index>(removed_.size());
  const Eigen::Index p_d = a_dd.rows();
  z_.setZero(n, p_r);
  for (Eigen::Index c = 0; c < p_r; ++c) z_(removed_[static_cast<std::size_t>(c)], c) = 1.0;
  if (p_r > 0) {
    solve_with_m(z_.data(), static_cast<int>(p_r));
    t_.compute(z_(removed_, Eigen::all));
    if (!(t_.rcond() > smallest_reciprocal_condition) || !z_.allFinite()) return false;
  }
  y_ = std::move(a_cd);
  a_dc_ = std::move(a_dc);
  y_(removed_, Eigen::all).setZero();
  a_dc_(Eigen::all, removed_).setZero();
  if (p_d > 0) {
    solve_with_m(y_.data(), static_cast<int>(p_d));
    hold_removed_at_zero(y_);
    sigma_.compute(a_dd - a_dc_ * y_);
    if (!(sigma_.rcond() > smallest_reciprocal_condition) || !y_.allFinite()) return false;
  }
  removed_values_.resize(p_r, 1);
  lambda_.resize(p_r, 1);
  border_.resize(p_d);
  return true;
}

void BorderedFactorization::solve(const SolveWithM& solve_with_m, Eigen::Ref<Eigen::VectorXd> c,
                                  Eigen::Ref<Eigen::VectorXd> d) {
  c(removed_).setZero();
  solve_with_m(c.data(), 1);
  hold_removed_at_zero(c);
  if (d.size() == 0) return;
  d.noalias() -= a_dc_ * c;
  border_ = sigma_.solve(d);
  d = border_;
  c.noalias() -= y_ * d;
}

}  // namespace bipo
