// cuda.cr: the one host-side path of every scheme. Images are validated, measured and binned
// exactly as cost_cpu does (regpipe_common's checks, range, mean and bin_of), uploaded once
// per set_reference / set_moving: read in place in parallel, the moving image copied straight
// from the caller while its mean (a serial sum) is computed beside the copy, fused's spans
// built in parallel slabs (reference_spans.hpp). Each evaluate writes the k voxel maps to page-locked memory,
// runs the selected scheme, whose finish step computes 1 - eta in double on the GPU with
// cost_cpu's formula and writes the k costs and overlaps straight to page-locked memory, and
// synchronises once.
// RP_EXT_DEVICE_IMAGE (abi.h, 1.3): both images from device memory. The moving image is checked,
// measured and copied there; its mean (a serial sum whose order fixes its bits) is settled from
// the device's sum within its error bound, from a host copy only where that bound leaves the
// result open. fused lays the reference out on the device (spans = rows, bins and hot bin as the
// host path's); schemes 1-5 copy it back once and take the host path.
#pragma once

#include "schemes/schemes.hpp"

#include <regpipe/plugin.hpp>
#include <regpipe_common_cuda/call_signal.hpp>
#include <regpipe_common_cuda/device_measure.hpp>
#include <regpipe_common_cuda/device_session.hpp>
#include <regpipe_common_cuda/pinned_buffer.hpp>
#include <regpipe_common_cuda/trilinear_quads.hpp>
#include <regpipe_common/prepared_image.hpp>

#include <optional>
#include <string>
#include <vector>

namespace regpipe::cost_cr_cuda {

using regpipe_common_cuda::DeviceInfo;
using regpipe_common_cuda::PinnedBuffer;

class CudaCrCost {
 public:
  CudaCrCost(const rp_host* host, const rp::Params& params);
  ~CudaCrCost();
  void set_reference(const rp_image& image, const rp_image* weight);
  void set_moving(const rp_image& image, const rp_image* weight);
  void evaluate(const rp_cost_request& request);
  int32_t device() const { return device_.index; }
  void describe_device(rp_device_info& out) const { regpipe_common_cuda::describe_device(device_, out); }
  void set_reference_device(const rp_device_image& image);
  void set_moving_device(const rp_device_image& image);
  rp_transfer_counts transfer_counts() const { return counts_; }

  struct Scheme {
    void (*run)(const SchemeLaunch&);
    bool finishes_itself;  // fused: its kernel computes the costs (else finish_double_sums)
  };

  // What evaluate needs of a level's image once its voxels are on the device.
  struct Geometry {
    regpipe_common::Grid grid{1, 1, 1};
    double voxel_to_world[16] = {};
    double spacing_mm[3] = {1.0, 1.0, 1.0};
    bool weighted = false;
    double mean = 0.0;  // moving: the shift of y
  };

 private:
  void prepare_fused_calls();
  // fused's checks of a reference (wherever its voxels are) and its bins.
  regpipe_common::IntensityBinning fused_binning(const regpipe_common::MeasuredImage& ref) const;
  // Fill the reference's device buffers and layouts (uploads queued on stream_).
  Geometry set_fused_reference(const rp_image& image, const rp_image* weight);
  Geometry set_gridded_reference(const rp_image& image, const rp_image* weight);
  void check_device_memory(std::size_t bytes, const char* what) const;
  // The scales of fused's sums for the moving deviation bound `deviation`.
  FixedPointScales scales_for(double deviation) const;
  // The scales for the current images; settles the moving mean first when its bounds leave them open.
  FixedPointScales fixed_point_scales();
  // The moving mean of the host path (the serial sum of a host copy of mov_values_) into
  // `geometry`, and the deviation bound from it.
  void settle_moving_mean(Geometry& geometry);
  // A copy of device image data in host memory and its view (a counted download); the view
  // points into `values`, whose buffer a move keeps.
  struct HostCopy {
    std::vector<float> values;
    rp_image view{};
  };
  HostCopy copy_to_host(const float* data, const uint32_t dims[3], const double voxel_to_world[16]);
  void count_upload(std::size_t floats) {
    ++counts_.uploads;
    counts_.upload_bytes += floats * sizeof(float);
  }
  // Results and tickets for k transforms, zero: the finish steps leave them so, and a call
  // that stopped before its finish step (an error) has them cleared by the next.
  void ensure_results(std::size_t k);

  DeviceInfo device_;
  cudaStream_t stream_ = nullptr;
  std::string scheme_name_;
  Scheme scheme_{};
  int bins_, threads_per_block_, blocks_, max_block_workload_;
  bool nearest_;
  double border_mm_;
  double head_weight_mm_;  // 0: off (head_weight.hpp)

  std::optional<Geometry> ref_, mov_;  // empty until a set_* call has succeeded
  double ref_total_weight_ = 0.0;
  double ref_weight_max_ = 1.0;     // largest reference weight (1 without a weighting)
  double mov_weight_max_ = 1.0;     // largest moving weight (1 without a weighting)
  // Largest |value - mean| over every moving voxel, exact or (from set_moving_device) within
  // [mov_deviation_lo_, mov_deviation_max_].
  double mov_deviation_lo_ = 0.0, mov_deviation_max_ = 0.0;
  std::pair<float, float> mov_range_{0.f, 0.f};  // min and max over every moving voxel
  DeviceBuffer<int32_t> ref_bins_;
  DeviceBuffer<float> ref_weight_, mov_values_, mov_weight_;
  regpipe_common_cuda::TrilinearQuads mov_quads_;  // fused, trilinear: for the calls that read them
  PresortBuffers presort_;
  FusedBuffers fused_;
  ReferenceLayouts layouts_;
  // Per evaluation: k maps in (page-locked, one copy to maps_, or fused's launch parameters for
  // a few); k costs then k overlaps out,
  // written by the device in place.
  PinnedBuffer<double> host_maps_, host_out_;
  regpipe_common_cuda::CallSignal signal_;  // raised by the finish step once the k costs are out
  DeviceBuffer<double> maps_, scratch_double_;
  // results_capacity_ transforms of sums, then their overlaps; zero between calls.
  DeviceBuffer<double> results_;
  DeviceBuffer<unsigned> tickets_;
  std::size_t results_capacity_ = 0;
  bool results_zero_ = false;
  DeviceBuffer<float> scratch_;
  regpipe_common_cuda::MeasureScratch measure_scratch_;
  rp_transfer_counts counts_{sizeof(rp_transfer_counts), 0, 0, 0, 0};
};

}  // namespace regpipe::cost_cr_cuda
