// org.example.cost.sad: mean absolute intensity difference, as a third party would write a
// cost plugin — only <regpipe/abi.h> and <regpipe/plugin.hpp>, no regpipe sources. It offers
// the affine `evaluate` and the dense gradient of RP_EXT_DENSE_COST (abi.h 1.5), so it also
// drives a deformable (syn) stage with optim.syn.
#include <regpipe/plugin.hpp>

#include <cmath>
#include <iterator>
#include <vector>

namespace {

struct Volume {
  uint32_t nx = 0, ny = 0, nz = 0;
  double voxel_to_world[16] = {};
  std::vector<float> data;

  void assign(const rp_image& image) {
    nx = image.dims[0];
    ny = image.dims[1];
    nz = image.dims[2];
    for (int i = 0; i < 16; ++i) voxel_to_world[i] = image.voxel_to_world[i];
    data.assign(image.data, image.data + size_t(nx) * ny * nz);
  }
  // Trilinear value at a voxel-space point, or false outside [0, n-1]^3.
  bool sample(double x, double y, double z, double* out) const {
    if (x < 0 || y < 0 || z < 0 || x > nx - 1.0 || y > ny - 1.0 || z > nz - 1.0) return false;
    const uint32_t x0 = uint32_t(x), y0 = uint32_t(y), z0 = uint32_t(z);
    const uint32_t x1 = std::min(x0 + 1, nx - 1), y1 = std::min(y0 + 1, ny - 1), z1 = std::min(z0 + 1, nz - 1);
    const double fx = x - x0, fy = y - y0, fz = z - z0;
    auto v = [&](uint32_t i, uint32_t j, uint32_t k) { return double(data[i + size_t(nx) * (j + size_t(ny) * k)]); };
    const double c00 = v(x0, y0, z0) * (1 - fx) + v(x1, y0, z0) * fx;
    const double c10 = v(x0, y1, z0) * (1 - fx) + v(x1, y1, z0) * fx;
    const double c01 = v(x0, y0, z1) * (1 - fx) + v(x1, y0, z1) * fx;
    const double c11 = v(x0, y1, z1) * (1 - fx) + v(x1, y1, z1) * fx;
    *out = (c00 * (1 - fy) + c10 * fy) * (1 - fz) + (c01 * (1 - fy) + c11 * fy) * fz;
    return true;
  }
};

// out = a * b for row-major 4x4 affines.
void multiply(const double* a, const double* b, double* out) {
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) {
      out[r * 4 + c] = 0;
      for (int k = 0; k < 4; ++k) out[r * 4 + c] += a[r * 4 + k] * b[k * 4 + c];
    }
}

// Inverse of a row-major affine via its 3x3 block (adjugate / determinant).
bool invert(const double* m, double* out) {
  const double a = m[0], b = m[1], c = m[2], d = m[4], e = m[5], f = m[6], g = m[8], h = m[9], i = m[10];
  const double det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
  if (std::fabs(det) < 1e-12) return false;
  const double inv[9] = {(e * i - f * h) / det, (c * h - b * i) / det, (b * f - c * e) / det,
                         (f * g - d * i) / det, (a * i - c * g) / det, (c * d - a * f) / det,
                         (d * h - e * g) / det, (b * g - a * h) / det, (a * e - b * d) / det};
  for (int r = 0; r < 3; ++r) {
    for (int col = 0; col < 3; ++col) out[r * 4 + col] = inv[r * 3 + col];
    out[r * 4 + 3] = -(inv[r * 3] * m[3] + inv[r * 3 + 1] * m[7] + inv[r * 3 + 2] * m[11]);
  }
  out[12] = out[13] = out[14] = 0;
  out[15] = 1;
  return true;
}

// The parameters, published in the descriptor below and re-checked by create.
const rp_param_desc kParams[] = {
    {sizeof(rp_param_desc), "stride", RP_PARAM_INT, "1", 1, 8, nullptr, "voxels",
     "Evaluate every stride-th reference voxel along each axis"}};

class SadCost {
 public:
  SadCost(const rp_host*, const rp::Params& params)
      : stride_(int(params.get_number(kParams, std::size(kParams), "stride"))) {}
  void set_reference(const rp_image& ref, const rp_image*) { reference_.assign(ref); }
  void set_moving(const rp_image& mov, const rp_image*) { moving_.assign(mov); }

