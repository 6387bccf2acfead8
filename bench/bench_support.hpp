// Pieces every benchmark driver needs: the device named in its tables, and medians.
#pragma once

#include <regpipe/host/components.hpp>
#include <regpipe/host/image.hpp>

#include <array>
#include <string>
#include <vector>

namespace regpipe::bench {

// "NVIDIA H100 80GB HBM3 (132 SMs)", "none" without a device, or "none (built without CUDA)".
std::string device_name();

// The image resampled onto a grid of `dims` voxels spanning its voxel centres (same
// orientation and origin), with the pyramid's Gaussian anti-aliasing where the grid is coarser:
// Li & Kumar's 256x256x160 "1 mm" volume and its levels, made from any image.
Image resample_onto(const Image& image, const std::array<uint32_t, 3>& dims, ResamplerInstance& resampler);

// The median of the samples (the upper one of an even count); 0 for none.
double median(std::vector<double> samples);

// A level of Li & Kumar's volume: chris_t1 on 256x256x160 ("1 mm") and its 8/4/2 mm grids.
struct Level {
  double mm;         // the paper's name for the level
  std::string name;  // "1 mm (256x256x160)"
  Image image;
};
// The four levels, coarsest first, of `image` resampled onto Li & Kumar's grids.
std::vector<Level> li_kumar_levels(const Image& image, ResamplerInstance& resampler);

// k small random transforms about the reference's centre (rotations up to 0.1 rad, shifts up
// to 5 mm), 16 doubles each, the same every run.
std::vector<double> small_random_matrices(const Image& reference, size_t k);

// Microseconds per evaluation: the median over `repetitions` batched calls of k transforms
// (after one warm-up call), divided by k.
double us_per_eval(CostInstance& cost, const std::vector<double>& matrices, size_t k, int repetitions);

// A Markdown table header: | first | columns... | and its rule.
void print_header(const char* first, const std::vector<std::string>& columns);

}  // namespace regpipe::bench
