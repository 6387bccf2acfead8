// Whole registrations, timed the way a user waits for them: from images in host memory to
// the final matrix (issue 5). For each pipeline: the images are read once, then the
// registration runs --repeats times; the first run (CUDA context, plugin set-up) is reported
// apart from the median of the others. Per stage: the median seconds and the evaluations.
// The transforms of every pipeline are compared with the first pipeline's (mean displacement
// over the reference head), so "GPU vs CPU: same result" is part of the table.
//
//   regpipe_bench_registration PIPELINE.yaml [PIPELINE.yaml ...] [--set key=value ...]
//                              [--variant 'label: key=value; ...' ...]
//                              [--repeats N] [--grid NXxNYxNZ] [--out DIR]
//
// --grid resamples both images over their own extent onto that many voxels first (e.g.
// 256x256x160, the papers' volume size), so the size of the problem is the papers'.
// --set applies to every pipeline; --variant adds a row: the first pipeline with more
// overrides (e.g. 'cpu: registration.cost.plugin=cpu.cr; registration.resampler.plugin=resample.cpu').
// Markdown tables on stdout, every number in <out>/registration.csv.
#include "bench_support.hpp"

#include <regpipe/host/driver.hpp>
#include <regpipe/host/error.hpp>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>

using namespace regpipe;
namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct Measured {
  std::string pipeline, cost, optimizer, resampler;
  double first_total = 0.0, total = 0.0, pyramid = 0.0, search = 0.0;
  std::vector<StageRecord> stages;  // seconds: medians over the repeats
  long long evaluations = 0;
  Eigen::Matrix4d ref_to_mov = Eigen::Matrix4d::Identity();
  double displacement_to_first = 0.0;
};

// A row of the table: a pipeline file, or the first one with a variant's overrides on top.
struct Run {
  std::string label;
  fs::path file;
  std::vector<Override> overrides;
};

// "label: key=value; key=value" -> the first pipeline with these overrides.
Run parse_variant(const std::string& text, const fs::path& first, const std::vector<Override>& common) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0)
    throw std::runtime_error("--variant '" + text + "': expected 'label: key=value; key=value'");
  Run run{text.substr(0, colon), first, common};
  std::string rest = text.substr(colon + 1);
  size_t start = 0;
  while (start <= rest.size()) {
    const size_t end = std::min(rest.find(';', start), rest.size());
    std::string item = rest.substr(start, end - start);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) run.overrides.push_back(parse_override(item));
    start = end + 1;
  }
  return run;
}

