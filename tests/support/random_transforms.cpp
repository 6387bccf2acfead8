#include "support/random_transforms.hpp"

#include <regpipe/host/transform.hpp>

#include <cmath>
#include <random>

namespace regpipe::test {

std::vector<double> random_affine_matrices(const Image& reference, unsigned seed, int count) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Eigen::Vector3d centre = centre_of_mass(reference);
  std::vector<double> out;
  for (int i = 0; i < count; ++i) {
    AffineParams p = identity_params();
    for (int a = 0; a < 3; ++a) {
      p[a] = u(rng) * 15.0 * M_PI / 180.0;
      p[3 + a] = u(rng) * 15.0;
      p[6 + a] = 1.0 + 0.1 * u(rng);
    }
    const Eigen::Matrix4d m = params_to_matrix(p, centre);
    for (int j = 0; j < 16; ++j) out.push_back(m(j / 4, j % 4));
  }
  return out;
}

}  // namespace regpipe::test
