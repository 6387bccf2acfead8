// The QA picture of a registration (qa.png): the reference's edges in colour over the
// registered moving image, three slices in each of the axial, coronal and sagittal planes,
// laid out anatomically (radiological or neurological, labelled at the panel edges),
// upsampled for coarse images, with the file names and the final cost written on it.
// Misalignment shows as edges that do not sit on the moving image's boundaries.
#pragma once

#include <regpipe/host/image.hpp>

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace regpipe {

struct RgbPicture {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;  // 3 bytes per pixel, rows top to bottom
  std::array<uint8_t, 3> at(uint32_t x, uint32_t y) const {
    const size_t i = 3 * (size_t(y) * width + x);
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

// The colours of reference edges and of text; neither is a grey, so neither can be image.
constexpr std::array<uint8_t, 3> kQaEdgeColour{255, 40, 40};
constexpr std::array<uint8_t, 3> kQaTextColour{255, 220, 0};
// Coarse images are upsampled (by a whole factor) until every panel's long side has at least
// this many pixels.
constexpr uint32_t kQaMinPanelPixels = 200;

// Radiological: the patient's right on the picture's left (FSLeyes' default, and what FSL
// users compare qa.png with); neurological: the patient's left on the left. Sagittal panels are the same in
// both (anterior on the left).
enum class QaOrientation { radiological, neurological };
const char* qa_orientation_name(QaOrientation orientation);
// "radiological" or "neurological"; anything else is a UserError.
QaOrientation qa_orientation_from_name(const std::string& name);

// What the picture says besides the images.
struct QaAnnotation {
  std::string reference_name, moving_name;  // written as given (file names, not paths)
  std::string cost_id;                      // the cost component, e.g. cpu.cr
  double final_cost = 0.0;
  QaOrientation orientation = QaOrientation::radiological;
};

enum class QaPlane { axial, coronal, sagittal };

// Where one slice lies in the picture (pixels) and which slice it is: `slice` counts voxels
// along the plane's normal from the right, anterior or inferior end.
struct QaPanel {
  QaPlane plane = QaPlane::axial;
  uint32_t x = 0, y = 0, width = 0, height = 0;
  uint32_t slice = 0;
};

struct QaPicture {
  RgbPicture image;
  std::vector<QaPanel> panels;  // 3 axial, 3 coronal, 3 sagittal: the rows, top to bottom
};

// Which reference voxels the moving image covers through ref_to_mov (reference world ->
// moving world, LPS mm): those mapped inside the hull of the moving grid's voxel centres,
// where interpolation needs nothing from outside the image. x fastest, 1 = covered.
std::vector<uint8_t> moving_coverage(const Image& reference, const Image& moving,
                                     const Eigen::Matrix4d& ref_to_mov);

// Which reference voxels are edges: gradient magnitude (per mm) above half its 99th
// percentile over the image, so the threshold follows the image's contrast, and not below
// either neighbour along the gradient's main axis, so an edge is one voxel thick. x fastest.
std::vector<uint8_t> reference_edges(const Image& reference);

// The picture. Rows: axial (anterior up), coronal and sagittal (superior up); each row three
// slices at 30, 50 and 70 % of the extent of the head along the plane's normal: of the
// reference voxels above foreground_threshold (driver.hpp) that the moving image covers (the
// whole grid where there are none). Voxel axes are matched to the closest anatomical axes
// (anatomical order whatever the storage order). Pixels are square, the finest voxel size
// upsampled by the least whole factor that gives each panel's long side kQaMinPanelPixels
// (nearest voxel: anisotropic voxels keep the head's shape). The moving image is grey from 0 to the 99th percentile of
// its positive values; reference edges are drawn only where `coverage` (moving_coverage) is
// set. Labels R/L, A/P, S/I at the panel edges; above the panels the file names, the cost's
// id and final value and the orientation. Throws UserError unless the registered image and
// the coverage are on the reference grid.
QaPicture make_qa_picture(const Image& reference, const Image& registered,
                          const std::vector<uint8_t>& coverage, const QaAnnotation& annotation);

// PNG through ITK's PNG IO, written atomically. Throws UserError naming the path.
void write_png(const RgbPicture& picture, const std::filesystem::path& path);
RgbPicture read_png(const std::filesystem::path& path);

}  // namespace regpipe
