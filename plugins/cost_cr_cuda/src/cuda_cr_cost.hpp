// cuda.cr: the one host-side path of every scheme. Images are validated and binned exactly
// as cost_cpu does (regpipe_common::prepare_image / bin_voxels), uploaded once per
// set_reference / set_moving, and each evaluate uploads the k voxel maps, runs the selected
// scheme, copies back k histograms and computes 1 - eta in double with cost_cpu's formula.
#pragma once

#include "device_buffer.hpp"
#include "device_session.hpp"
#include "pinned_buffer.hpp"
#include "schemes/schemes.hpp"

#include <regpipe/plugin.hpp>
#include <regpipe_common/prepared_image.hpp>

#include <optional>
#include <string>
#include <vector>

namespace regpipe::cost_cr_cuda {

class CudaCrCost {
 public:
  CudaCrCost(const rp_host* host, const rp::Params& params);
  ~CudaCrCost();
  void set_reference(const rp_image& image, const rp_image* weight);
  void set_moving(const rp_image& image, const rp_image* weight);
  void evaluate(const rp_cost_request& request);

  struct Scheme {
    void (*run)(const SchemeLaunch&);
    SumsEncoding encoding;
  };

 private:
  void check_device_memory(std::size_t bytes, const char* what) const;
  FixedPointScales fixed_point_scales() const;
  // Transform t's bin sums and overlap weight from the copied-back results, as doubles.
  double decode_results(const double* raw, std::size_t k, std::size_t t, const FixedPointScales& scales,
                        double* sums) const;

  DeviceInfo device_;
  cudaStream_t stream_ = nullptr;
  std::string scheme_name_;
  Scheme scheme_{};
  int bins_, threads_per_block_, blocks_, max_block_workload_;
  bool nearest_;
  double border_mm_;

  std::optional<regpipe_common::PreparedImage> ref_, mov_;
  double ref_total_weight_ = 0.0;
  double mov_weight_max_ = 1.0;     // largest moving weight (1 without a weighting)
  double mov_deviation_max_ = 0.0;  // largest |value - mean| over every moving voxel
  DeviceBuffer<int32_t> ref_bins_;
  DeviceBuffer<float> ref_weight_, mov_values_, mov_weight_;
  PresortBuffers presort_;
  FusedBuffers fused_;
  ReferenceLayouts layouts_;
  // Per evaluation: k maps in; k histograms then k overlaps out, in one buffer so that one
  // memset and one copy serve them.
  PinnedBuffer<double> host_maps_, host_results_;
  DeviceBuffer<double> maps_, results_, scratch_double_;
  DeviceBuffer<float> scratch_;
  std::vector<double> decoded_sums_;
};

}  // namespace regpipe::cost_cr_cuda
