#include "driver/objective.hpp"

#include <regpipe/host/transform.hpp>

#include <Eigen/LU>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace regpipe {

RegistrationObjective::RegistrationObjective(std::vector<CostInstance*> level_costs,
                                             HostServices& services,
                                             std::vector<LevelImages> levels,
                                             const Eigen::Vector3d& centre, unsigned dof,
                                             double radius_mm, double min_overlap)
    : level_costs_(std::move(level_costs)), services_(services), levels_(std::move(levels)), centre_(centre),
      radius_mm_(radius_mm), min_overlap_(min_overlap) {
  for (const auto& l : levels_) levels_mm_.push_back(l.level_mm);
  objective_.size = sizeof(objective_);
  objective_.ctx = this;
  objective_.param_count = RP_PARAM_COUNT;
  objective_.dof = dof;
  objective_.typical_step = typical_step_.data();
  objective_.level_count = uint32_t(levels_mm_.size());
  objective_.levels_mm = levels_mm_.data();
  // The C callbacks: exceptions end here and become a status + message.
  objective_.evaluate = [](void* ctx, const double* params, size_t k, double* costs) -> rp_status {
    auto* self = static_cast<RegistrationObjective*>(ctx);
    return self->guarded([&] { self->evaluate(params, k, costs); });
  };
  objective_.set_level = [](void* ctx, uint32_t level) -> rp_status {
    auto* self = static_cast<RegistrationObjective*>(ctx);
    return self->guarded([&] { self->set_level(level); });
  };
  objective_.last_error = [](void* ctx) -> const char* {
    return static_cast<RegistrationObjective*>(ctx)->last_error_.c_str();
  };
  objective_.begin_stage = [](void* ctx, const char* name) {
    static_cast<RegistrationObjective*>(ctx)->begin_stage(name != nullptr ? name : "");
  };
  update_typical_step();
}

template <class Fn>
rp_status RegistrationObjective::guarded(Fn&& fn) noexcept {
  try {
    fn();
    return RP_OK;
  } catch (const ComponentError& e) {
    last_error_ = e.what();
    return e.status();
  } catch (const std::out_of_range& e) {  // a level index the objective does not have
    last_error_ = e.what();
    return RP_INVALID_ARGUMENT;
  } catch (const std::exception& e) {
    last_error_ = e.what();
    return RP_INTERNAL;
  }
}

// Steps that move the image by about one level voxel: translation in mm, rotations and
// scales/skews relative to the image's radius.
void RegistrationObjective::update_typical_step() {
  const double mm = current_level_ ? levels_mm_[*current_level_] : levels_mm_.front();
  const double relative = mm / radius_mm_;
  for (int i = 0; i < 3; ++i) typical_step_[i] = relative;
  for (int i = 3; i < 6; ++i) typical_step_[i] = mm;
  for (int i = 6; i < 12; ++i) typical_step_[i] = relative;
}

void RegistrationObjective::set_level(uint32_t level) {
  if (level >= levels_.size())
    throw std::out_of_range("level " + std::to_string(level) + " does not exist (" +
                            std::to_string(levels_.size()) + " levels)");
  if (current_level_ == level) return;
  const LevelImages& l = levels_[level];
  std::ostringstream name;
  name << l.level_mm << " mm";
  begin_stage(name.str() + " set-up");
  stage_->level_setup = true;
  stage_->level_mm = l.level_mm;
  cost_ = level_costs_.at(level);
  if (l.reference_device)
    cost_->set_reference(*l.reference_device);
  else
    cost_->set_reference(l.reference, l.reference_weight ? &*l.reference_weight : nullptr);
  if (l.moving_device)
    cost_->set_moving(*l.moving_device);
  else
    cost_->set_moving(l.moving, l.moving_weight ? &*l.moving_weight : nullptr);
  current_level_ = level;
  measure_overlap_rule();
  update_typical_step();
  begin_stage(name.str());
  services_.progress(double(level) / double(levels_.size()), "registering at " + name.str());
}

void RegistrationObjective::evaluate(const double* params, size_t k, double* costs) {
  if (!current_level_) set_level(0);
  if (services_.cancel_requested()) throw ComponentError(RP_CANCELLED, "cancelled by the user");
  matrices_.resize(k * 16);
  for (size_t i = 0; i < k; ++i) {
    AffineParams p;
    std::copy_n(params + i * RP_PARAM_COUNT, RP_PARAM_COUNT, p.begin());
    const Eigen::Matrix4d m = params_to_matrix(p, centre_);
    for (int j = 0; j < 16; ++j) matrices_[i * 16 + j] = m(j / 4, j % 4);
  }
  // 1 where a plugin leaves overlap_out unwritten: the rule then never applies.
  overlaps_.assign(k, 1.0);
  cost_->evaluate(matrices_.data(), k, costs, overlaps_.data());
  long long below = 0;
  for (size_t i = 0; i < k; ++i)
    if (overlaps_[i] * shared_per_reference_ < min_overlap_) {
      costs[i] = no_overlap_cost_;
      ++below;
    }
  total_evaluations_ += static_cast<long long>(k);
  if (stage_) {
    stage_->below_min_overlap += below;
    stage_->evaluations += static_cast<long long>(k);
    stage_->batches += 1;
    stage_->best_cost = std::min(stage_->best_cost, *std::min_element(costs, costs + k));
  }
}

