#include <regpipe_common/affine_checks.hpp>
#include <regpipe_common/resample_request.hpp>

#include <regpipe/plugin.hpp>

#include <cmath>
#include <sstream>

namespace regpipe_common {
namespace {

// A linear part whose determinant is this small relative to the product of its column
// lengths collapses space onto a plane up to rounding: no sampling geometry survives it.
constexpr double kSingularRelativeDeterminant = 1e-12;

[[noreturn]] void fail(const std::string& what, const std::string& problem) {
  throw rp::Error(RP_INVALID_ARGUMENT, what + " " + problem);
}

}  // namespace

void check_affine(const double m[16], const std::string& what) {
  for (int i = 0; i < 16; ++i)
    if (!std::isfinite(m[i])) {
      std::ostringstream s;
      s << "has a non-finite entry (" << m[i] << ") at row " << i / 4 << ", column " << i % 4;
      fail(what, s.str());
    }
  if (m[12] != 0.0 || m[13] != 0.0 || m[14] != 0.0 || m[15] != 1.0) {
    std::ostringstream s;
    s << "has last row (" << m[12] << ", " << m[13] << ", " << m[14] << ", " << m[15]
      << "); an affine matrix ends with 0 0 0 1";
    fail(what, s.str());
  }
  const double det = m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) +
                     m[2] * (m[4] * m[9] - m[5] * m[8]);
  const double scale = axis_spacing(m, 0) * axis_spacing(m, 1) * axis_spacing(m, 2);
  if (!(std::fabs(det) > kSingularRelativeDeterminant * scale)) {
    std::ostringstream s;
    s << "is singular (determinant " << det << "); it must be invertible";
    fail(what, s.str());
  }
}

}  // namespace regpipe_common
