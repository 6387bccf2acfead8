// FLIRT's flags as pipeline keys. FLIRT's options are single-dash words (-in, -searchrx), which
// CLI11 reads as bundles of letters, so they are parsed here; FSL's --flag=value form is taken
// too. The mapping and every difference from FLIRT are in docs/flirt.md.
#include <regpipe/host/error.hpp>
#include <regpipe/host/flirt.hpp>

#include "flirt/fsl_names.hpp"
#include "plugin_host/did_you_mean.hpp"

#include <map>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

// Flags and how many values each takes.
const std::map<std::string, int>& known_flags() {
  static const std::map<std::string, int> flags = {
      {"in", 1},          {"ref", 1},         {"out", 1},         {"omat", 1},        {"init", 1},
      {"applyxfm", 0},    {"applyisoxfm", 1}, {"dof", 1},         {"cost", 1},        {"searchcost", 1},
      {"bins", 1},        {"searchrx", 2},    {"searchry", 2},    {"searchrz", 2},    {"coarsesearch", 1},
      {"finesearch", 1},  {"nosearch", 0},    {"interp", 1},      {"refweight", 1},   {"inweight", 1},
      {"datatype", 1},    {"usesqform", 0},   {"noresample", 0},  {"v", 0},           {"2D", 0},
      {"minsampling", 1}};
  return flags;
}

// FLIRT's features regpipe does not have: refused by name rather than as unknown.
const std::vector<std::string>& unsupported_flags() {
  static const std::vector<std::string> flags = {
      "schedule", "wmseg",      "wmcoords",   "wmnorms",     "fieldmap",  "fieldmapmask", "pedir",
      "echospacing", "bbrtype", "bbrslope",   "setbackground", "noclamp", "noresampblur", "paddingsize",
      "sincwidth", "sincwindow", "forcescaling", "verbose"};
  return flags;
}

struct CostChoice {
  std::string plugins;  // a preference list: the CUDA backend when present
  bool has_bins;
};
CostChoice cost_choice(const std::string& flag, const std::string& name) {
  static const std::map<std::string, CostChoice> costs = {{"corratio", {"[cuda.cr, cpu.cr]", true}},
                                                          {"mutualinfo", {"[cuda.mi, cpu.mi]", true}},
                                                          {"normmi", {"[cuda.nmi, cpu.nmi]", true}},
                                                          {"normcorr", {"[cpu.ncc]", false}},
                                                          {"leastsq", {"[cpu.ls]", false}}};
  if (auto it = costs.find(name); it != costs.end()) return it->second;
  if (name == "labeldiff" || name == "bbr")
    throw UserError(flag + " " + name + ": FLIRT's " + name +
                    " cost is not in regpipe; use corratio, mutualinfo, normmi, normcorr or leastsq");
  throw UserError(flag + " " + name + ": not a FLIRT cost (corratio, mutualinfo, normmi, normcorr, leastsq)" +
                  did_you_mean(name, {"corratio", "mutualinfo", "normmi", "normcorr", "leastsq"}));
}

double number(const std::string& flag, const std::string& text) {
  size_t used = 0;
  double v = 0.0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(v)) throw UserError(flag + " " + text + ": not a number");
  return v;
}

// A YAML double-quoted scalar: file names may hold ':' or '#'.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string choice(const std::string& flag, const std::string& value,
                   const std::map<std::string, std::string>& choices) {
  if (auto it = choices.find(value); it != choices.end()) return it->second;
  std::vector<std::string> names;
  for (const auto& [name, mapped] : choices) names.push_back(name);
  throw UserError(flag + " " + value + ": not one of " + join(names, ", ") + did_you_mean(value, names));
}

