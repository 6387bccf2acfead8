// regpipe_cost_mi_cuda: the descriptors of cuda.mi and cuda.nmi and the plugin entry point.
#include "cuda_mi_cost.hpp"
#include "params.hpp"

#include <regpipe/plugin.hpp>

namespace regpipe::cost_mi_cuda {
namespace {

const rp_cost_vtable kMiVtable = rp::cost_vtable_with_device_images<CudaMi, true>();
const rp_cost_vtable kNmiVtable = rp::cost_vtable_with_device_images<CudaNmi, true>();

constexpr std::size_t kParamCount = sizeof(kParams) / sizeof(kParams[0]);

const rp_component_desc kComponents[] = {
    {sizeof(rp_component_desc), RP_KIND_COST, "cuda.mi", "Mutual information (CUDA)", "1.1.0",
     "-MI on an NVIDIA GPU, the same measure as cpu.mi (bins per image, overlap, worst value 0) "
     "for unweighted images without a fuzzy border: the joint histogram counted "
     "as integers (exact, bitwise repeatable; scheme approximate counts a subsample; "
     "partial_volume in fixed point, within 1e-6 of cpu.mi's) for k "
     "transforms a call, the entropies "
     "summed on the GPU. Without a CUDA device, create fails with RP_DEVICE so a pipeline's "
     "[cuda.mi, cpu.mi] falls back to the CPU.",
     kParams, kParamCount, &kMiVtable},
    {sizeof(rp_component_desc), RP_KIND_COST, "cuda.nmi", "Normalised mutual information (CUDA)", "1.1.0",
     "-NMI (Studholme et al. 1999) on an NVIDIA GPU, the same measure as cpu.nmi (worst value -1), "
     "from the same integer joint histogram as cuda.mi. Without a CUDA device, create fails with "
     "RP_DEVICE so a pipeline's [cuda.nmi, cpu.nmi] falls back to the CPU.",
     kParams, kParamCount, &kNmiVtable}};

const rp_plugin_entry kEntry = {sizeof(rp_plugin_entry), RP_ABI_MAJOR, RP_ABI_MINOR,
                                "regpipe_cost_mi_cuda", "0.1.0", "MIT", 2, kComponents};

}  // namespace
}  // namespace regpipe::cost_mi_cuda

RP_DEFINE_PLUGIN_ENTRY(regpipe::cost_mi_cuda::kEntry)
