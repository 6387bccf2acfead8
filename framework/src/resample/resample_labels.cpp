// Label-preserving resampling in one pass. Resampling each label's indicator image with
// trilinear interpolation and keeping the argmax (ANTs' GenericLabel idea with a trilinear
// kernel) costs one resampling per label: a 100-label atlas would be 100 passes. The
// indicator of label L interpolates at a point to the sum of the trilinear weights of the
// eight neighbours that hold L, so one pass that sums the weights per label among the eight
// neighbours gives the same argmax for any number of labels.
#include <regpipe/host/resample_image.hpp>
#include <regpipe/host/transform_io.hpp>

#include <regpipe_common/parallel_slabs.hpp>
#include <regpipe_common/resample_sampling.hpp>
#include <regpipe_common/voxel_map.hpp>

#include <Eigen/Dense>

namespace regpipe {
namespace {

// The label at input position (x, y, z), known to be inside the domain.
// The position is in float, as trilinear() takes it.
float label_at(const Image& labels, const regpipe_common::Grid& g, float x, float y, float z) {
  const int x0 = int(x), y0 = int(y), z0 = int(z);
  const double f[3] = {double(x) - x0, double(y) - y0, double(z) - z0};
  // The upper neighbour is clamped on the last plane (and flat axes), as trilinear() does;
  // its weight is then 0.
  const int x1 = x0 + 1 < g.nx ? x0 + 1 : x0, y1 = y0 + 1 < g.ny ? y0 + 1 : y0,
            z1 = z0 + 1 < g.nz ? z0 + 1 : z0;
  float label[8];
  double weight[8];
  int n = 0;
  for (int c = 0; c < 8; ++c) {
    const int i = c & 1 ? x1 : x0, j = c & 2 ? y1 : y0, k = c & 4 ? z1 : z0;
    const double w = (c & 1 ? f[0] : 1.0 - f[0]) * (c & 2 ? f[1] : 1.0 - f[1]) *
                     (c & 4 ? f[2] : 1.0 - f[2]);
    const float value = labels.at(uint32_t(i), uint32_t(j), uint32_t(k));
    int slot = 0;
    while (slot < n && label[slot] != value) ++slot;
    if (slot == n) {
      label[n] = value;
      weight[n++] = 0.0;
    }
    weight[slot] += w;
  }
  // Nearest-neighbour sampling's label wins ties, so a point midway keeps nearest's choice.
  float best = regpipe_common::nearest(labels.data.data(), g, x, y, z);
  double best_weight = 0.0;
  for (int s = 0; s < n; ++s)
    if (label[s] == best) best_weight = weight[s];
  for (int s = 0; s < n; ++s)
    if (weight[s] > best_weight) {
      best = label[s];
      best_weight = weight[s];
    }
  return best;
}

}  // namespace

Image resample_labels(const Image& labels, const Image& grid, const Eigen::Matrix4d& ref_to_mov) {
  Image out = zero_image_on(grid, labels.file_type);
  // Output voxel -> input voxel, as resample.cpu maps them.
  const Eigen::Matrix4d m = checked_inverse(labels.voxel_to_world, "the label image's voxel-to-world matrix") *
                            ref_to_mov * grid.voxel_to_world;
  const regpipe_common::Grid g{int(labels.dims[0]), int(labels.dims[1]), int(labels.dims[2])};
  const size_t nx = out.dims[0], ny = out.dims[1], nz = out.dims[2];
  regpipe_common::parallel_slabs(nz, [&](size_t k) {
    for (size_t j = 0; j < ny; ++j)
      for (size_t i = 0; i < nx; ++i) {
        const Eigen::Vector4d p = m * Eigen::Vector4d(double(i), double(j), double(k), 1.0);
        const double x = regpipe_common::snap_to_domain(p.x(), g.nx);
        const double y = regpipe_common::snap_to_domain(p.y(), g.ny);
        const double z = regpipe_common::snap_to_domain(p.z(), g.nz);
        if (regpipe_common::inside(g, float(x), float(y), float(z)))
          out.data[i + nx * (j + ny * k)] = label_at(labels, g, float(x), float(y), float(z));
      }
  });
  return out;
}

}  // namespace regpipe
