#include <regpipe/host/error.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/pipeline.hpp>

#include "pipeline/component_yaml.hpp"
#include "pipeline/moving_patterns.hpp"
#include "pipeline/overrides.hpp"
#include "pipeline/yaml_context.hpp"
#include "plugin_host/did_you_mean.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

// Calls `fn(child)` when `map` has `name` (through the const interface: no insertion).
template <class Fn>
void with_child(const YAML::Node& map, const char* name, Fn&& fn) {
  if (!map.IsMap()) return;
  const YAML::Node child = map[name];
  if (child.IsDefined() && !child.IsNull()) fn(child);
}

// inputs.<image>_volume: an index into a 4D file's volumes (NIfTI counts them in 16 bits per
// axis; no file has 2^31), so that a huge value is refused instead of wrapping around.
std::optional<unsigned> read_volume_index(YamlContext& ctx, const std::string& key, const YAML::Node& n) {
  long long v = 0;
  if (!ctx.read_int(key, n, &v)) return std::nullopt;
  if (v < 0 || v > std::numeric_limits<int32_t>::max()) {
    ctx.error(key, n, key + "=" + std::to_string(v) + (v < 0 ? " must be >= 0" : " is beyond any file's volumes"));
    return std::nullopt;
  }
  return unsigned(v);
}

void read_image_input(YamlContext& ctx, const YAML::Node& inputs, const std::string& name,
                      std::optional<ImageInput>* out) {
  with_child(inputs, name.c_str(), [&](const YAML::Node& n) {
    ImageInput in;
    if (ctx.read_path("inputs." + name, n, &in.path)) *out = in;
  });
  with_child(inputs, (name + "_volume").c_str(), [&](const YAML::Node& n) {
    const std::optional<unsigned> v = read_volume_index(ctx, "inputs." + name + "_volume", n);
    if (v && out->has_value()) (*out)->volume = *v;
  });
}

// inputs.moving: a path, a pattern or a list of either (batch mode). Each image's outputs
// go to their own folder (MatchedImage::output_folder), so two images with the same one are
// refused.
void read_moving(YamlContext& ctx, const YAML::Node& node, std::vector<ImageInput>* out) {
  const std::string key = "inputs.moving";
  std::vector<std::pair<MatchedImage, YAML::Node>> images;
  const auto add = [&](const YAML::Node& item) {
    fs::path path;
    if (!ctx.read_path(key, item, &path)) return;
    if (!is_pattern(path)) {
      images.emplace_back(MatchedImage{path, moving_stem(path)}, item);
      return;
    }
    const std::vector<MatchedImage> matches = expand_pattern(path);
    if (matches.empty())
      ctx.error(key, item, "inputs.moving: the pattern " + path.string() + " matches no file");
    for (const MatchedImage& m : matches) images.emplace_back(m, item);
  };
  if (node.IsSequence()) {
    if (node.size() == 0) ctx.error(key, node, "inputs.moving must not be an empty list");
    for (const auto& item : node) add(item);
  } else {
    add(node);
  }
  std::map<fs::path, fs::path> folders;
  for (const auto& [image, where] : images) {
    const auto [it, fresh] = folders.emplace(image.output_folder, image.path);
    if (!fresh)
      ctx.error(key, where, "inputs.moving: " + it->second.string() + " and " + image.path.string() +
                                " have the same name " + it->first.string() +
                                ", and so the same output folder: rename one");
    out->push_back(ImageInput{image.path, std::nullopt, image.output_folder});
  }
}

void read_choice(YamlContext& ctx, const YAML::Node& node, const std::string& key,
                 const std::vector<std::string>& choices, std::string* out);