  void evaluate(const rp_cost_request& req) {
    if (reference_.data.empty() || moving_.data.empty())
      throw rp::Error(RP_INVALID_ARGUMENT, "set the reference and moving images first");
    double mov_world_to_voxel[16];
    if (!invert(moving_.voxel_to_world, mov_world_to_voxel))
      throw rp::Error(RP_INVALID_ARGUMENT, "moving voxel_to_world is singular");
    for (size_t t = 0; t < req.k; ++t) {
      double ref_to_world_mov[16], map[16];
      multiply(req.matrices + 16 * t, reference_.voxel_to_world, ref_to_world_mov);
      multiply(mov_world_to_voxel, ref_to_world_mov, map);  // reference voxel -> moving voxel
      double sum = 0, count = 0, value = 0;
      for (uint32_t z = 0; z < reference_.nz; z += stride_)
        for (uint32_t y = 0; y < reference_.ny; y += stride_)
          for (uint32_t x = 0; x < reference_.nx; x += stride_) {
            const double mx = map[0] * x + map[1] * y + map[2] * z + map[3];
            const double my = map[4] * x + map[5] * y + map[6] * z + map[7];
            const double mz = map[8] * x + map[9] * y + map[10] * z + map[11];
            if (!moving_.sample(mx, my, mz, &value)) continue;
            sum += std::fabs(value - reference_.data[x + size_t(reference_.nx) * (y + size_t(reference_.ny) * z)]);
            count += 1;
          }
      const double total = std::ceil(reference_.nx / double(stride_)) * std::ceil(reference_.ny / double(stride_)) *
                           std::ceil(reference_.nz / double(stride_));
      req.costs_out[t] = count > 0 ? sum / count : 1e30;  // abi.h: worst finite value, no NaN
      if (req.overlap_out != nullptr) req.overlap_out[t] = count / total;
    }
  }

  // RP_EXT_DENSE_COST: both images already on one grid. The cost is the mean |m - f| over the
  // voxels the mask keeps; its derivative with respect to the displacement u of a voxel's moving
  // sampling point is sign(m - f) * grad m / N, grad m in LPS mm (central differences on the
  // grid, one-sided at its faces, through the inverse of the grid's voxel -> world matrix).
  void evaluate_dense(const rp_dense_cost_request& r) {
    if (r.memory != RP_MEMORY_HOST) throw rp::Error(RP_UNSUPPORTED, "org.example.cost.sad takes host memory only");
    double world_to_voxel[16];
    if (!invert(r.voxel_to_world, world_to_voxel)) throw rp::Error(RP_INVALID_ARGUMENT, "the grid's matrix is singular");
    const size_t nx = r.dims[0], ny = r.dims[1], nz = r.dims[2], n = nx * ny * nz;
    auto counts = [&](size_t i) { return r.fixed_mask == nullptr || r.fixed_mask[i] > 0.0f; };
    double sum = 0, count = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!counts(i)) continue;
      if (!std::isfinite(r.fixed[i]) || !std::isfinite(r.moving[i]))
        throw rp::Error(RP_INVALID_ARGUMENT, "a voxel is not finite");
      sum += std::fabs(double(r.moving[i]) - r.fixed[i]);
      count += 1;
    }
    *r.cost_out = count > 0 ? sum / count : 0.0;
    if (r.gradient_out == nullptr) return;
    const size_t stride[3] = {1, nx, nx * ny};
    for (size_t z = 0; z < nz; ++z)
      for (size_t y = 0; y < ny; ++y)
        for (size_t x = 0; x < nx; ++x) {
          const size_t i = x + nx * (y + ny * z), index[3] = {x, y, z}, size[3] = {nx, ny, nz};
          float* g = r.gradient_out + 3 * i;
          g[0] = g[1] = g[2] = 0.0f;
          const double difference = double(r.moving[i]) - r.fixed[i];
          if (!counts(i) || difference == 0.0) continue;
          double along_axis[3];  // d m / d voxel index
          for (int a = 0; a < 3; ++a) {
            const size_t lo = index[a] > 0 ? i - stride[a] : i, hi = index[a] + 1 < size[a] ? i + stride[a] : i;
            const double steps = double((hi != i) + (lo != i));
            along_axis[a] = steps > 0 ? (double(r.moving[hi]) - r.moving[lo]) / steps : 0.0;
          }
          const double scale = (difference > 0 ? 1.0 : -1.0) / count;
          for (int c = 0; c < 3; ++c)  // d m / d world_c = sum_a d m / d index_a * d index_a / d world_c
            g[c] = float(scale * (along_axis[0] * world_to_voxel[c] + along_axis[1] * world_to_voxel[4 + c] +
                                  along_axis[2] * world_to_voxel[8 + c]));
        }
  }

 private:
  int stride_;
  Volume reference_, moving_;
};

constexpr rp_cost_vtable kVtable = rp::cost_vtable_with_dense<SadCost>();

const rp_component_desc kComponents[] = {
    {sizeof(rp_component_desc), RP_KIND_COST, "org.example.cost.sad", "Mean absolute difference",
     "1.1.0", "Mean absolute intensity difference over the overlap (single-modality only); with the dense "
     "gradient (RP_EXT_DENSE_COST) for deformable stages.",
     kParams, std::size(kParams), &kVtable}};

const rp_plugin_entry kEntry = {sizeof(rp_plugin_entry), RP_ABI_MAJOR, RP_ABI_MINOR,
                                "example_sad_cost", "1.0.0", "MIT", 1, kComponents};

}  // namespace

RP_DEFINE_PLUGIN_ENTRY(kEntry)
