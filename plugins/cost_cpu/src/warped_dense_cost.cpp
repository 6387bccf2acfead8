#include "warped_dense_cost.hpp"

#include <regpipe_common/affine_checks.hpp>
#include <regpipe_common/warp_sample.hpp>

namespace regpipe::cost_cpu {

using namespace regpipe_common;

VoxelMap voxel_map_of(const PreparedImage& ref, const PreparedImage& mov, const double matrix[16],
                      const std::string& what) {
  check_affine(matrix, what);
  VoxelMap map;
  if (!make_voxel_map(ref.voxel_to_world, matrix, mov.voxel_to_world, &map))
    throw rp::Error(RP_INVALID_ARGUMENT, "moving voxel_to_world is not invertible");
  return map;
}

// A voxel counts with the reference weight times the moving weight where it maps inside the
// moving image, else not at all (ANTs' metrics likewise sum only voxels inside both images).
WarpedPair warp_onto_reference(const PreparedImage& ref, const PreparedImage& mov, const VoxelMap& map) {
  const Grid& g = ref.grid;
  const std::size_t n = voxel_count(g);
  WarpedPair out;
  out.warped.assign(n, 0.f);
  out.weight.assign(n, 0.f);
  double inside_weight = 0.0, total_weight = 0.0;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x) {
        const std::size_t i = std::size_t(x) + std::size_t(g.nx) * (y + std::size_t(g.ny) * z);
        const float w_ref = ref.weight(i);
        total_weight += w_ref;
        const WarpedVoxel v =
            warp_voxel(map, x, y, z, w_ref, mov.values.data(), mov.weights.empty() ? nullptr : mov.weights.data(), mov.grid);
        if (!v.inside) continue;
        inside_weight += v.overlap;
        out.weight[i] = v.weight;
        out.warped[i] = v.value;
      }
  out.overlap = total_weight > 0.0 ? inside_weight / total_weight : 0.0;
  return out;
}

dense_metrics::DenseCostInput dense_input(const PreparedImage& ref, const WarpedPair& pair) {
  return {{ref.grid, {ref.spacing_mm[0], ref.spacing_mm[1], ref.spacing_mm[2]}}, ref.values, pair.warped, pair.weight, {}};
}

void throw_if_cancelled(const rp_host* host) {
  if (host != nullptr && RP_HAS_MEMBER(host, rp_host, should_cancel) && host->should_cancel != nullptr &&
      host->should_cancel(host->ctx) != 0)
    throw rp::Error(RP_CANCELLED, "cost evaluation cancelled by the host");
}

}  // namespace regpipe::cost_cpu