Measured measure(const Run& run, int repeats, const PluginHost& plugins, HostServices& services,
                 const RegistrationImages& images) {
  const Pipeline p = load_pipeline(run.file, run.overrides, plugins);
  Measured m;
  m.pipeline = run.label;
  std::vector<double> totals, pyramids, searches;
  std::vector<std::vector<double>> stage_seconds;
  for (int r = 0; r <= repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const RegistrationResult result = register_images(p, images, plugins, services);
    const double total = seconds_since(start);
    if (r == 0) {
      m.first_total = total;
      m.stages = result.stages;
      m.evaluations = result.evaluations;
      m.ref_to_mov = result.ref_to_mov;
      for (const auto& c : result.components) {
        std::string& slot = c.role == "cost" ? m.cost : (c.role == "optimizer" ? m.optimizer : m.resampler);
        slot = c.id;
      }
      stage_seconds.resize(result.stages.size());
      continue;
    }
    if (!result.ref_to_mov.isApprox(m.ref_to_mov, 1e-12))
      std::fprintf(stderr, "warning: %s: repeat %d gave another transform\n", m.pipeline.c_str(), r);
    totals.push_back(total);
    pyramids.push_back(result.seconds_pyramid);
    searches.push_back(result.seconds_search);
    for (size_t s = 0; s < result.stages.size() && s < stage_seconds.size(); ++s)
      stage_seconds[s].push_back(result.stages[s].seconds);
  }
  m.total = bench::median(totals);
  m.pyramid = bench::median(pyramids);
  m.search = bench::median(searches);
  for (size_t s = 0; s < m.stages.size(); ++s) m.stages[s].seconds = bench::median(stage_seconds[s]);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Times whole registrations (median of repeats after a first run) and compares their transforms"};
  std::vector<std::string> files, sets, variants;
  int repeats = 5;
  std::string out_dir = ".";
  app.add_option("pipelines", files, "pipeline YAML files; the first is the reference for the displacement column")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--set", sets, "key=value override applied to every pipeline");
  app.add_option("--variant", variants,
                 "'label: key=value; key=value': the first pipeline again with these overrides (e.g. the CPU backends)");
  app.add_option("--repeats", repeats, "timed runs after the first")->check(CLI::Range(1, 1000));
  std::string grid;
  app.add_option("--grid", grid, "resample both images onto NXxNYxNZ voxels over their extent first");
  app.add_option("--out", out_dir, "folder for registration.csv")->check(CLI::ExistingDirectory);
  CLI11_PARSE(app, argc, argv);

  try {
    PluginHost plugins{PluginSearchOptions{}};
    HostServices services;
    std::vector<Override> overrides;
    for (const auto& s : sets) overrides.push_back(parse_override(s));

    // Every pipeline of one run registers the same pair: read it once, from the first.
    const Pipeline first = load_pipeline(files.front(), overrides, plugins);
    auto start = std::chrono::steady_clock::now();
    RegistrationImages images = load_images(first.inputs);
    if (!grid.empty()) {
      std::array<uint32_t, 3> dims{};
      if (std::sscanf(grid.c_str(), "%ux%ux%u", &dims[0], &dims[1], &dims[2]) != 3 || dims[0] * dims[1] * dims[2] == 0)
        throw std::runtime_error("--grid " + grid + ": expected NXxNYxNZ, e.g. 256x256x160");
      if (images.reference_weight || images.moving_weight)
        throw std::runtime_error("--grid does not resample weighting images: drop them from the pipeline");
      const Component& c = plugins.require(RP_KIND_RESAMPLER, "resample.cpu");
      ResamplerInstance resampler(c, services, resolve_params(c, {}));
      images.reference = bench::resample_onto(images.reference, dims, resampler);
      images.moving = bench::resample_onto(images.moving, dims, resampler);
    }
    const double loading = seconds_since(start);
    const float head = foreground_threshold(images.reference);

    std::vector<Measured> rows;
    std::vector<Run> runs;
    for (const auto& f : files) runs.push_back({fs::path(f).filename().string(), f, overrides});
    for (const auto& v : variants) runs.push_back(parse_variant(v, files.front(), overrides));
    for (const auto& run : runs) {
      rows.push_back(measure(run, repeats, plugins, services, images));
      rows.back().displacement_to_first =
          mean_displacement_mm(rows.back().ref_to_mov, rows.front().ref_to_mov, images.reference, head);
    }

    std::printf("device: %s\n", bench::device_name().c_str());
    std::printf("pair: %s <- %s (%ux%ux%u), read in %.3f s (not counted); median of %d runs after a first\n\n",
                first.inputs.reference.path.filename().c_str(), first.inputs.moving.front().path.filename().c_str(),
                images.reference.dims[0], images.reference.dims[1], images.reference.dims[2], loading, repeats);
    std::printf("| pipeline | cost | optimizer | resampler | first run s | median s | pyramid s | search s | evaluations | mm from first |\n");
    std::printf("|---|---|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (const auto& r : rows)
      std::printf("| %s | %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %lld | %.3f |\n", r.pipeline.c_str(), r.cost.c_str(),
                  r.optimizer.c_str(), r.resampler.c_str(), r.first_total, r.total, r.pyramid, r.search, r.evaluations,
                  r.displacement_to_first);
    std::ofstream csv(fs::path(out_dir) / "registration.csv");
    csv << "pipeline,cost,optimizer,resampler,stage,level_mm,evaluations,batches,seconds\n";
    for (const auto& r : rows) {
      std::printf("\n%s (%s): per stage, median seconds\n\n| stage | level mm | evaluations | calls | seconds |\n"
                  "|---|---:|---:|---:|---:|\n",
                  r.pipeline.c_str(), r.cost.c_str());
      for (const auto& s : r.stages) {
        std::printf("| %s | %g | %lld | %lld | %.4f |\n", s.name.c_str(), s.level_mm, s.evaluations, s.batches,
                    s.seconds);
        csv << r.pipeline << ',' << r.cost << ',' << r.optimizer << ',' << r.resampler << ",\"" << s.name << "\","
            << s.level_mm << ',' << s.evaluations << ',' << s.batches << ',' << s.seconds << '\n';
      }
      csv << r.pipeline << ',' << r.cost << ',' << r.optimizer << ',' << r.resampler << ",pyramid,0,0,0," << r.pyramid
          << '\n'
          << r.pipeline << ',' << r.cost << ',' << r.optimizer << ',' << r.resampler << ",total,0,0,0," << r.total
          << '\n';
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
