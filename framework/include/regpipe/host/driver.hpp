// The registration driver: images in, pyramid, cost + optimizer through the ABI, result out.
#pragma once

#include <regpipe/host/components.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/level_schedule.hpp>
#include <regpipe/host/pipeline.hpp>
#include <regpipe/host/plugin_host.hpp>
#include <regpipe/host/transform.hpp>

#include <regpipe_common/fields/displacement_field.hpp>

#include <Eigen/Core>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace regpipe {

// What one named stage of the search did (a level, or a stage an optimizer announced), or the
// set-up of a level: its images handed to the cost (set_reference, set_moving: binning,
// uploads, presorts) and the overlap rule measured, recorded apart so that no search stage
// carries the next level's preparation.
struct StageRecord {
  std::string name;
  bool level_setup = false;
  double level_mm = 0.0;
  long long evaluations = 0;  // transforms evaluated by the cost component
  long long batches = 0;      // calls to the cost component
  long long below_min_overlap = 0;  // transforms scored as no overlap (registration.min_overlap)
  double best_cost = 0.0;
  double seconds = 0.0;
};

struct UsedComponent {
  std::string role;  // "cost", "optimizer", "resampler"
  std::string id, version, library;
  std::string fallback_from;  // why earlier plugins of a preference list were not used
  std::map<std::string, ParamValue> params;  // every parameter it was created with, defaults included
  std::optional<DeviceDescription> device;  // the GPU it computes on; nothing on the CPU
};
// "cuda.cr 1.2.0 on NVIDIA H100 80GB HBM3 (device 0) (instead of ...)": what the run
// and validate print for a component.
std::string describe_used(const UsedComponent& c);

// One stage of registration.stages as it ran (report.json's "registration_stages").
struct PipelineStageRecord {
  std::string label;      // "registration.stages[2] (syn)"
  std::string transform;  // rigid, affine, syn or dof
  unsigned dof = 0;       // an affine stage's
  std::string cost_id, optimizer_id;
  // An affine stage: its search's final cost. A syn stage: its dense cost between the reference
  // and the moving image (trilinear) through the affine start alone, and through the result.
  double cost_before = std::numeric_limits<double>::quiet_NaN();
  double final_cost = std::numeric_limits<double>::quiet_NaN();
  long long evaluations = 0;  // an affine stage's cost evaluations
  double seconds = 0.0;
};

struct RegistrationResult {
  Eigen::Matrix4d ref_to_mov = Eigen::Matrix4d::Identity();  // abi.h convention (LPS)
  AffineParams params{};
  Eigen::Vector3d centre = Eigen::Vector3d::Zero();          // reference centre of mass
  double final_cost = 0.0;
  std::vector<StageRecord> stages;
  // The levels that ran (registration.levels_mm under the minimum sampling, level_schedule.hpp)
  // and that floor in mm (0: off).
  std::vector<double> sampled_levels_mm;
  double min_sampling_mm = 0.0;
  std::vector<UsedComponent> components;
  double seconds_loading = 0.0, seconds_pyramid = 0.0, seconds_search = 0.0;
  long long evaluations = 0;
  // registration.stages: each stage as it ran (empty for the one-stage form); ref_to_mov,
  // params, stages and components above are then the affine stages' (the last one's result).
  std::vector<PipelineStageRecord> pipeline_stages;
  // A syn stage's fields on the reference grid: a reference world point p is seen in the moving
  // image at ref_to_mov * (p + warp(p)) (ANTs' 1Warp); inverse_warp is ANTs' 1InverseWarp.
  std::shared_ptr<const regpipe_common::DisplacementField> warp, inverse_warp;
};

// The images a registration needs, already read.
struct RegistrationImages {
  Image reference, moving;
  std::optional<Image> reference_weight, moving_weight;
};

RegistrationImages load_images(const PipelineInputs& inputs);
// The files a pipeline names, checked without reading a voxel: every image's header (4D
// without a volume index included), the truth file, the output folder (or its parent).
// Throws UserError naming the key and the file.
void check_pipeline_files(const Pipeline& p);
// load_images in two halves, for a batch: the reference (and its weight) once, then each
// moving image (and inputs.moving_weight, which must be on that image's grid).
void load_reference(const PipelineInputs& inputs, RegistrationImages& images);
void load_moving(const PipelineInputs& inputs, const ImageInput& moving, RegistrationImages& images);

// The pipeline's cost, optimizer and resampler, created (their parameters checked) before
// any image is read, so that bad parameters fail fast.
struct RegistrationComponents {
  std::unique_ptr<CostInstance> cost;
  // With registration.bins_per_level: one cost per level (coarsest first), its bins scaled.
  std::vector<std::unique_ptr<CostInstance>> level_costs;
  std::unique_ptr<OptimizerInstance> optimizer;
  std::unique_ptr<ResamplerInstance> resampler;
  std::vector<UsedComponent> used;
};

// Throws UserError for a plugin that is not installed, ComponentError for bad parameters.
// With registration.stages: the first affine stage's (see create_stage_components).
RegistrationComponents create_registration_components(const Pipeline& pipeline,
                                                      const PluginHost& plugins,
                                                      HostServices& services);

// The components of a pipeline with registration.stages: each affine stage's, as
// create_registration_components makes them, and the syn stage's cost and optimizer, checked
// for the dense and deformable extensions (UserError naming the stage, its key and the
// components here that have the extension).
struct DeformableComponents {
  std::unique_ptr<CostInstance> cost;
  std::unique_ptr<OptimizerInstance> optimizer;
  std::vector<UsedComponent> used;
};
struct StageComponents {
  std::vector<RegistrationComponents> affine;  // one per affine stage, in order
  std::optional<DeformableComponents> deformable;
  // What the run uses, for `regpipe validate` and the summary: each stage's, labelled.
  std::vector<std::pair<std::string, UsedComponent>> used;
};
StageComponents create_stage_components(const Pipeline& pipeline, const PluginHost& plugins,
                                        HostServices& services);
