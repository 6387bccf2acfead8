// The QA picture's layout: panels in anatomical order, labels and the text above them.
#include <regpipe/host/driver.hpp>
#include <regpipe/host/error.hpp>
#include <regpipe/host/qa_picture.hpp>

#include "qa/anatomical_axes.hpp"
#include "qa/bitmap_font.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace regpipe {
namespace {

constexpr uint32_t kGap = 8;        // pixels between panels (their edge labels apart) and round the picture
constexpr uint32_t kTextScale = 2;  // 10 x 14 pixel letters
constexpr std::array<uint8_t, 3> kBackground{48, 48, 48};  // tells the panels' field of view from black
constexpr double kSliceFractions[] = {0.3, 0.5, 0.7};
// The letters at the negative and positive end of each world axis (LPS).
constexpr const char* kAxisEnds[3][2] = {{"R", "L"}, {"A", "P"}, {"I", "S"}};

// How a plane is shown: its normal (world axis), the world axes running across (left to
// right) and down the panel, and whether the screen runs along + or - of each.
struct PlaneView {
  QaPlane plane;
  int normal, across, down;
  bool across_positive, down_positive;
};

PlaneView plane_view(QaPlane plane, QaOrientation orientation) {
  const bool left_on_right = orientation == QaOrientation::radiological;  // screen right = +x
  switch (plane) {
    case QaPlane::axial: return {plane, 2, 0, 1, left_on_right, true};      // anterior up
    case QaPlane::coronal: return {plane, 1, 0, 2, left_on_right, false};   // superior up
    case QaPlane::sagittal: return {plane, 0, 1, 2, true, false};           // anterior left, superior up
  }
  return {};
}

// The grey scale's white: the 99th percentile of the positive values (the background, and
// everything outside the moving image's coverage, is 0 and would drag a plain one down).
float white_of(const Image& image) {
  std::vector<float> v;
  std::copy_if(image.data.begin(), image.data.end(), std::back_inserter(v), [](float x) { return x > 0.0f; });
  if (v.empty()) return 0.0f;
  const size_t k = std::min(v.size() - 1, size_t(0.99 * double(v.size())));
  std::nth_element(v.begin(), v.begin() + long(k), v.end());
  return v[k];
}

// The anatomical index range [lo, hi] along each world axis of the head: the reference's
// voxels above foreground_threshold that the moving image covers; the whole grid without any.
std::array<std::array<uint32_t, 2>, 3> head_extent(const Image& reference, const std::vector<uint8_t>& coverage,
                                                   const AnatomicalAxes& axes) {
  const float threshold = foreground_threshold(reference);
  std::array<std::array<uint32_t, 2>, 3> range;
  for (int w = 0; w < 3; ++w) range[w] = {axes.size[w], 0};
  bool any = false;
  std::array<uint32_t, 3> a{};
  for (a[2] = 0; a[2] < axes.size[2]; ++a[2])
    for (a[1] = 0; a[1] < axes.size[1]; ++a[1])
      for (a[0] = 0; a[0] < axes.size[0]; ++a[0]) {
        const size_t i = axes.data_index(a);
        if (!(coverage[i] && reference.data[i] > threshold)) continue;
        any = true;
        for (int w = 0; w < 3; ++w) range[w] = {std::min(range[w][0], a[w]), std::max(range[w][1], a[w])};
      }
  if (!any)
    for (int w = 0; w < 3; ++w) range[w] = {0, axes.size[w] - 1};
  return range;
}

// Square pixels: the finest voxel size divided by the least whole factor that gives every
// panel's long side kQaMinPanelPixels (whole, so that every voxel of that size takes the
// same number of pixels and radiological and neurological panels mirror exactly).
double pixel_mm(const AnatomicalAxes& axes) {
  std::array<double, 3> extent{};
  for (int w = 0; w < 3; ++w) extent[w] = axes.size[w] * axes.spacing_mm[w];
  const double shortest_long_side = std::min({std::max(extent[0], extent[1]), std::max(extent[0], extent[2]),
                                              std::max(extent[1], extent[2])});
  const double finest = *std::min_element(axes.spacing_mm.begin(), axes.spacing_mm.end());
  const double factor = std::max(1.0, std::ceil(kQaMinPanelPixels * finest / shortest_long_side - 1e-9));
  return finest / factor;
}

// `text` cut from the front ("...name.nii.gz": the end of a file name tells most) to fit `width`.
std::string fitted(const std::string& text, uint32_t width) {
  if (text_box(text, kTextScale).width <= width) return text;
  for (size_t cut = 1; cut < text.size(); ++cut) {
    const std::string shorter = "..." + text.substr(cut);
    if (text_box(shorter, kTextScale).width <= width) return shorter;
  }
  return "";
}

std::string cost_line(const QaAnnotation& annotation) {
  char value[32];
  std::snprintf(value, sizeof value, "%.6g", annotation.final_cost);
  const char* side = annotation.orientation == QaOrientation::radiological ? "R" : "L";
  return "cost " + annotation.cost_id + (annotation.cost_id.empty() ? "" : " ") + value + "   " +
         qa_orientation_name(annotation.orientation) + " (" + side + " on the left)";
}

class PictureBuilder {
 public:
  PictureBuilder(const Image& reference, const Image& registered, const std::vector<uint8_t>& coverage,
                 QaOrientation orientation)
      : registered_(registered), coverage_(coverage), orientation_(orientation),
        axes_(anatomical_axes(reference)), edges_(reference_edges(reference)),
        extent_(head_extent(reference, coverage, axes_)), pixel_mm_(pixel_mm(axes_)),
        white_(white_of(registered)) {
    for (int w = 0; w < 3; ++w)
      pixels_[w] = std::max<uint32_t>(1, uint32_t(std::lround(axes_.size[w] * axes_.spacing_mm[w] / pixel_mm_)));
  }

