// regpipe_cost_lcc_cuda: the descriptor of cuda.lcc and the plugin entry point.
#include "cuda_lcc_cost.hpp"
#include "params.hpp"

#include <regpipe/plugin.hpp>

namespace regpipe::cost_lcc_cuda {
namespace {

const rp_cost_vtable kVtable = rp::cost_vtable_with_dense_and_device_info<CudaLccCost>();

const rp_component_desc kComponents[] = {
    {sizeof(rp_component_desc), RP_KIND_COST, "cuda.lcc", "Local cross-correlation (CUDA)", "0.1.0",
     "ANTs' neighbourhood CC on an NVIDIA GPU, the measure of cpu.lcc with a box window (radius, weights, "
     "flat windows, ants or exact gradient), in double: RP_EXT_DENSE_COST from host or device memory for "
     "deformable stages, and under k affine transforms (the moving image resampled as cpu.lcc does). Two "
     "schemes for the window sums: separable (ours: running sums along x, y and z, work independent of the "
     "radius) and luo (Luo et al. 2015: a thread per voxel summing its (2r+1)^3 window from 3D textures). "
     "Gaussian windows are cpu.lcc's. Without a CUDA device, create fails with RP_DEVICE so a pipeline's "
     "[cuda.lcc, cpu.lcc] falls back to the CPU.",
     kParams, sizeof(kParams) / sizeof(kParams[0]), &kVtable}};

const rp_plugin_entry kEntry = {sizeof(rp_plugin_entry), RP_ABI_MAJOR, RP_ABI_MINOR,
                                "regpipe_cost_lcc_cuda", "0.1.0", "MIT", 1, kComponents};

}  // namespace
}  // namespace regpipe::cost_lcc_cuda

RP_DEFINE_PLUGIN_ENTRY(regpipe::cost_lcc_cuda::kEntry)
