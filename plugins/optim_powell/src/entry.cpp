// optim.powell: descriptors and the plugin entry point.
#include "powell_optimizer.hpp"
#include "powell_params.hpp"

#include <regpipe/abi.h>
#include <regpipe/plugin.hpp>

namespace regpipe::powell {

const rp_param_desc kPowellParams[kPowellParamCount] = {
    {sizeof(rp_param_desc), "max_iterations", RP_PARAM_INT, "200", 1, 100000, nullptr, "",
     "Powell iterations per level; each minimises along every direction once"},
    {sizeof(rp_param_desc), "tolerance", RP_PARAM_DOUBLE, "1e-6", 0, 1, nullptr, "",
     "relative cost decrease of one iteration below which the search ends"},
    {sizeof(rp_param_desc), "resolution_mm", RP_PARAM_DOUBLE, "0.02", 0, 100, nullptr, "mm",
     "translation resolution: closer points reuse the cached cost (0 disables the cache)"},
    {sizeof(rp_param_desc), "resolution_deg", RP_PARAM_DOUBLE, "0.05", 0, 90, nullptr, "deg",
     "rotation resolution: closer points reuse the cached cost (0 disables the cache)"},
    {sizeof(rp_param_desc), "resolution_scale", RP_PARAM_DOUBLE, "0.0005", 0, 1, nullptr, "",
     "scale and skew resolution: closer points reuse the cached cost (0 disables the cache)"},
};

namespace {

const rp_optimizer_vtable kVtable = rp::optimizer_vtable<PowellOptimizer>(0, RP_DOF_ALL);

const rp_component_desc kComponents[] = {
    {sizeof(rp_component_desc), RP_KIND_OPTIMIZER, "optim.powell", "Powell + Brent", "1.0.0",
     "Powell's direction-set method with Brent line minimisation in the free subspace of the "
     "DOF, one level at a time. Points closer than a per-parameter resolution to an evaluated "
     "one reuse its cost (Shams et al. 2010, section 3.7); line-search brackets and the "
     "extrapolated point are evaluated in batches of two.",
     kPowellParams, kPowellParamCount, &kVtable},
};

const rp_plugin_entry kEntry = {sizeof(rp_plugin_entry),
                                RP_ABI_MAJOR,
                                RP_ABI_MINOR,
                                "regpipe_optim_powell",
                                "1.0.0",
                                "MIT",
                                sizeof(kComponents) / sizeof(kComponents[0]),
                                kComponents};

}  // namespace
}  // namespace regpipe::powell

RP_DEFINE_PLUGIN_ENTRY(regpipe::powell::kEntry)
