// `regpipe compare`: several cost implementations evaluated on the same image pair and the
// same transforms, for research comparisons of similarity functions: agreement with the CPU
// implementation of the same measure, time per evaluation, profiles along each of the 12
// parameters around a centre transform, and optionally a full registration with each.
#pragma once

#include <regpipe/host/host_services.hpp>
#include <regpipe/host/pipeline.hpp>
#include <regpipe/host/plugin_host.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace regpipe {

struct CompareCost {
  std::string label;        // column name in the outputs; the id unless given
  ComponentSpec spec;       // one plugin id and its parameters
  std::string cpu_label;    // the CPU implementation of the same measure in the list, or ""
};

struct CompareConfig {
  std::filesystem::path source;   // the compare YAML
  Pipeline pipeline;              // images, registration settings, optional truth
  std::vector<CompareCost> costs;
  size_t reference_cost = 0;      // index into costs: the cost of the centre's registration
  std::string centre;             // "truth", "registration" or "file"
  std::filesystem::path centre_file;  // transform_world.txt form, or an FSL .mat
  double level_mm = 4.0;
  unsigned profile_points = 21;
  double rotation_deg = 10.0, translation_mm = 10.0, scale = 0.1, skew = 0.1;  // profile half-ranges
  unsigned agreement_transforms = 20;
  unsigned seed = 1;
  unsigned timing_repeats = 5, timing_batch = 64;
  bool register_each = false;
  std::filesystem::path output_dir;
};

// Loads and validates a compare file (unknown keys, types, ranges, cost ids and parameters,
// with file:line:column); the pipeline it names is loaded with load_pipeline. Throws
// UserError listing every problem.
CompareConfig load_compare(const std::filesystem::path& yaml_file,
                           const std::vector<Override>& overrides, const PluginHost& plugins);

// Runs the comparison and writes agreement.csv, timing.csv, profiles.csv, profile_<p>.svg,
// registrations.csv (register_each) and summary.md into output_dir. Everything is computed
// before the first file is written, so a failure leaves no partial results.
void run_compare(const CompareConfig& config, const PluginHost& plugins, HostServices& services);

// The keys of the compare file (dotted; "costs.plugin" is a key of each list entry): the
// loader accepts exactly these, and docs/compare.md lists them.
const std::vector<PipelineKeyDoc>& compare_schema();

// The 12 affine parameters as named in the outputs, with their unit: rot_x_deg, ...,
// trans_x_mm, ..., scale_x, ..., skew_xy, skew_xz, skew_yz.
const std::vector<std::string>& compare_parameter_names();

}  // namespace regpipe
