#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/driver.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/displacement_field_io.hpp>
#include <regpipe/host/qa_picture.hpp>
#include <regpipe/host/resample_through_chain.hpp>
#include <regpipe/host/resample_image.hpp>
#include <regpipe/host/result_set.hpp>
#include <regpipe/host/temporary_outputs.hpp>
#include <regpipe/host/transform_io.hpp>

#include "driver/report.hpp"
#include "driver/run_outputs.hpp"

#include <regpipe_common/head_weight.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <future>
#include <thread>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace regpipe {

void check_output_dir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    const fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
    if (!fs::is_directory(parent, ec))
      throw UserError("outputs.dir " + dir.string() + ": its parent folder does not exist");
    if (::access(parent.c_str(), W_OK) != 0)
      throw UserError("outputs.dir " + dir.string() + ": its parent folder is not writable");
    return;
  }
  if (!fs::is_directory(dir, ec)) throw UserError("outputs.dir " + dir.string() + " is not a folder");
  if (::access(dir.c_str(), W_OK) != 0)
    throw UserError("outputs.dir " + dir.string() + " is not writable");
}

OutputFolder::OutputFolder(const fs::path& dir) : dir_(dir) {
  check_output_dir(dir);
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    created_ = !make_output_folders(dir, ec).empty();  // a terminating signal removes it too while empty
    if (ec) throw UserError("outputs.dir " + dir.string() + ": cannot create: " + ec.message());
  }
  lock_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock_fd_ >= 0 && ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    ::close(lock_fd_);
    throw UserError("outputs.dir " + dir.string() +
                    " is being written by another regpipe run: wait for it to end, or choose another folder");
  }
}

OutputFolder::~OutputFolder() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
  if (!created_) return;
  std::error_code ec;
  if (!kept_) fs::remove(dir_, ec);  // only while empty
  forget_temporary(dir_);
}

VoxelType registered_image_type(const Pipeline& p, const Image& moving) {
  if (p.outputs.datatype == "moving") return moving.file_type;
  return voxel_type_from_name(p.outputs.datatype).value_or(VoxelType::float32);
}

float foreground_threshold(const Image& image) {
  return regpipe_common::foreground_threshold(image.data.data(), image.data.size());
}

std::optional<Image> resample_registered(const Pipeline& p, const Image& moving, const Image& reference,
                                         const Eigen::Matrix4d& ref_to_mov, ResamplerInstance& resampler) {
  if (!p.outputs.registered_image && !p.outputs.qa_png) return std::nullopt;
  return resample_onto(resampler, moving, reference, ref_to_mov,
                       interpolation_code(interpolation_from_name(p.outputs.interpolation)));
}

std::optional<Image> resample_registered(const Pipeline& p, const RegistrationImages& images,
                                         const Eigen::Matrix4d& ref_to_mov,
                                         const PluginHost& plugins, HostServices& services) {
  if (!p.outputs.registered_image && !p.outputs.qa_png) return std::nullopt;
  const CreatedResampler resampler = create_resampler(p.registration.resampler, plugins, services);
  return resample_registered(p, images.moving, images.reference, ref_to_mov, *resampler.instance);
}

namespace {

// The registered image of a result: through the affine alone on the resampler plugin, or, with
// a syn stage's warp, through the chain [affine, warp] on the host (resample_through_chain.hpp:
// the moving image sampled at ref_to_mov * (p + warp(p)), as `regpipe apply -t
// 0GenericAffine.mat -t 1Warp.nii.gz` does).
std::optional<Image> resample_result(const Pipeline& p, const RegistrationImages& images,
                                     const RegistrationResult& result, const PluginHost& plugins,
                                     HostServices& services) {
  if (!result.warp) return resample_registered(p, images, result.ref_to_mov, plugins, services);
  if (!p.outputs.registered_image && !p.outputs.qa_png) return std::nullopt;
  const std::vector<ChainStep> chain{ChainStep{result.ref_to_mov, nullptr},
                                     ChainStep{Eigen::Matrix4d::Identity(), result.warp}};
  return resample_at_positions(images.moving, images.reference,
                               chain_sample_positions(chain, images.reference, images.moving),
                               interpolation_from_name(p.outputs.interpolation));
}

}  // namespace