// The flags with their values, in order; "-flag v", "--flag=v" and "-flag=v" alike.
std::vector<std::pair<std::string, std::vector<std::string>>> split_flags(const std::vector<std::string>& args) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string word = args[i];
    if (word.size() < 2 || word[0] != '-')
      throw UserError("'" + word + "' is not a FLIRT flag (FLIRT's arguments are -flag value, e.g. -in input.nii.gz)");
    word.erase(0, word[1] == '-' ? 2 : 1);
    std::vector<std::string> values;
    if (const size_t eq = word.find('='); eq != std::string::npos) {
      values.push_back(word.substr(eq + 1));
      word.resize(eq);
    }
    const std::string flag = "-" + word;
    if (std::find(unsupported_flags().begin(), unsupported_flags().end(), word) != unsupported_flags().end())
      throw UserError(flag + ": FLIRT's " + flag + " is not supported by regpipe flirt (docs/flirt.md)");
    const auto known = known_flags().find(word);
    if (known == known_flags().end()) {
      std::vector<std::string> names;
      for (const auto& [name, count] : known_flags()) names.push_back("-" + name);
      throw UserError("unknown FLIRT flag " + flag + did_you_mean(flag, names));
    }
    while (int(values.size()) < known->second) {
      if (++i >= args.size() || (args[i].size() > 1 && args[i][0] == '-' && !std::isdigit(static_cast<unsigned char>(args[i][1]))))
        throw UserError(flag + " needs " + std::to_string(known->second) +
                        (known->second == 1 ? " value" : " values"));
      values.push_back(args[i]);
    }
    if (int(values.size()) != known->second)
      throw UserError(flag + " takes " + std::to_string(known->second) + " values, not " + std::to_string(values.size()));
    out.emplace_back(word, values);
  }
  return out;
}

// FLIRT's schedule, 8, 4, 2 and 1 mm, no level finer than -minsampling.
std::string levels_mm(double finest) {
  if (!(finest > 0.0 && finest <= 64.0)) throw UserError("-minsampling: the voxel size must be in (0, 64] mm");
  std::vector<double> levels;
  for (double mm : {8.0, 4.0, 2.0, 1.0})
    if (levels.empty() || std::max(mm, finest) < levels.back()) levels.push_back(std::max(mm, finest));
  std::string text = "[";
  for (double mm : levels) text += (text.size() > 1 ? ", " : "") + std::to_string(mm);
  return text + "]";
}

}  // namespace