void read_inputs(YamlContext& ctx, const YAML::Node& root, Pipeline& p) {
  const YAML::Node inputs = root["inputs"];
  if (!inputs.IsDefined() || inputs.IsNull()) {
    ctx.error("inputs", root, "missing section 'inputs' (reference and moving images)");
    return;
  }
  if (!ctx.check_map("inputs", inputs, schema_children("inputs"))) return;
  std::optional<ImageInput> reference;
  read_image_input(ctx, inputs, "reference", &reference);
  if (!reference) ctx.error("inputs", inputs, "missing key 'inputs.reference'");
  else p.inputs.reference = *reference;
  const YAML::Node moving = inputs["moving"];
  if (!moving.IsDefined() || moving.IsNull()) ctx.error("inputs", inputs, "missing key 'inputs.moving'");
  else read_moving(ctx, moving, &p.inputs.moving);
  with_child(inputs, "moving_volume", [&](const YAML::Node& n) {
    if (const std::optional<unsigned> v = read_volume_index(ctx, "inputs.moving_volume", n))
      for (auto& m : p.inputs.moving) m.volume = *v;
  });
  with_child(inputs, "reference_weight", [&](const YAML::Node& n) {
    ImageInput in;
    if (ctx.read_path("inputs.reference_weight", n, &in.path)) p.inputs.reference_weight = in;
  });
  with_child(inputs, "moving_weight", [&](const YAML::Node& n) {
    ImageInput in;
    if (ctx.read_path("inputs.moving_weight", n, &in.path)) p.inputs.moving_weight = in;
  });
  with_child(inputs, "non_finite", [&](const YAML::Node& n) {
    read_choice(ctx, n, "inputs.non_finite", {"refuse", "mask"}, &p.inputs.non_finite);
  });
}

// A component of the registration section (or of a stage: `section` is then
// "registration.stages[i]"), validated against the plugins' schemas.
void read_component(YamlContext& ctx, const YAML::Node& reg, const std::string& name, int32_t kind,
                    const PluginHost& host, ComponentSpec& spec, const std::string& prefix = "registration") {
  const std::string section = prefix + "." + name;
  const std::string schema_section = (prefix == "registration" ? prefix : "registration.stages") + "." + name;
  with_child(reg, name.c_str(), [&](const YAML::Node& node) {
    read_component_keys(ctx, node, section, schema_children(schema_section), spec);
  });
  if (spec.where.text.empty()) spec.where = {ctx.where(section, reg).text};
  check_component(ctx, kind, host, spec);
}

// registration.dof against the DOF the optimizer declares (ABI 1.2): refused here, before
// any image is read, unless some listed optimizer supports it (creating from a preference
// list then skips those that do not). Plugins that declare nothing accept any DOF.
void check_optimizer_dof(YamlContext& ctx, const YAML::Node& reg, const PluginHost& host,
                         const PipelineRegistration& r, const std::string& prefix = "registration") {
  const YAML::Node given = reg.IsMap() ? reg["dof"] : YAML::Node();
  const bool is_given = given.IsDefined() && !given.IsNull();
  std::vector<const Component*> refusing;
  for (const auto& id : r.optimizer.plugins) {
    const Component* c = host.find(RP_KIND_OPTIMIZER, id);
    if (c == nullptr) continue;  // reported by check_component
    if (c->supports_dof(r.dof)) return;
    refusing.push_back(c);
  }
  if (refusing.empty()) return;
  const std::string dof = std::to_string(r.dof);
  std::string message = prefix + ".dof=" + dof;
  if (!is_given) message += prefix == "registration" ? " (the default)" : " (the stage's transform)";
  if (refusing.size() == 1) {
    message += " is not supported by optimizer '" + refusing[0]->id + "', which " +
               refusing[0]->dof_support_text();
  } else {
    message += " is not supported by optimizer";
    for (size_t i = 0; i < refusing.size(); ++i)
      message += (i == 0 ? " '" : " nor '") + refusing[i]->id + "' (which " +
                 refusing[i]->dof_support_text() + ")";
  }
  std::vector<std::string> alternatives;
  for (const auto& c : host.components())
    if (c.kind == RP_KIND_OPTIMIZER && c.supports_dof(r.dof)) alternatives.push_back(c.id);
  if (!alternatives.empty())
    message += "; optimizers that support " + dof + " DOF: " + join(alternatives, ", ");
  if (is_given)
    ctx.error(prefix + ".dof", given, message);
  else
    ctx.errors_push(r.optimizer.where.text + ": " + message);
}

