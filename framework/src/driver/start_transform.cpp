#include "driver/start_transform.hpp"

#include <regpipe/host/error.hpp>
#include <regpipe/host/transform_file.hpp>
#include <regpipe/host/transform_io.hpp>

#include <Eigen/Eigenvalues>
#include <array>

namespace regpipe {
namespace {

Eigen::Vector3d grid_centre(const Image& image) {
  const Eigen::Vector4d middle(0.5 * (double(image.dims[0]) - 1.0), 0.5 * (double(image.dims[1]) - 1.0),
                               0.5 * (double(image.dims[2]) - 1.0), 1.0);
  return (image.voxel_to_world * middle).head<3>();
}

// The mass's covariance in world mm^2 and its centre, from the index moments.
struct MassShape {
  Eigen::Vector3d centre;
  Eigen::Matrix3d covariance;
};
MassShape mass_shape(const Image& image, const char* which) {
  const IndexMoments m = index_moments(image);
  if (m.m0 == 0.0)
    throw UserError(std::string("registration.initialisation: moments: the ") + which +
                    " image has no positive voxel, so no principal axes");
  const Eigen::Vector3d mean = m.m1 / m.m0;
  const Eigen::Matrix3d index_covariance = m.m2 / m.m0 - mean * mean.transpose();
  const Eigen::Matrix3d a = image.voxel_to_world.topLeftCorner<3, 3>();
  return {(image.voxel_to_world * mean.homogeneous()).head<3>(), a * index_covariance * a.transpose()};
}

// Principal axes as columns, largest variance first.
Eigen::Matrix3d principal_axes(const Eigen::Matrix3d& covariance) {
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> solver(covariance);
  return solver.eigenvectors().rowwise().reverse();  // Eigen sorts ascending
}

// Reference world -> moving world taking the reference's principal axes onto the moving
// image's and its centre of mass onto the moving one's. Each axis has two directions: of the
// four proper rotations that match them, the one nearest the identity (largest trace), since
// the headers are rarely more than 90 degrees off and the search refines the rest.
Eigen::Matrix4d principal_axes_transform(const Image& reference, const Image& moving) {
  const MassShape r = mass_shape(reference, "reference"), m = mass_shape(moving, "moving");
  const Eigen::Matrix3d er = principal_axes(r.covariance), em = principal_axes(m.covariance);
  Eigen::Matrix3d best = Eigen::Matrix3d::Identity();
  double best_trace = -std::numeric_limits<double>::infinity();
  for (const std::array<double, 3> signs : {std::array{1.0, 1.0, 1.0}, std::array{1.0, -1.0, -1.0},
                                            std::array{-1.0, 1.0, -1.0}, std::array{-1.0, -1.0, 1.0}}) {
    Eigen::Matrix3d rotation = em * Eigen::Vector3d(signs[0], signs[1], signs[2]).asDiagonal() * er.transpose();
    if (rotation.determinant() < 0.0) rotation = -rotation;  // the eigenvector bases' own handedness
    if (rotation.trace() > best_trace) best_trace = rotation.trace(), best = rotation;
  }
  Eigen::Matrix4d t = Eigen::Matrix4d::Identity();
  t.topLeftCorner<3, 3>() = best;
  t.topRightCorner<3, 1>() = m.centre - best * r.centre;
  return t;
}

// FLIRT without -usesqform: the two images' FSL scaled-voxel frames taken as one (the headers'
// orientations ignored), then the centres of mass put together.
Eigen::Matrix4d scaled_voxels_transform(const Image& reference, const Image& moving,
                                        const Eigen::Vector3d& reference_centre,
                                        const Eigen::Vector3d& moving_centre) {
  Eigen::Matrix4d t = from_fsl_matrix(Eigen::Matrix4d::Identity(), reference, moving);
  t.topRightCorner<3, 1>() += moving_centre - (t * reference_centre.homogeneous()).head<3>();
  return t;
}

AffineParams translation_params(const Eigen::Vector3d& shift) {
  AffineParams p = identity_params();
  for (int i = 0; i < 3; ++i) p[3 + i] = shift[i];
  return p;
}

AffineParams initial_transform_params(const PipelineRegistration& reg, const RegistrationImages& images,
                                      const Eigen::Vector3d& centre) {
  const std::filesystem::path& path = *reg.initial_transform;
  try {
    const TransformFormat format = reg.initial_transform_format.value_or(detect_transform_format(path));
    return matrix_to_params(read_transform(path, format, {&images.moving, &images.reference}), centre);
  } catch (const UserError& e) {
    throw UserError("registration.initial_transform '" + path.string() + "': " + e.what());
  }
}

}  // namespace

bool start_needs_moving_centre(const PipelineRegistration& reg) {
  return !reg.initial_matrix && !reg.initial_transform &&
         (reg.initialisation == "centre_of_mass" || reg.initialisation == "scaled_voxels");
}

std::string start_name(const PipelineRegistration& reg) {
  if (reg.initial_matrix) return "the previous stage's result";
  if (reg.initial_transform) return "registration.initial_transform '" + reg.initial_transform->string() + "'";
  return "initialisation " + reg.initialisation;
}

AffineParams start_params(const PipelineRegistration& reg, const RegistrationImages& images,
                          const Eigen::Vector3d& centre, std::future<Eigen::Vector3d>& moving_centre) {
  if (reg.initial_matrix) return matrix_to_params(*reg.initial_matrix, centre);
  if (reg.initial_transform) return initial_transform_params(reg, images, centre);
  if (reg.initialisation == "centre_of_mass") return translation_params(moving_centre.get() - centre);
  if (reg.initialisation == "geometric_centre")
    return translation_params(grid_centre(images.moving) - grid_centre(images.reference));
  if (reg.initialisation == "moments")
    return matrix_to_params(principal_axes_transform(images.reference, images.moving), centre);
  if (reg.initialisation == "scaled_voxels")
    return matrix_to_params(scaled_voxels_transform(images.reference, images.moving, centre, moving_centre.get()),
                            centre);
  return identity_params();
}

}  // namespace regpipe
