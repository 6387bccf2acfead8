// Images resampled onto another image's grid through an affine transform: the registered
// image of `regpipe run` and the output of `regpipe apply`.
#pragma once

#include <regpipe/host/components.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/pipeline.hpp>
#include <regpipe/host/plugin_host.hpp>

#include <Eigen/Core>
#include <memory>
#include <string>
#include <vector>

namespace regpipe {

// nearest, trilinear, sinc, bspline: the resampler's RP_INTERP_*; label: for label maps, each
// output voxel takes the label whose indicator image interpolates highest there (trilinear).
enum class Interpolation { nearest, trilinear, sinc, bspline, label };

// "nearest", "trilinear", "sinc", "bspline", "label"; UserError for another name.
Interpolation interpolation_from_name(const std::string& name);
const std::vector<std::string>& interpolation_names();
// The RP_INTERP_* code; label has none (it is done by resample_labels).
int32_t interpolation_code(Interpolation interpolation);

struct CreatedResampler {
  std::unique_ptr<ResamplerInstance> instance;
  UsedComponent used;  // fallback_from says why earlier plugins of the list were not used
};

// The first resampler of the preference list that can be created here ([resample.cuda,
// resample.cpu]: the GPU when present). UserError when none can, with each one's reason.
CreatedResampler create_resampler(const ComponentSpec& spec, const PluginHost& plugins,
                                  HostServices& services);

// A zero image on `grid` (its dims, voxel_to_world and NIfTI header) for a resampling of an
// image of file type `type`: what resample_onto and resample_labels fill.
Image zero_image_on(const Image& grid, VoxelType type);

// `input` resampled onto `grid`: out(p) = input(ref_to_mov * p) at every voxel centre p of the
// grid, 0 outside the input. The result has the grid's dims, voxel_to_world and NIfTI header
// (an image written on a reference's grid keeps the reference's header, as FLIRT writes it)
// and the input's file_type. `interpolation` is an RP_INTERP_* code.
Image resample_onto(ResamplerInstance& resampler, const Image& input, const Image& grid,
                    const Eigen::Matrix4d& ref_to_mov, int32_t interpolation);

// The label-preserving resampling (Interpolation::label) of a label map, on the CPU: at each
// grid voxel, the label whose indicator's trilinear interpolation is largest, which is the
// label with the largest sum of trilinear weights among the eight input voxels around the
// point (ties go to the label nearest-neighbour sampling picks). Positions and the domain are
// resample.cpu's, so the footprint is trilinear's; outside it 0. Output values are always
// input values. Same result as resample_onto.
Image resample_labels(const Image& labels, const Image& grid, const Eigen::Matrix4d& ref_to_mov);

}  // namespace regpipe