// The keys a stage of registration.stages holds (the one-stage form has them in the section).
const std::vector<std::string> kStageKeys{"dof", "levels_mm", "bins_per_level", "cost", "optimizer"};

// The registration section's keys, or a stage's (`prefix` "registration.stages[i]"): with
// `stage_keys` dof, levels_mm, bins_per_level, cost and optimizer; with `shared_keys` the
// others. One order for both, so that the one-stage form reports as it always did.
void read_registration_keys(YamlContext& ctx, const YAML::Node& node, const std::string& prefix,
                            const PluginHost& host, PipelineRegistration& r, bool stage_keys,
                            bool shared_keys) {
  bool dof_read = true;  // false after an error about the value: no second one from the optimizer
  if (stage_keys) {
    with_child(node, "dof", [&](const YAML::Node& n) {
      long long dof = 0;
      dof_read = false;
      if (!ctx.read_int(prefix + ".dof", n, &dof)) return;
      if (dof != 3 && dof != 6 && dof != 7 && dof != 9 && dof != 12) {
        ctx.error(prefix + ".dof", n,
                  prefix + ".dof=" + std::to_string(dof) + " is not one of 3, 6, 7, 9, 12");
        return;
      }
      r.dof = unsigned(dof);
      dof_read = true;
    });
    with_child(node, "levels_mm", [&](const YAML::Node& n) {
      const std::string key = prefix + ".levels_mm";
      if (!n.IsSequence() || n.size() == 0) {
        ctx.error(key, n, key + " must be a non-empty list, e.g. [8, 4, 2, 1]");
        return;
      }
      std::vector<double> levels;
      for (const auto& v : n) {
        double mm = 0;
        if (!ctx.read_double(key, v, &mm)) return;
        if (!(mm > 0.0 && mm <= 64.0)) {
          ctx.error(key, v, "level " + v.Scalar() + " mm is outside (0, 64]");
          return;
        }
        levels.push_back(mm);
      }
      if (!std::is_sorted(levels.rbegin(), levels.rend()))
        ctx.error(key, n, key + " must go from coarse to fine");
      r.levels_mm = levels;
    });
  }
  if (shared_keys) {
    with_child(node, "initialisation", [&](const YAML::Node& n) {
      std::string s;
      if (!ctx.read_string("registration.initialisation", n, &s)) return;
      const std::vector<std::string> choices{"centre_of_mass", "identity", "geometric_centre", "moments",
                                             "scaled_voxels"};
      if (std::find(choices.begin(), choices.end(), s) == choices.end())
        ctx.error("registration.initialisation", n,
                  "registration.initialisation=" + s + " is not one of " + join(choices, ", ") +
                      did_you_mean(s, choices));
      else r.initialisation = s;
    });
    with_child(node, "initial_transform", [&](const YAML::Node& n) {
      fs::path path;
      if (!ctx.read_path("registration.initial_transform", n, &path)) return;
      std::error_code ec;
      if (!fs::is_regular_file(path, ec))
        ctx.error("registration.initial_transform", n,
                  "registration.initial_transform: '" + path.string() + "' " +
                      (fs::exists(path, ec) ? "is not a regular file" : "does not exist"));
      else if (node["initialisation"])
        ctx.error("registration.initial_transform", n,
                  "registration.initial_transform and registration.initialisation are both set: the "
                  "initial transform is the start; remove one");
      else r.initial_transform = path;
    });
    with_child(node, "initial_transform_format", [&](const YAML::Node& n) {
      std::string name;
      if (!ctx.read_string("registration.initial_transform_format", n, &name)) return;
      try {
        r.initial_transform_format = parse_transform_format(name);
      } catch (const UserError& e) {
        ctx.error("registration.initial_transform_format", n, std::string("registration.initial_transform_format: ") + e.what());
      }
    });
  }
  if (stage_keys)
    with_child(node, "bins_per_level", [&](const YAML::Node& n) {
      ctx.read_bool(prefix + ".bins_per_level", n, &r.bins_per_level);
    });
  if (shared_keys) {
    with_child(node, "decouple_grids", [&](const YAML::Node& n) {
      ctx.read_bool("registration.decouple_grids", n, &r.decouple_grids);
    });
    with_child(node, "min_sampling_mm", [&](const YAML::Node& n) {
      if (n.IsScalar() && n.Scalar() == "auto") {
        r.min_sampling_mm.reset();
        return;
      }
      double mm = 0.0;
      if (!ctx.read_double("registration.min_sampling_mm", n, &mm)) return;
      if (!(mm >= 0.0 && mm <= 64.0))
        ctx.error("registration.min_sampling_mm", n,
                  "registration.min_sampling_mm=" + n.Scalar() +
                      " is outside [0, 64] mm: give `auto` (the coarser image's voxel size), a size in mm, "
                      "or 0 (every level as registration.levels_mm lists it)");
      else r.min_sampling_mm = mm;
    });
    with_child(node, "min_overlap", [&](const YAML::Node& n) {
      double fraction = 0.0;
      if (!ctx.read_double("registration.min_overlap", n, &fraction)) return;
      if (!(fraction >= 0.0 && fraction < 1.0))
        ctx.error("registration.min_overlap", n,
                  "registration.min_overlap=" + n.Scalar() +
                      " is outside [0, 1): it is a fraction of the smaller image (0 turns it off)");
      else r.min_overlap = fraction;
    });
    with_child(node, "evaluation_timeout_s", [&](const YAML::Node& n) {
      double seconds = 0.0;
      if (!ctx.read_double("registration.evaluation_timeout_s", n, &seconds)) return;
      if (!(seconds > 0.0 && seconds <= 1e6))
        ctx.error("registration.evaluation_timeout_s", n,
                  "registration.evaluation_timeout_s=" + n.Scalar() + " is outside (0, 1e6] seconds");
      else r.evaluation_timeout_s = seconds;
    });
  }
  if (stage_keys) {
    read_component(ctx, node, "cost", RP_KIND_COST, host, r.cost, prefix);
    read_component(ctx, node, "optimizer", RP_KIND_OPTIMIZER, host, r.optimizer, prefix);
    if (dof_read) check_optimizer_dof(ctx, node, host, r, prefix);
  }
  if (shared_keys) read_component(ctx, node, "resampler", RP_KIND_RESAMPLER, host, r.resampler);
}

