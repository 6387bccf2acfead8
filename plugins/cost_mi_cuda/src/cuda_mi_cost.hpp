// cuda.mi and cuda.nmi: the host side of every scheme. Images are validated and binned
// exactly as cost_cpu does (the same checks, range and bins), read in place in parallel slabs
// (regpipe_common::measure_image_in_place) and uploaded once per set_reference / set_moving:
// the reference as bins, the moving image as its values. Each evaluate copies the k voxel maps to the device in one
// transfer, zeroes the k joint histograms, runs the selected scheme and the GPU finish step,
// which writes the k costs and overlaps straight to page-locked memory, and synchronises once.
#pragma once

#include "schemes/schemes.hpp"

#include <regpipe/plugin.hpp>
#include <regpipe_common/prepared_image.hpp>
#include <regpipe_common_cuda/device_buffer.hpp>
#include <regpipe_common_cuda/device_session.hpp>
#include <regpipe_common_cuda/pinned_buffer.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace regpipe::cost_mi_cuda {

using regpipe_common_cuda::DeviceBuffer;
using regpipe_common_cuda::PinnedBuffer;

class CudaMiCost {
 public:
  CudaMiCost(const rp::Params& params, bool normalised);
  ~CudaMiCost();
  void set_reference(const rp_image& image, const rp_image* weight);
  void set_moving(const rp_image& image, const rp_image* weight);
  void evaluate(const rp_cost_request& request);

 private:
  bool normalised_;
  const char* cpu_alternative_;  // cpu.mi or cpu.nmi, named in every error a user can act on
  regpipe_common_cuda::DeviceInfo device_;
  cudaStream_t stream_ = nullptr;
  void (*scheme_)(const SchemeLaunch&) = nullptr;
  int bins_, threads_per_block_;
  bool nearest_;
  bool partial_volume_;                 // Maes et al.: the histogram in fixed point (joint_pv_)
  bool thinned_ = false;                // the scheme counts about one sample in threads_per_block
  std::unique_ptr<SchemeState> state_;  // the scheme's, for schemes that keep one

  // What evaluate needs of an image whose voxels are on the device.
  struct Geometry {
    regpipe_common::Grid grid{1, 1, 1};
    double voxel_to_world[16] = {};
    regpipe_common::IntensityBinning binning;
    std::size_t voxel_count = 0;
  };
  Geometry measure(const rp_image& image, const rp_image* weight, const char* role) const;

  std::optional<Geometry> ref_, mov_;
  std::vector<uint16_t> ref_bins_host_;  // kept for the upload in flight and the scheme's state
  DeviceBuffer<uint16_t> ref_bins_;
  DeviceBuffer<float> mov_values_;
  // Per evaluation: k maps in (page-locked, one copy); k joint histograms and the finish
  // step's partials on the device; k costs then k overlaps out, written by the device in place.
  PinnedBuffer<double> host_maps_, host_out_;
  DeviceBuffer<double> maps_, partials_;
  DeviceBuffer<unsigned> joint_;
  DeviceBuffer<unsigned long long> joint_pv_;  // partial_volume: k histograms, 2^20 units a sample
  DeviceBuffer<unsigned char> scheme_scratch_;  // SchemeLaunch::scratch
};

// The two components: the same histogram, a different formula at the end.
struct CudaMi : CudaMiCost {
  CudaMi(const rp_host*, const rp::Params& params) : CudaMiCost(params, false) {}
};
struct CudaNmi : CudaMiCost {
  CudaNmi(const rp_host*, const rp::Params& params) : CudaMiCost(params, true) {}
};

}  // namespace regpipe::cost_mi_cuda