Image image_header(const Image& image) {
  Image header;
  header.dims = image.dims;
  header.voxel_to_world = image.voxel_to_world;
  header.file_type = image.file_type;
  header.nifti = image.nifti;
  return header;
}

namespace {

// An input's file name, with the volume index of a 4D file: "bold.nii.gz[3]".
std::string input_name(const ImageInput& input) {
  std::string name = input.path.filename().string();
  if (input.volume) name.append("[").append(std::to_string(*input.volume)).append("]");
  return name;
}

// What qa.png says about the run: the file names, the cost and its final value.
QaAnnotation qa_annotation(const Pipeline& p, const RegistrationResult& result) {
  QaAnnotation annotation;
  annotation.reference_name = input_name(p.inputs.reference);
  annotation.moving_name = input_name(p.inputs.moving.front());
  for (const auto& c : result.components)
    if (c.role == "cost") annotation.cost_id = c.id;
  annotation.final_cost = result.final_cost;
  annotation.orientation = qa_orientation_from_name(p.outputs.qa_orientation);
  return annotation;
}

// regpipe's own output names in a folder (outputs.image_format's choices for the registered
// image), each with whether this pipeline writes it. Those a run does not write again are an
// earlier run's, removed as it publishes, so that the folder never mixes two runs' results (a
// qa.png of a run that asked for one beside the transforms of one that did not, a
// registered.nii beside the next run's .nii.gz).
std::vector<std::pair<std::string, bool>> output_names(const Pipeline& p) {
  const PipelineOutputs& o = p.outputs;
  std::vector<std::pair<std::string, bool>> names = {
      {"transform.mat", o.transforms},       {"transform.tfm", o.transforms},
      {"0GenericAffine.mat", o.transforms},  {"moving_to_reference_world.txt", o.transforms},
      {"transform_world.txt", o.transforms}, {"qa.png", o.qa_png},
      {"report.json", o.report}};
  for (const char* format : {".nii.gz", ".nii", ".mha", ".nrrd"})
    names.emplace_back(std::string("registered") + format, o.registered_image && o.image_format == format);
  // A syn stage's fields, ANTs' names after 0GenericAffine.mat (registration.stages).
  const bool warps = o.transforms && std::any_of(p.stages.begin(), p.stages.end(),
                                                 [](const PipelineStage& s) { return s.deformable; });
  names.emplace_back("1Warp.nii.gz", warps);
  names.emplace_back("1InverseWarp.nii.gz", warps);
  for (auto& [name, written] : names) name = o.prefix + name;
  return names;
}

std::vector<std::string> all_output_names(const Pipeline& p) {
  std::vector<std::string> out;
  for (const auto& [name, written] : output_names(p)) out.push_back(name);
  return out;
}

}  // namespace

std::vector<std::string> written_output_names(const Pipeline& p) {
  std::vector<std::string> out;
  for (const auto& [name, written] : output_names(p))
    if (written) out.push_back(name);
  return out;
}

