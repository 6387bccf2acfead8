// cuda.mi and cuda.nmi: the host side of every scheme. Images are validated and binned
// exactly as cost_cpu does (the same checks, range and bins), read in place in parallel slabs
// (regpipe_common::measure_image_in_place) and uploaded once per set_reference / set_moving:
// the reference as bins, the moving image as its values (and, for privatised's batches, as
// trilinear quads made by the first call that reads them). Each evaluate copies the k voxel
// maps to the device in one transfer, zeroes the k joint histograms, runs the selected scheme and the GPU finish step,
// which writes the k costs and overlaps straight to page-locked memory, and synchronises once.
// RP_EXT_DEVICE_IMAGE (abi.h, 1.3): both images from device memory, measured and binned
// there with the same results (no host copy; the presorted and adaptive schemes' state,
// built from the reference's bins on the host, downloads the bins).
#pragma once

#include "schemes/schemes.hpp"

#include <regpipe/plugin.hpp>
#include <regpipe_common/prepared_image.hpp>
#include <regpipe_common_cuda/device_buffer.hpp>
#include <regpipe_common_cuda/device_measure.hpp>
#include <regpipe_common_cuda/device_session.hpp>
#include <regpipe_common_cuda/pinned_buffer.hpp>
#include <regpipe_common_cuda/trilinear_quads.hpp>

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
  int32_t device() const { return device_.index; }
  void describe_device(rp_device_info& out) const { regpipe_common_cuda::describe_device(device_, out); }
  void set_reference_device(const rp_device_image& image);
  void set_moving_device(const rp_device_image& image);
  rp_transfer_counts transfer_counts() const { return counts_; }

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
  bool reads_quads_ = false;            // privatised, trilinear, whole samples: MiArgs::mov_quads
  std::unique_ptr<SchemeState> state_;  // the scheme's, for schemes that keep one

  // What evaluate needs of an image whose voxels are on the device.
  struct Geometry {
    regpipe_common::Grid grid{1, 1, 1};
    double voxel_to_world[16] = {};
    regpipe_common::IntensityBinning binning;
    std::size_t voxel_count = 0;
  };
  Geometry measure(const rp_image& image, const rp_image* weight, const char* role) const;
  Geometry measure_on_device(const rp_device_image& image, const char* role);
  Geometry geometry_of(const regpipe_common::MeasuredImage& m, const char* role) const;
  // The moving image's values copied to the device (`from` host or device memory), mov_ set.
  void take_moving(const Geometry& mov, const float* values, cudaMemcpyKind from);

  std::optional<Geometry> ref_, mov_;
  std::vector<uint16_t> ref_bins_host_;  // kept for the upload in flight and the scheme's state
  DeviceBuffer<uint16_t> ref_bins_;
  DeviceBuffer<float> mov_values_;
  regpipe_common_cuda::TrilinearQuads mov_quads_;  // reads_quads_: for the calls that read them
  // Per evaluation: k maps in (page-locked, one copy); k joint histograms and the finish
  // step's partials on the device; k costs then k overlaps out, written by the device in place.
  PinnedBuffer<double> host_maps_, host_out_;
  DeviceBuffer<double> maps_, partials_;
  DeviceBuffer<unsigned> joint_;
  DeviceBuffer<unsigned long long> joint_pv_;  // partial_volume: k histograms, 2^20 units a sample
  DeviceBuffer<unsigned char> scheme_scratch_;  // SchemeLaunch::scratch
  regpipe_common_cuda::MeasureScratch measure_scratch_;
  rp_transfer_counts counts_{sizeof(rp_transfer_counts), 0, 0, 0, 0};
};

// The two components: the same histogram, a different formula at the end.
struct CudaMi : CudaMiCost {
  CudaMi(const rp_host*, const rp::Params& params) : CudaMiCost(params, false) {}
};
struct CudaNmi : CudaMiCost {
  CudaNmi(const rp_host*, const rp::Params& params) : CudaMiCost(params, true) {}
};

}  // namespace regpipe::cost_mi_cuda