FlirtCommand parse_flirt_arguments(const std::vector<std::string>& args) {
  std::map<std::string, std::vector<std::string>> given;
  for (auto& [flag, values] : split_flags(args)) {
    if (given.count(flag)) throw UserError("-" + flag + " is given twice");
    given[flag] = values;
  }
  const auto has = [&](const char* flag) { return given.count(flag) > 0; };
  const auto value = [&](const char* flag) { return given.at(flag).front(); };
  if (has("2D")) throw UserError("-2D: regpipe registers 3D volumes; 2D-to-2D registration is not supported");
  if (!has("in")) throw UserError("-in is required (the input image, FLIRT's moving image)");
  if (!has("ref")) throw UserError("-ref is required (the reference image)");

  FlirtCommand c;
  auto key = [&](const std::string& k, const std::string& v) { c.keys.push_back({k, v}); };
  const fs::path in = flirt::resolve_input_image(value("in"), "-in");
  key("inputs.moving", quoted(in.string()));
  key("inputs.reference", quoted(flirt::resolve_input_image(value("ref"), "-ref").string()));
  if (has("refweight"))
    key("inputs.reference_weight", quoted(flirt::resolve_input_image(value("refweight"), "-refweight").string()));
  if (has("inweight"))
    key("inputs.moving_weight", quoted(flirt::resolve_input_image(value("inweight"), "-inweight").string()));
  if (has("out")) c.out_image = flirt::output_image_path(value("out"), "-out");
  if (has("omat")) c.out_matrix = value("omat");
  if (has("init")) {
    c.init = value("init");
    std::error_code ec;
    if (!fs::is_regular_file(*c.init, ec)) throw UserError("-init " + c.init->string() + ": no such file");
  }
  c.apply_only = has("applyxfm") || has("applyisoxfm");
  if (has("applyisoxfm")) {
    c.iso_mm = number("-applyisoxfm", value("applyisoxfm"));
    if (!(*c.iso_mm > 0.0)) throw UserError("-applyisoxfm " + value("applyisoxfm") + ": the voxel size must be > 0");
  }
  if (c.apply_only && !c.init) throw UserError("-applyxfm and -applyisoxfm apply -init: give -init MATRIX");
  if (c.apply_only && !c.out_image) throw UserError("-applyxfm and -applyisoxfm write -out: give -out IMAGE");
  if (!c.out_image && !c.out_matrix) throw UserError("nothing to write: give -out IMAGE and/or -omat MATRIX");
  c.verbose = has("v");
  // Every output's folder must exist, as FLIRT requires; the pipeline wants one folder.
  const fs::path first_output_folder = (c.out_image ? *c.out_image : *c.out_matrix).parent_path();
  key("outputs.dir", quoted(first_output_folder.empty() ? "." : first_output_folder.string()));

  key("outputs.interpolation",
      choice("-interp", has("interp") ? value("interp") : "trilinear",
             {{"trilinear", "trilinear"}, {"nearestneighbour", "nearest"}, {"sinc", "sinc"}, {"spline", "bspline"}}));
  if (has("datatype"))
    key("outputs.datatype", choice("-datatype", value("datatype"),
                                   {{"char", "uint8"}, {"short", "int16"}, {"int", "int32"}, {"float", "float32"},
                                    {"double", "float64"}}));
  if (has("noresample")) c.notes.push_back("-noresample is accepted without effect (docs/flirt.md)");

  if (!c.apply_only) {
    const std::string cost_name = has("cost") ? value("cost") : "corratio";
    const CostChoice cost = cost_choice("-cost", cost_name);
    if (has("searchcost") && value("searchcost") != cost_name) {
      cost_choice("-searchcost", value("searchcost"));  // a valid name, at least
      c.notes.push_back("-searchcost " + value("searchcost") + ": regpipe searches with -cost " + cost_name +
                        " too (docs/flirt.md)");
    }
    key("registration.cost.plugin", cost.plugins);
    if (cost.has_bins) {
      const double bins = has("bins") ? number("-bins", value("bins")) : 256.0;
      if (bins != std::floor(bins) || bins < 2) throw UserError("-bins " + value("bins") + ": a whole number of bins, at least 2");
      key("registration.cost.params.bins", std::to_string(int(bins)));
      key("registration.bins_per_level", "true");
    } else if (has("bins")) {
      c.notes.push_back("-bins has no effect with -cost " + cost_name + " (no histogram)");
    }
    if (has("dof")) {
      const std::string dof = value("dof");
      if (dof != "6" && dof != "7" && dof != "9" && dof != "12")
        throw UserError("-dof " + dof + ": FLIRT's 3D DOF are 6, 7, 9 and 12");
      key("registration.dof", dof);
    }
    // Without -minsampling, registration.min_sampling_mm's auto (the coarser image's voxels),
    // as FLIRT; with it, its levels (each with its own bins) and that floor.
    if (has("minsampling")) {
      const double finest = number("-minsampling", value("minsampling"));
      key("registration.levels_mm", levels_mm(finest));
      key("registration.min_sampling_mm", value("minsampling"));
    } else {
      key("registration.levels_mm", levels_mm(1.0));
    }
    key("registration.optimizer.plugin", "optim.flirt");
    for (const char* axis : {"x", "y", "z"}) {
      const std::string flag = std::string("searchr") + axis;
      if (!has(flag.c_str())) continue;
      const double low = number("-" + flag, given[flag][0]), high = number("-" + flag, given[flag][1]);
      if (!(low <= high)) throw UserError("-" + flag + " " + given[flag][0] + " " + given[flag][1] + ": min above max");
      key("registration.optimizer.params." + flag + "_min_deg", given[flag][0]);
      key("registration.optimizer.params." + flag + "_max_deg", given[flag][1]);
    }
    if (has("coarsesearch")) key("registration.optimizer.params.coarsesearch_deg", value("coarsesearch"));
    if (has("finesearch")) key("registration.optimizer.params.finesearch_deg", value("finesearch"));
    if (has("nosearch")) key("registration.optimizer.params.nosearch", "true");
    if (c.init) {
      key("registration.initial_transform", quoted(c.init->string()));
      key("registration.initial_transform_format", "fsl");
    } else {
      key("registration.initialisation", has("usesqform") ? "centre_of_mass" : "scaled_voxels");
    }
  }
  return c;
}

}  // namespace regpipe