std::optional<double> write_output_files(const Pipeline& p, const Image& reference,
                                         const Image& moving, const RegistrationResult& result,
                                         const std::optional<Image>& registered,
                                         PhaseSeconds& phases, double seconds_before) {
  const auto writing_start = std::chrono::steady_clock::now();
  const auto since_start = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - writing_start).count();
  };
  const Eigen::Matrix4d fsl = to_fsl_matrix(result.ref_to_mov, reference, moving);
  // Every file is staged, and all appear together at the end, or none (an error, a full
  // disk, a signal).
  ResultSet files(p.outputs.dir);
  const auto out = [&](const std::string& name) { return files.staged(p.outputs.prefix + name); };
  std::optional<RunEvaluation> evaluation;
  try {
    if (p.outputs.transforms) {
      write_fsl_mat(out("transform.mat"), fsl);
      write_itk_transform(out("transform.tfm"), result.ref_to_mov);
      write_itk_transform(out("0GenericAffine.mat"), result.ref_to_mov);  // ANTs' name
      // The name says the direction (transform.tfm maps the other way, as ITK's do); the old
      // name stays for one release (0.2) with the same matrix.
      const Eigen::Matrix4d world = to_world_ras_forward(result.ref_to_mov);
      write_world_matrix(out("moving_to_reference_world.txt"), world);
      write_world_matrix(out("transform_world.txt"), world);
      // The syn stage's fields on the reference grid (written atomically, as ITK/ANTs read them).
      if (result.warp) write_displacement_field(*result.warp, out("1Warp.nii.gz"));
      if (result.inverse_warp) write_displacement_field(*result.inverse_warp, out("1InverseWarp.nii.gz"));
    }
    if (registered && p.outputs.registered_image)
      write_image(*registered, out("registered" + p.outputs.image_format), registered_image_type(p, moving));
    if (registered && p.outputs.qa_png) {
      const QaPicture qa = make_qa_picture(reference, *registered,
                                           moving_coverage(reference, moving, result.ref_to_mov),
                                           qa_annotation(p, result));
      write_png(qa.image, out("qa.png"));
    }
    // The resampling (done before this call, NaN when there was none) is part of the writing.
    phases.writing = (std::isnan(phases.writing) ? 0.0 : phases.writing) + since_start();

    if (p.evaluation.truth) {
      const Eigen::Matrix4d truth = from_world_ras_forward(read_matrix_file(*p.evaluation.truth));
      evaluation = RunEvaluation{mean_displacement_mm(result.ref_to_mov, truth, reference,
                                                      foreground_threshold(reference))};
    }
    if (p.outputs.report) {
      // The report reads only the images' grids.
      const RegistrationImages headers{image_header(reference), image_header(moving), {}, {}};
      const double total = seconds_before + since_start();
      write_text_atomically(out("report.json"),
                            make_report(p, headers, result, fsl, evaluation, phases, total).dump(2) + "\n");
    }
    files.publish(all_output_names(p));
  } catch (const UserError& e) {  // a full disk, ...: named as the user knows the file
    throw UserError(files.as_published(e.what()));
  }
  if (!evaluation) return std::nullopt;
  return evaluation->mean_displacement_mm;
}

std::optional<double> write_outputs(const Pipeline& p, const RegistrationImages& images,
                                    const RegistrationResult& result, const PluginHost& plugins,
                                    HostServices& services, std::chrono::steady_clock::time_point start,
                                    PhaseSeconds& phases) {
  using Clock = std::chrono::steady_clock;
  const auto resampling_start = Clock::now();
  const std::optional<Image> registered = resample_result(p, images, result, plugins, services);
  phases.writing = std::chrono::duration<double>(Clock::now() - resampling_start).count();
  return write_output_files(p, images.reference, images.moving, result, registered, phases,
                            std::chrono::duration<double>(Clock::now() - start).count());
}

namespace {

// The reference and the moving image (each with its weight) read on two threads, each file's
// decompression being single-threaded. The reference can be taken (to prepare its levels)
// while the moving image is still being read; the errors are reported as the sequential read
// reports them, the reference's first. Waits for both reads when dropped.
class InputsBeingRead {
 public:
  explicit InputsBeingRead(const PipelineInputs& inputs) {
    prepare_image_io();  // ITK's factory list is complete before the threads use it
    reference_ = std::async(std::launch::async, [&inputs] {
      RegistrationImages images;
      load_reference(inputs, images);
      return images;
    });
    moving_ = std::async(std::launch::async, [&inputs] {
      RegistrationImages images;
      load_moving(inputs, inputs.moving.front(), images);
      return images;
    });
  }
  const RegistrationImages& reference() {
    if (reference_.valid()) {
      try {
        images_ = reference_.get();
      } catch (...) {
        moving_.wait();
        throw;
      }
    }
    return images_;
  }
  RegistrationImages all() {
    reference();
    RegistrationImages moving = moving_.get();
    images_.moving = std::move(moving.moving);
    images_.moving_weight = std::move(moving.moving_weight);
    return std::move(images_);
  }