// The pipeline as stage `index` of its registration.stages alone: that stage's registration
// (its dof, levels, cost, optimizer and the shared keys), no stages.
Pipeline stage_pipeline(const Pipeline& pipeline, size_t index);
// Runs registration.stages in turn: each affine stage from the previous one's result (the
// first from the section's start), the syn stage from the final affine (the identity when no
// affine stage precedes it) on the full-resolution images, its fields in the result.
RegistrationResult register_stages(const Pipeline& pipeline, const RegistrationImages& images,
                                   StageComponents& components, HostServices& services);

// The reference's part of a registration: its pyramid levels (and its weight's), centre of
// mass and mass radius. Prepared once, reused for every moving image of a batch.
struct PreparedReference {
  // registration.levels_mm under the reference's own minimum sampling (a moving image may
  // raise the floor further; a level it needs that is not here is made for it).
  std::vector<SampledLevel> sampled;
  std::vector<Image> levels;         // one per sampled level, coarsest first
  // When the resampler and the cost hand levels over in device memory (RP_EXT_DEVICE_IMAGE,
  // abi.h 1.3): the levels there, one per levels[i], which then holds its grid only (no
  // voxels). Must go before the components that made them.
  std::vector<DeviceImage> device_levels;
  std::vector<Image> weight_levels;  // empty without inputs.reference_weight
  Eigen::Vector3d centre = Eigen::Vector3d::Zero();
  double radius_mm = 0.0;            // RMS distance of the mass from the centre
  double seconds = 0.0;              // time taken to prepare it
};
// `moving`: the one moving image it is for, whose voxel size then joins the minimum sampling;
// null for a batch (the reference's own floor; a coarser moving image adds its level later).
PreparedReference prepare_reference(const Pipeline& pipeline, const RegistrationImages& images,
                                    const RegistrationComponents& components, const Image* moving = nullptr);

// Mass moments of an image's positive values in voxel index space: sum w, sum w i, sum w i i^T.
struct IndexMoments {
  double m0 = 0.0;
  Eigen::Vector3d m1 = Eigen::Vector3d::Zero();
  Eigen::Matrix3d m2 = Eigen::Matrix3d::Zero();
};
IndexMoments index_moments(const Image& image);

// Root-mean-square distance of the image's mass (its positive values) from `centre` (world
// mm), at least 10 mm (50 mm for an image without mass): the lever arm that converts
// rotations and scales into millimetres of displacement.
double mass_radius_mm(const Image& image, const Eigen::Vector3d& centre);

// Runs the registration of the pipeline on already loaded images. Throws UserError for bad
// input (constant image, grids that do not match their weights, ...), ComponentError when
// a plugin fails (RP_CANCELLED included).
RegistrationResult register_images(const Pipeline& pipeline, const RegistrationImages& images,
                                   const PluginHost& plugins, HostServices& services);
// The same with components already created.
RegistrationResult register_images(const Pipeline& pipeline, const RegistrationImages& images,
                                   RegistrationComponents& components, HostServices& services);
// The same with the reference already prepared (images.reference is the one it was made from).
RegistrationResult register_images(const Pipeline& pipeline, const RegistrationImages& images,
                                   const PreparedReference& reference,
                                   RegistrationComponents& components, HostServices& services);

// The intensity above which reference voxels count as "head" for the displacement metric:
// a fifth of the 99th percentile (robust to bright outliers, excludes background noise).
float foreground_threshold(const Image& image);

// Everything `regpipe run` does: validate the output folder, load, register, write the
// outputs (all or none), print a summary. Returns the result.
RegistrationResult run_pipeline(const Pipeline& pipeline, const PluginHost& plugins,
                                HostServices& services);

// `regpipe run` with several moving images, supervised (batch_supervisor.cpp): each image
// registered into its folder under outputs.dir by a worker process (one per place of
// execution.devices / execution.workers, each handed the next image when ready for one), a
// failing one reported and skipped; a plugin that crashes or hangs on an image costs that image
// only (a new worker goes on with the rest); images whose complete results are there already
// are skipped (outputs.resume); outputs.dir/batch_report.json. `run_again` is this run's
// command line after the program name: a worker is `regpipe <run_again> --batch-worker <key>`.
// UserError when execution.devices names a device that is not there.
struct BatchOutcome {
  size_t failures = 0;
  // A worker's exit status when it stopped the whole batch itself (an unreadable reference,
  // bad parameters, Ctrl-C: its message is on stderr and no batch_report.json is written); 0
  // otherwise.
  int stopped_with = 0;
};
BatchOutcome run_batch(const Pipeline& pipeline, HostServices& services,
                       const std::vector<std::string>& run_again);
// The option that makes `regpipe run` a batch worker; its value identifies the batch's image
// list (batch_protocol.hpp).
inline constexpr const char* kBatchWorkerOption = "--batch-worker";
// The worker's part: the components created and the reference prepared once, then the images
// its supervisor hands it registered, each reported on the worker's pipe (batch_protocol.hpp).
// UserError when the key does not fit the pipeline.
void run_batch_worker(const Pipeline& pipeline, const PluginHost& plugins, HostServices& services,
                      const std::string& batch_key);

// A single registration's process takes execution.devices' first entry as its device
// (CUDA_VISIBLE_DEVICES, before any component starts CUDA); nothing without devices.
// UserError when that device is not there.
void use_first_device(const PipelineExecution& execution);

}  // namespace regpipe
