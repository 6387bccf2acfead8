// Resampling an image through a displacement field: the CPU reference of a field resampler.
#pragma once

#include <regpipe_common/fields/displacement_field.hpp>
#include <regpipe_common/fields/field_execution.hpp>

#include <regpipe/abi.h>

#include <vector>

namespace regpipe_common {

// out(x) = moving(x + u(x)) at every point x of the `output` grid (x fastest), u sampled from
// `field` (zero outside its grid, so the output may extend beyond the field). moving is read
// trilinearly (regpipe_common::trilinear, the resamplers' and costs' sampling) inside its
// sampling domain [0, n-1]^3 and is `background` outside it. Throws
// rp::Error(RP_INVALID_ARGUMENT) for a bad moving or output geometry.
std::vector<float> warp_image(const rp_image& moving, const DisplacementFieldView& field,
                              const FieldGeometry& output, float background,
                              Execution execution = Execution::parallel);

}  // namespace regpipe_common
