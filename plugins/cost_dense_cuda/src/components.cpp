#include "components.hpp"

#include "metrics.hpp"

#include <iterator>

namespace regpipe::cost_dense_cuda {
namespace {

std::unique_ptr<DeviceMetric> local_cc_metric(const rp::Params& params) {
  const int radius = int(params.get_number(kLccParams, std::size(kLccParams), "radius"));
  const bool exact = params.second_choice("gradient", "ants", "exact");
  const WindowScheme scheme =
      params.second_choice("scheme", "separable", "luo") ? WindowScheme::luo : WindowScheme::separable;
  if (exact && scheme == WindowScheme::luo)
    throw rp::Error(RP_INVALID_ARGUMENT,
                    "gradient=exact is not available with scheme=luo: Luo et al.'s scheme computes ANTs' "
                    "own-window gradient only; use scheme=separable for the exact gradient, or gradient=ants");
  return make_local_cc_metric(radius, exact, scheme);
}

}  // namespace

CudaLccCost::CudaLccCost(const rp_host* host, const rp::Params& params)
    : CudaDenseCost(host, params, param_list(kLccParams), local_cc_metric(params), "cuda.lcc", "cpu.lcc") {}

CudaMeanSquaresCost::CudaMeanSquaresCost(const rp_host* host, const rp::Params& params)
    : CudaDenseCost(host, params, param_list(kMeanSquaresParams), make_mean_squares_metric(), "cuda.ls", "cpu.ls") {}

CudaMattesCost::CudaMattesCost(const rp_host* host, const rp::Params& params)
    : CudaDenseCost(host, params, param_list(kMattesParams),
                    make_mattes_metric(int(params.get_number(kMattesParams, std::size(kMattesParams), "bins"))), "cuda.mattes",
                    "cpu.mattes") {}

}  // namespace regpipe::cost_dense_cuda
