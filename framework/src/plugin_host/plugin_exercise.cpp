// The child's half of `regpipe plugins --check` (plugin_check.cpp is the parent's): one
// component put through its calls with small, exactly known inputs. Each step is announced
// before it runs ("step <name>"), so that a crash is placed; a failure is "fail <reason>", a
// component that cannot run here (no GPU) "skip <reason>", success "pass".
#include <regpipe/host/components.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/plugin_check.hpp>
#include <regpipe/host/plugin_watchdog.hpp>
#include <regpipe/host/resample_image.hpp>

#include "process/worker_process.hpp"

#include <cmath>
#include <limits>
#include <memory>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

PluginSearchOptions only(const fs::path& library) {
  PluginSearchOptions o;
  o.plugin_paths = {library};
  o.use_environment = false;
  o.use_default_dirs = false;
  return o;
}

// A failed expectation: reported as the component's failure.
struct CheckFailed {
  std::string reason;
};

void step(const std::string& name) { worker_report("step\t" + name); }

void expect(bool ok, const std::string& reason) {
  if (!ok) throw CheckFailed{reason};
}

// A smooth blob of two intensities on a 20^3 grid of 4 mm: enough structure for every
// similarity measure, small enough for any plugin to be quick.
Image phantom() {
  Image image;
  image.dims = {20, 20, 20};
  image.voxel_to_world.diagonal() << 4.0, 4.0, 4.0, 1.0;
  image.voxel_to_world.block<3, 1>(0, 3) << -38.0, -38.0, -38.0;
  image.data.resize(image.voxel_count());
  size_t i = 0;
  for (uint32_t z = 0; z < 20; ++z)
    for (uint32_t y = 0; y < 20; ++y)
      for (uint32_t x = 0; x < 20; ++x) {
        const double r2 = (x - 9.5) * (x - 9.5) / 36.0 + (y - 9.5) * (y - 9.5) / 25.0 + (z - 9.5) * (z - 9.5) / 16.0;
        image.data[i++] = float(100.0 * std::exp(-r2) + (x < 10 ? 20.0 : 40.0) * std::exp(-r2 / 4.0));
      }
  return image;
}

std::array<double, 16> translation(double tx, double ty, double tz) {
  return {1, 0, 0, tx, 0, 1, 0, ty, 0, 0, 1, tz, 0, 0, 0, 1};
}

void exercise_cost(CostInstance& cost) {
  const Image image = phantom();
  step("set_reference");
  cost.set_reference(image, nullptr);
  step("set_moving");
  cost.set_moving(image, nullptr);
  std::vector<double> matrices;
  for (const auto& m : {translation(0, 0, 0), translation(4, -2, 1), translation(1e5, 0, 0)})
    matrices.insert(matrices.end(), m.begin(), m.end());
  std::vector<double> costs(3), overlap(3, -1.0);
  step("evaluate");
  cost.evaluate(matrices.data(), 3, costs.data(), overlap.data());
  for (size_t k = 0; k < 3; ++k) {
    expect(std::isfinite(costs[k]), "evaluate: cost " + std::to_string(costs[k]) + " of transform " +
                                        std::to_string(k) + " is not finite (abi.h: every cost is, no overlap's included)");
    expect(overlap[k] >= 0.0 && overlap[k] <= 1.0,
           "evaluate: overlap " + std::to_string(overlap[k]) + " of transform " + std::to_string(k) + " is outside [0, 1]");
  }
  expect(overlap[2] == 0.0, "evaluate: a transform 100 m away overlaps " + std::to_string(overlap[2]) + ", not 0");
  step("evaluate without overlap_out");
  cost.evaluate(matrices.data(), 1, costs.data(), nullptr);
  expect(std::isfinite(costs[0]), "evaluate without overlap_out: cost is not finite");
}

// f(x) = sum of ((x - target) / step)^2, its minimum a few steps from the start (the identity)
// in rotations and translations; parameters the DOF does not free stay put and add a constant.
struct Quadratic {
  unsigned dof = 6;
  std::array<double, RP_PARAM_COUNT> step{}, target{};
  std::string error;

  double at(const double* x) const {
    double f = 0.0;
    for (unsigned i = 0; i < RP_PARAM_COUNT; ++i) f += (x[i] - target[i]) * (x[i] - target[i]) / (step[i] * step[i]);
    return f;
  }
};

rp_objective objective_of(Quadratic& q, const std::vector<double>& levels) {
  rp_objective o{};
  o.size = sizeof(o);
  o.ctx = &q;
  o.param_count = RP_PARAM_COUNT;
  o.dof = q.dof;
  o.typical_step = q.step.data();
  o.level_count = uint32_t(levels.size());
  o.levels_mm = levels.data();
  o.evaluate = [](void* ctx, const double* x, size_t k, double* costs) -> rp_status {
    const auto* q = static_cast<const Quadratic*>(ctx);
    for (size_t i = 0; i < k; ++i) costs[i] = q->at(x + RP_PARAM_COUNT * i);
    return RP_OK;
  };
  o.set_level = [](void* ctx, uint32_t level) -> rp_status {
    if (level < 2) return RP_OK;
    static_cast<Quadratic*>(ctx)->error = "set_level(" + std::to_string(level) + ") of 2 levels";
    return RP_INVALID_ARGUMENT;
  };
  o.last_error = [](void* ctx) -> const char* { return static_cast<Quadratic*>(ctx)->error.c_str(); };
  o.begin_stage = [](void*, const char*) {};
  return o;
}

