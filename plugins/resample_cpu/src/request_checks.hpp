// Validation of an rp_resample_request before any work: every refusal names the member, the
// value and what would work.
#pragma once

#include <regpipe/abi.h>

namespace regpipe::resample {

// Throws rp::Error: RP_INVALID_ARGUMENT for a malformed request (sizes, zero or oversized
// dims, NULL data, non-finite or singular matrices, negative sigma), RP_UNSUPPORTED for an
// interpolation other than RP_INTERP_NEAREST/TRILINEAR/SINC/BSPLINE.
void check_request(const rp_resample_request& request);

}  // namespace regpipe::resample