 private:
  std::future<RegistrationImages> reference_, moving_;
  RegistrationImages images_;
};

// A grid with the moving image's voxel size as its header states it, for the reference's
// levels made while the voxels are still being read (min_sampling_mm). Null when the header
// cannot say (its error is the read's to report): the reference's own floor is taken, and a
// level the moving image's floor needs is then made when it registers, as in a batch.
std::unique_ptr<Image> moving_grid_planned(const PipelineInputs& inputs) {
  try {
    const ImageInput& moving = inputs.moving.front();
    ReadOptions options;
    options.volume_index = moving.volume;
    auto grid = std::make_unique<Image>();
    grid->voxel_to_world.topLeftCorner<3, 3>() = header_voxel_size_mm(moving.path, options).asDiagonal();
    return grid;
  } catch (const UserError&) {
    return nullptr;
  }
}

// What `regpipe run` prints on stdout: the components used, each stage, the times.
void print_summary(const RegistrationResult& result, const PhaseSeconds& phases, double total,
                   const fs::path& dir, const std::optional<double>& error_mm) {
  for (const auto& c : result.components)
    std::printf("%-9s %s\n", c.role.c_str(), describe_used(c).c_str());
  for (const auto& s : result.stages)
    if (s.level_setup)
      std::printf("  %-40s %47.3f s\n", s.name.c_str(), s.seconds);
    else
      std::printf("  %-40s %8lld evaluations  best cost %.6f  %.3f s\n", s.name.c_str(), s.evaluations,
                  s.best_cost, s.seconds);
  for (const auto& s : result.pipeline_stages) {
    const std::string cost = std::isnan(s.cost_before)
                                 ? "cost " + std::to_string(s.final_cost)
                                 : "cost " + std::to_string(s.cost_before) + " -> " + std::to_string(s.final_cost);
    std::printf("%-30s %s + %s  %s  %.3f s\n", s.label.c_str(), s.cost_id.c_str(), s.optimizer_id.c_str(),
                cost.c_str(), s.seconds);
  }
  std::printf("total %.3f s (reading %.3f s, registration %.3f s of which search %.3f s, "
              "writing %.3f s); outputs in %s\n",
              total, phases.reading, phases.registration, result.seconds_search, phases.writing,
              dir.c_str());
  if (error_mm) std::printf("mean displacement error against the truth: %.4f mm\n", *error_mm);
}

}  // namespace

RegistrationResult run_pipeline(const Pipeline& p, const PluginHost& plugins, HostServices& services) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  OutputFolder folder(p.outputs.dir);
  // The truth file is read (and checked) before the work.
  if (p.evaluation.truth) read_matrix_file(*p.evaluation.truth);

  // The images are read while the components are created (starting a GPU takes about as long
  // as reading two compressed images), and the reference's levels are made while the moving
  // image is still being read; a component's error is still the one reported, and in
  // sequential I/O mode the components come first, so a bad parameter fails before any read.
  PhaseSeconds phases;
  const auto loading_start = Clock::now();
  std::optional<InputsBeingRead> reading;
  if (p.outputs.parallel_io) reading.emplace(p.inputs);
  RegistrationComponents components;
  StageComponents stage_components;  // registration.stages
  if (p.stages.empty())
    components = create_registration_components(p, plugins, services);
  else
    stage_components = create_stage_components(p, plugins, services);
  std::optional<PreparedReference> prepared;  // dropped once registered, as its memory is wanted again
  if (reading && p.stages.empty())
    prepared = prepare_reference(p, reading->reference(), components, moving_grid_planned(p.inputs).get());
  RegistrationImages images = reading ? reading->all() : load_images(p.inputs);
  phases.reading = std::chrono::duration<double>(Clock::now() - loading_start).count();
  const auto registration_start = Clock::now();
  RegistrationResult result = !p.stages.empty() ? register_stages(p, images, stage_components, services)
                              : prepared        ? register_images(p, images, *prepared, components, services)
                                                : register_images(p, images, components, services);
  if (prepared) result.seconds_pyramid += prepared->seconds;
  prepared.reset();
  phases.registration = std::chrono::duration<double>(Clock::now() - registration_start).count();
  result.seconds_loading = phases.reading;
  const std::optional<double> error_mm =
      write_outputs(p, images, result, plugins, services, start, phases);
  folder.keep();
  const double total = std::chrono::duration<double>(Clock::now() - start).count();

  if (services.reports_summaries()) print_summary(result, phases, total, p.outputs.dir, error_mm);
  return result;
}

}  // namespace regpipe
