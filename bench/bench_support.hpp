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

}  // namespace regpipe::bench
