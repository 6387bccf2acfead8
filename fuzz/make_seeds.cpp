// Writes the seed corpora of the image and transform fuzzers with regpipe's own writers:
// `regpipe_fuzz_make_seeds fuzz/corpus`. Each seed is the selector byte its fuzzer reads
// first (the file kind, see image_fuzzer.cpp and transform_fuzzer.cpp) followed by the file.
#include <regpipe/host/image.hpp>
#include <regpipe/host/transform_file.hpp>
#include <regpipe/host/transform_io.hpp>

#include <Eigen/Geometry>
#include <fstream>
#include <iostream>
#include <iterator>

namespace fs = std::filesystem;
using namespace regpipe;

namespace {

// A small oblique, anisotropic grid holding a ramp.
Image ramp(std::array<uint32_t, 3> dims, Eigen::Vector3d voxel_mm) {
  Image image;
  image.dims = dims;
  const Eigen::Matrix3d rotation = Eigen::AngleAxisd(0.3, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  image.voxel_to_world.topLeftCorner<3, 3>() = rotation * voxel_mm.asDiagonal();
  image.voxel_to_world.topRightCorner<3, 1>() = Eigen::Vector3d(-10, 20, 5);
  for (size_t i = 0; i < image.voxel_count(); ++i) image.data.push_back(float(i % 17) * 3.0f);
  return image;
}

// The same grids transform_fuzzer.cpp reads FSL matrices against.
Image fuzzer_grid(double voxel_mm) {
  Image image;
  image.dims = {5, 6, 7};
  image.voxel_to_world.topLeftCorner<3, 3>() *= voxel_mm;
  image.data.assign(image.voxel_count(), 0.0f);
  return image;
}

// `file` as a seed: its selector byte, then its bytes.
void add_seed(const fs::path& file, uint8_t selector, const fs::path& seed) {
  std::ifstream in(file, std::ios::binary);
  std::ofstream out(seed, std::ios::binary);
  out.put(char(selector));
  out << in.rdbuf();
}

void image_seeds(const fs::path& corpus, const fs::path& work) {
  const Image small = ramp({4, 4, 4}, {1.0, 1.5, 2.0});
  write_image(small, work / "int16.nii", VoxelType::int16);
  add_seed(work / "int16.nii", 0, corpus / "int16.nii");
  add_seed(work / "int16.nii", 1, corpus / "int16.nii.gz-harness");
  write_image(small, work / "float32.nii.gz", VoxelType::float32);
  add_seed(work / "float32.nii.gz", 4, corpus / "float32.nii.gz");
  write_image(ramp({4, 3, 2}, {2.0, 2.0, 3.0}), work / "uint8.nrrd", VoxelType::uint8);
  add_seed(work / "uint8.nrrd", 2, corpus / "uint8.nrrd");
  write_image(small, work / "float64.mha", VoxelType::float64);
  add_seed(work / "float64.mha", 3, corpus / "float64.mha");
  write_image_volumes({{small, ramp({4, 4, 4}, {1.0, 1.5, 2.0})}, 2.5}, work / "series.nii",
                      VoxelType::uint16);
  add_seed(work / "series.nii", 0, corpus / "series-4d.nii");
}

void transform_seeds(const fs::path& corpus, const fs::path& work) {
  const Image moving = fuzzer_grid(2.0), reference = fuzzer_grid(1.5);
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  m.topLeftCorner<3, 3>() = Eigen::AngleAxisd(0.2, Eigen::Vector3d::UnitZ()).toRotationMatrix() * 1.1;
  m.topRightCorner<3, 1>() = Eigen::Vector3d(3, -4, 5);
  write_transform(work / "fsl.mat", TransformFormat::Fsl, m, {&moving, &reference});
  add_seed(work / "fsl.mat", 0, corpus / "fsl.mat");
  write_itk_transform(work / "ants.mat", m);
  add_seed(work / "ants.mat", 0, corpus / "ants.mat");
  write_itk_transform(work / "itk.tfm", m);
  add_seed(work / "itk.tfm", 1, corpus / "itk.tfm");
  write_itk_transform(work / "itk.txt", m);
  add_seed(work / "itk.txt", 2, corpus / "itk.txt");
  write_transform(work / "world.txt", TransformFormat::World, m);
  add_seed(work / "world.txt", 2, corpus / "world.txt");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: regpipe_fuzz_make_seeds CORPUS_DIR (writes CORPUS_DIR/image, CORPUS_DIR/transform)\n";
    return 2;
  }
  const fs::path corpus = argv[1];
  const fs::path work = fs::temp_directory_path() / "regpipe-fuzz-seeds";
  fs::create_directories(work);
  fs::create_directories(corpus / "image");
  fs::create_directories(corpus / "transform");
  image_seeds(corpus / "image", work);
  transform_seeds(corpus / "transform", work);
  fs::remove_all(work);
  return 0;
}
