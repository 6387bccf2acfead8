#include <regpipe/host/transform_io.hpp>

#include "compare/compare_results.hpp"
#include "compare/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace regpipe {
namespace {

std::string num(double v, const char* format = "%.10g") {
  char buf[40];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

size_t index_of(const CompareConfig& c, const std::string& label) {
  for (size_t i = 0; i < c.costs.size(); ++i)
    if (c.costs[i].label == label) return i;
  return c.costs.size();
}

double relative_difference(double value, double reference) {
  return std::abs(value - reference) / std::max(std::abs(reference), 1e-12);
}

// Max and median relative difference of cost i from its CPU reference over the transforms.
std::pair<double, double> agreement_stats(const CompareConfig& c, const CompareResults& r, size_t i) {
  const size_t ref = index_of(c, c.costs[i].cpu_label);
  std::vector<double> d;
  for (size_t t = 0; t < r.agreement[i].size(); ++t)
    d.push_back(relative_difference(r.agreement[i][t], r.agreement[ref][t]));
  std::sort(d.begin(), d.end());
  return {d.back(), d[d.size() / 2]};
}

// Offset (output units) of the profile's minimum.
double argmin_offset(const std::vector<double>& offsets, const std::vector<double>& values) {
  return offsets[size_t(std::min_element(values.begin(), values.end()) - values.begin())];
}

std::string agreement_csv(const CompareConfig& c, const CompareResults& r) {
  std::ostringstream out;
  out << "transform";
  for (const auto& name : compare_parameter_names()) out << ',' << name;
  out << ",cost,value,cpu_reference,relative_difference\n";
  for (size_t t = 0; t < r.agreement_offsets.size(); ++t)
    for (size_t i = 0; i < c.costs.size(); ++i) {
      out << t;
      for (double o : r.agreement_offsets[t]) out << ',' << num(o);
      out << ',' << c.costs[i].label << ',' << num(r.agreement[i][t]) << ',' << c.costs[i].cpu_label << ',';
      if (!c.costs[i].cpu_label.empty())
        out << num(relative_difference(r.agreement[i][t], r.agreement[index_of(c, c.costs[i].cpu_label)][t]), "%.3e");
      out << '\n';
    }
  return out.str();
}

std::string timing_csv(const CompareConfig& c, const CompareResults& r) {
  std::ostringstream out;
  out << "cost,k,repeats,us_per_evaluation\n";
  for (size_t i = 0; i < c.costs.size(); ++i) {
    out << c.costs[i].label << ',' << c.timing_batch << ',' << c.timing_repeats << ',' << num(r.us_batched[i], "%.4g") << '\n';
    out << c.costs[i].label << ",1," << c.timing_repeats << ',' << num(r.us_single[i], "%.4g") << '\n';
  }
  return out.str();
}

std::string profiles_csv(const CompareConfig& c, const CompareResults& r) {
  std::ostringstream out;
  out << "parameter,offset";
  for (const auto& cost : c.costs) out << ',' << cost.label;
  out << '\n';
  for (int p = 0; p < RP_PARAM_COUNT; ++p)
    for (size_t j = 0; j < r.profile_offsets[p].size(); ++j) {
      out << compare_parameter_names()[p] << ',' << num(r.profile_offsets[p][j]);
      for (size_t i = 0; i < c.costs.size(); ++i) out << ',' << num(r.profiles[p][i][j]);
      out << '\n';
    }
  return out.str();
}

std::string profile_svg(const CompareConfig& c, const CompareResults& r, int p) {
  std::vector<PlotSeries> series;
  for (size_t i = 0; i < c.costs.size(); ++i) {
    // Normalised to [0, 1] so that costs of different scales share the axes.
    std::vector<double> y = r.profiles[p][i];
    const auto [lo, hi] = std::minmax_element(y.begin(), y.end());
    const double min = *lo, range = *hi - *lo;
    for (double& v : y) v = range > 0.0 ? (v - min) / range : 0.0;
    series.push_back({c.costs[i].label, y});
  }
  const std::string& name = compare_parameter_names()[p];
  return svg_line_plot("cost profile: " + name + " (" + num(c.level_mm, "%g") + " mm level)",
                       name + ", offset from the centre", "cost, normalised to [0, 1]",
                       r.profile_offsets[p], series);
}

std::string registrations_csv(const CompareConfig& c, const CompareResults& r) {
  std::ostringstream out;
  out << "cost,seconds,mean_displacement_mm,evaluations,final_cost,transform_world_ras\n";
  for (size_t i = 0; i < r.registrations.size(); ++i) {
    const CompareRegistration& g = r.registrations[i];
    out << c.costs[i].label << ',' << num(g.seconds, "%.4g") << ',' << num(g.mean_displacement_mm, "%.4g")
        << ',' << g.evaluations << ',' << num(g.final_cost) << ',';
    const Eigen::Matrix4d w = to_world_ras_forward(g.ref_to_mov);
    for (int k = 0; k < 16; ++k) out << (k ? " " : "") << num(w(k / 4, k % 4), "%.8g");
    out << '\n';
  }
  return out.str();
}

std::string summary_md(const CompareConfig& c, const CompareResults& r) {
  std::ostringstream md;
  const PipelineInputs& in = c.pipeline.inputs;
  md << "# Cost comparison\n\n"
     << "Reference `" << in.reference.path.filename().string() << "`, moving `"
     << in.moving.front().path.filename().string() << "`, evaluated at the " << num(c.level_mm, "%g")
     << " mm level (" << r.level_dims[0] << "x" << r.level_dims[1] << "x" << r.level_dims[2]
     << " voxels). Centre: " << r.centre_source << ".\n\n";

  md << "## Agreement and speed\n\n"
     << "Relative difference from the CPU implementation of the same measure over "
     << r.agreement_offsets.size() << " random transforms near the centre (seed " << c.seed
     << "); microseconds per evaluation, median of " << c.timing_repeats << " repeats.\n\n"
     << "| cost | component | max rel. diff. | median rel. diff. | us/eval (k=" << c.timing_batch
     << ") | us/eval (k=1) |\n|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < c.costs.size(); ++i) {
    md << "| " << c.costs[i].label << " | " << r.versions[i] << " | ";
    if (c.costs[i].cpu_label.empty()) md << "- | - | ";
    else {
      const auto [max, med] = agreement_stats(c, r, i);
      md << num(max, "%.2e") << " | " << num(med, "%.2e") << " | ";
    }
    md << num(r.us_batched[i], "%.4g") << " | " << num(r.us_single[i], "%.4g") << " |\n";
  }

  md << "\n## Profile minima\n\nOffset from the centre at which each cost is lowest along each "
        "parameter (degrees, mm, or unitless for scales and skews; profile step ";
  md << num(2 * c.rotation_deg / (c.profile_points - 1), "%g") << " deg, "
     << num(2 * c.translation_mm / (c.profile_points - 1), "%g") << " mm, "
     << num(2 * c.scale / (c.profile_points - 1), "%g") << ", " << num(2 * c.skew / (c.profile_points - 1), "%g")
     << "). Figures: `profile_<parameter>.svg`.\n\n| cost |";
  for (const auto& name : compare_parameter_names()) md << ' ' << name << " |";
  md << "\n|---|";
  for (int p = 0; p < RP_PARAM_COUNT; ++p) md << "---|";
  md << '\n';
  for (size_t i = 0; i < c.costs.size(); ++i) {
    md << "| " << c.costs[i].label << " |";
    for (int p = 0; p < RP_PARAM_COUNT; ++p)
      md << ' ' << num(argmin_offset(r.profile_offsets[p], r.profiles[p][i]), "%g") << " |";
    md << '\n';
  }

  if (!r.registrations.empty()) {
    md << "\n## Full registrations\n\nThe pipeline's registration (" << c.pipeline.registration.dof
       << " DOF, optimizer `" << c.pipeline.registration.optimizer.plugins.front()
       << "`) with each cost; mean displacement from the centre over the reference head.\n\n"
       << "| cost | mean displacement (mm) | seconds | evaluations |\n|---|---|---|---|\n";
    for (size_t i = 0; i < r.registrations.size(); ++i)
      md << "| " << c.costs[i].label << " | " << num(r.registrations[i].mean_displacement_mm, "%.3f")
         << " | " << num(r.registrations[i].seconds, "%.3f") << " | " << r.registrations[i].evaluations << " |\n";
  }
  return md.str();
}

}  // namespace

double output_units_per_param(int p) { return p < 3 ? 180.0 / M_PI : 1.0; }

double profile_half_range(const CompareConfig& c, int p) {
  return p < 3 ? c.rotation_deg : p < 6 ? c.translation_mm : p < 9 ? c.scale : c.skew;
}

std::map<std::string, std::string> compare_files(const CompareConfig& c, const CompareResults& r) {
  std::map<std::string, std::string> files{{"agreement.csv", agreement_csv(c, r)},
                                           {"timing.csv", timing_csv(c, r)},
                                           {"profiles.csv", profiles_csv(c, r)},
                                           {"summary.md", summary_md(c, r)}};
  for (int p = 0; p < RP_PARAM_COUNT; ++p)
    files["profile_" + compare_parameter_names()[p] + ".svg"] = profile_svg(c, r, p);
  if (!r.registrations.empty()) files["registrations.csv"] = registrations_csv(c, r);
  return files;
}

}  // namespace regpipe
