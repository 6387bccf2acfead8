// The costs the search has had at the current level, by point bit for bit. FLIRT's search asks
// again for points it has evaluated: a stage starts where the last one ended, a line's bracket
// comes back to its start, perturbed starts coincide, coarse results lie on the fine grid (on
// the brain benchmark cases 4-5 % of the 4 mm points, up to 70 % of a 2 mm stage's). A cost is
// a function of the images and the transform (regpipe's costs repeat bit for bit, batched or
// alone), so a repeated point is answered from here with the same bits and the objective's
// time goes to new points. A GPU evaluates a point of a coarse level in about a microsecond,
// so a lookup must cost nanoseconds: the points lie in one array, in the order added, and an
// open-addressing index of 8-byte slots (a hash tag and the point's place) finds them.
#pragma once

#include "point.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace regpipe::flirt {

class EvaluatedPoints {
 public:
  static constexpr std::size_t kNone = SIZE_MAX;

  // The place of `p` if it was added since the last clear(), else kNone. Points are equal when
  // their bits are: -0.0 and 0.0 differ, which costs at most a repeated evaluation.
  std::size_t find(const Point& p) const {
    if (slots_.empty()) return kNone;
    const uint64_t h = hash(p);
    for (std::size_t s = h & mask();; s = (s + 1) & mask()) {
      const uint64_t slot = slots_[s];
      if (slot == 0) return kNone;
      const std::size_t at = std::size_t(uint32_t(slot)) - 1;
      if (uint32_t(slot >> 32) == uint32_t(h >> 32) &&
          std::memcmp(points_[at].data(), p.data(), sizeof(Point)) == 0)
        return at;
    }
  }

  // Adds `p` (not found), its cost to be set through cost(); returns its place, the number of
  // points added before it.
  std::size_t add(const Point& p) {
    if (2 * (points_.size() + 1) > slots_.size()) grow();
    const std::size_t at = points_.size();
    points_.push_back(p);
    costs_.push_back(0.0);
    place(at);
    return at;
  }

  double& cost(std::size_t at) { return costs_[at]; }
  std::size_t size() const { return points_.size(); }

  // Forgets every point (a new level, a search past kMaxPoints, or a call that failed with
  // costs unset); the memory stays for the next level.
  void clear() {
    points_.clear();
    costs_.clear();
    std::fill(slots_.begin(), slots_.end(), 0);
  }

  // A level of FLIRT's search asks for about 4,500 points, a full-turn search about 10,000;
  // past this many (about 30 MB) the memory starts again.
  static constexpr std::size_t kMaxPoints = std::size_t(1) << 18;

 private:
  // Four independent multiply-xor chains over the twelve words, then mixed: the chains' latency
  // overlaps.
  static uint64_t hash(const Point& p) {
    uint64_t words[RP_PARAM_COUNT];
    std::memcpy(words, p.data(), sizeof words);
    uint64_t lane[4] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull,
                        0x27d4eb2f165667c5ull};
    for (std::size_t i = 0; i < RP_PARAM_COUNT; ++i) {
      uint64_t& h = lane[i % 4];
      h = (h ^ words[i]) * 0xff51afd7ed558ccdull;
      h ^= h >> 29;
    }
    const uint64_t h = (lane[0] ^ (lane[1] * 0xc4ceb9fe1a85ec53ull)) ^
                       ((lane[2] ^ (lane[3] * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull);
    return h ^ (h >> 32);
  }
  std::size_t mask() const { return slots_.size() - 1; }
  void place(std::size_t at) {
    const uint64_t h = hash(points_[at]);
    std::size_t s = h & mask();
    while (slots_[s] != 0) s = (s + 1) & mask();
    slots_[s] = (h >> 32 << 32) | uint64_t(at + 1);
  }
  // Doubles the index (at most half full), placing every point again.
  void grow() {
    slots_.assign(slots_.empty() ? 1024 : 2 * slots_.size(), 0);
    for (std::size_t at = 0; at < points_.size(); ++at) place(at);
  }

  std::vector<Point> points_;
  std::vector<double> costs_;
  std::vector<uint64_t> slots_;  // 0: empty; else the tag (the hash's high half) and place + 1
};

}  // namespace regpipe::flirt
