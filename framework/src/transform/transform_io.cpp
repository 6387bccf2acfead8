// Transform files. Conventions (docs/coordinates.md has the derivations):
//
// FSL FLIRT .mat maps MOVING "scaled voxel" coordinates to REFERENCE scaled voxel
// coordinates. Scaled voxel coordinates are the voxel index times the voxel size, with the x
// axis mirrored, x = (nx-1-i)*dx, when the voxel -> world matrix has a positive determinant
// (FSL's "neurological" images; the sign is the same in RAS and LPS, det diag(-1,-1,1) = 1).
// Sources used for the convention (no code copied): the module docstring of fslpy's
// fsl/transform/flirt.py ("voxels scaled by pixdims, with a left-right flip if the image
// sform has a positive determinant"); G. Ridgway's flirtmat2worldmat / worldmat2flirtmat
// (NITRC snippet package 1), whose scaling matrix is diag(pixdim) followed by the flip
// i -> (nx-1) - i when det > 0; and the freesurferformats documentation of
// fsl.scaled.voxel.matrix, which states the same rule as applied by MRtrix3 and FreeSurfer.
// ITK's files are read and written through ITK (itk_transform_io.cpp).
#include <regpipe/host/atomic_file.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/input_file.hpp>
#include <regpipe/host/transform_io.hpp>

#include "transform/file_size_limit.hpp"

#include <Eigen/Dense>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace regpipe {
namespace {

// Voxel index -> FSL scaled voxel coordinates of one image.
Eigen::Matrix4d fsl_scaled_from_voxel(const Image& image) {
  const Eigen::Vector3d spacing = image.spacing();
  Eigen::Matrix4d m = Eigen::Matrix4d::Identity();
  m.diagonal().head<3>() = spacing;
  if (image.voxel_to_world.topLeftCorner<3, 3>().determinant() > 0.0) {
    m(0, 0) = -spacing.x();
    m(0, 3) = (double(image.dims[0]) - 1.0) * spacing.x();
  }
  return m;
}

// RAS <-> LPS: negate x and y (its own inverse).
Eigen::Matrix4d lps_ras_flip() { return Eigen::Vector4d(-1.0, -1.0, 1.0, 1.0).asDiagonal(); }

// Numbers printed with `format` and joined by `separator`.
std::string format_numbers(const std::vector<double>& values, const char* format,
                           const std::string& separator) {
  std::string text;
  char buffer[64];
  for (size_t i = 0; i < values.size(); ++i) {
    std::snprintf(buffer, sizeof(buffer), format, values[i]);
    text += (i == 0 ? "" : separator) + buffer;
  }
  return text;
}

std::vector<double> row_of(const Eigen::Matrix4d& m, int r) {
  return {m(r, 0), m(r, 1), m(r, 2), m(r, 3)};
}

UserError transform_error(const fs::path& path, const std::string& reason) {
  return UserError("cannot read transform '" + path.string() + "': " + reason);
}

std::vector<std::string> read_lines(const fs::path& path) {
  // A FIFO would block the reader, a device never end.
  if (const auto problem = input_file_problem(path)) throw transform_error(path, *problem);
  transform_detail::require_size_at_most(path, transform_detail::kMatrixTextMaxBytes, "4x4 matrix file");
  std::ifstream in(path);
  if (!in) throw transform_error(path, "the file cannot be opened");
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

// Whitespace-separated finite numbers; names the offending word and line when one is not.
std::vector<double> parse_numbers(const std::string& text, const fs::path& path,
                                  size_t line_number) {
  std::vector<double> values;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    double v = 0.0;
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    if (ec != std::errc() || end != word.data() + word.size() || !std::isfinite(v))
      throw transform_error(
          path, "line " + std::to_string(line_number) + ": '" + word + "' is not a finite number");
    values.push_back(v);
  }
  return values;
}

void require_affine_last_row(const Eigen::Matrix4d& m, const fs::path& path) {
  if ((m.row(3) - Eigen::RowVector4d(0, 0, 0, 1)).cwiseAbs().maxCoeff() > 1e-6) {
    std::ostringstream row;
    row << m.row(3);
    throw transform_error(path,
                          "the last row is '" + row.str() + "', an affine matrix has 0 0 0 1");
  }
}

}  // namespace

