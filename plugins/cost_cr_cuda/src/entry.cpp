// regpipe_cost_cr_cuda: the descriptor of cuda.cr and the plugin entry point.
#include "cuda_cr_cost.hpp"
#include "params.hpp"

#include <regpipe/plugin.hpp>

namespace regpipe::cost_cr_cuda {
namespace {

const rp_cost_vtable kVtable = rp::cost_vtable_with_device_images<CudaCrCost, true>();

const rp_component_desc kComponents[] = {
    {sizeof(rp_component_desc), RP_KIND_COST, "cuda.cr", "Correlation ratio (CUDA)", "1.1.0",
     "1 - eta(Y|X) on an NVIDIA GPU, the same measure as cpu.cr (bins, weights, border, overlap, "
     "worst value 1), with the five histogram schemes of Li & Kumar 2014 and ours (fused: all k "
     "transforms and their final formula in one launch, warps walking runs of weighted voxels, the "
     "moving image read as trilinear quads, the background bin in registers, the other bins in fixed "
     "point with integer reductions; bitwise repeatable). Without a "
     "CUDA device, create fails with RP_DEVICE so a pipeline's [cuda.cr, cpu.cr] falls back to the CPU.",
     kParams, sizeof(kParams) / sizeof(kParams[0]), &kVtable}};

const rp_plugin_entry kEntry = {sizeof(rp_plugin_entry), RP_ABI_MAJOR, RP_ABI_MINOR,
                                "regpipe_cost_cr_cuda", "0.1.0", "MIT", 1, kComponents};

}  // namespace
}  // namespace regpipe::cost_cr_cuda

RP_DEFINE_PLUGIN_ENTRY(regpipe::cost_cr_cuda::kEntry)
