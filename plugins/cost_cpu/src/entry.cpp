// regpipe_cost_cpu: descriptors of the CPU reference costs and the plugin entry point.
#include "correlation_ratio.hpp"
#include "cpu_cost.hpp"
#include "least_squares.hpp"
#include "local_cc_cost.hpp"
#include "mattes_cost.hpp"
#include "mutual_information.hpp"
#include "normalised_cross_correlation.hpp"
#include "param_schema.hpp"

#include <regpipe/abi.h>
#include <regpipe/plugin.hpp>

namespace regpipe::cost_cpu {
namespace {

const rp_cost_vtable kCorrelationRatioVtable = rp::cost_vtable<CpuCost<CorrelationRatio>>();
const rp_cost_vtable kMutualInformationVtable = rp::cost_vtable<CpuCost<MutualInformation>>();
const rp_cost_vtable kNormalisedMiVtable = rp::cost_vtable<CpuCost<NormalisedMutualInformation>>();
const rp_cost_vtable kNccVtable = rp::cost_vtable<CpuCost<NormalisedCrossCorrelation>>();
const rp_cost_vtable kLeastSquaresVtable = rp::cost_vtable_with_dense<CpuCost<LeastSquares>>();
const rp_cost_vtable kLocalCcVtable = rp::cost_vtable_with_dense<LocalCcCost>();
const rp_cost_vtable kMattesVtable = rp::cost_vtable_with_dense<MattesCost>();

template <std::size_t N>
constexpr rp_component_desc cost(const char* id, const char* name, const char* description,
                                 const rp_param_desc (&params)[N], const rp_cost_vtable& vtable) {
  return {
      sizeof(rp_component_desc), RP_KIND_COST, id, name, "1.0.0", description, params, N, &vtable};
}

const rp_component_desc kComponents[] = {
    cost("cpu.cr", "Correlation ratio (CPU reference)",
         "1 - eta(Y|X), the correlation ratio of the moving samples Y given the reference X cut "
         "into equal-width intensity bins, as in FLIRT (Roche et al. 1998; Li & Kumar 2014 eq. "
         "2): sum_i N_i var_i / (N var). Exact double accumulation, deterministic for any thread "
         "count. Range [0, 1]; without overlap, or with a constant moving image over the "
         "overlap, the worst value 1.",
         kCorrelationRatioParams, kCorrelationRatioVtable),
    cost("cpu.mi", "Mutual information (CPU reference)",
         "-MI in nats, MI = H(R) + H(M) - H(R,M) from the weighted joint histogram of reference "
         "and moving bins; optionally with Maes et al. partial-volume interpolation. Exact "
         "double accumulation, deterministic for any thread count. Without overlap the worst "
         "value 0.",
         kHistogramParams, kMutualInformationVtable),
    cost("cpu.nmi", "Normalised mutual information (CPU reference)",
         "-NMI, NMI = (H(R) + H(M)) / H(R,M) (Studholme et al. 1999) from the weighted joint "
         "histogram; optionally with Maes et al. partial-volume interpolation. Range [-2, -1]; "
         "without overlap, or with all weight in one joint bin, the worst value -1.",
         kHistogramParams, kNormalisedMiVtable),
    cost("cpu.ncc", "Normalised cross-correlation (CPU reference)",
         "1 - NCC, NCC the weighted Pearson correlation of reference and moving intensities "
         "over the overlap. Range [0, 2]; without overlap, or with either image constant over "
         "it, the worst value 2 (NCC = -1), so that losing the overlap never pays.",
         kMomentParams, kNccVtable),
    cost("cpu.ls", "Least squares (CPU reference)",
         "Weighted mean squared intensity difference over the overlap, in squared intensity "
         "units. Without overlap the worst value 1e30. Offers RP_EXT_DENSE_COST (ANTs' "
         "MeanSquares with its gradient) for deformable optimizers.",
         kMomentParams, kLeastSquaresVtable),
    cost("cpu.lcc", "Local cross-correlation (CPU reference)",
         "-mean over the voxels of rho^2, rho the correlation of the two images in the window "
         "about each voxel: ANTs' neighbourhood CC (CC[fixed, moving, 1, radius]), with window "
         "sums so that the work does not grow with the radius. Under an affine the moving image "
         "is resampled trilinearly onto the reference grid and voxels outside it do not count. "
         "Range [-1, 0]; without overlap the worst value 0. Offers RP_EXT_DENSE_COST with "
         "ANTs' own-window gradient (or the exact one) for deformable optimizers.",
         kLocalCcParams, kLocalCcVtable),
    cost("cpu.mattes", "Mattes mutual information (CPU reference)",
         "-MI in nats from Mattes et al.'s Parzen-window joint histogram, ANTs' MI metric "
         "(MI[fixed, moving, 1, bins]): the fixed image binned with a box window, the moving one "
         "with a cubic B-spline, each over its [min, max] with 2 bins of padding each side. Under "
         "an affine the moving image is resampled trilinearly onto the reference grid and voxels "
         "outside it do not count. Without overlap the worst value 0. Offers RP_EXT_DENSE_COST "
         "with Mattes' analytic gradient for deformable optimizers.",
         kMattesParams, kMattesVtable),
};

const rp_plugin_entry kEntry = {sizeof(rp_plugin_entry),
                                RP_ABI_MAJOR,
                                RP_ABI_MINOR,
                                "regpipe_cost_cpu",
                                "1.0.0",
                                "MIT",
                                sizeof(kComponents) / sizeof(kComponents[0]),
                                kComponents};

}  // namespace
}  // namespace regpipe::cost_cpu

RP_DEFINE_PLUGIN_ENTRY(regpipe::cost_cpu::kEntry)
