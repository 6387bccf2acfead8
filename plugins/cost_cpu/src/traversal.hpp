// The one sampling loop shared by all five measures: every weighted reference voxel is mapped
// into the moving image, kept when it lands inside the sampling domain, weighted, sampled, and
// handed to the measure's accumulator.
#pragma once

#include <regpipe_common/border_weight.hpp>
#include <regpipe_common/prepared_image.hpp>
#include "settings.hpp"
#include "row_sampler.hpp"
#include "row_span.hpp"
#include "slab_partition.hpp"

#include <regpipe_common/voxel_map.hpp>

#include <algorithm>
#include <cstddef>

namespace regpipe::cost_cpu {

// Image preparation, sampling and measure formulas shared with the CUDA costs.
using namespace regpipe_common;

// One reference voxel seen in the moving image.
struct Sample {
  std::size_t ref_index;  // index of the reference voxel (x fastest)
  float x, y, z;          // moving voxel coordinates, inside the sampling domain
  float mov_value;        // moving intensity there (trilinear or nearest)
  double weight;          // w_ref * w_mov(x, y, z) * border weight, > 0
};

// How the moving image is sampled.
struct SamplingRule {
  Interpolation interpolation;
  BorderWeight border;
};

// The samples of one reference row's voxels [span.begin, span.end), all of which map inside
// the moving image, their overlap weight added to the slab's running `overlap_weight` voxel
// by voxel (a row subtotal would round differently). Positions and samples come a chunk at a
// time from row_sampler.hpp (vectorised), then go to the measure in x order: one by one, or
// four at a time where the measure adds groups (cpu.cr, cr_groups_avx2.hpp). The
// moving weight and the border weight are template switches: an unweighted moving image
// without a fuzzy edge skips two multiplications by exactly 1.0.
template <bool kMovingWeights, bool kBorder, class Add>
void accumulate_row(const PreparedImage& ref, const PreparedImage& mov,
                    const regpipe_common::VoxelMap& map, const SamplingRule& rule,
                    RowSampler sampler, int y, int z, RowSpan span, double* sums,
                    double& overlap_weight, const Add& add) {
  const std::size_t row = std::size_t(ref.grid.nx) * (y + std::size_t(ref.grid.ny) * z);
  RowSamples samples;
  for (int chunk = span.begin; chunk < span.end; chunk += RowSamples::kChunk) {
    const int count = std::min(RowSamples::kChunk, span.end - chunk);
    sample_row(rule.interpolation, sampler, map, mov.values.data(), mov.grid, chunk, count, y, z,
               samples);
    int i = 0;
    // A measure that adds whole groups of four samples of weight 1 (cpu.cr with AVX2) takes
    // the chunk's full groups when every sample weighs 1; each adds 1.0 to the overlap, and so
    // does this: a sum of ones is the same integer in any grouping.
    if constexpr (!kMovingWeights && !kBorder &&
                  requires { add.add_unweighted_groups(sums, row, samples.value, 0); }) {
      if (sampler != RowSampler::kScalar && ref.weights.empty()) {
        const int groups = count / 4;
        add.add_unweighted_groups(sums, row + std::size_t(chunk), samples.value, groups);
        overlap_weight += double(4 * groups);
        i = 4 * groups;
      }
    }
    for (; i < count; ++i) {
      const std::size_t index = row + std::size_t(chunk + i);
      const float w_ref = ref.weight(index);
      if (!(w_ref > 0.f)) continue;
      const float px = samples.x[i], py = samples.y[i], pz = samples.z[i];
      double w_mov = 1.0;
      if constexpr (kMovingWeights)
        w_mov = double(regpipe_common::trilinear(mov.weights.data(), mov.grid, px, py, pz));
      // The overlap counts the moving weight too: a reference voxel inside the moving grid
      // but where the moving image weighs nothing is not compared (abi.h's overlap_out).
      const double overlap = double(w_ref) * w_mov;
      overlap_weight += overlap;
      double weight = overlap;
      if constexpr (kBorder) weight *= rule.border(px, py, pz);
      if (!(weight > 0.0)) continue;
      add(sums, Sample{index, px, py, pz, samples.value[i], weight});
    }
  }
}

// Feeds add(sums, sample) every sample of the reference planes z in [z_begin, z_end), in
// x-fastest order. Returns the overlap weight: w_ref * w_mov summed over the reference voxels
// that map inside the moving image. Only each row's span inside the moving image is visited;
// flatten inlines the sampling helpers and the measure's accumulator into the loop.
template <class Add>
[[gnu::flatten]] double accumulate_slab(const PreparedImage& ref, const PreparedImage& mov,
                                        const regpipe_common::VoxelMap& map,
                                        const SamplingRule& rule, int z_begin, int z_end,
                                        double* sums, const Add& add) {
  const regpipe_common::Grid& g = ref.grid;
  const bool moving_weights = !mov.weights.empty(), border = rule.border.ramps();
  const RowSampler sampler = row_sampler_for(mov.grid);
  double overlap_weight = 0.0;
  for (int z = z_begin; z < z_end; ++z)
    for (int y = 0; y < g.ny; ++y) {
      const RowSpan span = inside_span(map, mov.grid, g.nx, y, z);
      if (span.begin >= span.end) continue;
      auto row = [&]<bool kMovingWeights, bool kBorder>() {
        accumulate_row<kMovingWeights, kBorder>(ref, mov, map, rule, sampler, y, z, span, sums,
                                                overlap_weight, add);
      };
      if (moving_weights)
        border ? row.template operator()<true, true>() : row.template operator()<true, false>();
      else
        border ? row.template operator()<false, true>() : row.template operator()<false, false>();
    }
  return overlap_weight;
}

// The reference's total weight, summed slab by slab in the traversal's order so that a
// transform under which every voxel maps inside gives an overlap of exactly 1.
inline double total_weight_by_slab(const PreparedImage& ref, const SlabPartition& slabs) {
  const std::size_t plane = std::size_t(ref.grid.nx) * std::size_t(ref.grid.ny);
  double total = 0.0;
  for (std::size_t s = 0; s < slabs.count(); ++s) {
    double slab = 0.0;
    for (std::size_t i = plane * slabs.z_begin[s]; i < plane * slabs.z_begin[s + 1]; ++i)
      if (ref.weight(i) > 0.f) slab += ref.weight(i);
    total += slab;
  }
  return total;
}

}  // namespace regpipe::cost_cpu