// One map of registration.stages: its transform (rigid = 6 DOF, affine = 12, syn, or a dof:
// alone as the one-stage form's), then its keys. A syn stage takes no levels, dof nor
// bins_per_level (its schedule is its optimizer's parameters) and defaults to cpu.lcc and
// optim.syn; an affine stage defaults as the one-stage form.
std::optional<PipelineStage> read_stage(YamlContext& ctx, const YAML::Node& n, size_t index,
                                        const PluginHost& host, const PipelineRegistration& shared) {
  const std::string prefix = "registration.stages[" + std::to_string(index) + "]";
  if (!n.IsMap()) {
    ctx.error(prefix, n, prefix + " must be a map (transform, cost, optimizer, ...), e.g. {transform: rigid}");
    return std::nullopt;
  }
  if (!ctx.check_map(prefix, n, schema_children("registration.stages"))) return std::nullopt;
  PipelineStage stage;
  stage.where = ctx.where(prefix, n);
  stage.registration = shared;
  const YAML::Node transform = n["transform"];
  const YAML::Node dof = n["dof"];
  const bool has_dof = dof.IsDefined() && !dof.IsNull();
  if (transform.IsDefined() && !transform.IsNull()) {
    const std::vector<std::string> choices{"rigid", "affine", "syn"};
    read_choice(ctx, transform, prefix + ".transform", choices, &stage.transform);
    if (stage.transform.empty()) return std::nullopt;
  } else if (has_dof) {
    stage.transform = "dof";
  } else {
    ctx.error(prefix, n, prefix + ": give its transform (rigid, affine or syn) or its dof");
    return std::nullopt;
  }
  stage.deformable = stage.transform == "syn";
  stage.label = prefix + " (" + (stage.transform == "dof" ? "dof" : stage.transform) + ")";
  PipelineRegistration& r = stage.registration;
  if (stage.deformable) {
    for (const char* key : {"dof", "levels_mm", "bins_per_level"}) {
      const YAML::Node v = n[key];
      if (v.IsDefined())
        ctx.error(prefix + "." + key, v,
                  prefix + "." + key + ": a syn stage has no " + key +
                      (std::string(key) == "dof" ? " (it is a displacement field)"
                                                 : ": its schedule is its optimizer's params (optim.syn: "
                                                   "iterations, shrink_factors, smoothing_sigmas)"));
    }
    r.cost.plugins = {"cpu.lcc"};
    r.optimizer.plugins = {"optim.syn"};
    r.cost.where = r.optimizer.where = {};
    read_component(ctx, n, "cost", RP_KIND_COST, host, r.cost, prefix);
    read_component(ctx, n, "optimizer", RP_KIND_OPTIMIZER, host, r.optimizer, prefix);
    return stage;
  }
  const unsigned transform_dof = stage.transform == "rigid" ? 6 : 12;
  if (stage.transform != "dof") r.dof = transform_dof;
  r.cost.where = r.optimizer.where = {};
  read_registration_keys(ctx, n, prefix, host, r, true, false);
  // A valid dof: that differs from the transform's (an invalid one is reported and not read).
  if (has_dof && stage.transform != "dof" && r.dof != transform_dof)
    ctx.error(prefix + ".dof", dof,
              prefix + ".dof=" + dof.Scalar() + " contradicts its transform " + stage.transform + " (" +
                  std::to_string(transform_dof) + " DOF): give one of them");
  return stage;
}

