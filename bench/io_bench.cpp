// .nii.gz reading and writing, the old way against the new (issue 17), on a real image and a
// 2 mm one, as float32 (the registered image's type):
//   read  old: the completeness check's zlib pass, then ITK's reader (zlib again)
//         new: read_image: libdeflate once, the check and the voxels from that buffer
//   write old: ITK's NIfTI writer to .nii.gz (niftilib's zlib, level 6, one thread, as regpipe's
//              niftilib writer did), then the completeness check's zlib pass over the written file
//         new: write_image with the image's NIfTI header (the registered image's path): the file
//              built in memory, libdeflate level 6 members on the spare hardware threads
// then the compression alone per libdeflate level and thread count (size and seconds), against
// zlib level 6. Medians of --repeats; Markdown tables on stdout.
//
//   regpipe_bench_io IMAGE[@NXxNYxNZ] ... [--repeats N] [--dir SCRATCH]
//
// IMAGE@256x256x160 resamples the image onto that grid first (bench::resample_onto, trilinear
// after Gaussian anti-aliasing, as Li & Kumar's 1 mm volume): floats that are no longer the
// scanner's integers, as a registered image's, which compress less.
#include "bench_support.hpp"

#include <regpipe/host/components.hpp>
#include <regpipe/host/host_services.hpp>
#include <regpipe/host/image.hpp>
#include <regpipe/host/plugin_host.hpp>

#include "image/decompressed_file.hpp"
#include "image/parallel_gzip.hpp"

// ITK's bundled Eigen 3.3 and the system Eigen 3.4 cannot meet (see image_io.cpp).
#define ITK_USE_SYSTEM_EIGEN
#include <itkImageFileReader.h>
#include <itkImageFileWriter.h>
#include <itkNiftiImageIO.h>
#include <zlib.h>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

using namespace regpipe;
namespace fs = std::filesystem;

namespace {

using Volume = itk::Image<float, 3>;

double timed(const std::function<void()>& f) {
  const auto t = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double median_seconds(int repeats, const std::function<void()>& f) {
  std::vector<double> s;
  for (int i = 0; i < repeats; ++i) s.push_back(timed(f));
  return bench::median(s);
}

// The old completeness check: the whole stream through zlib's gzread.
uint64_t zlib_pass(const fs::path& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  std::vector<char> chunk(1 << 20);
  uint64_t total = 0;
  for (int n; (n = gzread(gz, chunk.data(), unsigned(chunk.size()))) > 0;) total += uint64_t(n);
  gzclose(gz);
  return total;
}

Volume::Pointer itk_read(const fs::path& path) {
  auto reader = itk::ImageFileReader<Volume>::New();
  reader->SetImageIO(itk::NiftiImageIO::New());
  reader->SetFileName(path.string());
  reader->Update();
  return reader->GetOutput();
}

void itk_write(const Volume::Pointer& volume, const fs::path& path) {
  auto writer = itk::ImageFileWriter<Volume>::New();
  writer->SetImageIO(itk::NiftiImageIO::New());
  writer->SetFileName(path.string());
  writer->SetInput(volume);
  writer->Update();
}

double mb(uint64_t bytes) { return double(bytes) / 1e6; }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"regpipe_bench_io: .nii.gz read and write, ITK's zlib against libdeflate"};
  std::vector<std::string> images;
  int repeats = 5;
  std::string scratch = "/tmp/regpipe_bench_io";
  app.add_option("images", images, "NIfTI images (each is written as float32 first)")->required();
  app.add_option("--repeats", repeats, "timed runs per cell (median)");
  app.add_option("--dir", scratch, "scratch folder");
  CLI11_PARSE(app, argc, argv);
  fs::create_directories(scratch);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::printf("device: %s; host threads: %u; medians of %d\n\n", bench::device_name().c_str(), cores, repeats);

