#include "reference_spans.hpp"

#include <regpipe_common/parallel_slabs.hpp>

#include <algorithm>

namespace regpipe::cost_cr_cuda {
namespace {

// Rows per slab below which one thread is faster than a pool (an 8 mm level has ~600 rows).
constexpr std::size_t kRowsPerSlab = 1024;
constexpr std::size_t kMaxSlabs = 64;

struct SlabCount {
  std::size_t spans = 0, voxels = 0;
};

// Calls visit(row, start, end) for each run [start, end) of weighted voxels of rows [first, end).
template <class Visit>
void for_each_run(const regpipe_common::MeasuredImage& ref, std::size_t first_row, std::size_t end_row,
                  const Visit& visit) {
  const std::size_t nx = std::size_t(ref.grid.nx);
  for (std::size_t row = first_row; row < end_row; ++row) {
    const std::size_t base = row * nx;
    for (std::size_t x = 0; x < nx;) {
      if (!(ref.weight(base + x) > 0.f)) {
        ++x;
        continue;
      }
      const std::size_t start = x;
      while (x < nx && ref.weight(base + x) > 0.f) ++x;
      visit(row, start, x);
    }
  }
}

}  // namespace

ReferenceSpans make_reference_spans(const regpipe_common::MeasuredImage& ref,
                                    const regpipe_common::IntensityBinning& binning) {
  const std::size_t rows = std::size_t(ref.grid.ny) * std::size_t(ref.grid.nz);
  const std::size_t slabs = std::clamp<std::size_t>(rows / kRowsPerSlab, 1, kMaxSlabs);
  auto slab_rows = [&](std::size_t s) {
    return std::make_pair(regpipe_common::slab_begin(rows, slabs, s), regpipe_common::slab_begin(rows, slabs, s + 1));
  };
  // Pass 1: each slab's spans and voxels, hence where its output starts.
  std::vector<SlabCount> counts(slabs + 1);
  regpipe_common::parallel_slabs(slabs, [&](std::size_t s) {
    const auto [first, end] = slab_rows(s);
    SlabCount& c = counts[s + 1];
    for_each_run(ref, first, end, [&](std::size_t, std::size_t start, std::size_t stop) {
      ++c.spans;
      c.voxels += stop - start;
    });
  });
  for (std::size_t s = 1; s <= slabs; ++s) {
    counts[s].spans += counts[s - 1].spans;
    counts[s].voxels += counts[s - 1].voxels;
  }
  ReferenceSpans out;
  out.spans.resize(counts[slabs].spans);
  out.bins.resize(counts[slabs].voxels);
  if (ref.weights != nullptr) out.weights.resize(counts[slabs].voxels);
  // Pass 2: fill, and count each slab's bins.
  const std::size_t bins = std::size_t(binning.bins);
  std::vector<std::size_t> populations(slabs * bins, 0);
  regpipe_common::parallel_slabs(slabs, [&](std::size_t s) {
    const auto [first, end] = slab_rows(s);
    std::size_t span = counts[s].spans, voxel = counts[s].voxels;
    std::size_t* population = populations.data() + s * bins;
    const std::size_t nx = std::size_t(ref.grid.nx);
    for_each_run(ref, first, end, [&](std::size_t row, std::size_t start, std::size_t stop) {
      out.spans[span++] = {int32_t(voxel), int32_t(start), int32_t(stop - start), int32_t(row)};
      for (std::size_t i = row * nx + start; i < row * nx + stop; ++i, ++voxel) {
        const int bin = binning.bin(ref.values[i]);
        out.bins[voxel] = uint16_t(bin);
        ++population[bin];
        if (ref.weights != nullptr) out.weights[voxel] = ref.weights[i];
      }
    });
  });
  out.population.assign(bins, 0);
  for (std::size_t s = 0; s < slabs; ++s)
    for (std::size_t b = 0; b < bins; ++b) out.population[b] += populations[s * bins + b];
  out.hot_bin = int(std::max_element(out.population.begin(), out.population.end()) - out.population.begin());
  return out;
}

}  // namespace regpipe::cost_cr_cuda
