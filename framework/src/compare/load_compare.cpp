#include <regpipe/host/compare.hpp>
#include <regpipe/host/error.hpp>

#include "pipeline/component_yaml.hpp"
#include "pipeline/yaml_context.hpp"
#include "plugin_host/did_you_mean.hpp"

#include <algorithm>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

// The child `name` of a map, or an undefined node (through the const interface: no insertion).
YAML::Node child(const YAML::Node& map, const char* name) {
  if (!map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node c = map[name];
  return c.IsDefined() && !c.IsNull() ? c : YAML::Node(YAML::NodeType::Undefined);
}

// A section whose keys are checked against the schema; undefined when absent.
YAML::Node section(YamlContext& ctx, const YAML::Node& root, const char* name) {
  const YAML::Node s = child(root, name);
  if (s.IsDefined() && !ctx.check_map(name, s, schema_children(name, compare_schema())))
    return YAML::Node(YAML::NodeType::Undefined);
  return s;
}

void read_positive(YamlContext& ctx, const YAML::Node& node, const std::string& key, double* out) {
  if (!node.IsDefined()) return;
  double v = 0.0;
  if (!ctx.read_double(key, node, &v)) return;
  if (v <= 0.0) ctx.error(key, node, key + "=" + node.Scalar() + " must be > 0");
  else *out = v;
}

void read_count(YamlContext& ctx, const YAML::Node& node, const std::string& key, long long min,
                unsigned* out) {
  if (!node.IsDefined()) return;
  long long v = 0;
  if (!ctx.read_int(key, node, &v)) return;
  if (v < min || v > 1000000) ctx.error(key, node, key + "=" + node.Scalar() + " is outside [" +
                                                       std::to_string(min) + ", 1000000]");
  else *out = unsigned(v);
}

// The measure a cost id names: its last dotted part ("cuda.cr" -> "cr").
std::string measure_of(const std::string& id) { return id.substr(id.rfind('.') + 1); }

void read_costs(YamlContext& ctx, const YAML::Node& root, const PluginHost& host, CompareConfig& c) {
  const YAML::Node costs = child(root, "costs");
  if (!costs.IsDefined()) {
    ctx.error("costs", root, "missing key 'costs' (a list of {plugin: id, params: {...}})");
    return;
  }
  if (!costs.IsSequence() || costs.size() == 0) {
    ctx.error("costs", costs, "costs must be a non-empty list of {plugin: id, params: {...}}");
    return;
  }
  std::vector<std::string> cpu_refs;
  std::vector<YAML::Node> cpu_ref_nodes;
  for (const YAML::Node& entry : costs) {
    CompareCost cost;
    cost.spec.plugins.clear();
    read_component_keys(ctx, entry, "costs", schema_children("costs", compare_schema()), cost.spec);
    if (!entry.IsMap()) continue;
    if (cost.spec.plugins.empty()) {
      if (!child(entry, "plugin").IsDefined()) ctx.error("costs", entry, "missing key 'costs.plugin'");
      continue;
    }
    if (cost.spec.plugins.size() > 1) {
      ctx.error("costs.plugin", child(entry, "plugin"),
                "give one plugin id per entry (a compare runs each cost; preference lists are for pipelines)");
      continue;
    }
    check_component(ctx, RP_KIND_COST, host, cost.spec);
    cost.label = cost.spec.plugins.front();
    if (const YAML::Node l = child(entry, "label"); l.IsDefined() && ctx.read_string("costs.label", l, &cost.label) &&
        (cost.label.empty() || cost.label.find_first_of(",\"\n") != std::string::npos))
      ctx.error("costs.label", l, "costs.label '" + cost.label + "' must be non-empty, without commas or quotes (it names CSV columns)");
    for (const auto& other : c.costs)
      if (other.label == cost.label)
        ctx.error("costs", entry, "two costs are labelled '" + cost.label + "': give each a unique `label:`");
    std::string cpu_ref;
    const YAML::Node r = child(entry, "cpu_reference");
    if (r.IsDefined()) ctx.read_string("costs.cpu_reference", r, &cpu_ref);
    cpu_refs.push_back(cpu_ref);
    cpu_ref_nodes.push_back(r.IsDefined() ? r : entry);
    c.costs.push_back(cost);
  }
  std::vector<std::string> labels;
  for (const auto& cost : c.costs) labels.push_back(cost.label);
  for (size_t i = 0; i < c.costs.size(); ++i) {
    CompareCost& cost = c.costs[i];
    if (!cpu_refs[i].empty()) {
      if (std::find(labels.begin(), labels.end(), cpu_refs[i]) == labels.end())
        ctx.error("costs.cpu_reference", cpu_ref_nodes[i],
                  "costs.cpu_reference=" + cpu_refs[i] + " is not the label of a listed cost" +
                      did_you_mean(cpu_refs[i], labels) + "; labels: " + join(labels, ", "));
      else cost.cpu_label = cpu_refs[i];
      continue;
    }
    const std::string cpu = "cpu." + measure_of(cost.spec.plugins.front());
    if (cpu != cost.label && std::find(labels.begin(), labels.end(), cpu) != labels.end())
      cost.cpu_label = cpu;
  }
  const YAML::Node ref = child(root, "reference_cost");
  if (!ref.IsDefined()) return;
  std::string label;
  if (!ctx.read_string("reference_cost", ref, &label)) return;
  const auto it = std::find(labels.begin(), labels.end(), label);
  if (it == labels.end())
    ctx.error("reference_cost", ref, "reference_cost=" + label + " is not the label of a listed cost" +
                                         did_you_mean(label, labels) + "; labels: " + join(labels, ", "));
  else c.reference_cost = size_t(it - labels.begin());
}

void read_centre(YamlContext& ctx, const YAML::Node& root, CompareConfig& c) {
  c.centre = c.pipeline.evaluation.truth ? "truth" : "registration";
  const YAML::Node n = child(root, "centre");
  if (!n.IsDefined()) return;
  std::string text;
  if (!ctx.read_string("centre", n, &text)) return;
  if (text == "registration") {
    c.centre = text;
  } else if (text == "truth") {
    if (!c.pipeline.source.empty() && !c.pipeline.evaluation.truth)
      ctx.error("centre", n, "centre: truth needs evaluation.truth in the pipeline file");
    c.centre = text;
  } else if (ctx.read_path("centre", n, &c.centre_file)) {
    std::error_code ec;
    if (!fs::is_regular_file(c.centre_file, ec))
      ctx.error("centre", n, "centre " + c.centre_file.string() +
                                 ": no such transform file (or use truth or registration)");
    c.centre = "file";
  }
}

void read_settings(YamlContext& ctx, const YAML::Node& root, CompareConfig& c) {
  if (const YAML::Node n = child(root, "level_mm"); n.IsDefined()) {
    read_positive(ctx, n, "level_mm", &c.level_mm);
    if (c.level_mm > 64.0) ctx.error("level_mm", n, "level_mm=" + n.Scalar() + " is above 64 mm");
  }
  const YAML::Node profiles = section(ctx, root, "profiles");
  read_count(ctx, child(profiles, "points"), "profiles.points", 3, &c.profile_points);
  if (c.profile_points % 2 == 0)
    ctx.error("profiles.points", child(profiles, "points"),
              "profiles.points=" + std::to_string(c.profile_points) + " must be odd (the centre is the middle point)");
  read_positive(ctx, child(profiles, "rotation_deg"), "profiles.rotation_deg", &c.rotation_deg);
  read_positive(ctx, child(profiles, "translation_mm"), "profiles.translation_mm", &c.translation_mm);
  read_positive(ctx, child(profiles, "scale"), "profiles.scale", &c.scale);
  read_positive(ctx, child(profiles, "skew"), "profiles.skew", &c.skew);
  const YAML::Node agreement = section(ctx, root, "agreement");
  read_count(ctx, child(agreement, "transforms"), "agreement.transforms", 1, &c.agreement_transforms);
  read_count(ctx, child(agreement, "seed"), "agreement.seed", 0, &c.seed);
  const YAML::Node timing = section(ctx, root, "timing");
  read_count(ctx, child(timing, "repeats"), "timing.repeats", 1, &c.timing_repeats);
  read_count(ctx, child(timing, "batch"), "timing.batch", 1, &c.timing_batch);
  if (const YAML::Node n = child(root, "register"); n.IsDefined()) ctx.read_bool("register", n, &c.register_each);
  const YAML::Node outputs = section(ctx, root, "outputs");
  const YAML::Node dir = child(outputs, "dir");
  if (!dir.IsDefined()) {
    ctx.error("outputs", outputs.IsDefined() ? outputs : root, "missing key 'outputs.dir'");
  } else if (ctx.read_path("outputs.dir", dir, &c.output_dir)) {
    std::error_code ec;
    if (!fs::is_directory(c.output_dir.parent_path(), ec))
      ctx.error("outputs.dir", dir, "outputs.dir " + c.output_dir.string() + ": its parent folder does not exist");
  }
}

}  // namespace

CompareConfig load_compare(const fs::path& yaml_file, const std::vector<Override>& overrides,
                           const PluginHost& host) {
  const YAML::Node root = load_yaml_file(yaml_file, "compare", overrides);
  std::set<std::string> overridden;
  for (const auto& o : overrides) overridden.insert(o.key);
  YamlContext ctx(yaml_file, overridden);
  CompareConfig c;
  c.source = yaml_file;
  if (ctx.check_map("", root, schema_children("", compare_schema()))) {
    fs::path pipeline;
    if (const YAML::Node n = child(root, "pipeline"); !n.IsDefined())
      ctx.error("pipeline", root, "missing key 'pipeline' (the pipeline file that names the image pair)");
    else if (ctx.read_path("pipeline", n, &pipeline)) {
      try {
        c.pipeline = load_pipeline(pipeline, {}, host);
      } catch (const UserError& e) {
        ctx.errors_push(ctx.where("pipeline", n).text + ": in the pipeline file:\n" + e.what());
      }
    }
    read_costs(ctx, root, host, c);
    read_centre(ctx, root, c);
    read_settings(ctx, root, c);
  }
  if (!ctx.errors().empty()) throw UserError(join(ctx.errors(), "\n"));
  return c;
}

}  // namespace regpipe
