// Whole registrations, timed the way a user waits for them: from images in host memory to
// the final matrix (issue 5). For each pipeline: the images are read once, then the
// registration runs --repeats times; the first run (CUDA context, plugin set-up) is reported
// apart from the median of the others. Per stage: the median seconds and the evaluations.
// The transforms of every pipeline are compared with the first pipeline's (mean displacement
// over the reference head), so "GPU vs CPU: same result" is part of the table.
//
//   regpipe_bench_registration PIPELINE.yaml [PIPELINE.yaml ...] [--set key=value ...]
//                              [--variant 'label: key=value; ...' ...]
//                              [--repeats N] [--grid NXxNYxNZ] [--out DIR] [--pyramid]
//
// --grid resamples both images over their own extent onto that many voxels first (e.g.
// 256x256x160, the papers' volume size), so the size of the problem is the papers'.
// --set applies to every pipeline; --variant adds a row: the first pipeline with more
// overrides (e.g. 'cpu: registration.cost.plugin=cpu.cr; registration.resampler.plugin=resample.cpu').
// Markdown tables on stdout, every number in <out>/registration.csv.
// --pyramid adds where the first pipeline's pyramid time goes: the reference's preparation
// and the moving image's levels as the driver makes them (with fresh components, as each
// registration above creates them, and with reused ones, as a batch does), then per image and
// level the level grid's allocation, the resampler call, and the same call again into the
// already written level (no upload, no first touch of the memory) and onto one voxel (the
// prefilter and one synchronisation); per image the upload alone and its finest level
// allocated in fresh memory (after malloc_trim); where the resampler and the cost take images in
// device memory, each level of both images made there with fresh components and the cost's
// set-up of it (set_reference, set_moving, its first two evaluations); and the centre of mass
// and mass radius passes.
#include "bench_support.hpp"

#include <regpipe/host/driver.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/pyramid.hpp>
#include <regpipe/host/transform.hpp>

#include <CLI/CLI.hpp>

#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>

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

// The driver's make_level, into a given level image (or onto one voxel of it with `tiny`).
void resample_level(const Image& image, double mm, ResamplerInstance& resampler, uint64_t id, Image& level,
                    bool tiny, bool prefilter = true) {
  const rp_image input = image.view();
  rp_resample_request req{};
  req.size = sizeof(req);
  req.input = &input;
  for (int a = 0; a < 3; ++a) req.out_dims[a] = tiny ? 1 : level.dims[a];
  for (int i = 0; i < 16; ++i) req.out_voxel_to_world[i] = level.voxel_to_world(i / 4, i % 4);
  req.out_data = level.data.data();
  req.interpolation = RP_INTERP_TRILINEAR;
  const auto sigma = pyramid_sigma_mm(image, mm);
  for (int a = 0; a < 3; ++a) req.prefilter_sigma_mm[a] = prefilter ? sigma[a] : 0.0;
  req.input_id = id;
  resampler.resample(req);
}

template <class F>
double time_ms(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return 1e3 * seconds_since(start);
}

// With fresh components, as a registration on the device path meets them and in the driver's
// order: the reference's levels made in device memory, then the moving image's, then per level
// the cost's set-up (set_reference and set_moving from device memory, and its first and second
// one-transform evaluations; a registration's set-up makes one, the overlap rule's).
template <class Put, class MovingMm>
void device_level_setups(const Pipeline& p, const RegistrationImages& images, const PluginHost& plugins,
                         HostServices& services, const std::vector<double>& levels, const MovingMm& moving_mm,
                         const Put& put) {
  RegistrationComponents c;
  put("device path, fresh: create components", time_ms([&] { c = create_registration_components(p, plugins, services); }));
  const auto at = [](double mm, const char* what) {
    char text[96];
    std::snprintf(text, sizeof text, "device path, fresh, %g mm: %s", mm, what);
    return std::string(text);
  };
  std::vector<Level> ref(levels.size()), mov(levels.size());
  const uint64_t ref_id = new_input_id(), mov_id = new_input_id();
  for (size_t i = 0; i < levels.size(); ++i)
    put(at(levels[i], "reference level"),
        time_ms([&] { ref[i] = make_device_level(images.reference, levels[i], *c.resampler, ref_id); }));
  for (size_t i = 0; i < levels.size(); ++i)
    put(at(levels[i], "moving level"),
        time_ms([&] { mov[i] = make_device_level(images.moving, moving_mm(levels[i]), *c.resampler, mov_id); }));
  const double identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  double cost = 0.0;
  for (size_t i = 0; i < levels.size(); ++i) {
    put(at(levels[i], "cost set_reference"), time_ms([&] { c.cost->set_reference(*ref[i].device); }));
    put(at(levels[i], "cost set_moving"), time_ms([&] { c.cost->set_moving(*mov[i].device); }));
    put(at(levels[i], "cost first evaluation (k=1)"), time_ms([&] { c.cost->evaluate(identity, 1, &cost); }));
    put(at(levels[i], "cost second evaluation (k=1)"), time_ms([&] { c.cost->evaluate(identity, 1, &cost); }));
  }
}

