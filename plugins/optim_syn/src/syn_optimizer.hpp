// optim.syn's instance: the SyN options from its parameters, and one registration per
// register_deformable call with the problem's cost as the metric.
#pragma once

#include <regpipe/plugin.hpp>
#include <regpipe_common/syn/syn_options.hpp>

#include <string>

namespace regpipe::optim_syn {

class SynOptimizer {
 public:
  SynOptimizer(const rp_host* host, const rp::Params& params);

  // Always RP_UNSUPPORTED: optim.syn is for deformable stages.
  void minimize(const rp_objective& objective, double* x_inout, double* f_out);
  // Checks the problem (rp::Error(RP_INVALID_ARGUMENT) naming what is wrong), runs syn_register
  // with the cost's evaluate_dense as the metric (device: host), or syn_register_device with
  // it on device memory (device: cuda, built with CUDA; device: auto when the problem's
  // cost_device says the cost takes device memory), writes forward_out and inverse_out.
  void register_deformable(const rp_deformable_problem& problem);

 private:
  void log(int32_t level, const std::string& message) const;
  void progress(double fraction, const std::string& what) const;
  bool cancelled() const;

  const rp_host* host_;
  regpipe_common::syn::SynOptions options_;
  bool auto_device_ = true;  // device: auto (the cost's device, per problem)
  bool on_cuda_ = false;     // device: cuda (syn_register_device, plugins/common_cuda)
  int cuda_device_ = 0;
};

}  // namespace regpipe::optim_syn
