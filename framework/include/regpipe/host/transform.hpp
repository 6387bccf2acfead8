// The 12-parameter affine of abi.h and the geometry the driver and tests need.
#pragma once

#include <regpipe/abi.h>
#include <regpipe/host/image.hpp>

#include <Eigen/Core>
#include <array>

namespace regpipe {

using AffineParams = std::array<double, RP_PARAM_COUNT>;

// rotations 0, translations 0, scales 1, skews 0.
AffineParams identity_params();

// x_moving = R*K*S*(x_ref - c) + c + t with R = Rz*Ry*Rx (abi.h). Reference world -> moving world.
Eigen::Matrix4d params_to_matrix(const AffineParams& p, const Eigen::Vector3d& centre);

// Inverse of params_to_matrix for any affine with positive determinant (QR-style
// decomposition into R, K, S). Throws UserError for a singular or reflecting matrix.
AffineParams matrix_to_params(const Eigen::Matrix4d& m, const Eigen::Vector3d& centre);

// Intensity-weighted centre of mass in world mm (intensities below 0 count as 0); the grid
// centre for an all-zero image.
Eigen::Vector3d centre_of_mass(const Image& image);

// Mean over the voxels of `region` where region value > threshold of |a*p - b*p| (mm),
// p the voxel centre in world coordinates. The metric of every registration test.
double mean_displacement_mm(const Eigen::Matrix4d& a, const Eigen::Matrix4d& b,
                            const Image& region, float threshold);

// Rotation about an axis through `centre` by `angle_rad`, then a translation: a rigid world
// transform for building known-transform test cases.
Eigen::Matrix4d rigid_about(const Eigen::Vector3d& axis, double angle_rad,
                            const Eigen::Vector3d& centre, const Eigen::Vector3d& translation);

}  // namespace regpipe
