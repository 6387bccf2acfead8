// What every resampler needs on the host before sampling: validation of an
// rp_resample_request (every refusal names the member, the value and what would work), voxel
// sizes, and the Gaussian prefilter's kernel, so resample.cpu and resample.cuda refuse and
// smooth alike.
#pragma once

#include <regpipe/abi.h>

#include <cstddef>
#include <initializer_list>
#include <vector>

namespace regpipe_common {

// Throws rp::Error: RP_INVALID_ARGUMENT for a malformed request (sizes, zero or oversized
// dims, NULL data, non-finite or singular matrices, negative sigma), RP_UNSUPPORTED for an
// interpolation not in `offered`, naming `component`, what it offers and, if given,
// `alternative` (the component that offers more). `host_output` false: the output goes to
// device memory (RP_EXT_DEVICE_IMAGE's resample_to_device), out_data is not read.
void check_resample_request(const rp_resample_request& request, const char* component,
                            std::initializer_list<int32_t> offered, const char* alternative = nullptr,
                            bool host_output = true);

// Voxel size along `axis`: the norm of column `axis` of a row-major 4x4 voxel_to_world.
double axis_spacing(const double voxel_to_world[16], int axis);

// The separable Gaussian prefilter's weights for offsets 0..radius (symmetric, unnormalised:
// each output normalises by the taps it used, so edges renormalise and a constant stays
// constant). Truncated at 3 sigma and never wider than the line.
std::vector<double> gaussian_half_kernel(double sigma_voxels, std::size_t line_length);

}  // namespace regpipe_common
