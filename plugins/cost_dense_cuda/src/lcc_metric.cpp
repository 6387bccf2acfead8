// cuda.lcc's DeviceMetric: the window settings over run_local_cc (lcc_kernels.cu).
#include "metrics.hpp"

namespace regpipe::cost_dense_cuda {
namespace {

class LocalCcMetric final : public DeviceMetric {
 public:
  LocalCcMetric(int radius, bool exact, WindowScheme scheme) : radius_(radius), exact_(exact), scheme_(scheme) {}

  std::size_t workspace_bytes(std::size_t voxels, bool weighted) const override {
    return lcc_workspace_bytes(voxels, scheme_, exact_, weighted);
  }

  void run(const DenseProblem& problem, const regpipe_common_cuda::DeviceInfo& device, cudaStream_t stream,
           double* cost_out) override {
    LccProblem p;
    static_cast<DenseProblem&>(p) = problem;
    p.radius = radius_;
    p.exact = exact_;
    p.scheme = scheme_;
    run_local_cc(p, workspace_, device.sm_count, device.shared_per_block, stream, cost_out);
  }

  bool checks_finite() const override { return true; }  // the moments pass reads both images whole

 private:
  int radius_;
  bool exact_;
  WindowScheme scheme_;
  LccWorkspace workspace_;
};

}  // namespace

std::unique_ptr<DeviceMetric> make_local_cc_metric(int radius, bool exact, WindowScheme scheme) {
  return std::make_unique<LocalCcMetric>(radius, exact, scheme);
}

}  // namespace regpipe::cost_dense_cuda
