#include <regpipe/host/driver.hpp>
#include <regpipe/host/error.hpp>

#include "driver/elapsed.hpp"
#include "driver/create_component.hpp"
#include "driver/device_path.hpp"
#include "driver/non_finite_voxels.hpp"
#include "driver/objective.hpp"
#include "driver/start_transform.hpp"
#include <regpipe/host/pyramid.hpp>

#include <regpipe_common/parallel_slabs.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <future>

namespace fs = std::filesystem;

namespace regpipe {
namespace {


void check_weight_grid(const Image& image, const Image& weight, const char* what) {
  if (image.dims != weight.dims || !image.voxel_to_world.isApprox(weight.voxel_to_world, 1e-6))
    throw UserError(std::string(what) + " weighting image is not on the image's grid (dims " +
                    std::to_string(weight.dims[0]) + "x" + std::to_string(weight.dims[1]) + "x" +
                    std::to_string(weight.dims[2]) + " vs " + std::to_string(image.dims[0]) + "x" +
                    std::to_string(image.dims[1]) + "x" + std::to_string(image.dims[2]) + ")");
}

// FLIRT's bins for a level (Jenkinson & Smith 2001; Luo et al. 2015): `bins` at 1 mm, a
// level-mm-th of it at coarser levels, never below 16 nor above `bins`.
int bins_at_level(int bins, double level_mm) {
  const int scaled = int(std::lround(double(bins) / std::max(1.0, level_mm)));
  return std::min(bins, std::max(16, scaled));
}

// One instance of the chosen cost plugin per level, its bins scaled to the level.
std::vector<std::unique_ptr<CostInstance>> level_costs(const PipelineRegistration& reg,
                                                       const std::string& cost_id,
                                                       const PluginHost& plugins,
                                                       HostServices& services) {
  const Component* c = plugins.find(RP_KIND_COST, cost_id);
  const ParamSchema* bins_param = c != nullptr ? c->find_param("bins") : nullptr;
  if (bins_param == nullptr)
    throw UserError("registration.bins_per_level: the cost " + cost_id +
                    " has no 'bins' parameter to scale; remove bins_per_level or use a "
                    "histogram cost (cpu.cr, cpu.mi, cpu.nmi, cuda.cr)");
  const auto given = reg.cost.params.find("bins");
  const std::string bins_text = given != reg.cost.params.end() ? given->second.value
                                                               : bins_param->default_value;
  const int bins = std::stoi(bins_text);  // the schema has checked it is an integer
  std::vector<std::unique_ptr<CostInstance>> out;
  for (double mm : reg.levels_mm) {
    ComponentSpec spec = reg.cost;
    spec.plugins = {cost_id};
    spec.params["bins"].value = std::to_string(bins_at_level(bins, mm));
    out.push_back(create_component<CostInstance>(spec, RP_KIND_COST, "cost", plugins, services).instance);
  }
  return out;
}

}  // namespace

IndexMoments index_moments(const Image& image) {
  // The rows' sums in parallel (each row summed in order, as one loop would), then added
  // row by row in order: the serial result bit for bit on any number of threads.
  const uint32_t nx = image.dims[0], ny = image.dims[1], nz = image.dims[2];
  const size_t rows = size_t(ny) * nz;
  std::vector<std::array<double, 3>> row_sums(rows);  // w, w x, w x^2
  const size_t slabs = std::min<size_t>(rows, 256);
  regpipe_common::parallel_slabs(slabs, [&](size_t s) {
    const size_t end = regpipe_common::slab_begin(rows, slabs, s + 1);
    for (size_t row = regpipe_common::slab_begin(rows, slabs, s); row < end; ++row) {
      const float* v = image.data.data() + row * nx;
      double r0 = 0.0, r1 = 0.0, r2 = 0.0;
      for (uint32_t x = 0; x < nx; ++x) {
        const double w = std::max(0.0f, v[x]);
        r0 += w;
        r1 += w * x;
        r2 += w * x * x;
      }
      row_sums[row] = {r0, r1, r2};
    }
  });
  IndexMoments m;
  size_t row = 0;
  for (uint32_t z = 0; z < nz; ++z)
    for (uint32_t y = 0; y < ny; ++y, ++row) {
      const auto [r0, r1, r2] = row_sums[row];
      if (r0 == 0.0) continue;
      const double yd = y, zd = z;
      m.m0 += r0;
      m.m1 += Eigen::Vector3d(r1, yd * r0, zd * r0);
      m.m2(0, 0) += r2;
      m.m2(0, 1) += yd * r1;
      m.m2(0, 2) += zd * r1;
      m.m2(1, 1) += yd * yd * r0;
      m.m2(1, 2) += yd * zd * r0;
      m.m2(2, 2) += zd * zd * r0;
    }
  m.m2(1, 0) = m.m2(0, 1);
  m.m2(2, 0) = m.m2(0, 2);
  m.m2(2, 1) = m.m2(1, 2);
  return m;
}

namespace {
// From the mass moments in index space, since
// sum w |A i + d|^2 = trace(A^T A M2) + 2 d^T A M1 + M0 |d|^2 for world = A i + b, d = b - centre.
double radius_from_moments(const Image& image, const IndexMoments& m, const Eigen::Vector3d& centre) {
  if (m.m0 == 0.0) return 50.0;
  const Eigen::Matrix3d a = image.voxel_to_world.topLeftCorner<3, 3>();
  const Eigen::Vector3d d = image.voxel_to_world.topRightCorner<3, 1>() - centre;
  const double sum = (a.transpose() * a * m.m2).trace() + 2.0 * d.dot(a * m.m1) + m.m0 * d.squaredNorm();
  return std::max(10.0, std::sqrt(std::max(0.0, sum) / m.m0));
}
}  // namespace

double mass_radius_mm(const Image& image, const Eigen::Vector3d& centre) {
  return radius_from_moments(image, index_moments(image), centre);
}

namespace {
ReadOptions read_options(const ImageInput& in) {
  ReadOptions o;
  o.volume_index = in.volume;
  return o;
}
}  // namespace

void load_reference(const PipelineInputs& inputs, RegistrationImages& images) {
  images.reference = read_image(inputs.reference.path, read_options(inputs.reference));
  images.reference_weight.reset();
  if (inputs.reference_weight) {
    images.reference_weight = read_image(inputs.reference_weight->path);
    check_weight_grid(images.reference, *images.reference_weight, "reference");
  }
  apply_non_finite_policy(inputs.non_finite, images.reference, inputs.reference.path, images.reference_weight,
                          inputs.reference_weight ? inputs.reference_weight->path : fs::path());
}

void load_moving(const PipelineInputs& inputs, const ImageInput& moving, RegistrationImages& images) {
  images.moving = read_image(moving.path, read_options(moving));
  images.moving_weight.reset();
  if (inputs.moving_weight) {
    images.moving_weight = read_image(inputs.moving_weight->path);
    check_weight_grid(images.moving, *images.moving_weight, "moving");
  }
  apply_non_finite_policy(inputs.non_finite, images.moving, moving.path, images.moving_weight,
                          inputs.moving_weight ? inputs.moving_weight->path : fs::path());
}

RegistrationImages load_images(const PipelineInputs& inputs) {
  RegistrationImages images;
  load_reference(inputs, images);
  load_moving(inputs, inputs.moving.front(), images);
  return images;
}

RegistrationComponents create_registration_components(const Pipeline& pipeline,
                                                      const PluginHost& plugins,
                                                      HostServices& services) {
  const PipelineRegistration& reg = pipeline.registration;
  auto cost = create_component<CostInstance>(reg.cost, RP_KIND_COST, "cost", plugins, services);
  // The DOF the optimizer declares (ABI 1.2), checked before it is created: load_pipeline
  // has refused a pipeline none of its optimizers supports; of a preference list, those that
  // do not support it are skipped.
  const auto dof_refusal = [&](const Component& c) {
    return c.supports_dof(reg.dof) ? std::string()
                                   : c.dof_support_text() + ", not registration.dof=" + std::to_string(reg.dof);
  };
  auto optimizer = create_component<OptimizerInstance>(reg.optimizer, RP_KIND_OPTIMIZER,
                                                       "optimizer", plugins, services, dof_refusal);
  auto resampler = create_component<ResamplerInstance>(reg.resampler, RP_KIND_RESAMPLER,
                                                       "resampler", plugins, services);
  RegistrationComponents out;
  if (reg.bins_per_level) out.level_costs = level_costs(reg, cost.used.id, plugins, services);
  out.used = {cost.used, optimizer.used, resampler.used};
  out.cost = std::move(cost.instance);
  out.optimizer = std::move(optimizer.instance);
  out.resampler = std::move(resampler.instance);
  return out;
}

RegistrationResult register_images(const Pipeline& pipeline, const RegistrationImages& images,
                                   const PluginHost& plugins, HostServices& services) {
  RegistrationComponents components = create_registration_components(pipeline, plugins, services);
  return register_images(pipeline, images, components, services);
}

PreparedReference prepare_reference(const Pipeline& pipeline, const RegistrationImages& images,
                                    const RegistrationComponents& components, const Image* moving) {
  const auto start = Clock::now();
  ResamplerInstance& resampler = *components.resampler;
  const bool on_device = choose_device_path(components).reference && !images.reference_weight;
  PreparedReference out;
  // One id per image: every level of it is one upload for a GPU resampler.
  const uint64_t ref_id = new_input_id(), weight_id = new_input_id();
  // The centre's and the radius's passes over the reference (independent: the radius needs the
  // index moments, not the centre) on two other threads while this one makes the levels (which
  // mostly waits for copies and the device); the resampler is called from this thread only.
  auto centre = std::async(std::launch::async, [&] { return centre_of_mass(images.reference); });
  auto moments = std::async(std::launch::async, [&] { return index_moments(images.reference); });
  const PipelineRegistration& reg = pipeline.registration;
  out.sampled = sampled_levels(reg.levels_mm, min_sampling_mm(reg.min_sampling_mm, images.reference, moving));
  for (const SampledLevel& sampled : out.sampled) {
    const double mm = sampled.mm;
    if (on_device) {
      Level level = make_device_level(images.reference, mm, resampler, ref_id);
      out.levels.push_back(std::move(level.image));
      out.device_levels.push_back(std::move(level.device));
      continue;
    }
    out.levels.push_back(make_level(images.reference, mm, resampler, ref_id));
    if (images.reference_weight)
      out.weight_levels.push_back(make_level(*images.reference_weight, mm, resampler, weight_id));
  }
  out.centre = centre.get();
  out.radius_mm = radius_from_moments(images.reference, moments.get(), out.centre);
  out.seconds = seconds_since(start);
  return out;
}

namespace {

// The moving image's centre of mass on another thread (a float image's is one serial pass:
// tens of milliseconds for 10 M voxels), when the initialisation needs it.
std::future<Eigen::Vector3d> start_moving_centre(const PipelineRegistration& reg, const RegistrationImages& images) {
  if (!start_needs_moving_centre(reg)) return {};
  return std::async(std::launch::async, [&images] { return centre_of_mass(images.moving); });
}

RegistrationResult register_prepared(const Pipeline& pipeline, const RegistrationImages& images,
                                     const PreparedReference& reference, RegistrationComponents& components,
                                     HostServices& services, std::future<Eigen::Vector3d> moving_centre);

}  // namespace

RegistrationResult register_images(const Pipeline& pipeline, const RegistrationImages& images,
                                   RegistrationComponents& components, HostServices& services) {
  // Both images' moments are computed while the reference's and the moving image's levels
  // are made.
  std::future<Eigen::Vector3d> moving_centre = start_moving_centre(pipeline.registration, images);
  const PreparedReference reference = prepare_reference(pipeline, images, components, &images.moving);
  RegistrationResult result =
      register_prepared(pipeline, images, reference, components, services, std::move(moving_centre));
  result.seconds_pyramid += reference.seconds;
  return result;
}

RegistrationResult register_images(const Pipeline& pipeline, const RegistrationImages& images,
                                   const PreparedReference& reference,
                                   RegistrationComponents& components, HostServices& services) {
  return register_prepared(pipeline, images, reference, components, services,
                           start_moving_centre(pipeline.registration, images));
}

namespace {

// The reference's side of level `mm` into `l`: the prepared level, or (a moving image coarser
// than the batch's reference raised the floor to a size not prepared) one made now.
void add_reference_level(const PreparedReference& reference, const RegistrationImages& images,
                         ResamplerInstance& resampler, double mm, LevelImages& l) {
  for (size_t i = 0; i < reference.sampled.size(); ++i) {
    if (reference.sampled[i].mm != mm) continue;
    l.reference = reference.levels.at(i);
    if (!reference.device_levels.empty()) l.reference_device = reference.device_levels.at(i);
    if (!reference.weight_levels.empty()) l.reference_weight = reference.weight_levels.at(i);
    return;
  }
  if (!reference.device_levels.empty()) {
    Level level = make_device_level(images.reference, mm, resampler, 0);
    l.reference = std::move(level.image);
    l.reference_device = std::move(level.device);
    return;
  }
  l.reference = make_level(images.reference, mm, resampler);
  if (images.reference_weight) l.reference_weight = make_level(*images.reference_weight, mm, resampler);
}

RegistrationResult register_prepared(const Pipeline& pipeline, const RegistrationImages& images,
                                     const PreparedReference& reference, RegistrationComponents& components,
                                     HostServices& services, std::future<Eigen::Vector3d> moving_centre) {
  const PipelineRegistration& reg = pipeline.registration;
  RegistrationResult result;
  CostInstance& cost = *components.cost;
  OptimizerInstance& optimizer = *components.optimizer;
  ResamplerInstance& resampler = *components.resampler;
  result.components = components.used;

  const auto pyramid_start = Clock::now();
  result.min_sampling_mm = min_sampling_mm(reg.min_sampling_mm, images.reference, &images.moving);
  const std::vector<SampledLevel> sampled = sampled_levels(reg.levels_mm, result.min_sampling_mm);
  std::vector<LevelImages> levels;
  const uint64_t mov_id = new_input_id(), mov_weight_id = new_input_id();
  const bool moving_on_device = choose_device_path(components).moving && !images.moving_weight;
  for (const SampledLevel& level : sampled) {
    const double moving_mm = moving_level_mm(level.mm, reg.decouple_grids);
    LevelImages l;
    l.level_mm = level.mm;
    result.sampled_levels_mm.push_back(level.mm);
    add_reference_level(reference, images, resampler, level.mm, l);
    if (moving_on_device) {
      Level level = make_device_level(images.moving, moving_mm, resampler, mov_id);
      l.moving = std::move(level.image);
      l.moving_device = std::move(level.device);
    } else {
      l.moving = make_level(images.moving, moving_mm, resampler, mov_id);
    }
    if (images.moving_weight)
      l.moving_weight = make_level(*images.moving_weight, moving_mm, resampler, mov_weight_id);
    levels.push_back(std::move(l));
  }
  result.seconds_pyramid = seconds_since(pyramid_start);

  result.centre = reference.centre;
  result.params = start_params(reg, images, result.centre, moving_centre);

  const auto search_start = Clock::now();
  std::vector<CostInstance*> level_costs;
  for (const SampledLevel& level : sampled)
    level_costs.push_back(components.level_costs.empty() ? &cost : components.level_costs.at(level.declared).get());
  RegistrationObjective objective(std::move(level_costs), services, std::move(levels), result.centre,
                                  reg.dof, reference.radius_mm, reg.min_overlap);
  objective.set_level(0);
  if (objective.overlap(result.params) <= 0.0)
    throw UserError("the moving image does not overlap the reference at the start transform (" +
                    start_name(reg) + "): check the images' headers" +
                    (reg.initialisation == "identity" && !reg.initial_transform
                         ? std::string(", or use registration.initialisation: centre_of_mass")
                         : std::string()));
  if (const double start = objective.shared_overlap(result.params); start < reg.min_overlap)
    services.log(RP_LOG_WARNING,
                 "the start transform (" + start_name(reg) + ") keeps only " +
                     std::to_string(int(start * 100)) + "% of the smaller image inside the other, " +
                     "below registration.min_overlap: the search starts from the no-overlap cost");
  double f = 0.0;
  if (optimizer.drives_levels()) {
    optimizer.minimize(*objective.abi(), result.params.data(), &f);
  } else {
    for (uint32_t level = 0; level < sampled.size(); ++level) {
      objective.set_level(level);
      optimizer.minimize(*objective.abi(), result.params.data(), &f);
    }
  }
  result.seconds_search = seconds_since(search_start);
  services.progress(1.0, "registration done");
  result.final_cost = f;
  result.stages = objective.finish();
  result.evaluations = objective.evaluations();
  result.ref_to_mov = params_to_matrix(result.params, result.centre);
  // Of the smaller image, as registration.min_overlap counts it: a slab moving image keeps
  // all of itself and only part of the reference.
  if (const double overlap = objective.shared_overlap(result.params); overlap < 0.25)
    services.log(RP_LOG_WARNING, "the result keeps only " + std::to_string(int(overlap * 100)) +
                                     "% of the smaller image inside the other: check it");
  return result;
}

}  // namespace

}  // namespace regpipe
