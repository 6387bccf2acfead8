// A dense displacement field on a voxel grid and its trilinear sampling.
//
// Conventions (the same as ITK's DisplacementFieldTransform and ANTs' *Warp.nii.gz):
//   - each voxel holds a displacement u in world millimetres, ITK's LPS frame, and the field
//     maps a world point x to x + u(x) (a pull-back: warped(x) = moving(x + u(x)));
//   - vectors are interleaved, x fastest: vectors[3 * (x + nx * (y + ny * z)) + c], c = 0, 1, 2
//     for the world x, y, z components;
//   - voxel_to_world is row-major 4x4 (voxel index -> LPS mm), as rp_image's.
// Outside its grid a field is zero (identity): that is how ITK's DisplacementFieldTransform,
// hence antsApplyTransforms, reads a field beyond its buffer, so a warp written by regpipe
// means the same thing in ANTs. Clamping to the border vector instead would translate all of
// space outside the grid. Fields that should be continuous there (SyN's, the random ones
// here) are zero on their border planes.
#pragma once

#include <regpipe_common/resample_sampling.hpp>
#include <regpipe_common/voxel_map.hpp>

#include <cstddef>
#include <vector>

namespace regpipe_common {

struct Vec3 {
  double x, y, z;
};

RP_HD Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
RP_HD Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
RP_HD Vec3 operator*(double s, Vec3 a) { return {s * a.x, s * a.y, s * a.z}; }
RP_HD double norm(Vec3 a) { return sqrt(a.x * a.x + a.y * a.y + a.z * a.z); }

struct FieldGeometry {
  Grid dims;
  double voxel_to_world[16];
};

// Owns its vectors; 3 * voxel_count(geometry.dims) floats.
struct DisplacementField {
  FieldGeometry geometry;
  std::vector<float> vectors;
};

// Borrows the vectors of a field (or of any buffer laid out the same), with the inverse
// geometry the sampling needs. Plain data, so it can be handed to a CUDA kernel by value.
struct DisplacementFieldView {
  FieldGeometry geometry;
  double world_to_voxel[16];
  const float* vectors;
};

// Throws rp::Error(RP_INVALID_ARGUMENT) for a dimension below 1 or a voxel_to_world that is
// not an invertible finite affine.
void check_field_geometry(const FieldGeometry& geometry);

// A zero field on `geometry`. Throws rp::Error(RP_INVALID_ARGUMENT) for a dimension below 1
// or a voxel_to_world that is not an invertible finite affine.
DisplacementField zero_field(const FieldGeometry& geometry);

// A view of `vectors` laid out on `geometry`; same checks as zero_field. The view is valid
// while the vectors are.
DisplacementFieldView view_of(const FieldGeometry& geometry, const float* vectors);
DisplacementFieldView view_of(const DisplacementField& field);

// Largest |u| over the voxels, mm.
double max_displacement_mm(const DisplacementField& field);

// The vector stored at voxel i = x + nx * (y + ny * z).
RP_HD Vec3 vector_at(const DisplacementFieldView& f, std::size_t i) {
  return {f.vectors[3 * i], f.vectors[3 * i + 1], f.vectors[3 * i + 2]};
}

RP_HD Vec3 apply_affine(const double m[16], Vec3 p) {
  return {m[0] * p.x + m[1] * p.y + m[2] * p.z + m[3], m[4] * p.x + m[5] * p.y + m[6] * p.z + m[7],
          m[8] * p.x + m[9] * p.y + m[10] * p.z + m[11]};
}

RP_HD Vec3 world_of_voxel(const FieldGeometry& g, long x, long y, long z) {
  return apply_affine(g.voxel_to_world, {double(x), double(y), double(z)});
}

// Trilinear displacement at a world point; zero outside the grid's sampling domain
// [0, n-1]^3 (see the header comment). Positions a rounding error off the border are moved
// onto it (snap_to_domain), so grid points map back onto the grid.
RP_HD Vec3 sample_displacement(const DisplacementFieldView& f, Vec3 world) {
  const Grid& g = f.geometry.dims;
  const Vec3 v = apply_affine(f.world_to_voxel, world);
  const double px = snap_to_domain(v.x, g.nx), py = snap_to_domain(v.y, g.ny),
               pz = snap_to_domain(v.z, g.nz);
  if (!(px >= 0.0 && py >= 0.0 && pz >= 0.0 && px <= g.nx - 1 && py <= g.ny - 1 && pz <= g.nz - 1))
    return {0.0, 0.0, 0.0};
  const long x0 = long(px), y0 = long(py), z0 = long(pz);
  const long x1 = x0 + 1 < g.nx ? x0 + 1 : x0, y1 = y0 + 1 < g.ny ? y0 + 1 : y0,
             z1 = z0 + 1 < g.nz ? z0 + 1 : z0;
  const double fx = px - double(x0), fy = py - double(y0), fz = pz - double(z0);
  double sum[3] = {0.0, 0.0, 0.0};
  const long xs[2] = {x0, x1}, ys[2] = {y0, y1}, zs[2] = {z0, z1};
  const double wx[2] = {1.0 - fx, fx}, wy[2] = {1.0 - fy, fy}, wz[2] = {1.0 - fz, fz};
  for (int c = 0; c < 2; ++c)
    for (int b = 0; b < 2; ++b)
      for (int a = 0; a < 2; ++a) {
        const double w = wx[a] * wy[b] * wz[c];
        const float* u = f.vectors + 3 * (xs[a] + long(g.nx) * (ys[b] + long(g.ny) * zs[c]));
        sum[0] += w * u[0];
        sum[1] += w * u[1];
        sum[2] += w * u[2];
      }
  return {sum[0], sum[1], sum[2]};
}

}  // namespace regpipe_common
