#include <regpipe/host/error.hpp>
#include <regpipe/host/input_file.hpp>
#include <regpipe/host/transform_file.hpp>
#include <regpipe/host/transform_io.hpp>

#include <algorithm>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

constexpr const char* kNameTheFormat =
    "name the format with a prefix (fsl:, itk:, ants:, world:) or --in-format/--out-format";

// The first 4 KiB: enough to tell FLIRT's 4 lines of text from a MATLAB v4 header, whose
// first bytes (the matrix type and sizes as 32-bit integers) hold zeros.
std::string head_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), std::streamsize(head.size()));
  head.resize(size_t(in.gcount()));
  return head;
}

bool is_binary(const std::string& bytes) {
  return std::any_of(bytes.begin(), bytes.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte < 0x09 || (byte > 0x0d && byte < 0x20) || byte == 0x7f;
  });
}

UserError transform_error(const fs::path& path, const std::string& verb,
                          const std::string& reason) {
  return UserError("cannot " + verb + " transform '" + path.string() + "': " + reason);
}

// Runs a conversion whose UserErrors (a singular matrix) do not know the file, naming it.
template <typename F>
auto naming(const fs::path& path, const std::string& verb, F&& convert) {
  try {
    return convert();
  } catch (const UserError& e) {
    throw transform_error(path, verb, e.what());
  }
}

void require_images(const fs::path& path, const std::string& verb, const FslImages& images) {
  if (!images.moving || !images.reference)
    throw transform_error(path, verb,
                          "an FSL matrix is in the voxel coordinates of the two images it relates: "
                          "give FLIRT's -in image as src and its -ref image as ref");
}

}  // namespace

TransformFormat parse_transform_format(const std::string& name) {
  if (name == "fsl") return TransformFormat::Fsl;
  if (name == "itk" || name == "ants") return TransformFormat::Itk;
  if (name == "world") return TransformFormat::World;
  throw UserError("unknown transform format '" + name + "': use fsl, itk, ants or world");
}

const char* format_name(TransformFormat format) {
  switch (format) {
    case TransformFormat::Fsl: return "fsl";
    case TransformFormat::Itk: return "itk";
    case TransformFormat::World: return "world";
  }
  return "?";
}

TransformFormat detect_transform_format(const fs::path& path) {
  if (const auto problem = input_file_problem(path)) throw transform_error(path, "read", *problem);
  const std::string extension = path.extension().string();
  if (extension == ".tfm" || extension == ".h5" || extension == ".hdf5") return TransformFormat::Itk;
  if (extension == ".mat")
    return is_binary(head_of(path)) ? TransformFormat::Itk : TransformFormat::Fsl;
  if (extension == ".txt")
    return is_itk_text_transform(path) ? TransformFormat::Itk : TransformFormat::World;
  throw transform_error(path, "read",
                        "the extension does not tell its format (.mat, .tfm, .txt, .h5, .hdf5); " +
                            std::string(kNameTheFormat));
}

TransformFormat output_transform_format(const fs::path& path) {
  const std::string extension = path.extension().string();
  if (extension == ".tfm" || extension == ".h5" || extension == ".hdf5") return TransformFormat::Itk;
  if (extension == ".txt") return TransformFormat::World;
  const std::string reason = extension == ".mat"
                                 ? "a .mat is FSL's text or ANTs' MATLAB binary; "
                                 : "the extension does not tell its format (.tfm, .txt, .h5, .hdf5); ";
  throw transform_error(path, "write", reason + kNameTheFormat);
}

Eigen::Matrix4d read_transform(const fs::path& path, TransformFormat format,
                               const FslImages& images) {
  if (format == TransformFormat::Itk) return read_itk_transform(path);
  // Both text formats: a binary file would otherwise be reported as unreadable numbers.
  std::error_code ec;
  if (fs::is_regular_file(path, ec) && is_binary(head_of(path)))
    throw transform_error(path, "read",
                          std::string("it is a binary file, not ") +
                              (format == TransformFormat::Fsl ? "FSL's" : "a world matrix's") +
                              " 4 lines of 4 numbers (ANTs' binary .mat reads as itk or ants)");
  if (format == TransformFormat::World) {
    const Eigen::Matrix4d forward = read_matrix_file(path);
    return naming(path, "read", [&] { return from_world_ras_forward(forward); });
  }
  require_images(path, "read", images);
  const Eigen::Matrix4d fsl = read_matrix_file(path);
  return naming(path, "read", [&] { return from_fsl_matrix(fsl, *images.reference, *images.moving); });
}

void write_transform(const fs::path& path, TransformFormat format,
                     const Eigen::Matrix4d& ref_to_mov, const FslImages& images) {
  switch (format) {
    case TransformFormat::Itk:
      write_itk_transform(path, ref_to_mov);
      return;
    case TransformFormat::World:
      write_world_matrix(path, naming(path, "write", [&] { return to_world_ras_forward(ref_to_mov); }));
      return;
    case TransformFormat::Fsl:
      require_images(path, "write", images);
      write_fsl_mat(path, naming(path, "write", [&] {
                      return to_fsl_matrix(ref_to_mov, *images.reference, *images.moving);
                    }));
      return;
  }
}

}  // namespace regpipe
