// The levels a registration runs: registration.levels_mm with none finer than the minimum
// sampling (registration.min_sampling_mm, FLIRT's -minsampling). By default that floor is the
// coarser image's finest voxel size: a level finer than both images' voxels only interpolates
// (a 2 mm template resampled to 1 mm costs four times the 2 mm level and adds nothing).
#pragma once

#include <regpipe/host/image.hpp>

#include <cstddef>
#include <optional>
#include <vector>

namespace regpipe {

// One level as it runs: its voxel size and the registration.levels_mm entry it comes from
// (a level raised to the floor keeps that entry's settings, its bins with bins_per_level).
struct SampledLevel {
  double mm = 0.0;
  size_t declared = 0;
};

// The floor for `setting` (registration.min_sampling_mm: nullopt = auto, 0 = off, else mm).
// Auto: the largest of the images' smallest voxel sizes; `moving` may be null (a batch's
// reference prepared before any moving image is read), then the reference's alone.
double min_sampling_mm(const std::optional<double>& setting, const Image& reference, const Image* moving);

// `declared` (coarse to fine) with every level below `floor_mm` raised to it, repeats dropped.
std::vector<SampledLevel> sampled_levels(const std::vector<double>& declared, double floor_mm);

}  // namespace regpipe
