// Random affine transforms for the GPU costs' agreement tests with their CPU references.
#pragma once

#include <regpipe/host/image.hpp>

#include <vector>

namespace regpipe::test {

// `count` transforms about the reference's centre of mass, as row-major 4x4 matrices one after
// the other: rotations up to 15 degrees, shifts up to 15 mm and scales 0.9..1.1, each parameter
// uniform from std::mt19937(seed), so that a seed always gives the same set.
std::vector<double> random_affine_matrices(const Image& reference, unsigned seed, int count);

}  // namespace regpipe::test
