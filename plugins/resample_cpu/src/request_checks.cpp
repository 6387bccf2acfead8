#include "request_checks.hpp"

#include <regpipe/plugin.hpp>
#include <regpipe_common/affine_checks.hpp>

#include <climits>
#include <cmath>
#include <sstream>
#include <string>

namespace regpipe::resample {
namespace {

rp::Error invalid(const std::string& message) { return rp::Error(RP_INVALID_ARGUMENT, message); }

void check_dims(const char* what, const uint32_t dims[3]) {
  for (int a = 0; a < 3; ++a) {
    if (dims[a] == 0 || dims[a] > static_cast<uint32_t>(INT_MAX)) {
      std::ostringstream m;
      m << what << "=" << dims[0] << "x" << dims[1] << "x" << dims[2]
        << ": every dimension must be between 1 and " << INT_MAX;
      throw invalid(m.str());
    }
  }
}


}  // namespace

void check_request(const rp_resample_request& r) {
  if (!RP_HAS_MEMBER(&r, rp_resample_request, background))
    throw invalid("resample request size=" + std::to_string(r.size) +
                  " is smaller than ABI 1.0's " + std::to_string(sizeof(rp_resample_request)));
  const rp_image& in = *r.input;
  if (!RP_HAS_MEMBER(&in, rp_image, data))
    throw invalid("input image size=" + std::to_string(in.size) + " is smaller than ABI 1.0's " +
                  std::to_string(sizeof(rp_image)));
  if (in.data == nullptr) throw invalid("input image data is NULL");
  check_dims("input dims", in.dims);
  check_dims("out_dims", r.out_dims);
  regpipe_common::check_affine(in.voxel_to_world, "input voxel_to_world");
  regpipe_common::check_affine(r.out_voxel_to_world, "out_voxel_to_world");
  if (r.matrix != nullptr) regpipe_common::check_affine(r.matrix, "matrix");
  if (r.interpolation != RP_INTERP_NEAREST && r.interpolation != RP_INTERP_TRILINEAR &&
      r.interpolation != RP_INTERP_SINC && r.interpolation != RP_INTERP_BSPLINE)
    throw rp::Error(RP_UNSUPPORTED, "interpolation=" + std::to_string(r.interpolation) +
                                        " is not offered by resample.cpu; it supports " +
                                        std::to_string(RP_INTERP_NEAREST) + " (nearest), " +
                                        std::to_string(RP_INTERP_TRILINEAR) + " (trilinear), " +
                                        std::to_string(RP_INTERP_SINC) + " (windowed sinc), " +
                                        std::to_string(RP_INTERP_BSPLINE) + " (cubic B-spline)");
  for (int a = 0; a < 3; ++a) {
    const double s = r.prefilter_sigma_mm[a];
    if (!(s >= 0.0) || !std::isfinite(s)) {
      std::ostringstream m;
      m << "prefilter_sigma_mm[" << a << "]=" << s << " must be finite and >= 0 (0 = none)";
      throw invalid(m.str());
    }
  }
}

}  // namespace regpipe::resample