  QaPicture build(const QaAnnotation& annotation) {
    const uint32_t line = text_box("", kTextScale).height + 2;
    const uint32_t header = kGap + 3 * line;
    const uint32_t cell_width = std::max(pixels_[0], pixels_[1]);
    const QaPlane rows[] = {QaPlane::axial, QaPlane::coronal, QaPlane::sagittal};
    QaPicture out;
    out.image.width = 3 * cell_width + 4 * kGap;
    out.image.height = header + kGap;
    for (QaPlane plane : rows) out.image.height += pixels_[plane_view(plane, orientation_).down] + kGap;
    out.image.rgb.resize(size_t(out.image.width) * out.image.height * 3);
    for (size_t i = 0; i < out.image.rgb.size(); i += 3)
      std::copy(kBackground.begin(), kBackground.end(), &out.image.rgb[i]);

    const uint32_t text_width = out.image.width - 2 * kGap;
    const std::string lines[] = {fitted("reference " + annotation.reference_name, text_width),
                                 fitted("moving    " + annotation.moving_name, text_width),
                                 fitted(cost_line(annotation), text_width)};
    for (uint32_t k = 0; k < 3; ++k)
      draw_text(out.image, int(kGap), int(kGap + k * line), lines[k], kTextScale, kQaTextColour);

    uint32_t y = header + kGap;
    for (QaPlane plane : rows) {
      const PlaneView view = plane_view(plane, orientation_);
      const uint32_t width = pixels_[view.across], height = pixels_[view.down];
      for (uint32_t column = 0; column < 3; ++column) {
        QaPanel panel{plane, kGap + column * (cell_width + kGap) + (cell_width - width) / 2, y, width, height,
                      slice(view, column)};
        draw_panel(out.image, view, panel);
        draw_labels(out.image, view, panel);
        out.panels.push_back(panel);
      }
      y += height + kGap;
    }
    return out;
  }

 private:
  // The column's slice: 30, 50 or 70 % through the head along the normal. Sagittal columns
  // go the way the axial row runs across (the patient's right first when it is on the left).
  uint32_t slice(const PlaneView& view, uint32_t column) const {
    const bool reverse = view.plane == QaPlane::sagittal && !plane_view(QaPlane::axial, orientation_).across_positive;
    const double f = kSliceFractions[reverse ? 2 - column : column];
    const auto [lo, hi] = extent_[view.normal];
    return lo + uint32_t(std::lround(f * double(hi - lo)));
  }

