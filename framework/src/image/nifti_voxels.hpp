// A single-file NIfTI-1's voxels as float32, decoded from its contents in memory exactly as
// ITK 5.2 reads them through niftilib (tests/unit/nifti_voxels_test.cpp compares the two): the
// header as niftilib reads it, its byte order, a NaN or infinity in float data read as 0
// (niftilib's nifti_read_buffer), scl_slope / scl_inter applied as NiftiImageIO::Read does
// (integers made float first, then value * slope + intercept in double), then the cast to float
// that ImageFileReader makes. Lets read_image decompress a .nii.gz once instead of twice.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace regpipe::image_detail {

struct DecompressedFile;

// The `count` voxels of `contents`, or nothing where this decoder does not take the file (not
// a single-file NIfTI-1, another voxel count, a data type other than the 8 integer and float
// ones, data beyond the contents kept): the caller then reads it with ITK. `storage`, when it
// already holds `count` floats (made while the file was inflated), is decoded into and
// returned, saving the allocation's page faults; decoding runs on every usable core.
std::optional<std::vector<float>> decode_nifti_voxels(const DecompressedFile& contents, uint64_t count,
                                                      std::vector<float> storage = {});

}  // namespace regpipe::image_detail
