#include "image/itk_form_nifti.hpp"

#include "image/nifti_header.hpp"
#include "image/niftilib_image.hpp"
#include "image/stored_values.hpp"

#include <regpipe/host/error.hpp>
#include <regpipe_common/parallel_slabs.hpp>

#include <Eigen/Dense>

namespace fs = std::filesystem;

namespace regpipe::image_detail {
namespace {

// NiftiImageIO::SetNIfTIOrientationFromImageIO for a 3D grid: the direction made RAS (x and y
// negated) and orthogonalised in float, the quaternion and qfac from it, the sform the same
// matrix scaled by the voxel sizes; both codes 1 (scanner).
void set_orientation(const ItkGrid& g, nifti_image& nim) {
  float d[3][3];  // d[axis] = RAS direction of the voxel axis
  for (int axis = 0; axis < 3; ++axis)
    for (int r = 0; r < 3; ++r) d[axis][r] = float(r < 2 ? -g.direction(r, axis) : g.direction(r, axis));
  const mat44 rows = nifti_make_orthog_mat44(d[0][0], d[0][1], d[0][2], d[1][0], d[1][1], d[1][2], d[2][0], d[2][1],
                                             d[2][2]);
  mat44 m = rows;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) m.m[r][c] = rows.m[c][r];
  m.m[0][3] = float(-g.origin.x());
  m.m[1][3] = float(-g.origin.y());
  m.m[2][3] = float(g.origin.z());
  nifti_mat44_to_quatern(m, &nim.quatern_b, &nim.quatern_c, &nim.quatern_d, &nim.qoffset_x, &nim.qoffset_y,
                         &nim.qoffset_z, nullptr, nullptr, nullptr, &nim.qfac);
  nim.qto_xyz = nim.sto_xyz = m;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) nim.sto_xyz.m[r][c] = float(g.spacing[c]) * m.m[r][c];
  nim.pixdim[0] = nim.qfac;
  nim.qform_code = nim.sform_code = NIFTI_XFORM_SCANNER_ANAT;
}

// NiftiImageIO::WriteImageInformation's header for `components` values per voxel.
NiftiPtr itk_form_header(const ItkGrid& g, int components, int datatype, const fs::path& path) {
  NiftiPtr nim(nifti_simple_init_nim());
  if (!nim) throw UserError("cannot write '" + path.string() + "': out of memory for the NIfTI header");
  nim->nifti_type = NIFTI_FTYPE_NIFTI1_1;
  nim->xyz_units = NIFTI_UNITS_MM | NIFTI_UNITS_SEC;  // the header keeps the space bits (mm)
  for (int d = 4; d <= 7; ++d) nim->dim[d] = 1;
  nim->nt = nim->nu = nim->nv = nim->nw = 1;
  nim->dim[1] = nim->nx = int(g.dims[0]);
  nim->dim[2] = nim->ny = int(g.dims[1]);
  nim->dim[3] = nim->nz = int(g.dims[2]);
  nim->pixdim[1] = nim->dx = float(g.spacing[0]);
  nim->pixdim[2] = nim->dy = float(g.spacing[1]);
  nim->pixdim[3] = nim->dz = float(g.spacing[2]);
  nim->nvox = size_t(g.dims[0]) * g.dims[1] * g.dims[2] * size_t(components);
  nim->ndim = nim->dim[0] = components > 1 ? 5 : 3;  // 5: NIFTI_INTENT_VECTOR's shape
  if (components > 1) {
    nim->intent_code = NIFTI_INTENT_VECTOR;
    nim->nu = nim->dim[5] = components;
  }
  nim->datatype = datatype;
  int swap_size = 0;
  nifti_datatype_sizes(datatype, &nim->nbyper, &swap_size);
  nim->scl_slope = 1.0f;
  nim->scl_inter = 0.0f;
  set_orientation(g, *nim);
  nifti_set_iname_offset(nim.get());  // 352: the header and a 4-byte extender of zeros
  return nim;
}

}  // namespace

ItkGrid itk_grid(const std::array<uint32_t, 3>& dims, const Eigen::Matrix4d& voxel_to_world,
                 const std::string& cannot_write) {
  ItkGrid g;
  g.dims = dims;
  const Eigen::Matrix3d linear = voxel_to_world.topLeftCorner<3, 3>();
  g.spacing = linear.colwise().norm();
  if (!voxel_to_world.allFinite() || !(g.spacing.minCoeff() > 0.0))
    throw UserError(cannot_write + ": its voxel-to-world matrix is not finite or has a voxel size 0");
  g.direction = linear * g.spacing.cwiseInverse().asDiagonal();
  if ((g.direction.transpose() * g.direction - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() > 1e-6)
    throw UserError(cannot_write +
                    ": its voxel axes are not orthogonal, which image files cannot store; resample it onto an "
                    "orthogonal grid first");
  g.origin = voxel_to_world.block<3, 1>(0, 3);
  return g;
}

void write_itk_form_nifti(const ItkGrid& grid, VoxelType type, const std::vector<float>& values,
                          const fs::path& file, const fs::path& path) {
  const NiftiPtr nim = itk_form_header(grid, 1, nifti_datatype_code(type), path);
  std::vector<unsigned char> bytes = nifti_file_buffer(*nim);
  with_voxel_type(type, [&](auto zero) {
    store_values(values, reinterpret_cast<decltype(zero)*>(bytes.data() + nim->iname_offset));
  });
  write_with_header(*nim, bytes, file, path);
}

void write_itk_form_nifti_vectors(const ItkGrid& grid, const std::vector<float>& vectors, const fs::path& file,
                                  const fs::path& path) {
  const NiftiPtr nim = itk_form_header(grid, 3, DT_FLOAT32, path);
  std::vector<unsigned char> bytes = nifti_file_buffer(*nim);
  // ITK's layout: each component's plane of all voxels in turn (NIfTI's 5th axis slowest).
  auto* planes = reinterpret_cast<float*>(bytes.data() + nim->iname_offset);
  const size_t voxels = size_t(grid.dims[0]) * grid.dims[1] * grid.dims[2];
  const size_t slab = size_t(grid.dims[0]) * grid.dims[1];
  regpipe_common::parallel_slabs(grid.dims[2], [&](size_t z) {
    for (size_t v = z * slab; v < (z + 1) * slab; ++v)
      for (size_t c = 0; c < 3; ++c) planes[c * voxels + v] = vectors[3 * v + c];
  });
  write_with_header(*nim, bytes, file, path);
}

}  // namespace regpipe::image_detail
