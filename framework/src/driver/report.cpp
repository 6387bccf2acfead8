#include "driver/report.hpp"

#include "driver/pipeline_digest.hpp"

#include <regpipe/host/invocation.hpp>

#include <cmath>

namespace regpipe {
namespace {

nlohmann::json matrix_json(const Eigen::Matrix4d& m) {
  nlohmann::json rows = nlohmann::json::array();
  for (int r = 0; r < 4; ++r) rows.push_back({m(r, 0), m(r, 1), m(r, 2), m(r, 3)});
  return rows;
}

nlohmann::json image_json(const ImageInput& in, const Image& image) {
  const Eigen::Vector3d s = image.spacing();
  nlohmann::json j = {{"path", in.path.string()},
                      {"dims", {image.dims[0], image.dims[1], image.dims[2]}},
                      {"spacing_mm", {s[0], s[1], s[2]}}};
  if (in.volume) j["volume"] = *in.volume;
  return j;
}

nlohmann::json param_json(const ParamValue& v) {
  switch (v.type) {
    case RP_PARAM_BOOL: return v.int_value != 0;
    case RP_PARAM_INT: return v.int_value;
    case RP_PARAM_DOUBLE: return v.double_value;
    default: return v.string_value;
  }
}

}  // namespace

// The GPU a component ran on (null: the CPU), so that a report says which card gave its times.
nlohmann::json device_json(const std::optional<DeviceDescription>& d) {
  if (!d) return nullptr;
  const auto version = [](int32_t v) {  // CUDA's 1000 * major + 10 * minor
    return v > 0 ? nlohmann::json(std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10)) : nlohmann::json();
  };
  return {{"index", d->device},
          {"name", d->name},
          {"compute_capability", std::to_string(d->compute_major) + "." + std::to_string(d->compute_minor)},
          {"memory_gib", double(d->memory_bytes) / double(1ull << 30)},
          {"driver_cuda_version", version(d->driver_version)},
          {"runtime_cuda_version", version(d->runtime_version)}};
}

nlohmann::json make_report(const Pipeline& pipeline, const RegistrationImages& images,
                           const RegistrationResult& result, const Eigen::Matrix4d& fsl_matrix,
                           const std::optional<RunEvaluation>& evaluation, const PhaseSeconds& phases,
                           double total_seconds) {
  nlohmann::json report;
  report["regpipe_version"] = REGPIPE_VERSION;
  report["abi"] = std::to_string(RP_ABI_MAJOR) + "." + std::to_string(RP_ABI_MINOR);
  report["pipeline"] = pipeline.source.string();
  // What the result depends on: a batch rerun skips an image whose report carries its digest.
  report["pipeline_digest"] = pipeline_digest(pipeline);
  // How it was made: the command, its --set keys, where and when.
  report["command_line"] = command_line();
  nlohmann::json overrides = nlohmann::json::object();
  for (const Override& o : pipeline.overrides) overrides[o.key] = o.value;
  report["overrides"] = overrides;
  report["host"] = host_name();
  report["created_utc"] = utc_timestamp();
  report["inputs"] = {{"reference", image_json(pipeline.inputs.reference, images.reference)},
                      {"moving", image_json(pipeline.inputs.moving.front(), images.moving)}};
  nlohmann::json components = nlohmann::json::object();
  for (const auto& c : result.components) {
    components[c.role] = {{"id", c.id}, {"version", c.version}, {"library", c.library}};
    if (!c.fallback_from.empty()) components[c.role]["instead_of"] = c.fallback_from;
    nlohmann::json params = nlohmann::json::object();  // every one, defaults included
    for (const auto& [name, value] : c.params) params[name] = param_json(value);
    components[c.role]["params"] = params;
    components[c.role]["device"] = device_json(c.device);
  }
  report["components"] = components;
  report["registration"] = {{"dof", pipeline.registration.dof},
                            {"levels_mm", pipeline.registration.levels_mm},
                            {"min_sampling_mm", result.min_sampling_mm},
                            {"sampled_levels_mm", result.sampled_levels_mm},
                            {"initialisation", pipeline.registration.initial_transform
                                                   ? nlohmann::json()  // the initial transform is the start
                                                   : nlohmann::json(pipeline.registration.initialisation)},
                            {"initial_transform", pipeline.registration.initial_transform
                                                      ? nlohmann::json(pipeline.registration.initial_transform->string())
                                                      : nlohmann::json()},
                            {"bins_per_level", pipeline.registration.bins_per_level},
                            {"decouple_grids", pipeline.registration.decouple_grids},
                            {"min_overlap", pipeline.registration.min_overlap}};
  const PipelineOutputs& o = pipeline.outputs;
  report["outputs"] = {{"dir", o.dir.string()},           {"prefix", o.prefix},
                       {"transforms", o.transforms},       {"registered_image", o.registered_image},
                       {"interpolation", o.interpolation}, {"image_format", o.image_format},
                       {"datatype", o.datatype},           {"qa_png", o.qa_png},
                       {"qa_orientation", o.qa_orientation}, {"parallel_io", o.parallel_io}};
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : result.stages) {
    nlohmann::json j = {{"name", s.name},       {"level_mm", s.level_mm},
                        {"evaluations", s.evaluations}, {"batches", s.batches},
                        {"below_min_overlap", s.below_min_overlap}, {"seconds", s.seconds},
                        {"level_setup", s.level_setup}};
    j["best_cost"] = std::isfinite(s.best_cost) ? nlohmann::json(s.best_cost) : nlohmann::json();
    stages.push_back(j);
  }
  report["stages"] = stages;
  // registration.stages (additive: only pipelines with stages have it): each stage in order,
  // with its components, final cost (a syn stage's dense cost before and after it) and time.
  if (!result.pipeline_stages.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& s : result.pipeline_stages) {
      const auto number = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
      nlohmann::json j = {{"name", s.label},        {"transform", s.transform}, {"cost", s.cost_id},
                          {"optimizer", s.optimizer_id}, {"final_cost", number(s.final_cost)},
                          {"seconds", s.seconds}};
      if (s.transform == "syn") {
        j["cost_before"] = number(s.cost_before);
      } else {
        j["dof"] = s.dof;
        j["evaluations"] = s.evaluations;
      }
      list.push_back(j);
    }
    report["registration_stages"] = list;
    if (result.warp && o.transforms)
      report["outputs"]["warp"] = {{"forward", o.prefix + "1Warp.nii.gz"},
                                   {"inverse", o.prefix + "1InverseWarp.nii.gz"},
                                   {"apply_chain", {o.prefix + "0GenericAffine.mat", o.prefix + "1Warp.nii.gz"}}};
  }
  report["result"] = {{"final_cost", result.final_cost},
                      {"evaluations", result.evaluations},
                      {"parameters", result.params},
                      {"centre_mm", {result.centre[0], result.centre[1], result.centre[2]}},
                      {"reference_to_moving_world_lps", matrix_json(result.ref_to_mov)},
                      {"fsl_matrix", matrix_json(fsl_matrix)}};
  // reading + registration + writing (+ the report itself) make the total; pyramid and
  // search are parts of registration.
  report["seconds"] = {{"reading", phases.reading},
                       {"registration", phases.registration},
                       {"writing", phases.writing},
                       {"pyramid", result.seconds_pyramid},
                       {"search", result.seconds_search},
                       {"total", total_seconds}};
  if (evaluation)
    report["evaluation"] = {{"truth", pipeline.evaluation.truth->string()},
                            {"mean_displacement_mm", evaluation->mean_displacement_mm}};
  return report;
}

}  // namespace regpipe
