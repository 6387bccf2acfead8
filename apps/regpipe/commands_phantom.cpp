// regpipe phantom DIR: the built-in example. Writes a T1-like reference, a T2-like moving
// image whose header is moved by a known rigid transform, that transform, and a pipeline
// that recovers it (run it with `regpipe run DIR/pipeline.yaml`).
#include "commands.hpp"

#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/phantom.hpp>
#include <regpipe/host/transform.hpp>
#include <regpipe/host/transform_io.hpp>

#include <cmath>
#include <cstdio>
#include <sstream>

namespace fs = std::filesystem;

namespace regpipe::cli {
namespace {

// The pipeline; {levels} is filled in: FLIRT's 8 and 4 mm levels, ending at the phantom's own
// voxel size (a level finer than the data only re-blurs it).
constexpr const char* kPipeline = R"(# Built-in example: recover a known misalignment between two contrasts of a phantom.
# The cost takes the CUDA plugin when a GPU is present and the CPU reference otherwise.
inputs:
  reference: reference.nii.gz
  moving: moving.nii.gz
registration:
  dof: 12
  levels_mm: {levels}
  cost:
    plugin: [cuda.cr, cpu.cr]
    params: {bins: 64}
  optimizer:
    plugin: optim.powell
outputs:
  dir: result
evaluation:
  truth: truth_world.txt
)";

}  // namespace

Command add_phantom(CLI::App& app) {
  struct Options {
    std::string dir;
    unsigned size = 64;
    double voxel_mm = 3.0;
    double angle_deg = 10.0;
    double shift_mm = 8.0;
  };
  auto o = std::make_shared<Options>();
  app.add_option("dir", o->dir, "Folder to write (created if missing)")->required();
  app.add_option("--size", o->size, "Voxels per axis")->check(CLI::Range(16u, 512u));
  app.add_option("--voxel-mm", o->voxel_mm, "Voxel size in mm")->check(CLI::Range(0.5, 10.0));
  app.add_option("--angle-deg", o->angle_deg, "Rotation of the moving image about an oblique axis")
      ->check(CLI::Range(-180.0, 180.0));
  app.add_option("--shift-mm", o->shift_mm, "Translation of the moving image along each axis")
      ->check(CLI::Range(-100.0, 100.0));
  return [o] {
    const fs::path dir(o->dir);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw UserError(dir.string() + ": cannot create folder: " + ec.message());
    const std::array<uint32_t, 3> dims{o->size, o->size, o->size};
    const Image reference = make_head_phantom(dims, o->voxel_mm, 0);
    const Eigen::Matrix4d truth =
        rigid_about(Eigen::Vector3d(1, 2, 3).normalized(), o->angle_deg * M_PI / 180.0,
                    Eigen::Vector3d::Zero(), Eigen::Vector3d::Constant(o->shift_mm));
    const Image moving = with_world_transform(make_head_phantom(dims, o->voxel_mm, 1), truth);
    write_image(reference, dir / "reference.nii.gz");
    write_image(moving, dir / "moving.nii.gz");
    write_world_matrix(dir / "truth_world.txt", to_world_ras_forward(truth));
    std::ostringstream levels;
    levels << "[";
    for (double mm : {8.0, 4.0})
      if (mm > o->voxel_mm) levels << mm << ", ";
    levels << o->voxel_mm << "]";
    std::string pipeline = kPipeline;
    pipeline.replace(pipeline.find("{levels}"), 8, levels.str());
    write_text_atomically(dir / "pipeline.yaml", pipeline);
    std::printf("wrote %s/{reference.nii.gz, moving.nii.gz, truth_world.txt, pipeline.yaml}\n"
                "run:  regpipe run %s/pipeline.yaml\n",
                dir.c_str(), dir.c_str());
    return kExitOk;
  };
}

}  // namespace regpipe::cli