// registration.stages: a non-empty list; the syn stage (at most one) comes last, after the
// affine stages whose result starts it (or alone: it starts from the identity).
void read_stages(YamlContext& ctx, const YAML::Node& reg, const YAML::Node& list, const PluginHost& host,
                 Pipeline& p) {
  for (const std::string& key : kStageKeys) {
    const YAML::Node v = reg[key];
    if (v.IsDefined())
      ctx.error("registration." + key, v,
                "registration." + key + " is a stage's key when registration.stages is given: move it into "
                "each stage that needs it");
  }
  if (!list.IsSequence() || list.size() == 0) {
    ctx.error("registration.stages", list,
              "registration.stages must be a non-empty list of stages, e.g. [{transform: rigid}, "
              "{transform: affine}, {transform: syn}]");
    return;
  }
  if (p.inputs.moving.size() > 1)
    ctx.error("registration.stages", list,
              "registration.stages: a batch of " + std::to_string(p.inputs.moving.size()) +
                  " moving images runs the one-stage form only (for now); register them one by one");
  std::optional<size_t> syn_at;
  for (size_t i = 0; i < list.size(); ++i) {
    std::optional<PipelineStage> stage = read_stage(ctx, list[i], i, host, p.registration);
    if (!stage) continue;
    if (syn_at && stage->deformable)
      ctx.error("registration.stages[" + std::to_string(i) + "]", list[i],
                "registration.stages[" + std::to_string(i) + "]: a second syn stage (registration.stages[" +
                    std::to_string(*syn_at) + "] is one): one deformable stage, the last");
    else if (syn_at)
      ctx.error("registration.stages[" + std::to_string(i) + "]", list[i],
                "registration.stages[" + std::to_string(i) + "] (" + stage->transform +
                    ") comes after the syn stage registration.stages[" + std::to_string(*syn_at) +
                    "]: affine stages come first, their result starts the deformable one");
    if (stage->deformable && !syn_at) syn_at = i;
    p.stages.push_back(std::move(*stage));
  }
  // A syn stage first starts from the identity: a start the section names would be ignored.
  if (!p.stages.empty() && p.stages.front().deformable)
    for (const char* key : {"initialisation", "initial_transform"}) {
      const YAML::Node v = reg[key];
      if (v.IsDefined() && !v.IsNull())
        ctx.error(std::string("registration.") + key, v,
                  std::string("registration.") + key +
                      ": the first stage is syn, which starts from the identity (the headers): put an "
                      "affine stage before it to start from this, or remove it");
    }
  // The section's own view: the first affine stage (what one-stage readers of `registration`
  // see), else the first stage; the shared keys are the section's.
  for (const PipelineStage& s : p.stages)
    if (!s.deformable) {
      p.registration = s.registration;
      return;
    }
  if (!p.stages.empty()) p.registration = p.stages.front().registration;
}

