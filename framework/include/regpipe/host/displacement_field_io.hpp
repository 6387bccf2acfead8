// Displacement-field files as ITK and ANTs read and write them: antsRegistration's
// *Warp.nii.gz and *InverseWarp.nii.gz, which antsApplyTransforms reads. The form is ITK
// NiftiImageIO's for itk::Image<itk::Vector<float, 3>, 3>:
//   - NIfTI-1, dim[0] = 5, shape (nx, ny, nz, 1, 3): the three components on the 5th axis;
//   - intent_code 1007 (NIFTI_INTENT_VECTOR), float32;
//   - each vector in ITK's physical frame, LPS millimetres, stored as is (ITK does not turn
//     it into RAS, although the grid's qform and sform are RAS as always); the field maps a
//     world point x of its grid's space to x + u(x) (regpipe_common/fields/displacement_field.hpp).
// Measured with ITK 5.2 and nibabel 5.0: ITK writes dim [5 nx ny nz 1 3], intent 1007, float32,
// qform and sform code 1 and the vectors as is; it reads a 5D file with intent 0 or 1006
// (DISPVECT) as a 5D scalar image, not as a field, so antsApplyTransforms cannot use one.
#pragma once

#include <regpipe_common/fields/displacement_field.hpp>

#include <filesystem>

namespace regpipe {

// Whether `path` holds a NIfTI-1 header (by content: sizeof_hdr 348 and the magic "n+1" or
// "ni1"), plain or gzipped, whatever its extension. `regpipe apply` sends such transform
// arguments to read_displacement_field, which says what a file that is no field holds.
bool is_nifti_file(const std::filesystem::path& path);

// Reads a displacement field written in the form above (float64 components are accepted and
// read as float32) from a file named .nii.gz or .nii (ITK's NIfTI reader asks for it). The grid is placed as read_image places an image (the sform when
// sform_code > 0, as the NIfTI standard, FSL and nibabel; else the qform), so oblique grids
// keep their direction. Throws UserError naming the file and what is wrong: missing or not a
// file, another extension, not NIfTI, a 3D or 4D scalar image, another component count, time points, another
// intent code (with how to set it), an integer data type, truncated data, a non-finite vector
// (with its voxel).
regpipe_common::DisplacementField read_displacement_field(const std::filesystem::path& path);

// Writes `field` in the form above through ITK's NIfTI writer (qform and sform from the grid,
// codes 1), atomically (a temporary file renamed into place). The path must end .nii.gz or
// .nii (any case). Throws UserError naming the path: another extension, a vector count that does not
// match the grid, a non-finite vector, a sheared grid (NIfTI's qform and ITK cannot store
// one), a missing or unwritable folder, a failed write.
void write_displacement_field(const regpipe_common::DisplacementField& field,
                              const std::filesystem::path& path);

}  // namespace regpipe
