#include "gaussian_prefilter.hpp"

#include "parallel_for.hpp"

#include <regpipe_common/resample_request.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

namespace regpipe::resample {
namespace {

constexpr size_t kLanes = 8;      // lines filtered together, one per vector lane
constexpr size_t kPositions = 4;  // outputs of a line summed together: independent add chains

// One axis's taps: w[|d|] for d = -radius..radius.
struct AxisKernel {
  std::vector<double> w;
  long radius = 0;
  double interior_weight = 0.0;  // the whole kernel, summed in the order a voxel sums its taps
};

AxisKernel axis_kernel(double sigma_voxels, uint32_t length) {
  AxisKernel k;
  k.w = regpipe_common::gaussian_half_kernel(sigma_voxels, length);
  k.radius = static_cast<long>(k.w.size()) - 1;
  for (long d = -k.radius; d <= k.radius; ++d) k.interior_weight += k.w[static_cast<size_t>(std::labs(d))];
  return k;
}

// The lines of one pass, kLanes at a time: lines[m * kLanes + lane] is voxel m of the lane's line.
struct LineBatch {
  size_t first[kLanes];  // voxel index of each lane's voxel 0
  size_t count;          // lanes in use
  bool contiguous;       // all lanes in use, each line's voxel m right after the previous lane's
  const double* lines;
};

// Four lanes' voxels: one AVX2 register (two SSE2 ones by default); unaligned loads.
typedef double Quad __attribute__((vector_size(4 * sizeof(double)), aligned(sizeof(double))));
constexpr size_t kQuads = kLanes / 4;

// The interior outputs `at` (all taps inside the line) of a batch: each voxel's sum built tap by
// tap in ascending order from 0, as the voxel-by-voxel loop of the edges does, then divided by
// the kernel's weight. All lanes per instruction and kPositions independent sums (AVX2 where
// the CPU has it; multiply and add apart, no FMA, so the same bits).
__attribute__((target_clones("avx2", "default"))) void sum_interior(const double* lines, const long* at,
                                                                    const AxisKernel& k,
                                                                    double (*sums)[kLanes]) {
  Quad acc[kPositions][kQuads] = {};
  for (long d = -k.radius; d <= k.radius; ++d) {
    const double wd = k.w[static_cast<size_t>(std::labs(d))];
    for (size_t p = 0; p < kPositions; ++p) {
      const Quad* v = reinterpret_cast<const Quad*>(lines + static_cast<size_t>(at[p] + d) * kLanes);
      for (size_t q = 0; q < kQuads; ++q) acc[p][q] += wd * v[q];
    }
  }
  for (size_t p = 0; p < kPositions; ++p)
    for (size_t q = 0; q < kQuads; ++q) {
      const Quad mean = acc[p][q] / k.interior_weight;
      for (size_t l = 0; l < 4; ++l) sums[p][4 * q + l] = mean[l];
    }
}

// The batch's lines into `lines` (voxel m of lane l at m * kLanes + l; unused lanes 0), and
// whether its lanes are neighbouring voxels (the y and z passes of a level that reads every x),
// then read and written eight at a time.
void load_lines(const float* data, LineBatch& batch, size_t stride, long length, double* lines) {
  batch.contiguous = batch.count == kLanes;
  for (size_t l = 1; l < batch.count; ++l) batch.contiguous &= batch.first[l] == batch.first[0] + l;
  if (batch.contiguous) {
    for (long m = 0; m < length; ++m) {
      const float* in = data + batch.first[0] + static_cast<size_t>(m) * stride;
      for (size_t l = 0; l < kLanes; ++l) lines[static_cast<size_t>(m) * kLanes + l] = in[l];
    }
    return;
  }
  for (size_t l = 0; l < kLanes; ++l) {
    const float* in = data + batch.first[l];
    for (long m = 0; m < length; ++m)
      lines[static_cast<size_t>(m) * kLanes + l] = l < batch.count ? in[static_cast<size_t>(m) * stride] : 0.0;
  }
}

// Filters the batch's lines along an axis of `length` voxels and `stride`, writing the outputs
// at positions `interior` and `edge` of each line into `data`.
void filter_batch(float* data, const LineBatch& batch, size_t stride, long length, const AxisKernel& k,
                  const std::vector<uint32_t>& interior, const std::vector<uint32_t>& edge) {
  const auto store = [&](long i, size_t lane, double value) {
    data[batch.first[lane] + static_cast<size_t>(i) * stride] = static_cast<float>(value);
  };
  for (size_t g = 0; g < interior.size(); g += kPositions) {
    long at[kPositions];
    for (size_t p = 0; p < kPositions; ++p) at[p] = interior[std::min(g + p, interior.size() - 1)];
    double sums[kPositions][kLanes];
    sum_interior(batch.lines, at, k, sums);
    for (size_t p = 0; p < kPositions && g + p < interior.size(); ++p) {
      if (batch.contiguous) {  // neighbouring voxels: one vector store
        float* out = data + batch.first[0] + static_cast<size_t>(at[p]) * stride;
        for (size_t l = 0; l < kLanes; ++l) out[l] = static_cast<float>(sums[p][l]);
        continue;
      }
      for (size_t l = 0; l < batch.count; ++l) store(at[p], l, sums[p][l]);
    }
  }
  // Near the ends the taps outside are dropped and the rest renormalised.
  for (const uint32_t i : edge) {
    const long first = std::max(0L, long(i) - k.radius), last = std::min(length - 1, long(i) + k.radius);
    for (size_t l = 0; l < batch.count; ++l) {
      double sum = 0.0, weight = 0.0;
      for (long j = first; j <= last; ++j) {
        const double wj = k.w[static_cast<size_t>(std::labs(j - long(i)))];
        sum += wj * batch.lines[static_cast<size_t>(j) * kLanes + l];
        weight += wj;
      }
      store(i, l, sum / weight);
    }
  }
}

// One pass along `axis`: the lines starting at `line_starts` (voxel 0 of each) read from `in`,
// outputs at `outputs` along the axis written to `out` (which may be `in`: a batch's lines are
// read whole before any of its outputs is written).
void filter_axis(const float* in, float* out, const Dims& dims, int axis, const AxisKernel& k,
                 const std::vector<uint32_t>& outputs, const std::vector<size_t>& line_starts,
                 unsigned threads, const std::function<bool()>& cancelled) {
  const size_t stride = axis == 0 ? 1 : axis == 1 ? size_t(dims[0]) : size_t(dims[0]) * dims[1];
  const long length = dims[axis];
  std::vector<uint32_t> interior, edge;
  for (const uint32_t i : outputs) (long(i) >= k.radius && long(i) < length - k.radius ? interior : edge).push_back(i);
  const size_t batches = (line_starts.size() + kLanes - 1) / kLanes;
  parallel_for(batches, threads, cancelled, [&](size_t b) {
    LineBatch batch{};
    batch.count = std::min(kLanes, line_starts.size() - b * kLanes);
    std::copy_n(line_starts.begin() + std::ptrdiff_t(b * kLanes), batch.count, batch.first);
    const std::unique_ptr<double[]> lines(new double[static_cast<size_t>(length) * kLanes]);  // load_lines fills it
    load_lines(in, batch, stride, length, lines.get());
    batch.lines = lines.get();
    filter_batch(out, batch, stride, length, k, interior, edge);
  });
}

// `index` grown by `radius` on both sides, within [0, length).
std::vector<uint32_t> within_reach(const std::vector<uint32_t>& index, long radius, uint32_t length) {
  std::vector<char> reached(length, 0);
  for (const uint32_t i : index)
    std::fill(reached.begin() + std::max(0L, long(i) - radius),
              reached.begin() + std::min(long(length), long(i) + radius + 1), 1);
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < length; ++i)
    if (reached[i]) out.push_back(i);
  return out;
}

// Voxel 0 of every line along `axis` whose other two coordinates come from `across` (the lower
// axis fastest, so that neighbouring lanes read neighbouring memory).
std::vector<size_t> line_starts(const Dims& dims, int axis, const std::array<std::vector<uint32_t>, 3>& across) {
  const size_t stride[3] = {1, size_t(dims[0]), size_t(dims[0]) * dims[1]};
  const int inner = axis == 0 ? 1 : 0, outer = axis == 2 ? 1 : 2;
  std::vector<size_t> starts;
  starts.reserve(across[inner].size() * across[outer].size());
  for (const uint32_t o : across[outer])
    for (const uint32_t i : across[inner]) starts.push_back(o * stride[outer] + i * stride[inner]);
  return starts;
}

}  // namespace

