// An independent, deliberately plain implementation of the five cpu.* costs: one thread,
// Eigen for the geometry, explicit sample lists and two-pass statistics. The tests hold the
// plugin to it.
#pragma once

#include <regpipe/host/image.hpp>

#include <Eigen/Core>

#include <string>

namespace regpipe::test {

struct NaiveOptions {
  std::string id;  // "cpu.cr", "cpu.mi", "cpu.nmi", "cpu.ncc", "cpu.ls"
  int bins = 32;
  bool nearest = false;
  double border_mm = 0.0;
  bool partial_volume = false;
  const Image* ref_weight = nullptr;
  const Image* mov_weight = nullptr;
};

struct NaiveResult {
  double cost = 0.0;
  double overlap = 0.0;
};

// The cost of `mov` seen through `ref_to_mov` (reference world -> moving world) on `ref`.
NaiveResult naive_cost(const Image& ref, const Image& mov, const Eigen::Matrix4d& ref_to_mov,
                       const NaiveOptions& options);

// Shannon entropy (nats) of the reference's own histogram over its weighted voxels.
double naive_reference_entropy(const Image& ref, int bins);

}  // namespace regpipe::test