void read_registration(YamlContext& ctx, const YAML::Node& root, const PluginHost& host,
                       Pipeline& p) {
  PipelineRegistration& r = p.registration;
  r.cost.plugins = {"cuda.cr", "cpu.cr"};
  r.optimizer.plugins = {"optim.powell"};
  r.resampler.plugins = {"resample.cuda", "resample.cpu"};
  const YAML::Node reg = root["registration"];
  const bool present = reg.IsDefined() && !reg.IsNull();
  if (present && !ctx.check_map("registration", reg, schema_children("registration"))) return;
  const YAML::Node empty(YAML::NodeType::Map);
  const YAML::Node& node = present ? reg : empty;
  const YAML::Node stages = node["stages"];
  if (!stages.IsDefined() || stages.IsNull()) {
    read_registration_keys(ctx, node, "registration", host, r, true, true);
    return;
  }
  read_registration_keys(ctx, node, "registration", host, r, false, true);
  read_stages(ctx, node, stages, host, p);
}

void read_choice(YamlContext& ctx, const YAML::Node& node, const std::string& key,
                 const std::vector<std::string>& choices, std::string* out) {
  std::string s;
  if (!ctx.read_string(key, node, &s)) return;
  if (std::find(choices.begin(), choices.end(), s) == choices.end())
    ctx.error(key, node, key + "=" + s + " is not one of " + join(choices, ", ") + did_you_mean(s, choices));
  else *out = s;
}

