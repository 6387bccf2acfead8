// The two coroutine pieces that let many local searches advance in lockstep (lockstep.hpp):
//   Task<T>      a lazily started coroutine that returns a T; awaiting one runs it to its end
//                (through any number of suspensions) by symmetric transfer, so searches can be
//                written as ordinary nested functions (Powell calls its line search).
//   CostChannel  where a search asks for costs: `co_await channel.costs(points)` suspends the
//                whole chain of tasks back to the scheduler, which evaluates the points of every
//                waiting search in one objective call and then resumes each with its costs.
//                Points the search may need next can ride along (speculation); a later request
//                that they cover is answered without a call.
#pragma once

#include "point.hpp"

#include <coroutine>
#include <cstddef>
#include <cstring>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

namespace regpipe::flirt {

template <class T>
class [[nodiscard]] Task {
 public:
  struct promise_type {
    std::optional<T> value;
    std::exception_ptr error;
    std::coroutine_handle<> continuation;  // the task awaiting this one; none at the top

    Task get_return_object() { return Task(Handle::from_promise(*this)); }
    std::suspend_always initial_suspend() noexcept { return {}; }
    auto final_suspend() noexcept {
      // Hands control back to the awaiting task; the top-level task returns to whoever
      // resumed it (the scheduler).
      struct ResumeContinuation {
        bool await_ready() noexcept { return false; }
        std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
          const std::coroutine_handle<> next = h.promise().continuation;
          return next ? next : std::noop_coroutine();
        }
        void await_resume() noexcept {}
      };
      return ResumeContinuation{};
    }
    void return_value(T v) { value = std::move(v); }
    void unhandled_exception() { error = std::current_exception(); }
  };
  using Handle = std::coroutine_handle<promise_type>;

  Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      if (handle_) handle_.destroy();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  // Destroying a suspended task destroys the tasks it awaits too (they live in its frame).
  ~Task() {
    if (handle_) handle_.destroy();
  }

  // Awaited from another task: start this one, come back when it has finished.
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
    handle_.promise().continuation = awaiting;
    return handle_;
  }
  T await_resume() { return result(); }

  // Driven by the scheduler: run until the first request for costs (or the end).
  void start() { handle_.resume(); }
  bool done() const { return handle_.done(); }
  // The returned value; rethrows what the coroutine threw.
  T result() {
    promise_type& p = handle_.promise();
    if (p.error) std::rethrow_exception(p.error);
    return std::move(*p.value);
  }

 private:
  explicit Task(Handle handle) : handle_(handle) {}
  Handle handle_;
};

class CostChannel {
 public:
  class Request {
   public:
    Request(CostChannel& channel, std::vector<Point> points, std::vector<Point> speculative)
        : channel_(channel), points_(std::move(points)), speculative_(std::move(speculative)) {}
    // Ready without a call when the last call's speculative points cover the request.
    bool await_ready() { return points_.empty() || channel_.answer_from_spares(points_, costs_); }
    void await_suspend(std::coroutine_handle<> waiting) noexcept {
      channel_.asked_ = points_.size();
      channel_.points_ = std::move(points_);
      if (channel_.speculating_)
        channel_.points_.insert(channel_.points_.end(), speculative_.begin(), speculative_.end());
      channel_.waiting_ = waiting;
      suspended_ = true;
    }
    std::vector<double> await_resume() {
      return suspended_ ? std::move(channel_.costs_) : std::move(costs_);
    }

   private:
    CostChannel& channel_;
    std::vector<Point> points_;
    std::vector<Point> speculative_;
    std::vector<double> costs_;
    bool suspended_ = false;
  };

  // co_await costs(points, speculative): the costs of `points`, in order. While speculating,
  // `speculative` (points the search may ask for next) go out in the same call.
  Request costs(std::vector<Point> points, std::vector<Point> speculative = {}) {
    return Request(*this, std::move(points), std::move(speculative));
  }

  // Set by the scheduler; searches skip working out speculative points while it is off.
  void set_speculating(bool on) { speculating_ = on; }
  bool speculating() const { return speculating_; }

  bool waiting() const { return static_cast<bool>(waiting_); }
  // The points to evaluate: the request's, then its speculative ones.
  const std::vector<Point>& points() const { return points_; }
  // Hands the costs of points() to the waiting search and resumes it until it asks again or
  // ends; the speculative costs are kept until the next call.
  void answer(std::vector<double> costs) {
    spare_points_.assign(points_.begin() + static_cast<std::ptrdiff_t>(asked_), points_.end());
    spare_costs_.assign(costs.begin() + static_cast<std::ptrdiff_t>(asked_), costs.end());
    costs.resize(asked_);
    costs_ = std::move(costs);
    points_.clear();
    std::exchange(waiting_, {}).resume();
  }

 private:
  // The costs of `points` if every one is a spare (bit for bit the same point, so the same
  // cost the search would get from a call of its own).
  bool answer_from_spares(const std::vector<Point>& points, std::vector<double>& costs) const {
    costs.clear();
    for (const Point& p : points) {
      size_t j = 0;
      while (j < spare_points_.size() &&
             std::memcmp(spare_points_[j].data(), p.data(), sizeof(Point)) != 0)
        ++j;
      if (j == spare_points_.size()) return false;
      costs.push_back(spare_costs_[j]);
    }
    return true;
  }

  std::vector<Point> points_;
  size_t asked_ = 0;
  std::vector<double> costs_;
  std::vector<Point> spare_points_;
  std::vector<double> spare_costs_;
  bool speculating_ = false;
  std::coroutine_handle<> waiting_;
};

}  // namespace regpipe::flirt