double RegistrationObjective::overlap(const AffineParams& params) {
  if (!current_level_) set_level(0);
  const Eigen::Matrix4d m = params_to_matrix(params, centre_);
  double matrix[16], cost = 0.0, fraction = 0.0;
  for (int j = 0; j < 16; ++j) matrix[j] = m(j / 4, j % 4);
  cost_->evaluate(matrix, 1, &cost, &fraction);
  return fraction;
}

double RegistrationObjective::shared_overlap(const AffineParams& params) {
  const double fraction = overlap(params);  // sets the level first when none is set
  return fraction * shared_per_reference_;
}

namespace {

// Weighted volume in mm^3: the sum of the weights (1 per voxel without a weighting image)
// times the voxel volume.
double weighted_volume_mm3(const Image& image, const std::optional<Image>& weight) {
  const double voxel = std::fabs(image.voxel_to_world.topLeftCorner<3, 3>().determinant());
  if (!weight) return voxel * double(image.dims[0]) * double(image.dims[1]) * double(image.dims[2]);
  double sum = 0.0;
  for (float w : weight->data) sum += std::max(0.0f, w);
  return voxel * sum;
}

// Largest distance from the world origin of a corner of the image's voxel grid.
double farthest_corner_mm(const Image& image) {
  double far = 0.0;
  for (int c = 0; c < 8; ++c) {
    const Eigen::Vector4d corner((c & 1) ? double(image.dims[0]) : -1.0,
                                 (c & 2) ? double(image.dims[1]) : -1.0,
                                 (c & 4) ? double(image.dims[2]) : -1.0, 1.0);
    far = std::max(far, (image.voxel_to_world * corner).head<3>().norm());
  }
  return far;
}

}  // namespace

// Why a minimum overlap: the histogram measures (MI, NMI; CR with many bins) are estimated
// from the samples in the overlap, and a handful of samples spread over a joint histogram of
// thousands of cells looks perfectly "dependent" (each sample alone in its row and column:
// NMI = 2, MI = log N). A search that may scale and shift the image finds such a sliver and
// prefers it to the true alignment (docs/flirt-search.md, "Minimum overlap"). A transform
// that keeps less than min_overlap of the smaller image is therefore scored like one that
// keeps nothing: the measure's own no-overlap value (abi.h), whatever the measure.
void RegistrationObjective::measure_overlap_rule() {
  const LevelImages& l = levels_.at(*current_level_);
  const double ref = weighted_volume_mm3(l.reference, l.reference_weight);
  const double mov = weighted_volume_mm3(l.moving, l.moving_weight);
  shared_per_reference_ = (ref > 0.0 && mov > 0.0) ? ref / std::min(ref, mov) : 1.0;
  if (!(min_overlap_ > 0.0)) return;
  // A shift farther than both images reach from the origin leaves no reference point inside
  // the moving image.
  Eigen::Matrix4d away = Eigen::Matrix4d::Identity();
  away(0, 3) = 2.0 * (farthest_corner_mm(l.reference) + farthest_corner_mm(l.moving)) + 1.0;
  double matrix[16], fraction = 1.0;
  for (int j = 0; j < 16; ++j) matrix[j] = away(j / 4, j % 4);
  cost_->evaluate(matrix, 1, &no_overlap_cost_, &fraction);
  if (fraction != 0.0)
    throw ComponentError(RP_INTERNAL, "cost " + cost_->component().id +
                                          " reports an overlap of " + std::to_string(fraction) +
                                          " for a transform that leaves none (abi.h: 0)");
}

void RegistrationObjective::close_stage() {
  if (!stage_) return;
  stage_->seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stage_start_).count();
  // A level's default stage stays empty when the optimizer names its own stages.
  if (stage_->evaluations > 0 || stage_->level_setup) stages_.push_back(*stage_);
  stage_.reset();
}

void RegistrationObjective::begin_stage(const std::string& name) {
  close_stage();
  StageRecord s;
  s.name = name;
  s.level_mm = current_level_ ? levels_mm_[*current_level_] : 0.0;
  s.best_cost = std::numeric_limits<double>::infinity();
  stage_ = s;
  stage_start_ = std::chrono::steady_clock::now();
  services_.log(RP_LOG_INFO, "stage " + name);
}

std::vector<StageRecord> RegistrationObjective::finish() {
  close_stage();
  return stages_;
}

}  // namespace regpipe