void read_outputs(YamlContext& ctx, const YAML::Node& root, Pipeline& p) {
  const YAML::Node out = root["outputs"];
  if (!out.IsDefined() || out.IsNull()) {
    ctx.error("outputs", root, "missing section 'outputs' (at least outputs.dir)");
    return;
  }
  if (!ctx.check_map("outputs", out, schema_children("outputs"))) return;
  PipelineOutputs& o = p.outputs;
  bool have_dir = false;
  with_child(out, "dir", [&](const YAML::Node& n) { have_dir = ctx.read_path("outputs.dir", n, &o.dir); });
  if (!have_dir) {
    const YAML::Node dir = out["dir"];
    if (!dir.IsDefined()) ctx.error("outputs", out, "missing key 'outputs.dir'");
    else if (dir.IsNull()) ctx.error("outputs.dir", dir, "outputs.dir is null (~): give the output folder");
  }
  with_child(out, "prefix", [&](const YAML::Node& n) {
    if (ctx.read_string("outputs.prefix", n, &o.prefix) && o.prefix.find('/') != std::string::npos)
      ctx.error("outputs.prefix", n, "outputs.prefix must not contain '/': use outputs.dir");
  });
  with_child(out, "transforms", [&](const YAML::Node& n) { ctx.read_bool("outputs.transforms", n, &o.transforms); });
  with_child(out, "registered_image",
             [&](const YAML::Node& n) { ctx.read_bool("outputs.registered_image", n, &o.registered_image); });
  with_child(out, "report", [&](const YAML::Node& n) { ctx.read_bool("outputs.report", n, &o.report); });
  with_child(out, "qa_png", [&](const YAML::Node& n) { ctx.read_bool("outputs.qa_png", n, &o.qa_png); });
  with_child(out, "qa_orientation", [&](const YAML::Node& n) {
    read_choice(ctx, n, "outputs.qa_orientation", {"radiological", "neurological"}, &o.qa_orientation);
  });
  with_child(out, "parallel_io",
             [&](const YAML::Node& n) { ctx.read_bool("outputs.parallel_io", n, &o.parallel_io); });
  with_child(out, "resume", [&](const YAML::Node& n) { ctx.read_bool("outputs.resume", n, &o.resume); });
  with_child(out, "interpolation", [&](const YAML::Node& n) {
    read_choice(ctx, n, "outputs.interpolation", {"nearest", "trilinear", "sinc", "bspline"}, &o.interpolation);
  });
  with_child(out, "image_format", [&](const YAML::Node& n) {
    read_choice(ctx, n, "outputs.image_format", {".nii.gz", ".nii", ".nrrd", ".mha"}, &o.image_format);
  });
  with_child(out, "datatype", [&](const YAML::Node& n) {
    std::vector<std::string> choices{"moving"};
    for (const auto& name : voxel_type_names()) choices.push_back(name);
    read_choice(ctx, n, "outputs.datatype", choices, &o.datatype);
  });
}

// The most workers one batch starts: beyond a host's cores they only queue.
constexpr long long kMaxWorkers = 256;
constexpr long long kMaxDeviceIndex = 63;
// The most registrations one worker runs at once: each holds its components and a moving
// image's levels, and past a few a GPU is full.
constexpr long long kMaxRegistrationsPerWorker = 16;

void read_devices(YamlContext& ctx, const YAML::Node& n, PipelineExecution& e) {
  const std::string key = "execution.devices";
  if (n.IsScalar() && n.Scalar() == "all") {
    e.all_devices = true;
    return;
  }
  if (!n.IsSequence() || n.size() == 0 || n.size() > size_t(kMaxWorkers)) {
    ctx.error(key, n, key + " must be `all` or a list of 1 to " + std::to_string(kMaxWorkers) +
                          " device indices, e.g. [0, 1] (an index twice: two workers on that device)");
    return;
  }
  for (const auto& v : n) {
    long long index = 0;
    if (!ctx.read_int(key, v, &index)) return;
    if (index < 0 || index > kMaxDeviceIndex) {
      ctx.error(key, v, key + ": device " + v.Scalar() + " is outside [0, " + std::to_string(kMaxDeviceIndex) + "]");
      return;
    }
    e.devices.push_back(unsigned(index));
  }
}

// Workers take their device from execution.devices: a component's own `device` parameter
// would point each of them elsewhere.
void check_no_component_device(YamlContext& ctx, const YAML::Node& devices, const Pipeline& p) {
  std::vector<std::pair<std::string, const ComponentSpec*>> specs = {
      {"registration.cost", &p.registration.cost},
      {"registration.optimizer", &p.registration.optimizer},
      {"registration.resampler", &p.registration.resampler}};
  for (const PipelineStage& s : p.stages) {
    specs.push_back({s.label + " cost", &s.registration.cost});
    specs.push_back({s.label + " optimizer", &s.registration.optimizer});
  }
  for (const auto& [name, spec] : specs)
    if (spec->params.count("device") != 0) {
      ctx.error("execution.devices", devices,
                "execution.devices and " + name + ".params.device are both set: with execution.devices "
                "each worker is given its device; remove the component's `device`");
      return;
    }
}

