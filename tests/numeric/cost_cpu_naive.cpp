#include "cost_cpu_naive.hpp"

#include <Eigen/LU>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace regpipe::test {
namespace {

// Sampling is defined in float32 (the precision the plugins and the GPU share): positions are
// rounded to float once and interpolated by float lerps, so this reproduces that arithmetic.
float lerp(float a, float b, float t) { return a + t * (b - a); }

float voxel(const Image& image, int x, int y, int z) {
  const int cx = std::min(x, int(image.dims[0]) - 1), cy = std::min(y, int(image.dims[1]) - 1),
            cz = std::min(z, int(image.dims[2]) - 1);
  return image.at(uint32_t(cx), uint32_t(cy), uint32_t(cz));
}

float interpolate_trilinear(const Image& image, const std::array<float, 3>& p) {
  const int x = int(std::floor(p[0])), y = int(std::floor(p[1])), z = int(std::floor(p[2]));
  const float fx = p[0] - float(x), fy = p[1] - float(y), fz = p[2] - float(z);
  auto along_x = [&](int j, int k) {
    return lerp(voxel(image, x, j, k), voxel(image, x + 1, j, k), fx);
  };
  const float near_z = lerp(along_x(y, z), along_x(y + 1, z), fy);
  const float far_z = lerp(along_x(y, z + 1), along_x(y + 1, z + 1), fy);
  return lerp(near_z, far_z, fz);
}

float interpolate_nearest(const Image& image, const std::array<float, 3>& p) {
  return voxel(image, int(std::floor(p[0] + 0.5)), int(std::floor(p[1] + 0.5)),
               int(std::floor(p[2] + 0.5)));
}

// Equal-width bins over [lo, hi] (hi in the last bin), in float as documented; values outside
// the range belong to the end bins.
struct Bins {
  float lo = 0.f, hi = 0.f, inv_width = 0.f;
  int count = 0;
  int of(float v) const {
    return std::clamp(int((std::clamp(v, lo, hi) - lo) * inv_width), 0, count - 1);
  }
};

Bins bins_of(const Image& image, const Image* weight, int count) {
  float lo = 0.f, hi = 0.f;
  bool first = true;
  for (size_t i = 0; i < image.data.size(); ++i) {
    if (weight != nullptr && !(weight->data[i] > 0.f)) continue;
    lo = first ? image.data[i] : std::min(lo, image.data[i]);
    hi = first ? image.data[i] : std::max(hi, image.data[i]);
    first = false;
  }
  return {lo, hi, float(double(count) / (double(hi) - double(lo))), count};
}

struct NaiveSample {
  double ref_value;
  double mov_value;
  double weight;
  std::array<float, 3> position;  // moving voxel coordinates
  size_t ref_index;
};

double border_weight(const Image& mov, const std::array<float, 3>& p, double border_mm) {
  if (border_mm <= 0.0) return 1.0;
  const Eigen::Vector3d spacing = mov.voxel_to_world.topLeftCorner<3, 3>().colwise().norm();
  double w = 1.0;
  for (int a = 0; a < 3; ++a) {
    const double last = double(mov.dims[a]) - 1.0;
    if (last == 0.0) continue;
    const double distance_mm = std::min(double(p[a]), last - double(p[a])) * spacing[a];
    w *= std::min(1.0, distance_mm / border_mm);
  }
  return w;
}

std::vector<NaiveSample> collect_samples(const Image& ref, const Image& mov,
                                         const Eigen::Matrix4d& ref_to_mov, const NaiveOptions& o,
                                         double* overlap) {
  const Eigen::Matrix4d ref_voxel_to_mov_voxel =
      mov.voxel_to_world.inverse() * ref_to_mov * ref.voxel_to_world;
  std::vector<NaiveSample> samples;
  double total = 0.0, inside = 0.0;
  for (uint32_t z = 0; z < ref.dims[2]; ++z)
    for (uint32_t y = 0; y < ref.dims[1]; ++y)
      for (uint32_t x = 0; x < ref.dims[0]; ++x) {
        const double w_ref = o.ref_weight != nullptr ? o.ref_weight->at(x, y, z) : 1.0;
        if (!(w_ref > 0.0)) continue;
        total += w_ref;
        const Eigen::Vector4d q = ref_voxel_to_mov_voxel * Eigen::Vector4d(x, y, z, 1.0);
        const std::array<float, 3> p = {float(q[0]), float(q[1]), float(q[2])};
        bool in = true;
        for (int a = 0; a < 3; ++a) in = in && p[a] >= 0.f && p[a] <= float(mov.dims[a] - 1);
        if (!in) continue;
        const double w_mov =
            o.mov_weight != nullptr ? interpolate_trilinear(*o.mov_weight, p) : 1.0;
        inside += w_ref * w_mov;
        const double weight = w_ref * w_mov * border_weight(mov, p, o.border_mm);
        if (!(weight > 0.0)) continue;
        const double value =
            o.nearest ? interpolate_nearest(mov, p) : interpolate_trilinear(mov, p);
        samples.push_back(
            {ref.at(x, y, z), value, weight, p, x + ref.dims[0] * (y + size_t(ref.dims[1]) * z)});
      }
  *overlap = total > 0.0 ? inside / total : 0.0;
  return samples;
}

double weight_sum(const std::vector<NaiveSample>& s) {
  double w = 0.0;
  for (const auto& e : s) w += e.weight;
  return w;
}

double correlation_ratio_cost(const std::vector<NaiveSample>& samples, const Bins& ref_bins) {
  // Two passes per iso-set: means, then weighted variances (Li & Kumar 2014 eq. 2).
  std::vector<std::vector<NaiveSample>> iso_sets(size_t(ref_bins.count));
  for (const auto& s : samples) iso_sets[size_t(ref_bins.of(float(s.ref_value)))].push_back(s);
  auto n_var = [](const std::vector<NaiveSample>& set) {
    const double n = weight_sum(set);
    if (n == 0.0) return 0.0;
    double mean = 0.0;
    for (const auto& s : set) mean += s.weight * s.mov_value;
    mean /= n;
    double sum = 0.0;
    for (const auto& s : set) sum += s.weight * (s.mov_value - mean) * (s.mov_value - mean);
    return sum;  // N_i var_i
  };
  const double total = n_var(samples);
  if (total == 0.0) return 1.0;
  double within = 0.0;
  for (const auto& set : iso_sets) within += n_var(set);
  return within / total;
}

double entropy(const std::vector<double>& histogram) {
  double total = 0.0;
  for (double h : histogram) total += h;
  double e = 0.0;
  for (double h : histogram)
    if (h > 0.0) e -= h / total * std::log(h / total);
  return e;
}

double histogram_cost(const std::vector<NaiveSample>& samples, const Image& mov,
                      const Bins& ref_bins, const NaiveOptions& o) {
  const Bins mov_bins = bins_of(mov, o.mov_weight, o.bins);
  const size_t n = size_t(o.bins);
  std::vector<double> joint(n * n, 0.0), ref_marginal(n, 0.0), mov_marginal(n, 0.0);
  auto add = [&](int r, int m, double w) {
    joint[size_t(r) * n + size_t(m)] += w;
    ref_marginal[size_t(r)] += w;
    mov_marginal[size_t(m)] += w;
  };
  for (const auto& s : samples) {
    const int r = ref_bins.of(float(s.ref_value));
    if (!o.partial_volume) {
      add(r, mov_bins.of(float(s.mov_value)), s.weight);
      continue;
    }
    // Maes et al. 1997: the 8 neighbours' bins, each with its trilinear weight.
    const auto& p = s.position;
    const int x = int(std::floor(p[0])), y = int(std::floor(p[1])), z = int(std::floor(p[2]));
    const double f[3] = {p[0] - double(x), p[1] - double(y), p[2] - double(z)};
    for (int dz = 0; dz < 2; ++dz)
      for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
          const double w =
              (dx ? f[0] : 1.0 - f[0]) * (dy ? f[1] : 1.0 - f[1]) * (dz ? f[2] : 1.0 - f[2]);
          add(r, mov_bins.of(voxel(mov, x + dx, y + dy, z + dz)), s.weight * w);
        }
  }
  if (samples.empty()) return o.id == "cpu.nmi" ? -1.0 : 0.0;
  const double h_ref = entropy(ref_marginal), h_mov = entropy(mov_marginal),
               h_joint = entropy(joint);
  if (o.id == "cpu.mi") return -(h_ref + h_mov - h_joint);
  return h_joint > 0.0 ? -(h_ref + h_mov) / h_joint : -1.0;
}

