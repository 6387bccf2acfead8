// optim.syn: descriptors and the plugin entry point.
#include "syn_optimizer.hpp"
#include "syn_params.hpp"

#include <regpipe/abi.h>
#include <regpipe/plugin.hpp>

namespace regpipe::optim_syn {

const char* const kDeviceChoices[] = {"auto", "host", "cuda", nullptr};

// Named and defaulted as antsRegistration's --transform SyN[...], --convergence,
// --shrink-factors and --smoothing-sigmas.
const rp_param_desc kSynParams[kSynParamCount] = {
    {sizeof(rp_param_desc), "gradient_step", RP_PARAM_DOUBLE, "0.1", 0, 10, nullptr, "voxels",
     "SyN[gradientStep]: the largest update per iteration (above 0)"},
    {sizeof(rp_param_desc), "update_field_variance", RP_PARAM_DOUBLE, "3", 0, 625, nullptr, "voxels^2",
     "SyN[.., updateFieldVarianceInVoxelSpace]: Gaussian variance the update field is smoothed with"},
    {sizeof(rp_param_desc), "total_field_variance", RP_PARAM_DOUBLE, "0", 0, 625, nullptr, "voxels^2",
     "SyN[.., .., totalFieldVarianceInVoxelSpace]: Gaussian variance the total field is smoothed with"},
    {sizeof(rp_param_desc), "iterations", RP_PARAM_STRING, "100x70x50x20", 0, 0, nullptr, "",
     "iterations per level, coarsest first (--convergence [100x70x50x20, ..])"},
    {sizeof(rp_param_desc), "shrink_factors", RP_PARAM_STRING, "8x4x2x1", 0, 0, nullptr, "",
     "each level's grid: the fixed grid shrunk by this factor (--shrink-factors), one per level"},
    {sizeof(rp_param_desc), "smoothing_sigmas", RP_PARAM_STRING, "3x2x1x0", 0, 0, nullptr, "",
     "Gaussian sigma both images are smoothed with per level (--smoothing-sigmas), voxels or mm"},
    {sizeof(rp_param_desc), "smoothing_in_mm", RP_PARAM_BOOL, "false", 0, 1, nullptr, "",
     "smoothing_sigmas in mm (ANTs' 'mm' suffix) instead of voxels ('vox')"},
    {sizeof(rp_param_desc), "convergence_threshold", RP_PARAM_DOUBLE, "1e-6", 0, 1, nullptr, "",
     "a level stops once the metric's fitted falling slope over the window is below this"},
    {sizeof(rp_param_desc), "convergence_window", RP_PARAM_INT, "10", 2, 1000, nullptr, "iterations",
     "metric values the convergence slope is fitted to (--convergence [.., .., window])"},
    {sizeof(rp_param_desc), "device", RP_PARAM_ENUM, "auto", 0, 0, kDeviceChoices, "",
     "where the fields live: auto (on the cost's GPU when it takes device memory, e.g. cuda.lcc, "
     "else the CPU), host (CPU) or cuda (GPU cuda_device; needs a cost taking device memory)"},
    {sizeof(rp_param_desc), "cuda_device", RP_PARAM_INT, "0", 0, 63, nullptr, "",
     "CUDA device index for device: cuda (the cost's own device; auto takes the cost's)"},
};

namespace {

const rp_optimizer_vtable kVtable =
    rp::optimizer_vtable_with_deformable<SynOptimizer>(RP_OPTIMIZER_DEFORMABLE_ONLY);

const rp_component_desc kComponents[] = {
    {sizeof(rp_component_desc), RP_KIND_OPTIMIZER, "optim.syn", "Greedy SyN", "1.0.0",
     "ANTs' greedy symmetric normalization (Avants et al. 2008; antsRegistration's "
     "--transform SyN) for a deformable stage (RP_EXT_DEFORMABLE_OPTIMIZER): both images pulled "
     "half way, multi-resolution on the fixed grid shrunk, Gaussian-regularised updates, ANTs' "
     "convergence window. Its metric is the stage's cost through RP_EXT_DENSE_COST (cpu.lcc, "
     "cpu.ls). Writes the forward field and its inverse; minimize (an affine stage) is refused.",
     kSynParams, kSynParamCount, &kVtable},
};

const rp_plugin_entry kEntry = {sizeof(rp_plugin_entry),
                                RP_ABI_MAJOR,
                                RP_ABI_MINOR,
                                "regpipe_optim_syn",
                                "1.0.0",
                                "MIT",
                                sizeof(kComponents) / sizeof(kComponents[0]),
                                kComponents};

}  // namespace
}  // namespace regpipe::optim_syn

RP_DEFINE_PLUGIN_ENTRY(regpipe::optim_syn::kEntry)
