// The pipeline model and its YAML form. Loading validates everything that can be checked
// without images: keys, types, ranges, plugin ids and plugin parameters (against the
// plugins' schemas), with file:line:column and "did you mean" in every message.
#pragma once

#include <regpipe/host/plugin_host.hpp>
#include <regpipe/host/transform_file.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace regpipe {

// Where a value came from, for messages: "pipeline.yaml:12:7" or "--set inputs.moving".
struct SourceLocation {
  std::string text;
};

struct ParamText {
  std::string value;
  SourceLocation where;
};

// A component choice: one plugin id, or a preference list tried in order (the first that
// can be created wins, e.g. [cuda.cr, cpu.cr] takes the GPU when there is one). A parameter
// applies to every listed plugin that has it; one that none has is an error.
struct ComponentSpec {
  std::vector<std::string> plugins;
  std::map<std::string, ParamText> params;
  SourceLocation where;
};

struct ImageInput {
  std::filesystem::path path;
  std::optional<unsigned> volume;  // for 4D files
  // A moving image's outputs in a batch, relative to outputs.dir: its stem, below the folders
  // a pattern's wildcards matched (sub-01/anat/sub-01_T1w for sub-*/anat/*_T1w.nii.gz).
  std::filesystem::path output_folder;
};

// A moving image's file name without .nii.gz, .nii, .mha, ...
std::string moving_stem(const std::filesystem::path& path);

struct PipelineInputs {
  ImageInput reference;
  std::vector<ImageInput> moving;  // one or more (batch mode: one reference, many moving)
  std::optional<ImageInput> reference_weight;
  std::optional<ImageInput> moving_weight;
  // Voxels that are NaN or infinite in an image or a weight: "refuse" the image, naming how
  // many and the first, or "mask" them (weight 0: left out of the cost).
  std::string non_finite = "refuse";
};

struct PipelineRegistration {
  unsigned dof = 12;
  std::vector<double> levels_mm{8, 4, 2, 1};
  // No level finer than this (level_schedule.hpp): nullopt (auto) the coarser image's finest
  // voxel size, 0 off, else mm (FLIRT's -minsampling).
  std::optional<double> min_sampling_mm;
  // centre_of_mass, identity, geometric_centre, moments or scaled_voxels (start_transform.hpp)
  std::string initialisation = "centre_of_mass";
  // A transform file to start from instead (its format detected unless given).
  std::optional<std::filesystem::path> initial_transform;
  std::optional<TransformFormat> initial_transform_format;
  bool bins_per_level = false;  // the cost's bins at 1 mm, bins / level mm coarser (FLIRT)
  // The moving image's levels 1/16 coarser than the reference's (moving_level_mm, pyramid.hpp).
  bool decouple_grids = false;
  // A transform keeping less than this fraction of the smaller image in the overlap is scored
  // as keeping none (the measure's no-overlap cost); 0 turns the rule off.
  double min_overlap = 0.25;
  // The longest one plugin call may take before the watchdog ends it (plugin_watchdog.hpp).
  double evaluation_timeout_s = 300.0;
  ComponentSpec cost;
  ComponentSpec optimizer;
  ComponentSpec resampler;
  // Set by the driver for a stage of registration.stages after the first affine one: the
  // previous stage's result (reference LPS world -> moving LPS world), the start instead of
  // initialisation / initial_transform. Never read from YAML.
  std::optional<Eigen::Matrix4d> initial_matrix;
};

// One stage of registration.stages (antsRegistration's Rigid -> Affine -> SyN chain). An
// affine stage is a whole PipelineRegistration (its dof, levels, cost and optimizer; the shared
// keys of the registration section copied in); a `syn` stage uses its cost (which must offer
// RP_EXT_DENSE_COST) and optimizer (RP_EXT_DEFORMABLE_OPTIMIZER, its schedule in its params).
struct PipelineStage {
  std::string transform;   // "rigid", "affine", "syn", or "dof" when only dof: was given
  bool deformable = false; // transform: syn
  PipelineRegistration registration;
  SourceLocation where;
  // "registration.stages[1] (syn)": how messages and the report name it.
  std::string label;
};

struct PipelineOutputs {
  std::filesystem::path dir;
  std::string prefix;                 // file name prefix, "" by default
  bool transforms = true;             // .mat, .tfm, world matrix
  bool registered_image = true;
  std::string interpolation = "bspline"; // for the registered image
  std::string image_format = ".nii.gz";
  std::string datatype = "moving";    // of the registered image: the moving file's, or a VoxelType name
  bool report = true;
  bool qa_png = false;                // qa.png: reference edges over the registered image
  std::string qa_orientation = "radiological";  // of qa.png: or "neurological"
  bool parallel_io = true;            // image files read and written on worker threads
  bool resume = true;                 // a batch skips the images whose results are complete
};

// How a batch is spread over worker processes and devices (execution.*). It changes where the
// images register, never their results.
struct PipelineExecution {
  // execution.devices: the CUDA devices the workers run on, as indices among those this
  // process sees, in the order workers take them (an index listed twice: two workers on it).
  // Empty and not all_devices: not given (the components' own `device` parameters decide).
  std::vector<unsigned> devices;
  bool all_devices = false;  // execution.devices: all
  // execution.workers: worker processes of a batch; 0: one per entry of devices, else one.
  unsigned workers = 0;
  // execution.registrations_per_worker: images one worker registers at once, each on a thread
  // with components of its own; 0 (`auto`): several when the components compute on a GPU
  // (batch_worker.cpp), else one.
  unsigned registrations_per_worker = 0;
};

struct PipelineEvaluation {
  // Optional known truth (moving -> reference world RAS 4x4, the transform_world.txt form):
  // the report then states the mean displacement error over the reference.
  std::optional<std::filesystem::path> truth;
};

// A --set override: dotted key path and YAML value text ("registration.levels_mm=[4,2]").
struct Override {
  std::string key;
  std::string value;
};

struct Pipeline {
  std::filesystem::path source;  // the YAML file
  std::vector<Override> overrides;  // the --set keys it was loaded with (report.json)
  PipelineInputs inputs;
  PipelineRegistration registration;
  // registration.stages, in order; empty for the one-stage form. With stages, `registration`
  // holds the section's shared keys (initialisation, initial_transform, min_overlap,
  // decouple_grids, evaluation_timeout_s, resampler) and the first affine stage's dof,
  // levels, cost and optimizer (those of the first stage when all are syn).
  std::vector<PipelineStage> stages;
  PipelineOutputs outputs;
  PipelineExecution execution;
  PipelineEvaluation evaluation;
};
// Parses "key=value"; throws UserError for text without '='.
Override parse_override(const std::string& text);

// Loads and validates. Relative paths in the file resolve against the file's folder;
// relative paths given by --set resolve against the current directory. Throws UserError
// listing every problem found, one per line.
Pipeline load_pipeline(const std::filesystem::path& yaml_file, const std::vector<Override>& overrides,
                       const PluginHost& plugins);
// A pipeline from keys alone, as if each were a --set on an empty file (relative paths from
// the current folder): how front ends such as `regpipe flirt` build theirs. `source` names
// the origin in messages.
Pipeline pipeline_from_keys(const std::vector<Override>& keys, const std::string& source,
                            const PluginHost& plugins);

// The schema of the pipeline file itself as (dotted key, type, default, doc) rows: the
// source of docs/yaml-reference.md, which a test keeps in step.
struct PipelineKeyDoc {
  std::string key, type, default_value, doc;
};
const std::vector<PipelineKeyDoc>& pipeline_schema();

}  // namespace regpipe
