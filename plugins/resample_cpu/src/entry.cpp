// resample.cpu: descriptors and the plugin entry point.
#include "cpu_resampler.hpp"
#include "resample_params.hpp"
#include <regpipe_common/resample_sampling.hpp>

#include <regpipe/abi.h>
#include <regpipe/plugin.hpp>

namespace regpipe::resample {

const rp_param_desc kResampleParams[kResampleParamCount] = {
    {sizeof(rp_param_desc), "threads", RP_PARAM_INT, "0", 0, 256, nullptr, "",
     "worker threads over output slices; 0 = one per hardware thread"},
    {sizeof(rp_param_desc), "sinc_radius", RP_PARAM_INT, "4", 1, regpipe_common::kMaxSincRadius, nullptr, "voxels",
     "half-width of the Hann-windowed sinc kernel"},
};

namespace {

const rp_resampler_vtable kVtable = rp::resampler_vtable<CpuResampler>();

const rp_component_desc kComponents[] = {
    {sizeof(rp_component_desc), RP_KIND_RESAMPLER, "resample.cpu", "CPU resampler", "1.0.0",
     "Resamples an image onto a new grid through an affine map: nearest neighbour and "
     "trilinear (sampled exactly as the CPU costs sample), Hann-windowed sinc and cubic "
     "B-spline (Unser's prefilter, mirror boundaries); optional separable Gaussian "
     "anti-aliasing prefilter; threaded over output slices.",
     kResampleParams, kResampleParamCount, &kVtable},
};

const rp_plugin_entry kEntry = {sizeof(rp_plugin_entry),
                                RP_ABI_MAJOR,
                                RP_ABI_MINOR,
                                "regpipe_resample_cpu",
                                "1.0.0",
                                "MIT",
                                sizeof(kComponents) / sizeof(kComponents[0]),
                                kComponents};

}  // namespace
}  // namespace regpipe::resample

RP_DEFINE_PLUGIN_ENTRY(regpipe::resample::kEntry)