void read_execution(YamlContext& ctx, const YAML::Node& root, Pipeline& p) {
  const YAML::Node ex = root["execution"];
  if (!ex.IsDefined() || ex.IsNull()) return;
  if (!ctx.check_map("execution", ex, schema_children("execution"))) return;
  PipelineExecution& e = p.execution;
  with_child(ex, "devices", [&](const YAML::Node& n) {
    read_devices(ctx, n, e);
    check_no_component_device(ctx, n, p);
  });
  with_child(ex, "workers", [&](const YAML::Node& n) {
    long long workers = 0;
    if (!ctx.read_int("execution.workers", n, &workers)) return;
    if (workers < 1 || workers > kMaxWorkers)
      ctx.error("execution.workers", n,
                "execution.workers=" + n.Scalar() + " is outside [1, " + std::to_string(kMaxWorkers) + "]");
    else e.workers = unsigned(workers);
  });
  with_child(ex, "registrations_per_worker", [&](const YAML::Node& n) {
    const std::string key = "execution.registrations_per_worker";
    if (n.IsScalar() && n.Scalar() == "auto") return;
    long long count = 0;
    if (!ctx.read_int(key, n, &count)) return;
    if (count < 1 || count > kMaxRegistrationsPerWorker)
      ctx.error(key, n, key + "=" + n.Scalar() + " is outside [1, " + std::to_string(kMaxRegistrationsPerWorker) +
                            "] (or `auto`)");
    else e.registrations_per_worker = unsigned(count);
  });
}

void read_evaluation(YamlContext& ctx, const YAML::Node& root, Pipeline& p) {
  const YAML::Node ev = root["evaluation"];
  if (!ev.IsDefined() || ev.IsNull()) return;
  if (!ctx.check_map("evaluation", ev, schema_children("evaluation"))) return;
  with_child(ev, "truth", [&](const YAML::Node& n) {
    fs::path path;
    if (!ctx.read_path("evaluation.truth", n, &path)) return;
    if (p.inputs.moving.size() > 1)
      ctx.error("evaluation.truth", n, "evaluation.truth is the truth of one moving image: "
                                       "remove it for a batch of " +
                                           std::to_string(p.inputs.moving.size()));
    else p.evaluation.truth = path;
  });
}

}  // namespace

std::string moving_stem(const fs::path& path) {
  fs::path name = path.filename();
  if (name.extension() == ".gz") name = name.stem();
  return name.stem().string();
}

namespace {

// Validates a parsed tree: `source` names it in messages and anchors its relative paths;
// those of `overrides` resolve against the current folder.
Pipeline read_pipeline(const YAML::Node& root, const fs::path& source, const std::vector<Override>& overrides,
                       const PluginHost& host) {
  std::set<std::string> overridden;
  for (const auto& o : overrides) overridden.insert(o.key);
  YamlContext ctx(source, overridden);
  Pipeline p;
  p.source = source;
  p.overrides = overrides;
  if (ctx.check_map("", root, schema_children(""))) {
    read_inputs(ctx, root, p);
    read_registration(ctx, root, host, p);
    read_outputs(ctx, root, p);
    read_execution(ctx, root, p);
    read_evaluation(ctx, root, p);
  }
  if (!ctx.errors().empty()) throw UserError(join(ctx.errors(), "\n"));
  return p;
}

}  // namespace

Pipeline load_pipeline(const fs::path& yaml_file, const std::vector<Override>& overrides,
                       const PluginHost& host) {
  return read_pipeline(load_yaml_file(yaml_file, "pipeline", overrides), yaml_file, overrides, host);
}

Pipeline pipeline_from_keys(const std::vector<Override>& keys, const std::string& source, const PluginHost& host) {
  YAML::Node root;
  apply_overrides(root, keys);
  return read_pipeline(root, source, keys, host);
}

}  // namespace regpipe
