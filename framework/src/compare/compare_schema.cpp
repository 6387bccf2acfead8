#include <regpipe/host/compare.hpp>

namespace regpipe {

const std::vector<PipelineKeyDoc>& compare_schema() {
  static const std::vector<PipelineKeyDoc> rows = {
      {"pipeline", "path", "(required)",
       "Pipeline file giving the image pair, the registration settings (for `centre: "
       "registration` and `register: true`) and optionally evaluation.truth."},
      {"costs.plugin", "cost id", "(required)", "One cost component per list entry (no preference lists)."},
      {"costs.params", "map", "{}", "Its parameters, checked against its schema."},
      {"costs.label", "string", "the id", "Column name in the outputs; labels must be unique."},
      {"costs.cpu_reference", "label", "cpu.<measure>",
       "The entry that implements the same measure on the CPU (default: the entry labelled "
       "cpu.<last part of the id>, e.g. cpu.cr for cuda.cr, when listed)."},
      {"reference_cost", "label", "the first cost",
       "The cost of the registration that gives the centre (centre: registration)."},
      {"centre", "truth, registration or a path", "truth if the pipeline has one, else registration",
       "Centre of the profiles and random transforms: the pipeline's evaluation.truth, the result "
       "of the pipeline's registration with reference_cost, or a transform file (transform_world.txt form, or FSL .mat)."},
      {"level_mm", "number > 0", "4", "Resolution level (mm) at which every cost is evaluated."},
      {"profiles.points", "odd int >= 3", "21", "Points per parameter profile (the centre is the middle one)."},
      {"profiles.rotation_deg", "number > 0", "10", "Half-range of the rotation profiles (degrees)."},
      {"profiles.translation_mm", "number > 0", "10", "Half-range of the translation profiles (mm)."},
      {"profiles.scale", "number > 0", "0.1", "Half-range of the scale profiles (1 = 100%)."},
      {"profiles.skew", "number > 0", "0.1", "Half-range of the skew profiles."},
      {"agreement.transforms", "int >= 1", "20",
       "Random transforms near the centre (each parameter within half its profile range)."},
      {"agreement.seed", "int >= 0", "1", "Seed of those transforms."},
      {"timing.repeats", "int >= 1", "5", "Timed repeats; the median is reported."},
      {"timing.batch", "int >= 1", "64", "Transforms per call in the batched timing (k)."},
      {"register", "bool", "false",
       "Also run the pipeline's full registration with each cost (registrations.csv)."},
      {"outputs.dir", "path", "(required)", "Output folder (created if missing; its parent must exist)."},
  };
  return rows;
}

const std::vector<std::string>& compare_parameter_names() {
  static const std::vector<std::string> names = {
      "rot_x_deg", "rot_y_deg", "rot_z_deg", "trans_x_mm", "trans_y_mm", "trans_z_mm",
      "scale_x",   "scale_y",   "scale_z",   "skew_xy",    "skew_xz",    "skew_yz"};
  return names;
}

}  // namespace regpipe
