#include <regpipe/host/error.hpp>
#include <regpipe/host/transform.hpp>

#include <regpipe_common/parallel_slabs.hpp>

#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>
#include <sstream>

namespace regpipe {
namespace {

enum : size_t { kRx, kRy, kRz, kTx, kTy, kTz, kSx, kSy, kSz, kKxy, kKxz, kKyz };

Eigen::Matrix3d rotation_zyx(double rx, double ry, double rz) {
  const Eigen::Matrix3d x = Eigen::AngleAxisd(rx, Eigen::Vector3d::UnitX()).toRotationMatrix();
  const Eigen::Matrix3d y = Eigen::AngleAxisd(ry, Eigen::Vector3d::UnitY()).toRotationMatrix();
  const Eigen::Matrix3d z = Eigen::AngleAxisd(rz, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  return z * y * x;
}

// Angles (rx, ry, rz) with R = Rz*Ry*Rx and ry in [-pi/2, pi/2]. With c = cos(ry) >= 0,
// R(2,0) = -sin(ry), R(2,1) = c sin(rx), R(2,2) = c cos(rx). rz then comes from R*Rx^T =
// Rz*Ry, whose second column is (-sin rz, cos rz, 0): computed from the rx actually chosen,
// it stays consistent near gimbal lock (c -> 0), where rx alone is ill-conditioned and only
// rz -/+ rx is defined (there rx = 0 is chosen).
Eigen::Vector3d euler_zyx(const Eigen::Matrix3d& r) {
  const double cos_ry = std::hypot(r(0, 0), r(1, 0));
  const double rx = cos_ry < 1e-12 ? 0.0 : std::atan2(r(2, 1), r(2, 2));
  const double ry = std::atan2(-r(2, 0), cos_ry);
  const double s = std::sin(rx), c = std::cos(rx);
  const double rz = std::atan2(s * r(0, 2) - c * r(0, 1), c * r(1, 1) - s * r(1, 2));
  return {rx, ry, rz};
}

std::string describe(const Eigen::Matrix3d& a) {
  std::ostringstream text;
  text << "[" << a.row(0) << "; " << a.row(1) << "; " << a.row(2) << "]";
  return text.str();
}

}  // namespace

AffineParams identity_params() {
  AffineParams p{};
  p[kSx] = p[kSy] = p[kSz] = 1.0;
  return p;
}

Eigen::Matrix4d params_to_matrix(const AffineParams& p, const Eigen::Vector3d& centre) {
  Eigen::Matrix3d skew = Eigen::Matrix3d::Identity();
  skew(0, 1) = p[kKxy];
  skew(0, 2) = p[kKxz];
  skew(1, 2) = p[kKyz];
  const Eigen::Vector3d scale(p[kSx], p[kSy], p[kSz]);
  const Eigen::Matrix3d a = rotation_zyx(p[kRx], p[kRy], p[kRz]) * skew * scale.asDiagonal();
  const Eigen::Vector3d t(p[kTx], p[kTy], p[kTz]);

  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  m.topLeftCorner<3, 3>() = a;
  m.topRightCorner<3, 1>() = centre + t - a * centre;
  return m;
}

AffineParams matrix_to_params(const Eigen::Matrix4d& m, const Eigen::Vector3d& centre) {
  const Eigen::Matrix3d a = m.topLeftCorner<3, 3>();
  const double det = a.determinant();
  const double size = a.norm();
  if (!(std::isfinite(det) && det > 1e-12 * size * size * size))
    throw UserError("the affine matrix " + describe(a) + " has determinant " + std::to_string(det) +
                    ": it is singular or a reflection, which the 12 parameters (rotations, "
                    "positive scales, skews) cannot express");

  // A = Q*U, Q orthonormal and U upper triangular (Householder QR); flipping signs so that
  // U has a positive diagonal makes Q a rotation (det A > 0) and the decomposition unique.
  const Eigen::HouseholderQR<Eigen::Matrix3d> qr(a);
  Eigen::Matrix3d q = qr.householderQ();
  Eigen::Matrix3d u = qr.matrixQR().triangularView<Eigen::Upper>();
  const Eigen::Vector3d signs = u.diagonal().cwiseSign();
  q = q * signs.asDiagonal();
  u = signs.asDiagonal() * u;

  // U = K*S: S = diag(U), K = U*S^-1.
  AffineParams p{};
  const Eigen::Vector3d angles = euler_zyx(q);
  p[kRx] = angles.x();
  p[kRy] = angles.y();
  p[kRz] = angles.z();
  p[kSx] = u(0, 0);
  p[kSy] = u(1, 1);
  p[kSz] = u(2, 2);
  p[kKxy] = u(0, 1) / u(1, 1);
  p[kKxz] = u(0, 2) / u(2, 2);
  p[kKyz] = u(1, 2) / u(2, 2);
  // m's translation is c + t - A*c.
  const Eigen::Vector3d t = m.topRightCorner<3, 1>() - centre + a * centre;
  p[kTx] = t.x();
  p[kTy] = t.y();
  p[kTz] = t.z();
  return p;
}

Eigen::Vector3d centre_of_mass(const Image& image) {
  double total = 0.0;
  Eigen::Vector3d weighted_index = Eigen::Vector3d::Zero();
  // Parallel slabs of z planes when every sum is exact: integer weights (integer file
  // types, as most MR and CT images are) and every partial sum an integer below 2^53, so the
  // result is the serial loop's bit for bit in any order. Otherwise the serial loop below,
  // whose rounding registrations were made with.
  struct Slab {
    double total = 0.0, x = 0.0, y = 0.0, z = 0.0, max = 0.0;
    bool integral = true;
  };
  const uint32_t nx = image.dims[0], ny = image.dims[1], nz = image.dims[2];
  const size_t plane = size_t(nx) * ny;
  const size_t slabs = std::min<size_t>(nz, 64);
  std::vector<Slab> parts(slabs);
  std::atomic<bool> fractional{false};  // a slab found a non-integer weight: all stop
  regpipe_common::parallel_slabs(slabs, [&](size_t s) {
    Slab p;
    const uint32_t z0 = uint32_t(regpipe_common::slab_begin(nz, slabs, s));
    const uint32_t z1 = uint32_t(regpipe_common::slab_begin(nz, slabs, s + 1));
    for (uint32_t z = z0; z < z1; ++z) {
      const float* v = image.data.data() + z * plane;
      for (uint32_t y = 0; y < ny; ++y, v += nx) {
        if (!p.integral || fractional.load(std::memory_order_relaxed)) {
          fractional.store(true, std::memory_order_relaxed);
          parts[s].integral = false;
          return;
        }
        for (uint32_t x = 0; x < nx; ++x) {
          const double w = v[x] > 0.0f ? double(v[x]) : 0.0;
          if (w == 0.0) continue;
          p.integral = p.integral && w < 0x1p53 && double(int64_t(w)) == w;  // no libm floor call
          p.max = std::max(p.max, w);
          p.total += w;
          p.x += w * x;
          p.y += w * y;
          p.z += w * z;
        }
      }
    }
    parts[s] = p;
  });
  double max = 0.0;
  bool integral = true;
  for (const Slab& p : parts) {
    max = std::max(max, p.max);
    integral = integral && p.integral;
  }
  const double largest_index = std::max({nx, ny, nz, 1u});
  if (integral && max * double(image.voxel_count()) * largest_index < 0x1p53) {
    for (const Slab& p : parts) {
      total += p.total;
      weighted_index += Eigen::Vector3d(p.x, p.y, p.z);
    }
  } else {
    // The same additions in the same order as a loop over voxels adding w and w (x, y, z),
    // the index conversions hoisted out of the voxel loop.
    std::vector<double> xs(nx);
    for (uint32_t x = 0; x < nx; ++x) xs[x] = x;
    double sx = 0.0, sy = 0.0, sz = 0.0;
    const float* v = image.data.data();
    for (uint32_t z = 0; z < nz; ++z) {
      const double zd = z;
      for (uint32_t y = 0; y < ny; ++y, v += nx) {
        const double yd = y;
        for (uint32_t x = 0; x < nx; ++x) {
          const double w = v[x] > 0.0f ? double(v[x]) : 0.0;
          total += w;
          sx += w * xs[x];
          sy += w * yd;
          sz += w * zd;
        }
      }
    }
    weighted_index = Eigen::Vector3d(sx, sy, sz);
  }
  const Eigen::Vector3d index =
      total > 0.0
          ? Eigen::Vector3d(weighted_index / total)
          : Eigen::Vector3d(0.5 * (Eigen::Vector3d(image.dims[0], image.dims[1], image.dims[2]) -
                                   Eigen::Vector3d::Ones()));
  // The voxel -> world map is affine, so the world centre is the map of the index centre.
  return image.voxel_to_world.topLeftCorner<3, 3>() * index +
         image.voxel_to_world.topRightCorner<3, 1>();
}

double mean_displacement_mm(const Eigen::Matrix4d& a, const Eigen::Matrix4d& b, const Image& region,
                            float threshold) {
  // (a - b) * voxel_to_world maps a voxel index straight to its displacement.
  const Eigen::Matrix4d index_to_displacement = (a - b) * region.voxel_to_world;
  const Eigen::Matrix3d linear = index_to_displacement.topLeftCorner<3, 3>();
  const Eigen::Vector3d offset = index_to_displacement.topRightCorner<3, 1>();
  // Summed slice by slice on every core, the slices' sums then in order: the same result
  // whatever the number of cores.
  const size_t nx = region.dims[0], ny = region.dims[1], nz = region.dims[2];
  std::vector<double> slice_sum(nz, 0.0);
  std::vector<size_t> slice_count(nz, 0);
  regpipe_common::parallel_slabs(nz, [&](size_t z) {
    double sum = 0.0;
    size_t count = 0, i = z * nx * ny;
    for (size_t y = 0; y < ny; ++y)
      for (size_t x = 0; x < nx; ++x, ++i)
        if (region.data[i] > threshold) {
          sum += (linear * Eigen::Vector3d(double(x), double(y), double(z)) + offset).norm();
          ++count;
        }
    slice_sum[z] = sum;
    slice_count[z] = count;
  });
  double sum = 0.0;
  size_t count = 0;
  for (size_t z = 0; z < nz; ++z) {
    sum += slice_sum[z];
    count += slice_count[z];
  }
  if (count == 0)
    throw UserError("no voxel of the region is above the threshold " + std::to_string(threshold) +
                    ": the mean displacement is undefined");
  return sum / double(count);
}

Eigen::Matrix4d rigid_about(const Eigen::Vector3d& axis, double angle_rad,
                            const Eigen::Vector3d& centre, const Eigen::Vector3d& translation) {
  const double length = axis.norm();
  if (!(length > 0.0)) throw UserError("rigid_about: the rotation axis is the zero vector");
  // Rodrigues: R = I + sin(a) [k]x + (1 - cos(a)) [k]x^2 for the unit axis k.
  const Eigen::Vector3d k = axis / length;
  Eigen::Matrix3d cross;
  cross << 0, -k.z(), k.y(), k.z(), 0, -k.x(), -k.y(), k.x(), 0;
  const Eigen::Matrix3d r = Eigen::Matrix3d::Identity() + std::sin(angle_rad) * cross +
                            (1.0 - std::cos(angle_rad)) * cross * cross;

  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  m.topLeftCorner<3, 3>() = r;
  m.topRightCorner<3, 1>() = centre + translation - r * centre;
  return m;
}

}  // namespace regpipe
