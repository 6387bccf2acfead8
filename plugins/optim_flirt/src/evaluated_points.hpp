// The costs the search has had at the current level, by point bit for bit. FLIRT's search asks
// again for points it has evaluated: a stage starts where the last one ended, a line search's
// bracket comes back to its start, perturbed starts coincide (on the brain benchmark cases,
// 4-5 % of the 4 mm points, 5-30 % of the 2 mm ones). A cost is a function of the images and
// the transform (regpipe's costs repeat bit for bit, batched or alone), so a repeated point is
// answered from here with the same bits and the objective's time goes to new points.
#pragma once

#include "point.hpp"

#include <cstddef>
#include <cstring>
#include <string_view>
#include <unordered_map>

namespace regpipe::flirt {

// Hash and equality of points by their bits: -0.0 and 0.0 are told apart, which costs at most
// a repeated evaluation.
struct PointBits {
  std::size_t operator()(const Point& p) const noexcept {
    return std::hash<std::string_view>{}(
        std::string_view(reinterpret_cast<const char*>(p.data()), sizeof(Point)));
  }
  bool operator()(const Point& a, const Point& b) const noexcept {
    return std::memcmp(a.data(), b.data(), sizeof(Point)) == 0;
  }
};

class EvaluatedPoints {
 public:
  // The cost of `p` if it was added since the last clear(), else null.
  const double* find(const Point& p) const {
    const auto it = costs_.find(p);
    return it == costs_.end() ? nullptr : &it->second;
  }
  // Forgets everything first when full: the memory stays bounded on any search.
  void add(const Point& p, double cost) {
    if (costs_.size() >= kMaxPoints) costs_.clear();
    costs_.emplace(p, cost);
  }
  void clear() { costs_.clear(); }

 private:
  static constexpr std::size_t kMaxPoints = std::size_t(1) << 16;  // about 8 MB
  std::unordered_map<Point, double, PointBits, PointBits> costs_;
};

}  // namespace regpipe::flirt
