// What `regpipe run` writes for one registration, shared by the single run and the batch.
#pragma once

#include <regpipe/host/driver.hpp>

#include "driver/report.hpp"

#include <chrono>
#include <filesystem>
#include <optional>

namespace regpipe {

// UserError when outputs.dir cannot be used: a file, not writable, or missing with a missing
// or unwritable parent (it is made then, one level).
void check_output_dir(const std::filesystem::path& dir);

// A run's output folder, made when missing (before any work, so that an unusable one fails
// first), and removed again when the run leaves it empty: a failed run leaves no new folder.
// It is locked for the run (flock on the folder itself, no lock file): a second run into the
// same folder is refused while the first goes on, instead of mixing their files.
class OutputFolder {
 public:
  explicit OutputFolder(const std::filesystem::path& dir);
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;
  void keep() { kept_ = true; }  // the run succeeded: the folder stays even if empty

 private:
  std::filesystem::path dir_;
  bool created_ = false, kept_ = false;
  int lock_fd_ = -1;
};

// The output work in two halves, so that a batch can write one result's files on another
// thread while the next image registers.
//
// First half, on the thread that owns the plugins: the moving image resampled onto the
// reference grid through the pipeline's resampler plugin (outputs.registered_image or
// outputs.qa_png), else nothing: through a resampler of the pipeline's made for it, or through
// `resampler` (a batch's, made once for all its images).
std::optional<Image> resample_registered(const Pipeline& p, const RegistrationImages& images,
                                         const Eigen::Matrix4d& ref_to_mov,
                                         const PluginHost& plugins, HostServices& services);
std::optional<Image> resample_registered(const Pipeline& p, const Image& moving, const Image& reference,
                                         const Eigen::Matrix4d& ref_to_mov, ResamplerInstance& resampler);
// Second half, on any thread (no plugin is called): transforms, registered image, QA picture
// and report.json, staged and published together (ResultSet: all or none), into p.outputs.dir. `reference` is the whole
// reference (the QA picture and evaluation.truth read its voxels), `moving` only the moving
// image's grid (the report, the QA picture's coverage) and file type (image_header is enough). `phases` brings the reading and
// registration times and the resampling time as phases.writing (NaN: none), to which this
// adds its own; `seconds_before` is the run's time before this call (the report's total).
// Returns the mean displacement error against evaluation.truth when the pipeline has one.
std::optional<double> write_output_files(const Pipeline& p, const Image& reference,
                                         const Image& moving, const RegistrationResult& result,
                                         const std::optional<Image>& registered,
                                         PhaseSeconds& phases, double seconds_before);
// The registered image's voxel type: outputs.datatype, where "moving" is the moving image
// file's type (FLIRT's default).
VoxelType registered_image_type(const Pipeline& p, const Image& moving);

// The files (names in outputs.dir, with the prefix) that a registration of `p` writes.
std::vector<std::string> written_output_names(const Pipeline& p);

// An image's grid and file type without its voxels.
Image image_header(const Image& image);

// The two halves in turn (a single run): writes the pipeline's outputs (transforms,
// registered image, QA picture, report.json, all or none) into p.outputs.dir. `start` is
// when the run began (the report's total); `phases` brings the reading and registration
// times and gets the writing time (the resampling included). Returns the mean displacement
// error against evaluation.truth when the pipeline has one.
std::optional<double> write_outputs(const Pipeline& p, const RegistrationImages& images,
                                    const RegistrationResult& result, const PluginHost& plugins,
                                    HostServices& services, std::chrono::steady_clock::time_point start,
                                    PhaseSeconds& phases);

}  // namespace regpipe
