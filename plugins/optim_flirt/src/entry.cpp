// optim.flirt: descriptors and the plugin entry point.
#include "flirt_optimizer.hpp"
#include "flirt_params.hpp"

#include <regpipe/abi.h>
#include <regpipe/plugin.hpp>

namespace regpipe::flirt {

constexpr const char* const kSpeculateChoices[] = {"auto", "on", "off", nullptr};

const rp_param_desc kFlirtParams[kFlirtParamCount] = {
    {sizeof(rp_param_desc), "searchrx_min_deg", RP_PARAM_DOUBLE, "-90", -180, 180, nullptr, "deg",
     "lower end of the rotation search about x (FLIRT -searchrx)"},
    {sizeof(rp_param_desc), "searchrx_max_deg", RP_PARAM_DOUBLE, "90", -180, 180, nullptr, "deg",
     "upper end of the rotation search about x (FLIRT -searchrx)"},
    {sizeof(rp_param_desc), "searchry_min_deg", RP_PARAM_DOUBLE, "-90", -180, 180, nullptr, "deg",
     "lower end of the rotation search about y (FLIRT -searchry)"},
    {sizeof(rp_param_desc), "searchry_max_deg", RP_PARAM_DOUBLE, "90", -180, 180, nullptr, "deg",
     "upper end of the rotation search about y (FLIRT -searchry)"},
    {sizeof(rp_param_desc), "searchrz_min_deg", RP_PARAM_DOUBLE, "-90", -180, 180, nullptr, "deg",
     "lower end of the rotation search about z (FLIRT -searchrz)"},
    {sizeof(rp_param_desc), "searchrz_max_deg", RP_PARAM_DOUBLE, "90", -180, 180, nullptr, "deg",
     "upper end of the rotation search about z (FLIRT -searchrz)"},
    {sizeof(rp_param_desc), "coarsesearch_deg", RP_PARAM_DOUBLE, "60", 1, 360, nullptr, "deg",
     "step of the coarse rotation grid, a translation + scale search from each point (FLIRT "
     "-coarsesearch)"},
    {sizeof(rp_param_desc), "finesearch_deg", RP_PARAM_DOUBLE, "18", 1, 360, nullptr, "deg",
     "step of the fine rotation grid, evaluated in one batch without optimisation (FLIRT "
     "-finesearch)"},
    {sizeof(rp_param_desc), "nosearch", RP_PARAM_BOOL, "false", 0, 1, nullptr, "",
     "no rotation search: start from the initial orientation only (FLIRT -nosearch)"},
    {sizeof(rp_param_desc), "tolerance_voxels", RP_PARAM_DOUBLE, "0.5", 0.001, 10, nullptr, "voxel",
     "local search tolerance in voxels of the level: translations x level mm, rotations, "
     "scales, skews x level mm / radius"},
    {sizeof(rp_param_desc), "final_tolerance_voxels", RP_PARAM_DOUBLE, "0.02", 0.001, 10, nullptr,
     "voxel", "the same for the last pass of the schedule, at the finest level"},
    {sizeof(rp_param_desc), "adaptive_brackets", RP_PARAM_BOOL, "true", 0, 1, nullptr, "",
     "last pass: after its first sweep each direction's line search brackets 3 times the "
     "direction's last move (at least half the tolerance) and stops once a convex parabola "
     "places the minimum within a quarter of the tolerance (about 0.7 times the evaluations); "
     "false: +-1 voxel brackets and Brent to the tolerance throughout"},
    {sizeof(rp_param_desc), "max_iterations", RP_PARAM_INT, "10", 1, 1000, nullptr, "",
     "Powell iterations per local search"},
    {sizeof(rp_param_desc), "speculate", RP_PARAM_ENUM, "auto", 0, 0, kSpeculateChoices, "",
     "in the stages of one search, send with each point the points the search needs next "
     "under each outcome (fewer calls, more evaluations, the same path): auto where a call "
     "of several points costs little more than one (timed per level), on, off"},
};

namespace {

// Its initial search is over rotations, so not 3 DOF (translations only); minimize re-checks
// for hosts older than ABI 1.2, which do not read supported_dof.
const rp_optimizer_vtable kVtable = rp::optimizer_vtable<FlirtOptimizer>(
    RP_OPTIMIZER_DRIVES_LEVELS, RP_DOF_6 | RP_DOF_7 | RP_DOF_9 | RP_DOF_12);

const rp_component_desc kComponents[] = {
    {sizeof(rp_component_desc), RP_KIND_OPTIMIZER, "optim.flirt", "FLIRT global search", "1.0.0",
     "FLIRT's multi-start, multi-resolution search (Jenkinson & Smith 2001; Jenkinson et al. "
     "2002): at the coarsest level a coarse rotation grid with a translation + scale search "
     "from every point, a fine rotation grid evaluated in one batch and the best three local "
     "minima optimised at 7 DOF; at the next level these candidates and their perturbations; "
     "then 7, 9, 12 DOF passes and a final pass at the finest level. Independent local "
     "searches advance in lockstep, so each round of all of them is one batched evaluation.",
     kFlirtParams, kFlirtParamCount, &kVtable},
};

const rp_plugin_entry kEntry = {sizeof(rp_plugin_entry),
                                RP_ABI_MAJOR,
                                RP_ABI_MINOR,
                                "regpipe_optim_flirt",
                                "1.0.0",
                                "MIT",
                                sizeof(kComponents) / sizeof(kComponents[0]),
                                kComponents};

}  // namespace
}  // namespace regpipe::flirt

RP_DEFINE_PLUGIN_ENTRY(regpipe::flirt::kEntry)