// A deformable-only optimizer (abi.h 1.5) offers its extension and refuses an affine objective.
void exercise_deformable_only(OptimizerInstance& optimizer) {
  step("offers RP_EXT_DEFORMABLE_OPTIMIZER");
  expect(optimizer.offers_deformable(),
         "flags RP_OPTIMIZER_DEFORMABLE_ONLY but get_extension offers no " RP_EXT_DEFORMABLE_OPTIMIZER);
  step("minimize refuses an affine objective");
  Quadratic q;
  const std::vector<double> levels = {8.0};
  const rp_objective objective = objective_of(q, levels);
  std::array<double, RP_PARAM_COUNT> x = {0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0};
  double f = 0.0;
  try {
    optimizer.minimize(objective, x.data(), &f);
  } catch (const ComponentError& e) {
    expect(e.status() == RP_UNSUPPORTED, std::string("minimize: expected RP_UNSUPPORTED, got ") + status_name(e.status()));
    return;
  }
  expect(false, "minimize accepted an affine objective although the optimizer is deformable only");
}

void exercise_optimizer(OptimizerInstance& optimizer, const Component& c) {
  if (c.deformable_only) return exercise_deformable_only(optimizer);
  Quadratic q;
  for (unsigned dof : {12u, 9u, 7u, 6u, 3u})
    if (c.supports_dof(dof)) q.dof = dof;  // the smallest it takes: fewest parameters, quickest
  q.step = {0.05, 0.05, 0.05, 2, 2, 2, 0.02, 0.02, 0.02, 0.02, 0.02, 0.02};
  q.target = {0.03, -0.02, 0.01, 3, -1, 2, 1, 1, 1, 0, 0, 0};
  const std::vector<double> levels = {8.0, 4.0};
  const rp_objective objective = objective_of(q, levels);
  std::array<double, RP_PARAM_COUNT> x = {0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0};
  const double start = q.at(x.data());
  double f = std::numeric_limits<double>::quiet_NaN();
  step("minimize");
  for (size_t level = 0; level < (optimizer.drives_levels() ? 1 : levels.size()); ++level)
    optimizer.minimize(objective, x.data(), &f);
  expect(std::isfinite(f), "minimize: f_out is not finite");
  expect(f < start, "minimize: f_out " + std::to_string(f) + " is no better than the start's " + std::to_string(start));
  expect(std::abs(f - q.at(x.data())) <= 1e-9 * std::max(1.0, std::abs(f)),
         "minimize: f_out " + std::to_string(f) + " is not the objective at x_inout (" + std::to_string(q.at(x.data())) + ")");
}

void exercise_resampler(ResamplerInstance& resampler) {
  const Image image = phantom();
  step("resample");
  const Image out = resample_onto(resampler, image, image, Eigen::Matrix4d::Identity(),
                                  interpolation_code(Interpolation::trilinear));
  float largest = 0.0f, worst = 0.0f;
  for (size_t i = 0; i < image.data.size(); ++i) {
    expect(std::isfinite(out.data[i]), "resample: voxel " + std::to_string(i) + " is not finite");
    largest = std::max(largest, std::abs(image.data[i]));
    worst = std::max(worst, std::abs(out.data[i] - image.data[i]));
  }
  expect(worst <= 1e-3f * largest, "resample: the identity changes a voxel by " + std::to_string(worst) +
                                       " (of values up to " + std::to_string(largest) + ")");
}

}  // namespace

void report_library_components(const fs::path& library) {
  const PluginHost host(only(library));
  for (const LoadProblem& p : host.problems()) worker_report("problem\t" + p.reason);
  for (const Component& c : host.components())
    worker_report(std::string("component\t") + kind_name(c.kind) + ":" + c.id);
}

void exercise_component(const fs::path& library, const std::string& kind_and_id, double timeout_s) {
  watch_plugin_calls(timeout_s, "--timeout", true);
  const PluginHost host(only(library));
  const Component* c = nullptr;
  for (const Component& candidate : host.components())
    if (std::string(kind_name(candidate.kind)) + ":" + candidate.id == kind_and_id) c = &candidate;
  if (c == nullptr) {
    worker_report("fail\tnot found in " + library.string());
    return;
  }
  HostServices services(RP_LOG_ERROR, false);
  try {
    step("create");
    const auto params = resolve_params(*c, {});
    if (c->kind == RP_KIND_COST) {
      CostInstance cost(*c, services, params);
      exercise_cost(cost);
      step("destroy");
    } else if (c->kind == RP_KIND_OPTIMIZER) {
      OptimizerInstance optimizer(*c, services, params);
      exercise_optimizer(optimizer, *c);
      step("destroy");
    } else {
      ResamplerInstance resampler(*c, services, params);
      exercise_resampler(resampler);
      step("destroy");
    }
    worker_report("pass");
  } catch (const CheckFailed& e) {
    worker_report("fail\t" + e.reason);
  } catch (const ComponentError& e) {
    worker_report((e.status() == RP_DEVICE ? "skip\t" : "fail\t") + std::string(e.what()));
  } catch (const std::exception& e) {
    worker_report(std::string("fail\t") + e.what());
  }
}

}  // namespace regpipe
