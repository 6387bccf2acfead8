// The plugin's three components: CudaDenseCost with each measure, created from the parameters
// of its schema (params.hpp). The measure's own parameters are checked before the device is
// chosen, so a bad value is named even on a machine without a GPU.
#pragma once

#include "cuda_dense_cost.hpp"

namespace regpipe::cost_dense_cuda {

struct CudaLccCost : CudaDenseCost {
  CudaLccCost(const rp_host* host, const rp::Params& params);
};

struct CudaMeanSquaresCost : CudaDenseCost {
  CudaMeanSquaresCost(const rp_host* host, const rp::Params& params);
};

struct CudaMattesCost : CudaDenseCost {
  CudaMattesCost(const rp_host* host, const rp::Params& params);
};

}  // namespace regpipe::cost_dense_cuda
