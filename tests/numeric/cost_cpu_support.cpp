#include "cost_cpu_support.hpp"

#include "support/test_support.hpp"

#include <Eigen/Geometry>

#include <cmath>

namespace regpipe::test {
namespace {

PluginHost& host() {
  static PluginHost h({{plugin_dir()}, false, false});
  return h;
}

}  // namespace

const Component& cost_component(const std::string& id) { return host().require(RP_KIND_COST, id); }

HostServices& cost_services() {
  static HostServices services;
  return services;
}

std::unique_ptr<CostInstance> make_cost(const std::string& id,
                                        const std::map<std::string, std::string>& params,
                                        HostServices* services) {
  const Component& c = cost_component(id);
  return std::make_unique<CostInstance>(c, services != nullptr ? *services : cost_services(),
                                        resolve_params(c, params));
}

Image make_image(std::array<uint32_t, 3> dims, const std::vector<float>& values,
                 const Eigen::Matrix4d& voxel_to_world) {
  Image image;
  image.dims = dims;
  image.voxel_to_world = voxel_to_world;
  image.data = values;
  return image;
}

Image random_image(std::array<uint32_t, 3> dims, const Eigen::Matrix4d& voxel_to_world,
                   uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(lo, hi);
  std::vector<float> values(size_t(dims[0]) * dims[1] * dims[2]);
  for (float& v : values) v = value(rng);
  return make_image(dims, values, voxel_to_world);
}

Image random_weight(const Image& like, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(0.f, 1.f);
  Image w = like;
  for (float& v : w.data) v = value(rng) < 0.2f ? 0.f : value(rng);
  return w;
}

Eigen::Matrix4d translation(double x, double y, double z) {
  Eigen::Matrix4d t = Eigen::Matrix4d::Identity();
  t.topRightCorner<3, 1>() = Eigen::Vector3d(x, y, z);
  return t;
}

Eigen::Matrix4d random_affine(std::mt19937& rng, const Eigen::Vector3d& centre) {
  std::uniform_real_distribution<double> angle(-0.35, 0.35), shift(-3.0, 3.0), scale(0.85, 1.15),
      skew(-0.08, 0.08);
  const Eigen::Matrix3d r = (Eigen::AngleAxisd(angle(rng), Eigen::Vector3d::UnitZ()) *
                             Eigen::AngleAxisd(angle(rng), Eigen::Vector3d::UnitY()) *
                             Eigen::AngleAxisd(angle(rng), Eigen::Vector3d::UnitX()))
                                .toRotationMatrix();
  Eigen::Matrix3d k = Eigen::Matrix3d::Identity();
  k(0, 1) = skew(rng);
  k(0, 2) = skew(rng);
  k(1, 2) = skew(rng);
  const Eigen::Matrix3d linear =
      r * k * Eigen::Vector3d(scale(rng), scale(rng), scale(rng)).asDiagonal();
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  m.topLeftCorner<3, 3>() = linear;
  m.topRightCorner<3, 1>() =
      centre - linear * centre + Eigen::Vector3d(shift(rng), shift(rng), shift(rng));
  return m;
}

Eigen::Vector3d grid_centre(const Image& image) {
  const Eigen::Vector4d c(0.5 * (image.dims[0] - 1.0), 0.5 * (image.dims[1] - 1.0),
                          0.5 * (image.dims[2] - 1.0), 1.0);
  return (image.voxel_to_world * c).head<3>();
}

std::vector<double> row_major(const std::vector<Eigen::Matrix4d>& matrices) {
  std::vector<double> out;
  for (const Eigen::Matrix4d& m : matrices)
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) out.push_back(m(r, c));
  return out;
}

Evaluation evaluate(CostInstance& cost, const std::vector<Eigen::Matrix4d>& matrices) {
  Evaluation e{std::vector<double>(matrices.size()), std::vector<double>(matrices.size())};
  const std::vector<double> flat = row_major(matrices);
  cost.evaluate(flat.data(), matrices.size(), e.costs.data(), e.overlaps.data());
  return e;
}

double evaluate_one(CostInstance& cost, const Eigen::Matrix4d& matrix, double* overlap) {
  const Evaluation e = evaluate(cost, {matrix});
  if (overlap != nullptr) *overlap = e.overlaps[0];
  return e.costs[0];
}

}  // namespace regpipe::test
