// Seconds since a moment of the steady clock: the phase times of reports.
#pragma once

#include <chrono>

namespace regpipe {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace regpipe