  // The anatomical index along world axis w of the pixel `p` pixels from the panel's start.
  uint32_t index_at(uint32_t p, int w, bool positive) const {
    const double mm = (p + 0.5) * pixel_mm_;
    const double along = positive ? mm : axes_.size[w] * axes_.spacing_mm[w] - mm;
    return uint32_t(std::clamp(std::floor(along / axes_.spacing_mm[w]), 0.0, double(axes_.size[w] - 1)));
  }

  void draw_panel(RgbPicture& pic, const PlaneView& view, const QaPanel& panel) const {
    std::array<uint32_t, 3> a{};
    a[view.normal] = panel.slice;
    for (uint32_t v = 0; v < panel.height; ++v) {
      a[view.down] = index_at(v, view.down, view.down_positive);
      for (uint32_t u = 0; u < panel.width; ++u) {
        a[view.across] = index_at(u, view.across, view.across_positive);
        const size_t voxel = axes_.data_index(a);
        uint8_t* px = &pic.rgb[3 * (size_t(panel.y + v) * pic.width + panel.x + u)];
        if (edges_[voxel] && coverage_[voxel]) {
          std::copy(kQaEdgeColour.begin(), kQaEdgeColour.end(), px);
          continue;
        }
        const float t = white_ > 0.0f ? std::clamp(registered_.data[voxel] / white_, 0.0f, 1.0f) : 0.0f;
        std::fill(px, px + 3, uint8_t(std::lround(255.0f * t)));
      }
    }
  }

  // The anatomical direction letters at the middle of each panel edge.
  static void draw_labels(RgbPicture& pic, const PlaneView& view, const QaPanel& panel) {
    const auto& across = kAxisEnds[view.across];
    const auto& down = kAxisEnds[view.down];
    const TextBox box = text_box("A", kTextScale);
    const int x0 = int(panel.x), y0 = int(panel.y), w = int(panel.width), h = int(panel.height);
    const int mid_x = x0 + (w - int(box.width)) / 2, mid_y = y0 + (h - int(box.height)) / 2;
    draw_text(pic, x0, mid_y, across[view.across_positive ? 0 : 1], kTextScale, kQaTextColour);
    draw_text(pic, x0 + w - int(box.width), mid_y, across[view.across_positive ? 1 : 0], kTextScale, kQaTextColour);
    draw_text(pic, mid_x, y0, down[view.down_positive ? 0 : 1], kTextScale, kQaTextColour);
    draw_text(pic, mid_x, y0 + h - int(box.height), down[view.down_positive ? 1 : 0], kTextScale, kQaTextColour);
  }

  const Image& registered_;
  const std::vector<uint8_t>& coverage_;
  QaOrientation orientation_;
  AnatomicalAxes axes_;
  std::vector<uint8_t> edges_;
  std::array<std::array<uint32_t, 2>, 3> extent_;
  double pixel_mm_;
  float white_;
  std::array<uint32_t, 3> pixels_{};  // along each world axis
};

}  // namespace

const char* qa_orientation_name(QaOrientation orientation) {
  return orientation == QaOrientation::radiological ? "radiological" : "neurological";
}

QaOrientation qa_orientation_from_name(const std::string& name) {
  if (name == "radiological") return QaOrientation::radiological;
  if (name == "neurological") return QaOrientation::neurological;
  throw UserError("QA picture orientation '" + name + "' is not radiological or neurological");
}

QaPicture make_qa_picture(const Image& reference, const Image& registered, const std::vector<uint8_t>& coverage,
                          const QaAnnotation& annotation) {
  if (reference.dims != registered.dims || !reference.voxel_to_world.isApprox(registered.voxel_to_world, 1e-6))
    throw UserError("QA picture: the registered image is not on the reference grid");
  if (coverage.size() != reference.voxel_count())
    throw UserError("QA picture: the moving image's coverage has " + std::to_string(coverage.size()) +
                    " voxels, the reference " + std::to_string(reference.voxel_count()));
  return PictureBuilder(reference, registered, coverage, annotation.orientation).build(annotation);
}

}  // namespace regpipe
