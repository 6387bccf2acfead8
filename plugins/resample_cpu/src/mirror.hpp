// Whole-sample mirror extension of a line of n samples: ... 2 1 | 0 1 ... n-2 n-1 | n-2 ...
// The boundary under which Unser's B-spline coefficient filter is exact; the windowed sinc
// reads beyond the edges the same way.
#pragma once

#include <cstdlib>

namespace regpipe::resample {

inline long mirror(long i, long n) {
  if (n == 1) return 0;
  const long period = 2 * (n - 1);
  i = std::labs(i) % period;
  return i < n ? i : period - i;
}

}  // namespace regpipe::resample
