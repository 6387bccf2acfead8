// The label rule of resample_labels at one input position, shared with
// resample_at_positions (chains with displacement fields).
#pragma once

#include <regpipe/host/image.hpp>

#include <regpipe_common/voxel_map.hpp>

namespace regpipe::resample_detail {

// The label at input position (x, y, z), known to be inside the domain.
// The position is in float, as trilinear() takes it.
inline float label_at(const Image& labels, const regpipe_common::Grid& g, float x, float y, float z) {
  const int x0 = int(x), y0 = int(y), z0 = int(z);
  const double f[3] = {double(x) - x0, double(y) - y0, double(z) - z0};
  // The upper neighbour is clamped on the last plane (and flat axes), as trilinear() does;
  // its weight is then 0.
  const int x1 = x0 + 1 < g.nx ? x0 + 1 : x0, y1 = y0 + 1 < g.ny ? y0 + 1 : y0,
            z1 = z0 + 1 < g.nz ? z0 + 1 : z0;
  float label[8];
  double weight[8];
  int n = 0;
  for (int c = 0; c < 8; ++c) {
    const int i = c & 1 ? x1 : x0, j = c & 2 ? y1 : y0, k = c & 4 ? z1 : z0;
    const double w = (c & 1 ? f[0] : 1.0 - f[0]) * (c & 2 ? f[1] : 1.0 - f[1]) *
                     (c & 4 ? f[2] : 1.0 - f[2]);
    const float value = labels.at(uint32_t(i), uint32_t(j), uint32_t(k));
    int slot = 0;
    while (slot < n && label[slot] != value) ++slot;
    if (slot == n) {
      label[n] = value;
      weight[n++] = 0.0;
    }
    weight[slot] += w;
  }
  // Nearest-neighbour sampling's label wins ties, so a point midway keeps nearest's choice.
  float best = regpipe_common::nearest(labels.data.data(), g, x, y, z);
  double best_weight = 0.0;
  for (int s = 0; s < n; ++s)
    if (label[s] == best) best_weight = weight[s];
  for (int s = 0; s < n; ++s)
    if (weight[s] > best_weight) {
      best = label[s];
      best_weight = weight[s];
    }
  return best;
}

}  // namespace regpipe::resample_detail