double ncc_cost(const std::vector<NaiveSample>& samples) {
  const double n = weight_sum(samples);
  if (n == 0.0) return 2.0;
  double mx = 0.0, my = 0.0;
  for (const auto& s : samples) {
    mx += s.weight * s.ref_value;
    my += s.weight * s.mov_value;
  }
  mx /= n;
  my /= n;
  double sxx = 0.0, syy = 0.0, sxy = 0.0;
  for (const auto& s : samples) {
    sxx += s.weight * (s.ref_value - mx) * (s.ref_value - mx);
    syy += s.weight * (s.mov_value - my) * (s.mov_value - my);
    sxy += s.weight * (s.ref_value - mx) * (s.mov_value - my);
  }
  if (sxx == 0.0 || syy == 0.0) return 2.0;
  return 1.0 - sxy / std::sqrt(sxx * syy);
}

double least_squares_cost(const std::vector<NaiveSample>& samples) {
  const double n = weight_sum(samples);
  if (n == 0.0) return 1e30;
  double sum = 0.0;
  for (const auto& s : samples)
    sum += s.weight * (s.ref_value - s.mov_value) * (s.ref_value - s.mov_value);
  return sum / n;
}

}  // namespace

NaiveResult naive_cost(const Image& ref, const Image& mov, const Eigen::Matrix4d& ref_to_mov,
                       const NaiveOptions& o) {
  NaiveResult result;
  const std::vector<NaiveSample> samples =
      collect_samples(ref, mov, ref_to_mov, o, &result.overlap);
  const Bins ref_bins = bins_of(ref, o.ref_weight, o.bins);
  if (o.id == "cpu.cr")
    result.cost = correlation_ratio_cost(samples, ref_bins);
  else if (o.id == "cpu.mi" || o.id == "cpu.nmi")
    result.cost = histogram_cost(samples, mov, ref_bins, o);
  else if (o.id == "cpu.ncc")
    result.cost = ncc_cost(samples);
  else if (o.id == "cpu.ls")
    result.cost = least_squares_cost(samples);
  else
    throw std::invalid_argument("naive_cost: unknown id " + o.id);
  return result;
}

double naive_reference_entropy(const Image& ref, int bins) {
  const Bins b = bins_of(ref, nullptr, bins);
  std::vector<double> histogram(size_t(bins), 0.0);
  for (float v : ref.data) histogram[size_t(b.of(v))] += 1.0;
  return entropy(histogram);
}

}  // namespace regpipe::test
