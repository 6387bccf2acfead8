// registration.stages (issue 16, item 4): antsRegistration's Rigid -> Affine -> SyN chain.
// Each affine stage is today's one-stage registration (register_images) started from the
// previous stage's matrix; the syn stage hands the deformable optimizer the full-resolution
// host images, the final affine and the dense cost instance, and keeps the two fields it fills
// and the cost before and after where the optimizer measured them.
#include <regpipe/host/driver.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/resample_through_chain.hpp>

#include "driver/create_component.hpp"
#include "driver/elapsed.hpp"
#include "plugin_host/did_you_mean.hpp"

#include <regpipe_common/fields/abi_views.hpp>

#include <cmath>

namespace regpipe {
namespace {

// The ids of the components of `kind` here whose instance (created with its defaults, quietly)
// passes `has`: which costs offer the dense extension, which optimizers the deformable one.
// Only for messages: creating every component costs what creating it costs.
template <class Instance, class Has>
std::vector<std::string> components_with(int32_t kind, const PluginHost& plugins, Has has) {
  HostServices quiet(RP_LOG_ERROR, false);
  std::vector<std::string> ids;
  for (const Component& c : plugins.components()) {
    if (c.kind != kind) continue;
    try {
      ComponentSpec spec;
      spec.plugins = {c.id};
      auto created = create_component<Instance>(spec, kind, "probe", plugins, quiet);
      if (has(*created.instance)) ids.push_back(c.id);
    } catch (const std::exception&) {
      // a component that cannot start here is no alternative
    }
  }
  return ids;
}

std::string listed(const std::vector<std::string>& ids) {
  return ids.empty() ? std::string("none is installed") : "here: " + join(ids, ", ");
}

DeformableComponents create_deformable(const PipelineStage& stage, const PluginHost& plugins,
                                       HostServices& services) {
  const std::string prefix = stage.label.substr(0, stage.label.find(' '));
  const PipelineRegistration& reg = stage.registration;
  auto cost = create_component<CostInstance>(reg.cost, RP_KIND_COST, "cost", plugins, services);
  if (!cost.instance->offers_dense())
    throw UserError(reg.cost.where.text + ": " + prefix + ".cost: '" + cost.used.id +
                    "' offers no dense extension (" RP_EXT_DENSE_COST "), which a syn stage needs; costs "
                    "that offer it " +
                    listed(components_with<CostInstance>(RP_KIND_COST, plugins,
                                                         [](const CostInstance& c) { return c.offers_dense(); })));
  auto optimizer = create_component<OptimizerInstance>(reg.optimizer, RP_KIND_OPTIMIZER, "optimizer", plugins,
                                                       services);
  if (!optimizer.instance->offers_deformable())
    throw UserError(reg.optimizer.where.text + ": " + prefix + ".optimizer: '" + optimizer.used.id +
                    "' is not a deformable optimizer (no " RP_EXT_DEFORMABLE_OPTIMIZER "), which a syn "
                    "stage needs; optimizers that are " +
                    listed(components_with<OptimizerInstance>(
                        RP_KIND_OPTIMIZER, plugins,
                        [](const OptimizerInstance& o) { return o.offers_deformable(); })));
  DeformableComponents out;
  out.used = {cost.used, optimizer.used};
  out.cost = std::move(cost.instance);
  out.optimizer = std::move(optimizer.instance);
  return out;
}

regpipe_common::FieldGeometry grid_of(const Image& image) {
  regpipe_common::FieldGeometry g{};
  g.dims = {int(image.dims[0]), int(image.dims[1]), int(image.dims[2])};
  for (int i = 0; i < 16; ++i) g.voxel_to_world[i] = image.voxel_to_world(i / 4, i % 4);
  return g;
}

// The dense cost between the reference and the moving image seen through `chain` (trilinear),
// as the syn stage's cost measures it: the figure before and after the stage.
double dense_cost(CostInstance& cost, const RegistrationImages& images, const std::vector<ChainStep>& chain) {
  const Image warped = resample_at_positions(images.moving, images.reference,
                                             chain_sample_positions(chain, images.reference, images.moving),
                                             Interpolation::trilinear);
  double value = std::numeric_limits<double>::quiet_NaN();
  cost.evaluate_dense(regpipe_common::dense_cost_request(
      grid_of(images.reference),
      {images.reference.data.data(), warped.data.data(),
       images.reference_weight ? images.reference_weight->data.data() : nullptr, &value}));
  return value;
}

}  // namespace

Pipeline stage_pipeline(const Pipeline& pipeline, size_t index) {
  Pipeline one = pipeline;
  one.registration = pipeline.stages.at(index).registration;
  one.stages.clear();
  return one;
}

StageComponents create_stage_components(const Pipeline& pipeline, const PluginHost& plugins,
                                        HostServices& services) {
  StageComponents out;
  for (size_t i = 0; i < pipeline.stages.size(); ++i) {
    const PipelineStage& stage = pipeline.stages[i];
    if (stage.deformable) {
      out.deformable = create_deformable(stage, plugins, services);
      for (const UsedComponent& u : out.deformable->used) out.used.emplace_back(stage.label, u);
      continue;
    }
    out.affine.push_back(create_registration_components(stage_pipeline(pipeline, i), plugins, services));
    for (const UsedComponent& u : out.affine.back().used) out.used.emplace_back(stage.label, u);
  }
  return out;
}

RegistrationResult register_stages(const Pipeline& pipeline, const RegistrationImages& images,
                                   StageComponents& components, HostServices& services) {
  RegistrationResult result;
  std::vector<StageRecord> levels;
  std::vector<PipelineStageRecord> records;
  double seconds_pyramid = 0.0, seconds_search = 0.0;
  long long evaluations = 0;
  std::optional<Eigen::Matrix4d> affine;  // the last affine stage's result
  size_t next_affine = 0;
  for (size_t i = 0; i < pipeline.stages.size(); ++i) {
    const PipelineStage& stage = pipeline.stages[i];
    const auto start = Clock::now();
    PipelineStageRecord record;
    record.label = stage.label;
    record.transform = stage.transform;
    if (!stage.deformable) {
      Pipeline one = stage_pipeline(pipeline, i);
      if (affine) one.registration.initial_matrix = *affine;
      RegistrationComponents& c = components.affine.at(next_affine++);
      RegistrationResult r = register_images(one, images, c, services);
      for (StageRecord s : r.stages) {
        s.name = stage.label + " " + s.name;
        levels.push_back(std::move(s));
      }
      seconds_pyramid += r.seconds_pyramid;
      seconds_search += r.seconds_search;
      evaluations += r.evaluations;
      record.dof = one.registration.dof;
      record.cost_id = c.used.at(0).id;
      record.optimizer_id = c.used.at(1).id;
      record.final_cost = r.final_cost;
      record.evaluations = r.evaluations;
      affine = r.ref_to_mov;
      result = std::move(r);
    } else {
      DeformableComponents& d = *components.deformable;
      const Eigen::Matrix4d start_matrix = affine.value_or(Eigen::Matrix4d::Identity());
      if (!affine) {  // a syn stage alone: the affine part is the identity
        result.components.clear();
        result.ref_to_mov = start_matrix;
        result.params = identity_params();
      }
      for (const UsedComponent& u : d.used) result.components.push_back(u);
      // Roles of the syn stage's components in the report's components map: their own.
      result.components[result.components.size() - 2].role = "syn_cost";
      result.components.back().role = "syn_optimizer";
      record.cost_id = d.used.at(0).id;
      record.optimizer_id = d.used.at(1).id;
      services.progress(0.0, stage.label);
      const regpipe_common::FieldGeometry grid = grid_of(images.reference);
      auto forward = std::make_shared<regpipe_common::DisplacementField>(regpipe_common::zero_field(grid));
      auto inverse = std::make_shared<regpipe_common::DisplacementField>(regpipe_common::zero_field(grid));
      rp_field forward_out = regpipe_common::field_view(*forward);
      rp_field inverse_out = regpipe_common::field_view(*inverse);
      double matrix[16];
      for (int k = 0; k < 16; ++k) matrix[k] = start_matrix(k / 4, k % 4);
      const rp_image fixed = images.reference.view(), moving = images.moving.view();
      std::optional<rp_image> mask;
      if (images.reference_weight) mask = images.reference_weight->view();
      const OptimizerInstance::MeasuredCosts measured = d.optimizer->register_deformable(
          fixed, moving, mask ? &*mask : nullptr, matrix, *d.cost, forward_out, &inverse_out);
      for (const float v : forward->vectors)
        if (!std::isfinite(v))
          throw ComponentError(RP_INTERNAL, stage.label + ": optimizer '" + record.optimizer_id +
                                                "' returned a forward field with a non-finite vector");
      // The optimizer's own measurement where it made one (on the cost's device: abi.h 1.7),
      // else the host's (CPU resampling of the moving image through the chain).
      record.cost_before = std::isfinite(measured.before)
                               ? measured.before
                               : dense_cost(*d.cost, images, {ChainStep{start_matrix, nullptr}});
      record.final_cost = std::isfinite(measured.after)
                              ? measured.after
                              : dense_cost(*d.cost, images,
                                           {ChainStep{start_matrix, nullptr}, ChainStep{Eigen::Matrix4d::Identity(), forward}});
      result.warp = forward;
      result.inverse_warp = inverse;
      services.progress(1.0, stage.label + " done");
    }
    record.seconds = seconds_since(start);
    records.push_back(std::move(record));
  }
  if (!levels.empty()) {
    result.stages = std::move(levels);
    result.seconds_pyramid = seconds_pyramid;
    result.seconds_search = seconds_search;
    result.evaluations = evaluations;
  }
  result.pipeline_stages = std::move(records);
  return result;
}

}  // namespace regpipe