VoxelSelection all_voxels(const Dims& dims) {
  VoxelSelection all;
  for (int a = 0; a < 3; ++a) {
    all.index[a].resize(dims[a]);
    std::iota(all.index[a].begin(), all.index[a].end(), 0u);
  }
  return all;
}

void gaussian_smooth(const float* input, float* out, const Dims& dims,
                     const std::array<double, 3>& sigma_voxels, const VoxelSelection& wanted,
                     unsigned threads, const std::function<bool()>& cancelled) {
  std::array<AxisKernel, 3> kernels;
  std::array<bool, 3> filtered{};
  // Along an axis not yet filtered, a pass must also produce every voxel the later pass's taps
  // read; along one already filtered, only the wanted voxels.
  std::array<std::vector<uint32_t>, 3> reach = wanted.index;
  for (int a = 0; a < 3; ++a) {
    filtered[a] = sigma_voxels[a] > 0.0 && dims[a] > 1;
    if (!filtered[a]) continue;
    kernels[a] = axis_kernel(sigma_voxels[a], dims[a]);
    reach[a] = within_reach(wanted.index[a], kernels[a].radius, dims[a]);
  }
  // The first pass reads `input`, the later ones what the passes before wrote into `out`.
  const float* source = input;
  for (int a = 0; a < 3; ++a) {
    if (!filtered[a]) continue;
    std::array<std::vector<uint32_t>, 3> across = reach;
    for (int b = 0; b < a; ++b) across[b] = wanted.index[b];
    filter_axis(source, out, dims, a, kernels[a], wanted.index[a], line_starts(dims, a, across), threads, cancelled);
    source = out;
  }
  if (source == input) std::copy_n(input, size_t(dims[0]) * dims[1] * dims[2], out);  // nothing to filter
}

}  // namespace regpipe::resample
