#include "qa/anatomical_axes.hpp"

#include <algorithm>
#include <cmath>

namespace regpipe {

AnatomicalAxes anatomical_axes(const Image& image) {
  const Eigen::Matrix3d linear = image.voxel_to_world.topLeftCorner<3, 3>();
  const Eigen::Vector3d spacing = image.spacing();
  Eigen::Matrix3d cosines;  // cosines(w, a): of voxel axis a with world axis w
  for (int a = 0; a < 3; ++a)
    cosines.col(a) = spacing[a] > 0 ? Eigen::Vector3d(linear.col(a) / spacing[a]) : Eigen::Vector3d::Unit(a);
  std::array<int, 3> pairing{0, 1, 2}, best = pairing;  // pairing[w]: the voxel axis of world axis w
  double best_sum = -1.0;
  do {
    double sum = 0.0;
    for (int w = 0; w < 3; ++w) sum += std::abs(cosines(w, pairing[w]));
    if (sum > best_sum) best_sum = sum, best = pairing;
  } while (std::next_permutation(pairing.begin(), pairing.end()));

  AnatomicalAxes axes;
  axes.voxel_axis = best;
  axes.dims = image.dims;
  for (int w = 0; w < 3; ++w) {
    axes.reversed[w] = cosines(w, best[w]) < 0.0;
    axes.size[w] = image.dims[best[w]];
    axes.spacing_mm[w] = spacing[best[w]];
  }
  return axes;
}

}  // namespace regpipe