  bench::print_header("image", {"voxels", "MB float32", ".nii.gz MB old (zlib 6)", ".nii.gz MB new (libdeflate 6)",
                                "read old s", "read new s", "read speed-up", "write old s", "write new s",
                                "write speed-up"});
  struct Row {
    std::string name;
    std::vector<unsigned char> plain;
  };
  std::vector<Row> rows;
  PluginHost plugins{PluginSearchOptions{}};
  HostServices services;
  const Component& rc = plugins.require(RP_KIND_RESAMPLER, "resample.cpu");
  ResamplerInstance resampler(rc, services, resolve_params(rc, {}));
  for (const std::string& argument : images) {
    const std::string source = argument.substr(0, argument.find('@'));
    Image image = read_image(source);  // with its NIfTI header, as a registered image has the reference's
    std::string name = fs::path(source).filename().string();
    if (argument.find('@') != std::string::npos) {
      const std::string grid = argument.substr(argument.find('@') + 1);
      std::array<uint32_t, 3> dims{};
      if (std::sscanf(grid.c_str(), "%ux%ux%u", &dims[0], &dims[1], &dims[2]) != 3) {
        std::fprintf(stderr, "%s: expected IMAGE@NXxNYxNZ\n", argument.c_str());
        return 2;
      }
      const auto header = image.nifti;
      image = bench::resample_onto(image, dims, resampler);
      image.nifti = header;  // written on its new grid, as a registered image on the reference's
      name = fs::path(name).stem().stem().string() + "_" + grid + ".nii.gz";
    }
    const fs::path old_file = fs::path(scratch) / ("old_" + name), new_file = fs::path(scratch) / ("new_" + name);
    const fs::path plain_file = fs::path(scratch) / ("plain_" + fs::path(name).stem().string());
    write_image(image, plain_file);  // the .nii both ways compress
    Volume::Pointer volume = itk_read(plain_file);

    const double write_old = median_seconds(repeats, [&] {
      itk_write(volume, old_file);
      zlib_pass(old_file);
    });
    const double write_new = median_seconds(repeats, [&] { write_image(image, new_file); });
    const double read_old = median_seconds(repeats, [&] {
      zlib_pass(old_file);
      itk_read(old_file);
    });
    const double read_new = median_seconds(repeats, [&] { read_image(new_file); });
    const Image back = read_image(old_file);
    if (back.data != image.data) std::fprintf(stderr, "%s: the old file reads back different voxels\n", name.c_str());
    if (read_image(new_file).data != image.data) std::fprintf(stderr, "%s: the new file reads back different voxels\n", name.c_str());
    std::printf("| %s | %ux%ux%u | %.1f | %.2f | %.2f | %.3f | %.3f | %.1fx | %.3f | %.3f | %.1fx |\n", name.c_str(),
                image.dims[0], image.dims[1], image.dims[2], mb(image.voxel_count() * 4), mb(fs::file_size(old_file)),
                mb(fs::file_size(new_file)), read_old, read_new, read_old / read_new, write_old, write_new,
                write_old / write_new);
    const auto contents = image_detail::read_decompressed(plain_file, 0);
    rows.push_back({name, std::vector<unsigned char>(contents->bytes.get(), contents->bytes.get() + contents->kept)});
  }

  std::printf("\nCompression alone (in memory, no file): seconds and MB per libdeflate level and thread count; "
              "zlib 6 is one thread (niftilib's gzwrite).\n\n");
  std::vector<unsigned> thread_counts = {1, 2, 4, 8, cores};
  std::sort(thread_counts.begin(), thread_counts.end());
  thread_counts.erase(std::unique(thread_counts.begin(), thread_counts.end()), thread_counts.end());
  thread_counts.erase(std::remove_if(thread_counts.begin(), thread_counts.end(), [&](unsigned t) { return t > cores; }),
                      thread_counts.end());
  std::vector<std::string> columns = {"level", "MB"};
  for (unsigned t : thread_counts) columns.push_back(std::to_string(t) + " thr s");
  bench::print_header("image", columns);
  for (const Row& row : rows) {
    uLongf zsize = compressBound(uLong(row.plain.size()));
    std::vector<unsigned char> z(zsize);
    const double zlib_s = median_seconds(repeats, [&] {
      zsize = compressBound(uLong(row.plain.size()));
      compress2(z.data(), &zsize, row.plain.data(), uLong(row.plain.size()), 6);
    });
    std::printf("| %s | zlib 6 | %.2f | %.3f |", row.name.c_str(), mb(zsize), zlib_s);
    for (size_t t = 1; t < thread_counts.size(); ++t) std::printf(" - |");
    std::printf("\n");
    for (int level : {1, 3, 4, 6, 9}) {
      const size_t size = image_detail::gzip_members(row.plain.data(), row.plain.size(), level, 1).size();
      std::printf("| %s | %d | %.2f |", row.name.c_str(), level, mb(size));
      for (unsigned t : thread_counts)
        std::printf(" %.3f |", median_seconds(repeats, [&] {
                      image_detail::gzip_members(row.plain.data(), row.plain.size(), level, t);
                    }));
      std::printf("\n");
    }
  }
  return 0;
}
