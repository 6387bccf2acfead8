// One-dimensional minimisation by Brent's method (Brent 1973, ch. 5; Numerical Recipes 3rd
// ed., 10.3) as a state machine: the caller asks for the next abscissa, evaluates it however
// it likes (a direct call, or a coroutine that batches it with other searches) and reports
// the cost back. The stopping rule and the tolerance stay with the caller: optim.powell and
// optim.flirt stop differently, the step they take is the same.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace regpipe_common {

class Brent {
 public:
  // The bracket [lo, hi] (either order) holds x, the lowest point so far; w is the second
  // lowest and v the previous w (both may equal x when nothing else is known). `e` is the
  // step before last: 0 forces a golden first step, a bracket width lets the first step be
  // parabolic through x, w and v.
  struct Start {
    double lo, hi;
    double x, fx, w, fw, v, fv;
    double e;
  };

  explicit Brent(const Start& s)
      : a_(std::min(s.lo, s.hi)), b_(std::max(s.lo, s.hi)), x_(s.x), w_(s.w), v_(s.v),
        fx_(s.fx), fw_(s.fw), fv_(s.fv), e_(s.e) {}

  double a() const { return a_; }
  double b() const { return b_; }
  double x() const { return x_; }
  double fx() const { return fx_; }
  double middle() const { return 0.5 * (a_ + b_); }

  // Whether the parabola through x, w and v (three distinct points) is convex with its vertex
  // within `reach` of x: the line's minimum is then placed to within `reach` without another
  // cost (optim.flirt's final pass stops a line there instead of probing x's neighbours).
  bool vertex_within(double reach) const {
    if (w_ == x_ || v_ == x_ || v_ == w_) return false;
    const double curvature = ((fw_ - fx_) / (w_ - x_) - (fv_ - fx_) / (v_ - x_)) / (w_ - v_);
    if (!(curvature > 0.0)) return false;
    const double r = (x_ - w_) * (fx_ - fv_);
    const double q = (x_ - v_) * (fx_ - fw_);
    const double p = (x_ - v_) * q - (x_ - w_) * r;
    const double q2 = 2.0 * (q - r);
    return q2 != 0.0 && std::fabs(p / q2) < reach;
  }

  // The next abscissa: parabolic through x, w, v when that falls inside the bracket and
  // shrinks faster than the step before last, golden section otherwise; never closer to x,
  // nor (for a parabolic step) to the bracket's ends, than tol1.
  double next(double tol1) {
    static constexpr double kCGold = 0.3819660;  // golden-section fraction
    const double xm = middle();
    bool golden = true;
    if (std::fabs(e_) > tol1) {
      const double r = (x_ - w_) * (fx_ - fv_);
      double q = (x_ - v_) * (fx_ - fw_);
      double p = (x_ - v_) * q - (x_ - w_) * r;
      q = 2.0 * (q - r);
      if (q > 0.0) p = -p;
      q = std::fabs(q);
      const double e_previous = e_;
      e_ = d_;
      if (std::fabs(p) < std::fabs(0.5 * q * e_previous) && p > q * (a_ - x_) && p < q * (b_ - x_)) {
        golden = false;
        d_ = p / q;
        const double u = x_ + d_;
        if (u - a_ < 2.0 * tol1 || b_ - u < 2.0 * tol1) d_ = std::copysign(tol1, xm - x_);
      }
    }
    if (golden) {
      e_ = x_ >= xm ? a_ - x_ : b_ - x_;
      d_ = kCGold * e_;
    }
    return std::fabs(d_) >= tol1 ? x_ + d_ : x_ + std::copysign(tol1, d_);
  }

  // The state after update(u, fu) for a new lowest fu (fu <= fx, `lower`) or for an fu above
  // x, w and v: its bracket and x are exact, its costs placeholders. For speculative
  // evaluation (optim.flirt): where the search goes next under each outcome.
  Brent after(double u, bool lower) const {
    Brent b = *this;
    b.update(u, lower ? fx_ : std::numeric_limits<double>::infinity());
    return b;
  }

  // What next(tol1) returns after update(u, fu) for every fu of that outcome, where it does not
  // depend on fu's value: a golden step (only x and the bracket count), or for a higher fu a
  // parabola through the same x, w and v (update leaves w and v alone when fu is above them
  // and the three are distinct). Empty where the value decides.
  std::optional<double> next_after(double u, bool lower, double tol1) const {
    const bool golden = !(std::fabs(e_) > tol1);
    if (!golden && (lower || w_ == x_ || v_ == x_ || v_ == w_)) return std::nullopt;
    return after(u, lower).next(tol1);
  }

  // The cost at the abscissa `next` returned: shrinks the bracket, updates x, w, v.
  void update(double u, double fu) {
    if (fu <= fx_) {
      (u >= x_ ? a_ : b_) = x_;
      v_ = w_;
      fv_ = fw_;
      w_ = x_;
      fw_ = fx_;
      x_ = u;
      fx_ = fu;
    } else {
      (u < x_ ? a_ : b_) = u;
      if (fu <= fw_ || w_ == x_) {
        v_ = w_;
        fv_ = fw_;
        w_ = u;
        fw_ = fu;
      } else if (fu <= fv_ || v_ == x_ || v_ == w_) {
        v_ = u;
        fv_ = fu;
      }
    }
  }

 private:
  double a_, b_, x_, w_, v_;
  double fx_, fw_, fv_;
  double d_ = 0.0, e_;
};

}  // namespace regpipe_common
