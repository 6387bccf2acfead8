#include <regpipe/host/error.hpp>
#include <regpipe/host/phantom.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace regpipe {
namespace {

// T1-like intensity of each tissue: fat-bright scalp, WM > GM > CSF, dark bone.
enum Tissue : int {
  kScalp = 900,
  kSkull = 60,
  kCsf = 120,
  kLesion = 250,
  kGreyMatter = 450,
  kDeepNucleus = 560,
  kWhiteMatter = 700,
};

// The T2-like contrast maps T1-like values through this piecewise-linear curve, whose knots
// are the tissues sorted by T1 value (background first): fluid-bright CSF and lesion, GM > WM,
// dark bone. It rises and falls twice, so only statistical costs (CR, MI) align the two.
// Mapping the T1 image rather than painting the tissues again makes the second contrast an
// exact function of the first, partial-volume edges included (at the price of a bright rim
// at the skin): physically mixed edges break that function and bias the CR and MI optimum
// away from the true alignment, measured as up to 1 degree and 0.5 mm on a 3 mm grid.
// Resampling to another grid blurs the function again: the 12-DOF demo registration
// (cpu.cr, optim.powell) ends within 0.05 mm when its last level is the phantom's voxel
// size and 0.5 to 0.9 mm off when it is finer or coarser (painted edges: worse in every case),
// 0.23-0.27 mm off with registration.decouple_grids (the moving levels on a 1/16 coarser grid).
struct Knot {
  float t1, t2;
};
constexpr Knot kT2OfT1[] = {{0, 0},
                            {kSkull, 40},
                            {kCsf, 1000},
                            {kLesion, 880},
                            {kGreyMatter, 650},
                            {kDeepNucleus, 540},
                            {kWhiteMatter, 380},
                            {kScalp, 500}};

float t2_of_t1(float t1) {
  const Knot* upper = std::find_if(std::begin(kT2OfT1), std::end(kT2OfT1),
                                   [&](const Knot& k) { return k.t1 >= t1; });
  if (upper == std::begin(kT2OfT1)) return kT2OfT1[0].t2;
  if (upper == std::end(kT2OfT1)) return kT2OfT1[std::size(kT2OfT1) - 1].t2;
  const Knot& lower = *(upper - 1);
  return lower.t2 + (t1 - lower.t1) / (upper->t1 - lower.t1) * (upper->t2 - lower.t2);
}

struct Ellipsoid {
  Eigen::Vector3d centre;  // world mm, LPS
  Eigen::Vector3d radii;   // semi-axes, mm
  Tissue tissue;

  // Approximate signed distance in mm (negative inside): exact on the axes of a sphere, and
  // smooth everywhere, which is all a soft edge needs.
  double signed_distance(const Eigen::Vector3d& p) const {
    return ((p - centre).cwiseQuotient(radii).norm() - 1.0) * radii.minCoeff();
  }
  Ellipsoid shrunk(double mm, Tissue inner) const {
    return {centre, radii - Eigen::Vector3d::Constant(mm), inner};
  }
};

// The layout below is drawn at an adult's size (mm) and scaled so that the head, about
// 145 x 175 x 170 mm before scaling, fits a 160 mm field of view (40 voxels of 4 mm).
constexpr double kHeadScale = 0.8;

// The head, painted in order (later structures cover earlier ones); sizes before scaling.
// LPS: +x left, +y posterior, +z superior. The nose and eyes (anterior), the neck
// (inferior-posterior) and the left ear break the front-back, up-down and left-right
// symmetries of the skull; inside, the brain sits 2 mm to the left (petalia), the ventricles
// differ, and a deep nucleus on the right and a lesion on the left add structures that no
// rotation or mirror can match.
std::vector<Ellipsoid> head_structures() {
  const Ellipsoid head{{0, 4, 6}, {68, 82, 76}, kScalp};
  const Ellipsoid brain{{2, 5, 7}, {53, 68, 62}, kGreyMatter};
  std::vector<Ellipsoid> structures{
      head,
      {{0, -80, -15}, {10, 8, 18}, kScalp},  // nose
      {{0, 15, -60}, {40, 44, 26}, kScalp},  // neck
      {{68, 8, 0}, {8, 16, 22}, kScalp},     // left ear
      {{30, -70, -20}, {11, 11, 11}, kCsf},  // eyes: fluid
      {{-30, -70, -20}, {11, 11, 11}, kCsf},
      head.shrunk(5, kSkull),
      head.shrunk(11, kCsf),
      brain,  // cortex: 7 mm
      brain.shrunk(7, kWhiteMatter),
      {{10, 0, 15}, {8, 26, 11}, kCsf},  // left lateral ventricle
      {{-10, 6, 10}, {6, 16, 7}, kCsf},  // right one, smaller and lower
      {{-24, -10, 0}, {14, 16, 12}, kDeepNucleus},
      {{30, 32, 28}, {13, 13, 13}, kLesion},
  };
  for (auto& s : structures) {
    s.centre *= kHeadScale;
    s.radii *= kHeadScale;
  }
  return structures;
}

// Mapping of synthetic_contrast on u = intensity / robust max in [0, 1]: two Gaussian bumps
// (mid intensities brightest, high ones second) on a gentle ramp, shifted so that g(0) = 0.
double contrast_curve(double u) {
  auto bump = [](double x, double mean, double sigma) {
    return std::exp(-0.5 * (x - mean) * (x - mean) / (sigma * sigma));
  };
  auto f = [&](double x) { return bump(x, 0.45, 0.12) + 0.6 * bump(x, 0.9, 0.08) + 0.25 * x; };
  return f(u) - f(0.0);
}

double contrast_curve_max() {
  double best = 0.0;
  for (int i = 0; i <= 1000; ++i) best = std::max(best, contrast_curve(i / 1000.0));
  return best;
}

// 99.5th percentile of the positive values (the background of a head image is mostly 0 and
// would drag a plain percentile down); 1 when there are none.
double robust_max(const std::vector<float>& values) {
  std::vector<float> positive;
  std::copy_if(values.begin(), values.end(), std::back_inserter(positive),
               [](float v) { return v > 0.0f; });
  if (positive.empty()) return 1.0;
  const auto k = positive.begin() + std::ptrdiff_t(0.995 * double(positive.size() - 1));
  std::nth_element(positive.begin(), k, positive.end());
  return *k;
}

}  // namespace

