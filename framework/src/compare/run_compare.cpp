#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/compare.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/pyramid.hpp>
#include <regpipe/host/transform_io.hpp>

#include "compare/compare_results.hpp"
#include "driver/create_component.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The centre's parameters plus offsets given in output units.
std::vector<double> matrices_at(const AffineParams& centre, const Eigen::Vector3d& com,
                                const std::vector<AffineParams>& offsets) {
  std::vector<double> out;
  out.reserve(offsets.size() * 16);
  for (const auto& o : offsets) {
    AffineParams p = centre;
    for (int i = 0; i < RP_PARAM_COUNT; ++i) p[i] += o[i] / output_units_per_param(i);
    const Eigen::Matrix4d m = params_to_matrix(p, com);
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) out.push_back(m(r, c));
  }
  return out;
}

// The pipeline with its cost replaced by one of the compared costs.
Pipeline with_cost(const Pipeline& pipeline, const CompareCost& cost) {
  Pipeline p = pipeline;
  p.registration.cost = cost.spec;
  return p;
}

struct LevelPair {
  Image reference, moving;
  std::optional<Image> reference_weight, moving_weight;
};

LevelPair make_levels(const CompareConfig& c, const RegistrationImages& images,
                      const PluginHost& plugins, HostServices& services) {
  auto resampler = create_component<ResamplerInstance>(c.pipeline.registration.resampler,
                                                       RP_KIND_RESAMPLER, "resampler", plugins, services);
  LevelPair l;
  const double moving_mm = moving_level_mm(c.level_mm, c.pipeline.registration.decouple_grids);
  l.reference = make_level(images.reference, c.level_mm, *resampler.instance);
  l.moving = make_level(images.moving, moving_mm, *resampler.instance);
  if (images.reference_weight) l.reference_weight = make_level(*images.reference_weight, c.level_mm, *resampler.instance);
  if (images.moving_weight) l.moving_weight = make_level(*images.moving_weight, moving_mm, *resampler.instance);
  return l;
}

Eigen::Matrix4d centre_transform(const CompareConfig& c, const RegistrationImages& images,
                                 const PluginHost& plugins, HostServices& services,
                                 std::string* source) {
  if (c.centre == "truth") {
    *source = "the known truth (" + c.pipeline.evaluation.truth->filename().string() + ")";
    return from_world_ras_forward(read_matrix_file(*c.pipeline.evaluation.truth));
  }
  if (c.centre == "file") {
    *source = "the transform in " + c.centre_file.filename().string();
    const Eigen::Matrix4d m = read_matrix_file(c.centre_file);
    return full_extension(c.centre_file) == ".mat" ? from_fsl_matrix(m, images.reference, images.moving)
                                                   : from_world_ras_forward(m);
  }
  const CompareCost& cost = c.costs[c.reference_cost];
  services.log(RP_LOG_INFO, "registering with " + cost.label + " for the centre");
  const RegistrationResult r = register_images(with_cost(c.pipeline, cost), images, plugins, services);
  *source = "the result of the pipeline's registration with " + cost.label + " (" +
            std::to_string(c.pipeline.registration.dof) + " DOF, optimizer " + r.components[1].id + ")";
  return r.ref_to_mov;
}

