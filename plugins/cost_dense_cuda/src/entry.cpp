// regpipe_cost_dense_cuda: the descriptors of cuda.lcc, cuda.ls and cuda.mattes and the plugin
// entry point.
#include "components.hpp"
#include "params.hpp"

#include <regpipe/plugin.hpp>

namespace regpipe::cost_dense_cuda {
namespace {

const rp_cost_vtable kLccVtable = rp::cost_vtable_with_dense_and_device_info<CudaLccCost>();
const rp_cost_vtable kMeanSquaresVtable = rp::cost_vtable_with_dense_and_device_info<CudaMeanSquaresCost>();
const rp_cost_vtable kMattesVtable = rp::cost_vtable_with_dense_and_device_info<CudaMattesCost>();

template <std::size_t N>
constexpr rp_component_desc cost(const char* id, const char* name, const char* description,
                                 const rp_param_desc (&params)[N], const rp_cost_vtable& vtable) {
  return {sizeof(rp_component_desc), RP_KIND_COST, id, name, "0.1.0", description, params, N, &vtable};
}

const rp_component_desc kComponents[] = {
    cost("cuda.lcc", "Local cross-correlation (CUDA)",
         "ANTs' neighbourhood CC on an NVIDIA GPU, the measure of cpu.lcc with a box window (radius, weights, "
         "flat windows, ants or exact gradient), in double: RP_EXT_DENSE_COST from host or device memory for "
         "deformable stages, and under k affine transforms (the moving image resampled as cpu.lcc does). Two "
         "schemes for the window sums: separable (ours: one pass, a block per x-y tile marching along z with "
         "running window sums in shared memory, writing the correlation and the gradient) and luo (Luo et al. 2015: a thread per voxel summing its "
         "(2r+1)^3 window from 3D textures). "
         "Gaussian windows are cpu.lcc's. Without a CUDA device, create fails with RP_DEVICE so a pipeline's "
         "[cuda.lcc, cpu.lcc] falls back to the CPU.",
         kLccParams, kLccVtable),
    cost("cuda.ls", "Mean squares (CUDA)",
         "ANTs' MeanSquares on an NVIDIA GPU, cpu.ls's dense measure in double: RP_EXT_DENSE_COST from host or "
         "device memory for deformable stages; under k affine transforms the moving image is resampled as "
         "cpu.lcc does (trilinear, voxels outside it not counted: cpu.ls with its defaults up to summation "
         "order). Without a CUDA device, create fails with RP_DEVICE so [cuda.ls, cpu.ls] falls back.",
         kMeanSquaresParams, kMeanSquaresVtable),
    cost("cuda.mattes", "Mattes mutual information (CUDA)",
         "ANTs' Mattes MI on an NVIDIA GPU, cpu.mattes' measure (Parzen joint histogram, box window on the fixed "
         "image, cubic B-spline on the moving one) with the reference's own per-voxel functions: "
         "RP_EXT_DENSE_COST from host or device memory for deformable stages, and under k affine transforms "
         "(resampled as cpu.mattes does). The histogram is privatised per warp and summed in a fixed order: "
         "the same bits every call. Without a CUDA device, create fails with RP_DEVICE so [cuda.mattes, "
         "cpu.mattes] falls back.",
         kMattesParams, kMattesVtable),
};

const rp_plugin_entry kEntry = {sizeof(rp_plugin_entry),
                                RP_ABI_MAJOR,
                                RP_ABI_MINOR,
                                "regpipe_cost_dense_cuda",
                                "0.1.0",
                                "MIT",
                                sizeof(kComponents) / sizeof(kComponents[0]),
                                kComponents};

}  // namespace
}  // namespace regpipe::cost_dense_cuda

RP_DEFINE_PLUGIN_ENTRY(regpipe::cost_dense_cuda::kEntry)
