// Where a registration starts: registration.initial_transform, or one of the initialisations.
#pragma once

#include <regpipe/host/driver.hpp>
#include <regpipe/host/pipeline.hpp>
#include <regpipe/host/transform.hpp>

#include <future>
#include <string>

namespace regpipe {

// The start as 12 parameters about `centre` (the reference's centre of mass). The parameters
// the DOF does not free keep their start values: a 6-DOF registration from a 12-DOF initial
// transform refines its rotation and translation and keeps its scales and skews.
// `moving_centre` is the moving image's centre of mass (computed beside the pyramid) when the
// initialisation needs it. Throws UserError naming registration.initial_transform when its
// file cannot be read or mirrors.
AffineParams start_params(const PipelineRegistration& reg, const RegistrationImages& images,
                          const Eigen::Vector3d& centre, std::future<Eigen::Vector3d>& moving_centre);

// Whether the initialisation needs the moving image's centre of mass.
bool start_needs_moving_centre(const PipelineRegistration& reg);

// How the start is named in messages: "registration.initial_transform 'x.mat'" or
// "initialisation centre_of_mass".
std::string start_name(const PipelineRegistration& reg);

}  // namespace regpipe