Image make_head_phantom(const std::array<uint32_t, 3>& dims, double voxel_mm, int contrast) {
  if (contrast != 0 && contrast != 1)
    throw UserError("phantom contrast=" + std::to_string(contrast) +
                    " is not 0 (T1-like) or 1 (T2-like)");
  if (!(voxel_mm > 0.0))
    throw UserError("phantom voxel size " + std::to_string(voxel_mm) + " mm is not positive");
  if (dims[0] == 0 || dims[1] == 0 || dims[2] == 0)
    throw UserError("phantom grid " + std::to_string(dims[0]) + "x" + std::to_string(dims[1]) +
                    "x" + std::to_string(dims[2]) + " has an empty axis");

  Image image;
  image.dims = dims;
  image.voxel_to_world = Eigen::Matrix4d::Identity();
  for (int a = 0; a < 3; ++a) {
    image.voxel_to_world(a, a) = voxel_mm;
    image.voxel_to_world(a, 3) = -0.5 * (double(dims[a]) - 1.0) * voxel_mm;
  }
  image.data.resize(image.voxel_count());

  // tanh edges rising from 5% to 95% over about 1.2 voxels: smooth under interpolation.
  const double edge_mm = 0.4 * voxel_mm;
  const std::vector<Ellipsoid> structures = head_structures();
  size_t i = 0;
  for (uint32_t z = 0; z < dims[2]; ++z)
    for (uint32_t y = 0; y < dims[1]; ++y)
      for (uint32_t x = 0; x < dims[0]; ++x, ++i) {
        const Eigen::Vector3d p = (image.voxel_to_world * Eigen::Vector4d(x, y, z, 1)).head<3>();
        double value = 0.0;
        for (const auto& s : structures) {
          const double inside = 0.5 * (1.0 - std::tanh(s.signed_distance(p) / edge_mm));
          value += inside * (double(s.tissue) - value);
        }
        image.data[i] = contrast == 0 ? float(value) : t2_of_t1(float(value));
      }
  return image;
}

Image synthetic_contrast(const Image& image, uint32_t seed) {
  constexpr double kRange = 1000.0;
  constexpr double kNoiseSigma = 0.02 * kRange;
  const double scale = 1.0 / robust_max(image.data);
  const double curve_to_range = kRange / contrast_curve_max();

  Image out;
  out.dims = image.dims;
  out.voxel_to_world = image.voxel_to_world;
  out.data.resize(image.data.size());
  std::mt19937 generator(seed);
  std::normal_distribution<double> noise(0.0, kNoiseSigma);
  for (size_t i = 0; i < image.data.size(); ++i) {
    const double u = std::clamp(double(image.data[i]) * scale, 0.0, 1.0);
    out.data[i] = static_cast<float>(contrast_curve(u) * curve_to_range + noise(generator));
  }
  return out;
}

Image with_world_transform(const Image& image, const Eigen::Matrix4d& g) {
  Image out = image;
  out.voxel_to_world = g * image.voxel_to_world;
  return out;
}

}  // namespace regpipe
