#include <regpipe/plugin.hpp>
#include <regpipe_common/affine_checks.hpp>
#include <regpipe_common/resample_request.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <sstream>
#include <string>

namespace regpipe_common {
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

const char* interpolation_name(int32_t code) {
  switch (code) {
    case RP_INTERP_NEAREST: return "nearest";
    case RP_INTERP_TRILINEAR: return "trilinear";
    case RP_INTERP_SINC: return "windowed sinc";
    case RP_INTERP_BSPLINE: return "cubic B-spline";
    default: return nullptr;
  }
}

}  // namespace

void check_resample_request(const rp_resample_request& r, const char* component,
                            std::initializer_list<int32_t> offered, const char* alternative,
                            bool host_output) {
  if (!RP_HAS_MEMBER(&r, rp_resample_request, background))
    throw invalid("resample request size=" + std::to_string(r.size) +
                  " is smaller than ABI 1.0's " + std::to_string(sizeof(rp_resample_request)));
  if (r.input == nullptr) throw invalid("input image is NULL");
  const rp_image& in = *r.input;
  if (!RP_HAS_MEMBER(&in, rp_image, data))
    throw invalid("input image size=" + std::to_string(in.size) + " is smaller than ABI 1.0's " +
                  std::to_string(sizeof(rp_image)));
  if (in.data == nullptr) throw invalid("input image data is NULL");
  if (host_output && r.out_data == nullptr) throw invalid("out_data is NULL");
  check_dims("input dims", in.dims);
  check_dims("out_dims", r.out_dims);
  check_affine(in.voxel_to_world, "input voxel_to_world");
  check_affine(r.out_voxel_to_world, "out_voxel_to_world");
  if (r.matrix != nullptr) check_affine(r.matrix, "matrix");
  if (std::find(offered.begin(), offered.end(), r.interpolation) == offered.end()) {
    std::ostringstream m;
    m << "interpolation=" << r.interpolation;
    if (const char* name = interpolation_name(r.interpolation)) m << " (" << name << ")";
    m << " is not offered by " << component << "; it supports";
    const char* separator = " ";
    for (int32_t code : offered) {
      m << separator << code << " (" << interpolation_name(code) << ")";
      separator = ", ";
    }
    if (alternative != nullptr) m << "; " << alternative << " offers more";
    throw rp::Error(RP_UNSUPPORTED, m.str());
  }
  for (int a = 0; a < 3; ++a) {
    const double s = r.prefilter_sigma_mm[a];
    if (!(s >= 0.0) || !std::isfinite(s)) {
      std::ostringstream m;
      m << "prefilter_sigma_mm[" << a << "]=" << s << " must be finite and >= 0 (0 = none)";
      throw invalid(m.str());
    }
  }
}

double axis_spacing(const double v2w[16], int axis) {
  return std::sqrt(v2w[axis] * v2w[axis] + v2w[4 + axis] * v2w[4 + axis] +
                   v2w[8 + axis] * v2w[8 + axis]);
}

std::vector<double> gaussian_half_kernel(double sigma, std::size_t line_length) {
  constexpr double kTruncation = 3.0;  // kernel radius in standard deviations
  // Taps beyond the line never contribute, so the radius never needs to exceed it.
  const std::size_t radius = std::min(static_cast<std::size_t>(std::ceil(kTruncation * sigma)),
                                      line_length > 0 ? line_length - 1 : 0);
  std::vector<double> w(radius + 1);
  for (std::size_t k = 0; k <= radius; ++k) w[k] = std::exp(-0.5 * (k / sigma) * (k / sigma));
  return w;
}

}  // namespace regpipe_common