Eigen::Matrix4d checked_inverse(const Eigen::Matrix4d& m, const std::string& what) {
  Eigen::Matrix4d inverse;
  bool invertible = false;
  m.computeInverseWithCheck(inverse, invertible, 1e-12);
  if (!invertible) throw UserError(what + " is singular and cannot be inverted");
  return inverse;
}

Eigen::Matrix4d to_fsl_matrix(const Eigen::Matrix4d& ref_to_mov, const Image& reference,
                              const Image& moving) {
  // scaled_ref <- voxel_ref <- world_ref <- world_mov <- voxel_mov <- scaled_mov
  return fsl_scaled_from_voxel(reference) *
         checked_inverse(reference.voxel_to_world, "the reference voxel-to-world matrix") *
         checked_inverse(ref_to_mov, "the transform") * moving.voxel_to_world *
         checked_inverse(fsl_scaled_from_voxel(moving), "the moving scaled-voxel matrix");
}

Eigen::Matrix4d from_fsl_matrix(const Eigen::Matrix4d& fsl, const Image& reference,
                                const Image& moving) {
  const Eigen::Matrix4d mov_to_ref =
      reference.voxel_to_world *
      checked_inverse(fsl_scaled_from_voxel(reference), "the reference scaled-voxel matrix") * fsl *
      fsl_scaled_from_voxel(moving) *
      checked_inverse(moving.voxel_to_world, "the moving voxel-to-world matrix");
  return checked_inverse(mov_to_ref, "the FSL matrix");
}

Eigen::Matrix4d to_world_ras_forward(const Eigen::Matrix4d& ref_to_mov) {
  return lps_ras_flip() * checked_inverse(ref_to_mov, "the transform") * lps_ras_flip();
}

Eigen::Matrix4d from_world_ras_forward(const Eigen::Matrix4d& forward_ras) {
  return checked_inverse(lps_ras_flip() * forward_ras * lps_ras_flip(), "the world matrix");
}

void write_fsl_mat(const fs::path& path, const Eigen::Matrix4d& fsl) {
  // FLIRT's own layout: ten decimals, two spaces after every number.
  std::string text;
  for (int r = 0; r < 4; ++r) text += format_numbers(row_of(fsl, r), "%.10f", "  ") + "  \n";
  write_text_atomically(path, text);
}

void write_world_matrix(const fs::path& path, const Eigen::Matrix4d& m) {
  std::string text;
  for (int r = 0; r < 4; ++r) text += format_numbers(row_of(m, r), "%.17g", " ") + "\n";
  write_text_atomically(path, text);
}

Eigen::Matrix4d read_matrix_file(const fs::path& path) {
  const std::vector<std::string> lines = read_lines(path);
  std::vector<std::vector<double>> rows;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::vector<double> row = parse_numbers(lines[i], path, i + 1);
    if (row.empty()) continue;
    if (row.size() != 4)
      throw transform_error(path, "line " + std::to_string(i + 1) + " has " +
                                      std::to_string(row.size()) +
                                      " numbers; a 4x4 matrix file has 4 lines of 4 numbers");
    rows.push_back(row);
  }
  if (rows.size() != 4)
    throw transform_error(path,
                          "found " + std::to_string(rows.size()) +
                              " lines of numbers; a 4x4 matrix file has 4 lines of 4 numbers");
  Eigen::Matrix4d m;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) m(r, c) = rows[r][c];
  require_affine_last_row(m, path);
  return m;
}

}  // namespace regpipe