// Agreement, timing and profiles of one cost on the level images.
void measure_cost(const CompareConfig& c, size_t index, const LevelPair& level,
                  const std::vector<double>& agreement_matrices,
                  const std::vector<double>& profile_matrices, const PluginHost& plugins,
                  HostServices& services, CompareResults& r) {
  auto cost = create_component<CostInstance>(c.costs[index].spec, RP_KIND_COST, "cost", plugins, services);
  r.versions[index] = cost.used.id + " " + cost.used.version;
  CostInstance& f = *cost.instance;
  f.set_reference(level.reference, level.reference_weight ? &*level.reference_weight : nullptr);
  f.set_moving(level.moving, level.moving_weight ? &*level.moving_weight : nullptr);

  const size_t n = agreement_matrices.size() / 16;
  r.agreement[index].assign(n, 0.0);
  f.evaluate(agreement_matrices.data(), n, r.agreement[index].data());

  // Timing cycles through the agreement transforms; the first call above warmed up.
  const size_t k = c.timing_batch;
  std::vector<double> batch(k * 16), costs(k);
  for (size_t j = 0; j < k; ++j)
    std::copy_n(agreement_matrices.data() + (j % n) * 16, 16, batch.data() + j * 16);
  std::vector<double> batched, single;
  for (unsigned rep = 0; rep < c.timing_repeats; ++rep) {
    auto t = Clock::now();
    f.evaluate(batch.data(), k, costs.data());
    batched.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count() / double(k));
    t = Clock::now();
    for (size_t j = 0; j < k; ++j) f.evaluate(batch.data() + j * 16, 1, costs.data() + j);
    single.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count() / double(k));
  }
  r.us_batched[index] = median(batched);
  r.us_single[index] = median(single);

  std::vector<double> values(profile_matrices.size() / 16);
  f.evaluate(profile_matrices.data(), values.size(), values.data());
  const size_t points = c.profile_points;
  for (int p = 0; p < RP_PARAM_COUNT; ++p)
    r.profiles[p][index].assign(values.begin() + long(p * points), values.begin() + long((p + 1) * points));
}

}  // namespace

void run_compare(const CompareConfig& c, const PluginHost& plugins, HostServices& services) {
  const RegistrationImages images = load_images(c.pipeline.inputs);
  const float threshold = foreground_threshold(images.reference);
  CompareResults r;
  r.centre = centre_transform(c, images, plugins, services, &r.centre_source);
  const Eigen::Vector3d com = centre_of_mass(images.reference);  // the driver's parameter centre
  const AffineParams centre = matrix_to_params(r.centre, com);
  const LevelPair level = make_levels(c, images, plugins, services);
  r.level_dims = level.reference.dims;

  std::mt19937 rng(c.seed);
  std::uniform_real_distribution<double> unit(-0.5, 0.5);
  r.agreement_offsets.resize(c.agreement_transforms);
  for (auto& o : r.agreement_offsets)
    for (int p = 0; p < RP_PARAM_COUNT; ++p) o[p] = unit(rng) * profile_half_range(c, p);
  const std::vector<double> agreement_matrices = matrices_at(centre, com, r.agreement_offsets);

  std::vector<AffineParams> profile_offsets;
  r.profile_offsets.resize(RP_PARAM_COUNT);
  for (int p = 0; p < RP_PARAM_COUNT; ++p) {
    const double half = profile_half_range(c, p);
    for (unsigned i = 0; i < c.profile_points; ++i) {
      AffineParams o{};
      o[p] = half * (2.0 * i / (c.profile_points - 1) - 1.0);
      r.profile_offsets[p].push_back(o[p]);
      profile_offsets.push_back(o);
    }
  }
  const std::vector<double> profile_matrices = matrices_at(centre, com, profile_offsets);

  const size_t n = c.costs.size();
  r.versions.resize(n);
  r.agreement.resize(n);
  r.us_batched.resize(n);
  r.us_single.resize(n);
  r.profiles.assign(RP_PARAM_COUNT, std::vector<std::vector<double>>(n));
  for (size_t i = 0; i < n; ++i) {
    services.progress(double(i) / double(n), "measuring " + c.costs[i].label);
    measure_cost(c, i, level, agreement_matrices, profile_matrices, plugins, services, r);
  }
  if (c.register_each) {
    for (const auto& cost : c.costs) {
      services.progress(0.0, "registering with " + cost.label);
      const RegistrationResult result = register_images(with_cost(c.pipeline, cost), images, plugins, services);
      r.registrations.push_back({result.ref_to_mov,
                                 mean_displacement_mm(result.ref_to_mov, r.centre, images.reference, threshold),
                                 result.seconds_pyramid + result.seconds_search, result.evaluations,
                                 result.final_cost});
    }
  }

  const auto files = compare_files(c, r);
  std::error_code ec;
  fs::create_directory(c.output_dir, ec);
  if (!fs::is_directory(c.output_dir, ec))
    throw UserError("outputs.dir " + c.output_dir.string() + ": cannot create the folder");
  for (const auto& [name, text] : files) write_text_atomically(c.output_dir / name, text);
}

}  // namespace regpipe
