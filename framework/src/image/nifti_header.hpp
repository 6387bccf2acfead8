// NIfTI-1 headers through niftilib (nifti1_io, which ITK ships and links): the fields ITK 5.2's
// NiftiImageIO does not give or keep. It reads the qform where the NIfTI standard, FSL and
// nibabel take the sform, and writes both codes as 1 (scanner): an MNI reference's output
// would leave MNI space, and an sform-edited one's would sit where its qform says.
#pragma once

#include <regpipe/host/image.hpp>

#include <filesystem>
#include <mutex>
#include <optional>
#include <vector>

namespace regpipe::image_detail {

// The NIfTI-1 datatype code (DT_*) of `type`.
int nifti_datatype_code(VoxelType type);

// Held while making an ITK ImageIO or reading a header with ITK or niftilib: ITK 5.2's
// NiftiImageIO keeps header state in statics and sets niftilib's global debug level.
std::mutex& header_mutex();

// The header of a NIfTI-1 file (.nii, .nii.gz, or a .hdr/.img pair with the NIfTI magic);
// nothing for Analyze 7.5 or a file niftilib cannot read.
std::optional<NiftiHeader> read_nifti_header(const std::filesystem::path& path);

// Places a NIfTI image (read by ITK, `image.voxel_to_world` ITK's) by the NIfTI standard's
// rule, as FSL and nibabel do: its sform when sform_code > 0, where ITK 5.2 takes the qform;
// ITK's orthonormal reading stays where the two forms agree to kSameGridMm. Sets image.nifti.
// A warning names a file whose forms disagree by more than 0.01 mm; a singular or non-finite
// sform is a UserError "cannot read image '<path>': ...".
void apply_nifti_header(Image& image, const std::filesystem::path& path);

// Largest distance (mm) between where two voxel -> world matrices put the corners of a grid.
double corner_distance_mm(const Eigen::Matrix4d& a, const Eigen::Matrix4d& b,
                          const std::array<uint32_t, 3>& dims);

// Where the two forms of one header may differ by float rounding alone (a file that stores
// both from one matrix): 1 um over the image.
constexpr double kSameGridMm = 1e-3;

// Writes `image` as a single-file NIfTI-1 to `file` (gzipped on several threads when its name
// ends .gz; a temporary that becomes `path`, which messages name) with its `nifti` header's
// codes, description, units and display range: the bytes niftilib's nifti_image_write would
// write. On the header's own grid its qform and sform are written as they were read; on
// another grid they are made from voxel_to_world (the qform also from a sform-only header, so
// both say where the voxels are). Throws UserError for a sheared grid that no form of the
// header can store, or a file that cannot be written whole.
void write_nifti(const Image& image, const std::filesystem::path& file, const std::filesystem::path& path,
                 VoxelType type);
// The same for a series of volumes on `image`'s grid (and with its header, or without one
// both forms from the grid with codes 1): a 4D file whose 4th voxel size is volume_step when
// there are several.
void write_nifti(const Image& image, const std::vector<const std::vector<float>*>& volumes,
                 double volume_step, const std::filesystem::path& file, const std::filesystem::path& path,
                 VoxelType type);

}  // namespace regpipe::image_detail
