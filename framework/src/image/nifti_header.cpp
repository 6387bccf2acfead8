#include "image/nifti_header.hpp"

#include "image/niftilib_image.hpp"
#include "image/stored_values.hpp"

#include <regpipe/host/error.hpp>

#include <Eigen/Dense>
#include <cstring>
#include <memory>

namespace fs = std::filesystem;

namespace regpipe::image_detail {
namespace {

Eigen::Matrix4d from_mat44(const mat44& m) {
  Eigen::Matrix4d out;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) out(r, c) = m.m[r][c];
  return out;
}

mat44 to_mat44(const Eigen::Matrix4d& m) {
  mat44 out;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) out.m[r][c] = float(m(r, c));
  return out;
}

// RAS <-> LPS: negate x and y (its own inverse).
const Eigen::Matrix4d& lps_ras_flip() {
  static const Eigen::Matrix4d flip = Eigen::Vector4d(-1.0, -1.0, 1.0, 1.0).asDiagonal();
  return flip;
}

bool has_orthogonal_axes(const Eigen::Matrix4d& voxel_to_ras) {
  const Eigen::Matrix3d a = voxel_to_ras.topLeftCorner<3, 3>();
  const Eigen::Vector3d norms = a.colwise().norm();
  const Eigen::Matrix3d direction = a * norms.cwiseInverse().asDiagonal();
  return (direction.transpose() * direction - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() <= 1e-6;
}

// The header's spatial fields as read: qform (quaternion, offsets, qfac, pixdim) and sform.
void copy_forms(const NiftiHeader& h, nifti_image& nim) {
  nim.qform_code = h.qform_code;
  nim.quatern_b = h.quatern_bcd[0];
  nim.quatern_c = h.quatern_bcd[1];
  nim.quatern_d = h.quatern_bcd[2];
  nim.qoffset_x = h.qoffset[0];
  nim.qoffset_y = h.qoffset[1];
  nim.qoffset_z = h.qoffset[2];
  nim.qfac = h.qfac;
  nim.dx = nim.pixdim[1] = h.pixdim[0];
  nim.dy = nim.pixdim[2] = h.pixdim[1];
  nim.dz = nim.pixdim[3] = h.pixdim[2];
  nim.sform_code = h.sform_code;
  nim.sto_xyz = to_mat44(h.sform_ras);
}

// Both forms made from the grid's own voxel -> RAS matrix, with the header's codes: the qform
// wherever the axes are orthogonal, the sform where the header has one or the axes are not.
void forms_from_grid(const NiftiHeader& h, const Eigen::Matrix4d& voxel_to_ras, nifti_image& nim,
                     const fs::path& path) {
  const bool orthogonal = has_orthogonal_axes(voxel_to_ras);
  const int code = std::max({h.qform_code, h.sform_code, 1});
  if (orthogonal) {
    nifti_mat44_to_quatern(to_mat44(voxel_to_ras), &nim.quatern_b, &nim.quatern_c, &nim.quatern_d,
                           &nim.qoffset_x, &nim.qoffset_y, &nim.qoffset_z, &nim.dx, &nim.dy, &nim.dz,
                           &nim.qfac);
    nim.qform_code = h.qform_code > 0 ? h.qform_code : code;
  } else {
    const Eigen::Vector3d norms = voxel_to_ras.topLeftCorner<3, 3>().colwise().norm();
    nim.dx = float(norms.x());
    nim.dy = float(norms.y());
    nim.dz = float(norms.z());
    nim.qform_code = 0;
  }
  nim.pixdim[1] = nim.dx;
  nim.pixdim[2] = nim.dy;
  nim.pixdim[3] = nim.dz;
  nim.sform_code = h.sform_code > 0 ? h.sform_code : (orthogonal ? 0 : code);
  nim.sto_xyz = to_mat44(voxel_to_ras);
  if (!(nim.dx > 0.0f && nim.dy > 0.0f && nim.dz > 0.0f))
    throw UserError("cannot write '" + path.string() + "': a voxel size is 0");
}

}  // namespace

int nifti_datatype_code(VoxelType type) {
  switch (type) {
    case VoxelType::uint8: return DT_UINT8;
    case VoxelType::int8: return DT_INT8;
    case VoxelType::uint16: return DT_UINT16;
    case VoxelType::int16: return DT_INT16;
    case VoxelType::uint32: return DT_UINT32;
    case VoxelType::int32: return DT_INT32;
    case VoxelType::float32: return DT_FLOAT32;
    case VoxelType::float64: break;
  }
  return DT_FLOAT64;
}

