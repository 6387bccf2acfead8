#include "driver/pipeline_digest.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <optional>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

nlohmann::json file_json(const fs::path& path) {
  std::error_code ec;
  nlohmann::json j = {{"path", fs::absolute(path, ec).lexically_normal().string()}};
  const auto size = fs::file_size(path, ec);
  j["size"] = ec ? nlohmann::json() : nlohmann::json(size);
  const auto time = fs::last_write_time(path, ec);
  j["mtime"] = ec ? nlohmann::json() : nlohmann::json(time.time_since_epoch().count());
  return j;
}

nlohmann::json image_json(const std::optional<ImageInput>& input) {
  if (!input) return nullptr;
  nlohmann::json j = file_json(input->path);
  j["volume"] = input->volume ? nlohmann::json(*input->volume) : nlohmann::json();
  return j;
}

nlohmann::json component_json(const ComponentSpec& spec) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, text] : spec.params) params[name] = text.value;
  return {{"plugins", spec.plugins}, {"params", params}};
}

}  // namespace

std::string fingerprint(const std::string& text) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char out[17];
  std::snprintf(out, sizeof(out), "%016llx", static_cast<unsigned long long>(h));
  return out;
}

std::string pipeline_digest(const Pipeline& p) {
  const PipelineRegistration& r = p.registration;
  const PipelineOutputs& o = p.outputs;
  nlohmann::json moving = nlohmann::json::array();
  for (const ImageInput& m : p.inputs.moving) moving.push_back(image_json(m));
  const nlohmann::json what = {
      {"inputs",
       {{"reference", image_json(p.inputs.reference)},
        {"moving", moving},
        {"reference_weight", image_json(p.inputs.reference_weight)},
        {"moving_weight", image_json(p.inputs.moving_weight)}}},
      {"registration",
       {{"dof", r.dof},
        {"levels_mm", r.levels_mm},
        {"min_sampling_mm", r.min_sampling_mm ? nlohmann::json(*r.min_sampling_mm) : nlohmann::json("auto")},
        {"initialisation", r.initialisation},
        {"initial_transform", r.initial_transform ? file_json(*r.initial_transform) : nlohmann::json()},
        {"initial_transform_format", r.initial_transform_format ? int(*r.initial_transform_format) : -1},
        {"bins_per_level", r.bins_per_level},
        {"decouple_grids", r.decouple_grids},
        {"min_overlap", r.min_overlap},
        {"cost", component_json(r.cost)},
        {"optimizer", component_json(r.optimizer)},
        {"resampler", component_json(r.resampler)}}},
      {"outputs",
       {{"prefix", o.prefix},
        {"transforms", o.transforms},
        {"registered_image", o.registered_image},
        {"interpolation", o.interpolation},
        {"image_format", o.image_format},
        {"datatype", o.datatype},
        {"report", o.report},
        {"qa_png", o.qa_png}}},
      {"truth", p.evaluation.truth ? file_json(*p.evaluation.truth) : nlohmann::json()}};
  if (p.stages.empty()) return fingerprint(what.dump());  // the one-stage form's digest as before
  // registration.stages: each stage's own keys too.
  nlohmann::json with_stages = what;
  nlohmann::json stages = nlohmann::json::array();
  for (const PipelineStage& s : p.stages)
    stages.push_back({{"transform", s.transform},
                      {"dof", s.registration.dof},
                      {"levels_mm", s.registration.levels_mm},
                      {"bins_per_level", s.registration.bins_per_level},
                      {"cost", component_json(s.registration.cost)},
                      {"optimizer", component_json(s.registration.optimizer)}});
  with_stages["registration"]["stages"] = stages;
  return fingerprint(with_stages.dump());
}

}  // namespace regpipe
