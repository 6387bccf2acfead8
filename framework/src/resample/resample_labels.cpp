// Label-preserving resampling in one pass. Resampling each label's indicator image with
// trilinear interpolation and keeping the argmax (ANTs' GenericLabel idea with a trilinear
// kernel) costs one resampling per label: a 100-label atlas would be 100 passes. The
// indicator of label L interpolates at a point to the sum of the trilinear weights of the
// eight neighbours that hold L, so one pass that sums the weights per label among the eight
// neighbours gives the same argmax for any number of labels.
#include <regpipe/host/resample_image.hpp>
#include <regpipe/host/transform_io.hpp>

#include "resample/label_at.hpp"

#include <regpipe_common/parallel_slabs.hpp>
#include <regpipe_common/resample_sampling.hpp>
#include <regpipe_common/voxel_map.hpp>

#include <Eigen/Dense>

namespace regpipe {

using resample_detail::label_at;

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
