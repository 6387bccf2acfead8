// resample.cuda: the descriptor and the plugin entry point.
#include "cuda_resampler.hpp"
#include "resample_params.hpp"

#include <regpipe/plugin.hpp>

namespace regpipe::resample_cuda {
namespace {

const rp_resampler_vtable kVtable = rp::resampler_vtable_with_device_images<CudaResampler>();

const rp_component_desc kComponents[] = {
    {sizeof(rp_component_desc), RP_KIND_RESAMPLER, "resample.cuda", "CUDA resampler", "1.1.0",
     "resample.cpu on an NVIDIA GPU for the pyramid and the output image: the separable Gaussian "
     "prefilter, nearest and trilinear bit-identical to resample.cpu (or trilinear by the texture "
     "units), the Hann-windowed sinc and the cubic B-spline (one thread per line for its filter). "
     "Without a CUDA device, create fails with RP_DEVICE so [resample.cuda, resample.cpu] falls "
     "back to the CPU.",
     kParams, sizeof(kParams) / sizeof(kParams[0]), &kVtable}};

const rp_plugin_entry kEntry = {sizeof(rp_plugin_entry), RP_ABI_MAJOR, RP_ABI_MINOR,
                                "regpipe_resample_cuda", "1.0.0", "MIT", 1, kComponents};

}  // namespace
}  // namespace regpipe::resample_cuda

RP_DEFINE_PLUGIN_ENTRY(regpipe::resample_cuda::kEntry)