void pyramid_breakdown(const Pipeline& p, const RegistrationImages& images, int repeats, const PluginHost& plugins,
                       HostServices& services) {
  const auto& levels = p.registration.levels_mm;
  std::map<std::string, std::vector<double>> t;  // name -> samples (ms)
  std::vector<std::string> order;
  const auto add = [&](const std::string& name, double ms) {
    if (!t.count(name)) order.push_back(name);
    t[name].push_back(ms);
  };
  const auto moving_mm = [&](double mm) { return moving_level_mm(mm, p.registration.decouple_grids); };
  const auto moving_levels = [&](ResamplerInstance& r) {
    const uint64_t id = new_input_id();
    for (double mm : levels) make_level(images.moving, moving_mm(mm), r, id);
  };
  for (int rep = 0; rep <= repeats; ++rep) {
    std::vector<std::pair<std::string, double>> row;
    const auto put = [&](const std::string& name, double ms) { row.emplace_back(name, ms); };
    RegistrationComponents c;
    put("create components", time_ms([&] { c = create_registration_components(p, plugins, services); }));
    ResamplerInstance& r = *c.resampler;
    put("prepare_reference, fresh components", time_ms([&] { prepare_reference(p, images, c); }));
    put("moving levels, fresh components", time_ms([&] { moving_levels(r); }));
    put("prepare_reference, reused components", time_ms([&] { prepare_reference(p, images, c); }));
    put("moving levels, reused components", time_ms([&] { moving_levels(r); }));
    if (r.device_images() != nullptr)
      put("moving levels in device memory (RP_EXT_DEVICE_IMAGE), reused components", time_ms([&] {
            const uint64_t id = new_input_id();
            for (double mm : levels) make_device_level(images.moving, moving_mm(mm), r, id);
          }));
    for (int which = 0; which < 2; ++which) {
      const Image& image = which == 0 ? images.reference : images.moving;
      const std::string name = which == 0 ? "reference" : "moving";
      const uint64_t id = new_input_id();
      for (double level_mm : levels) {
        const double mm = which == 0 ? level_mm : moving_mm(level_mm);
        char prefix[96];
        std::snprintf(prefix, sizeof prefix, "%s %g mm: ", name.c_str(), mm);
        Image level;
        put(std::string(prefix) + "level_grid (alloc, zero)", time_ms([&] { level = level_grid(image, mm); }));
        put(std::string(prefix) + "resample", time_ms([&] { resample_level(image, mm, r, id, level, false); }));
        put(std::string(prefix) + "resample again (no upload, memory touched)", time_ms([&] { resample_level(image, mm, r, id, level, false); }));
        put(std::string(prefix) + "resample onto 1 voxel (prefilter + sync)", time_ms([&] { resample_level(image, mm, r, id, level, true); }));
      }
      malloc_trim(0);  // the freed levels go back to the system: the next is fresh memory
      put(name + ": level_grid of the finest level after malloc_trim (fresh pages)",
          time_ms([&] { level_grid(image, levels.back()); }));
      Image level = level_grid(image, levels.front());
      put(name + ": upload (1 voxel, new id, no prefilter)",
          time_ms([&] { resample_level(image, levels.front(), r, new_input_id(), level, true, false); }));
      const uint64_t again = new_input_id();
      resample_level(image, levels.front(), r, again, level, true, false);
      put(name + ": 1 voxel, same id, no prefilter (call + sync)", time_ms([&] { resample_level(image, levels.front(), r, again, level, true, false); }));
    }
    if (r.device_images() != nullptr && c.cost->device_images() != nullptr)
      device_level_setups(p, images, plugins, services, levels, moving_mm, put);
    Eigen::Vector3d centre;
    put("reference centre_of_mass", time_ms([&] { centre = centre_of_mass(images.reference); }));
    put("reference mass_radius_mm", time_ms([&] { mass_radius_mm(images.reference, centre); }));
    put("moving centre_of_mass", time_ms([&] { centre_of_mass(images.moving); }));
    if (rep == 0) {
      for (const auto& [name, ms] : row) add(name, ms);  // fixes the order; samples dropped below
      for (auto& [name, samples] : t) samples.clear();
      continue;
    }
    for (const auto& [name, ms] : row) add(name, ms);
  }
  std::printf("\npyramid breakdown (%s; reference %ux%ux%u, moving %ux%ux%u), median ms of %d after a first\n\n"
              "| part | ms |\n|---|---:|\n",
              p.registration.resampler.plugins.front().c_str(), images.reference.dims[0], images.reference.dims[1],
              images.reference.dims[2], images.moving.dims[0], images.moving.dims[1], images.moving.dims[2], repeats);
  for (const auto& name : order) std::printf("| %s | %.3f |\n", name.c_str(), bench::median(t[name]));
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
  bool pyramid = false;
  app.add_flag("--pyramid", pyramid, "also time the first pipeline's pyramid piece by piece");
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
    if (pyramid) pyramid_breakdown(first, images, repeats, plugins, services);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