std::mutex& header_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::optional<NiftiHeader> read_nifti_header(const fs::path& path) {
  NiftiPtr nim;
  {
    std::lock_guard<std::mutex> lock(header_mutex());
    nim.reset(nifti_image_read(path.c_str(), 0));
  }
  if (!nim || nim->nifti_type == NIFTI_FTYPE_ANALYZE) return std::nullopt;
  NiftiHeader h;
  h.qform_code = nim->qform_code;
  h.sform_code = nim->sform_code;
  h.quatern_bcd = {nim->quatern_b, nim->quatern_c, nim->quatern_d};
  h.qoffset = {nim->qoffset_x, nim->qoffset_y, nim->qoffset_z};
  h.qfac = nim->qfac;
  h.pixdim = {nim->dx, nim->dy, nim->dz};
  h.qform_ras = from_mat44(nim->qto_xyz);
  h.sform_ras = from_mat44(nim->sto_xyz);
  h.descrip.assign(nim->descrip, strnlen(nim->descrip, sizeof(nim->descrip)));
  h.xyz_units = nim->xyz_units;
  h.time_units = nim->time_units;
  h.cal_min = nim->cal_min;
  h.cal_max = nim->cal_max;
  return h;
}

double corner_distance_mm(const Eigen::Matrix4d& a, const Eigen::Matrix4d& b,
                          const std::array<uint32_t, 3>& dims) {
  double largest = 0.0;
  for (int corner = 0; corner < 8; ++corner) {
    Eigen::Vector4d v(0.0, 0.0, 0.0, 1.0);
    for (int axis = 0; axis < 3; ++axis)
      if (corner & (1 << axis)) v[axis] = double(dims[axis]) - 1.0;
    largest = std::max(largest, ((a - b) * v).head<3>().norm());
  }
  return largest;
}

void write_nifti(const Image& image, const fs::path& file, const fs::path& path, VoxelType type) {
  write_nifti(image, {&image.data}, 0.0, file, path, type);
}

void write_nifti(const Image& image, const std::vector<const std::vector<float>*>& volumes,
                 double volume_step, const fs::path& file, const fs::path& path, VoxelType type) {
  // Without a header (an image made in memory): both forms from the grid, codes 1 (scanner),
  // as ITK writes them.
  NiftiHeader scanner;
  scanner.qform_code = scanner.sform_code = 1;
  const NiftiHeader& h = image.nifti ? *image.nifti : scanner;
  const int count = int(volumes.size());
  int dims[8] = {count > 1 ? 4 : 3, int(image.dims[0]), int(image.dims[1]), int(image.dims[2]),
                 count, 1, 1, 1};
  // The header through niftilib; the voxels straight into the file's bytes (no copy of them).
  NiftiPtr nim(nifti_make_new_nim(dims, nifti_datatype_code(type), 0));
  if (!nim) throw UserError("cannot write '" + path.string() + "': out of memory for the NIfTI image");
  nim->nifti_type = NIFTI_FTYPE_NIFTI1_1;
  nifti_set_iname_offset(nim.get());  // 352: the header and a 4-byte extender of zeros (no extensions)
  std::vector<unsigned char> bytes = nifti_file_buffer(*nim);
  for (int v = 0; v < count; ++v) {
    if (volumes[v]->size() != image.voxel_count())
      throw UserError("cannot write '" + path.string() + "': volume " + std::to_string(v) +
                      " holds " + std::to_string(volumes[v]->size()) + " values for " +
                      std::to_string(image.voxel_count()) + " voxels");
    with_voxel_type(type, [&](auto zero) {
      auto* voxels = reinterpret_cast<decltype(zero)*>(bytes.data() + nim->iname_offset);
      store_values(*volumes[v], voxels + size_t(v) * image.voxel_count());
    });
  }

  // On the header's own grid: where its sform (or, without one, its qform) places it, within
  // float rounding of the stored forms (a file whose forms agree is read by its qform).
  const Eigen::Matrix4d voxel_to_ras = lps_ras_flip() * image.voxel_to_world;
  const Eigen::Matrix4d& standard = h.sform_code > 0 ? h.sform_ras : h.qform_ras;
  const bool own_grid = image.nifti && corner_distance_mm(voxel_to_ras, standard, image.dims) <= 10.0 * kSameGridMm;
  if (own_grid)
    copy_forms(h, *nim);
  else
    forms_from_grid(h, voxel_to_ras, *nim, path);
  std::strncpy(nim->descrip, h.descrip.c_str(), sizeof(nim->descrip) - 1);
  nim->xyz_units = h.xyz_units;
  nim->time_units = h.time_units;
  nim->cal_min = h.cal_min;
  nim->cal_max = h.cal_max;
  if (count > 1) nim->dt = nim->pixdim[4] = float(volume_step);

  // What nifti_image_write would write (tests/unit/nifti_one_pass_test.cpp compares the bytes),
  // gzipped on several threads where niftilib's zlib takes one.
  write_with_header(*nim, bytes, file, path);
}

}  // namespace regpipe::image_detail
