// A chain of affines and displacement fields composed on the host into, for every output voxel,
// the input voxel position it samples. Exact up to the fields' own trilinear sampling: no field
// is resampled onto another grid first (composing fields on a grid would interpolate twice).
#include <regpipe/host/resample_through_chain.hpp>
#include <regpipe/host/transform_io.hpp>

#include <regpipe_common/parallel_slabs.hpp>
#include <regpipe_common/resample_sampling.hpp>

#include <Eigen/Dense>
#include <optional>

namespace regpipe {
namespace {

using regpipe_common::Vec3;

// A row-major 4x4, as regpipe_common's affines are.
struct RowMajor {
  double m[16];
  explicit RowMajor(const Eigen::Matrix4d& a) {
    for (int i = 0; i < 16; ++i) m[i] = a(i / 4, i % 4);
  }
};

// A point's way through the chain: an affine, then (when `field` is set) x -> x + u(x).
struct Stage {
  RowMajor affine;
  std::optional<regpipe_common::DisplacementFieldView> field;
};

}  // namespace

SamplePositions chain_sample_positions(const std::vector<ChainStep>& chain, const Image& grid,
                                       const Image& input_grid) {
  // The point meets T_n first: walk the chain backwards, multiplying the affines that meet it
  // between two fields into one matrix. The first matrix starts at the output voxel index, the
  // last ends at the input voxel index.
  std::vector<Stage> stages;
  Eigen::Matrix4d pending = grid.voxel_to_world;
  for (auto step = chain.rbegin(); step != chain.rend(); ++step) {
    if (!step->field) {
      pending = step->ref_to_mov * pending;
      continue;
    }
    stages.push_back({RowMajor(pending), regpipe_common::view_of(*step->field)});
    pending = Eigen::Matrix4d::Identity();
  }
  const Eigen::Matrix4d world_to_input =
      checked_inverse(input_grid.voxel_to_world, "the input image's voxel-to-world matrix");
  stages.push_back({RowMajor(world_to_input * pending), std::nullopt});

  SamplePositions positions;
  positions.dims = grid.dims;
  positions.xyz.resize(3 * grid.voxel_count());
  const int in_nx = int(input_grid.dims[0]), in_ny = int(input_grid.dims[1]), in_nz = int(input_grid.dims[2]);
  const size_t nx = grid.dims[0], ny = grid.dims[1], nz = grid.dims[2];
  regpipe_common::parallel_slabs(nz, [&](size_t k) {
    for (size_t j = 0; j < ny; ++j)
      for (size_t i = 0; i < nx; ++i) {
        Vec3 p{double(i), double(j), double(k)};
        for (const Stage& stage : stages) {
          p = regpipe_common::apply_affine(stage.affine.m, p);
          if (stage.field) p = p + regpipe_common::sample_displacement(*stage.field, p);
        }
        float* out = &positions.xyz[3 * (i + nx * (j + ny * k))];
        out[0] = float(regpipe_common::snap_to_domain(p.x, in_nx));
        out[1] = float(regpipe_common::snap_to_domain(p.y, in_ny));
        out[2] = float(regpipe_common::snap_to_domain(p.z, in_nz));
      }
  });
  return positions;
}

}  // namespace regpipe
