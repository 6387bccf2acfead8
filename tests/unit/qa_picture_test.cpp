// The QA picture: the same picture whatever the storage order, radiological the mirror of
// neurological, a marker on the patient's left on the side the orientation says, labels and
// text drawn, edges only where the moving image has data, coarse images upsampled, edges
// that tell a misregistered pair from an aligned one; PNG round trip through ITK.
#include <regpipe/host/error.hpp>
#include <regpipe/host/phantom.hpp>
#include <regpipe/host/qa_picture.hpp>

#include "support/test_support.hpp"

#include <Eigen/Geometry>
#include <cmath>
#include <functional>

namespace {

using regpipe::Image;
using regpipe::QaOrientation;
using regpipe::QaPanel;
using regpipe::QaPicture;
using regpipe::QaPlane;
using Colour = std::array<uint8_t, 3>;

constexpr std::array<uint32_t, 3> kDims{48, 44, 40};  // unequal, so a swapped axis shows
constexpr double kVoxelMm = 4.0;

std::vector<uint8_t> everywhere(const Image& image) { return std::vector<uint8_t>(image.voxel_count(), 1); }

regpipe::QaAnnotation annotation(QaOrientation orientation = QaOrientation::radiological) {
  return {"t1.nii.gz", "t2.nii.gz", "cpu.cr", 0.25, orientation};
}

// The phantom pair (T1-like reference, T2-like registered image), aligned.
struct Pair {
  Image reference = regpipe::make_head_phantom(kDims, kVoxelMm, 0);
  Image registered = regpipe::make_head_phantom(kDims, kVoxelMm, 1);
};

QaPicture picture_of(const Image& reference, const Image& registered,
                     QaOrientation orientation = QaOrientation::radiological) {
  return regpipe::make_qa_picture(reference, registered, everywhere(reference), annotation(orientation));
}

// The same image stored another way: new voxel axis b is old axis axes[b], reversed where
// reversed[b]; the world content is unchanged.
Image restored(const Image& image, std::array<int, 3> axes, std::array<bool, 3> reversed) {
  Image out = image;
  Eigen::Matrix4d new_to_old = Eigen::Matrix4d::Zero();
  new_to_old(3, 3) = 1.0;
  for (int b = 0; b < 3; ++b) {
    out.dims[b] = image.dims[axes[b]];
    new_to_old(axes[b], b) = reversed[b] ? -1.0 : 1.0;
    new_to_old(axes[b], 3) = reversed[b] ? double(out.dims[b]) - 1.0 : 0.0;
  }
  out.voxel_to_world = image.voxel_to_world * new_to_old;
  size_t i = 0;
  for (uint32_t k = 0; k < out.dims[2]; ++k)
    for (uint32_t j = 0; j < out.dims[1]; ++j)
      for (uint32_t n = 0; n < out.dims[0]; ++n, ++i) {
        const Eigen::Vector4d old = new_to_old * Eigen::Vector4d(n, j, k, 1);
        out.data[i] = image.at(uint32_t(old[0]), uint32_t(old[1]), uint32_t(old[2]));
      }
  return out;
}

// An image on `grid` of `value` where `inside` holds for the voxel's world (LPS mm) point, else 0.
Image painted(const Image& grid, float value, const std::function<bool(const Eigen::Vector3d&)>& inside) {
  Image out = grid;
  size_t i = 0;
  for (uint32_t z = 0; z < grid.dims[2]; ++z)
    for (uint32_t y = 0; y < grid.dims[1]; ++y)
      for (uint32_t x = 0; x < grid.dims[0]; ++x, ++i)
        out.data[i] = inside((grid.voxel_to_world * Eigen::Vector4d(x, y, z, 1)).head<3>()) ? value : 0.0f;
  return out;
}

Colour pixel(const QaPicture& pic, const QaPanel& panel, uint32_t u, uint32_t v) {
  return pic.image.at(panel.x + u, panel.y + v);
}
bool is_edge(const Colour& c) { return c == regpipe::kQaEdgeColour; }
bool is_text(const Colour& c) { return c == regpipe::kQaTextColour; }

std::vector<QaPanel> panels_of(const QaPicture& pic, QaPlane plane) {
  std::vector<QaPanel> out;
  for (const QaPanel& p : pic.panels)
    if (p.plane == plane) out.push_back(p);
  return out;
}

// Mean position of the white pixels of a panel, as fractions of its width and height.
Eigen::Vector2d white_centroid(const QaPicture& pic, const QaPanel& panel) {
  Eigen::Vector2d sum = Eigen::Vector2d::Zero();
  double n = 0;
  for (uint32_t v = 0; v < panel.height; ++v)
    for (uint32_t u = 0; u < panel.width; ++u)
      if (pixel(pic, panel, u, v) == Colour{255, 255, 255}) sum += Eigen::Vector2d(u + 0.5, v + 0.5), ++n;
  EXPECT_GT(n, 0) << "no white pixel in a panel";
  return Eigen::Vector2d(sum[0] / n / panel.width, sum[1] / n / panel.height);
}

// Text pixels in a rectangle of the picture.
size_t text_pixels(const QaPicture& pic, uint32_t x, uint32_t y, uint32_t width, uint32_t height) {
  size_t n = 0;
  for (uint32_t v = y; v < y + height; ++v)
    for (uint32_t u = x; u < x + width; ++u) n += is_text(pic.image.at(u, v));
  return n;
}

// A label's backing at the picture's text scale (2): 14 x 22 pixels.
constexpr uint32_t kLabelWidth = 14, kLabelHeight = 22;

}  // namespace

TEST(QaPicture, NineSlicesInThreeRowsOfOnePlane) {
  const Pair pair;
  const QaPicture pic = picture_of(pair.reference, pair.registered);
  ASSERT_EQ(pic.panels.size(), 9u);
  ASSERT_EQ(pic.image.rgb.size(), size_t(pic.image.width) * pic.image.height * 3);
  const QaPlane rows[] = {QaPlane::axial, QaPlane::coronal, QaPlane::sagittal};
  for (size_t i = 0; i < 9; ++i) {
    const QaPanel& p = pic.panels[i];
    EXPECT_EQ(p.plane, rows[i / 3]);
    EXPECT_LE(p.x + p.width, pic.image.width);
    EXPECT_LE(p.y + p.height, pic.image.height);
    if (i % 3) {
      EXPECT_EQ(p.y, pic.panels[i - 1].y) << "a row's panels side by side";
      EXPECT_GT(p.x, pic.panels[i - 1].x + pic.panels[i - 1].width - 1);
    }
  }
  // Slices 30, 50, 70 % through the head, in order (axial inferior to superior, coronal
  // anterior to posterior, sagittal from the side shown on the left: the patient's right).
  for (QaPlane plane : rows) {
    const auto row = panels_of(pic, plane);
    EXPECT_LT(row[0].slice, row[1].slice);
    EXPECT_LT(row[1].slice, row[2].slice);
  }
}

TEST(QaPicture, SameForAnyStorageOrderOfTheSameHead) {
  const Pair lps;
  const QaPicture expected = picture_of(lps.reference, lps.registered);
  struct Storage {
    const char* name;
    std::array<int, 3> axes;
    std::array<bool, 3> reversed;
  };
  for (const Storage& s : {Storage{"RAS", {0, 1, 2}, {true, true, false}},
                           Storage{"axes permuted (z, x, y), two reversed", {2, 0, 1}, {true, false, true}},
                           Storage{"axes permuted (y, z, x), two reversed", {1, 2, 0}, {false, true, true}}}) {
    const Image reference = restored(lps.reference, s.axes, s.reversed);
    const QaPicture pic = picture_of(reference, restored(lps.registered, s.axes, s.reversed));
    EXPECT_EQ(pic.image.width, expected.image.width) << s.name;
    EXPECT_EQ(pic.image.height, expected.image.height) << s.name;
    EXPECT_TRUE(pic.image.rgb == expected.image.rgb) << s.name << ": another picture";
  }
}

// An oblique grid (the head tilted 20 degrees with it, as a scan planned along the AC-PC line)
// is shown along its closest anatomical axes: the picture of the unturned grid.
TEST(QaPicture, ObliqueGridsAreShownAlongTheirClosestAxes) {
  const Pair pair;
  const QaPicture expected = picture_of(pair.reference, pair.registered);
  for (const Eigen::Vector3d& axis : {Eigen::Vector3d::UnitX(), Eigen::Vector3d::UnitY(), Eigen::Vector3d::UnitZ()}) {
    Eigen::Matrix4d tilt = Eigen::Matrix4d::Identity();
    tilt.topLeftCorner<3, 3>() = Eigen::AngleAxisd(20.0 * M_PI / 180.0, axis).toRotationMatrix();
    const QaPicture pic = picture_of(regpipe::with_world_transform(pair.reference, tilt),
                                     regpipe::with_world_transform(pair.registered, tilt));
    EXPECT_TRUE(pic.image.rgb == expected.image.rgb) << "tilted about " << axis.transpose();
  }
}

TEST(QaPicture, RadiologicalIsTheMirrorOfNeurologicalInAxialAndCoronal) {
  const Pair pair;
  const QaPicture radiological = picture_of(pair.reference, pair.registered, QaOrientation::radiological);
  const QaPicture neurological = picture_of(pair.reference, pair.registered, QaOrientation::neurological);
  ASSERT_EQ(radiological.panels.size(), neurological.panels.size());
  for (size_t i = 0; i < 6; ++i) {  // axial and coronal: mirrored left-right, labels aside
    const QaPanel& r = radiological.panels[i];
    const QaPanel& n = neurological.panels[i];
    ASSERT_EQ(r.width, n.width);
    ASSERT_EQ(r.slice, n.slice);
    for (uint32_t v = kLabelHeight; v < r.height - kLabelHeight; ++v)
      for (uint32_t u = kLabelHeight; u < r.width - kLabelHeight; ++u)
        ASSERT_EQ(pixel(radiological, r, u, v), pixel(neurological, n, r.width - 1 - u, v))
            << "panel " << i << " at " << u << "," << v;
  }
  // Sagittal panels are the same, in the other order (the side shown on the left first).
  for (size_t k = 0; k < 3; ++k) {
    const QaPanel& r = radiological.panels[6 + k];
    const QaPanel& n = neurological.panels[8 - k];
    ASSERT_EQ(r.slice, n.slice);
    for (uint32_t v = 0; v < r.height; ++v)
      for (uint32_t u = 0; u < r.width; ++u) ASSERT_EQ(pixel(radiological, r, u, v), pixel(neurological, n, u, v));
  }
}

// Markers on the patient's left, at the front and at the top of the head (LPS world: +x
// left, -y anterior, +z superior), each the only bright thing of the registered image.
TEST(QaPicture, MarkersLandOnTheSidesTheOrientationSays) {
  const Pair pair;
  const Image left = painted(pair.reference, 1000.0f, [](const Eigen::Vector3d& p) {
    return p.x() > 20 && p.x() < 40 && std::abs(p.y()) < 40;
  });
  const Image front = painted(pair.reference, 1000.0f, [](const Eigen::Vector3d& p) { return p.y() < -40; });
  const Image top = painted(pair.reference, 1000.0f, [](const Eigen::Vector3d& p) { return p.z() > 30; });
  for (QaOrientation o : {QaOrientation::radiological, QaOrientation::neurological}) {
    const bool left_on_right = o == QaOrientation::radiological;
    const QaPicture on_left = picture_of(pair.reference, left, o);
    for (QaPlane plane : {QaPlane::axial, QaPlane::coronal})
      for (const QaPanel& p : panels_of(on_left, plane))
        EXPECT_EQ(white_centroid(on_left, p).x() > 0.5, left_on_right) << regpipe::qa_orientation_name(o);
    const QaPicture at_front = picture_of(pair.reference, front, o);
    for (const QaPanel& p : panels_of(at_front, QaPlane::axial)) EXPECT_LT(white_centroid(at_front, p).y(), 0.5);
    for (const QaPanel& p : panels_of(at_front, QaPlane::sagittal)) EXPECT_LT(white_centroid(at_front, p).x(), 0.5);
    const QaPicture at_top = picture_of(pair.reference, top, o);
    for (QaPlane plane : {QaPlane::coronal, QaPlane::sagittal})
      for (const QaPanel& p : panels_of(at_top, plane)) EXPECT_LT(white_centroid(at_top, p).y(), 0.5);
  }
}

TEST(QaPicture, LabelsAtEveryPanelEdgeNameTheSide) {
  const Pair pair;
  const QaPicture radiological = picture_of(pair.reference, pair.registered, QaOrientation::radiological);
  const QaPicture neurological = picture_of(pair.reference, pair.registered, QaOrientation::neurological);
  // Each label is centred on its edge, inside the panel.
  auto left = [](const QaPanel& p) { return std::array<uint32_t, 2>{p.x, p.y + (p.height - kLabelHeight) / 2}; };
  auto right = [](const QaPanel& p) {
    return std::array<uint32_t, 2>{p.x + p.width - kLabelWidth, p.y + (p.height - kLabelHeight) / 2};
  };
  auto top = [](const QaPanel& p) { return std::array<uint32_t, 2>{p.x + (p.width - kLabelWidth) / 2, p.y}; };
  auto bottom = [](const QaPanel& p) {
    return std::array<uint32_t, 2>{p.x + (p.width - kLabelWidth) / 2, p.y + p.height - kLabelHeight};
  };
  auto letter = [](const QaPicture& pic, std::array<uint32_t, 2> at) {
    std::vector<bool> mask;
    for (uint32_t v = 0; v < kLabelHeight; ++v)
      for (uint32_t u = 0; u < kLabelWidth; ++u) mask.push_back(is_text(pic.image.at(at[0] + u, at[1] + v)));
    return mask;
  };
  for (const QaPanel& p : radiological.panels)
    for (const auto& at : {left(p), right(p), top(p), bottom(p)})
      EXPECT_GT(text_pixels(radiological, at[0], at[1], kLabelWidth, kLabelHeight), 10u)
          << "no label at " << at[0] << "," << at[1];
  // The axial panel's left label is the neurological one's right label (R), and another
  // letter than its own right label (L); top and bottom (A, P) are the same in both.
  const QaPanel& r = radiological.panels[0];
  const QaPanel& n = neurological.panels[0];
  EXPECT_EQ(letter(radiological, left(r)), letter(neurological, right(n)));
  EXPECT_EQ(letter(radiological, right(r)), letter(neurological, left(n)));
  EXPECT_NE(letter(radiological, left(r)), letter(radiological, right(r)));
  EXPECT_EQ(letter(radiological, top(r)), letter(neurological, top(n)));
  EXPECT_NE(letter(radiological, top(r)), letter(radiological, bottom(r)));
}

TEST(QaPicture, TextAboveThePanelsNamesTheFilesAndTheCost) {
  const Pair pair;
  const QaPicture pic = picture_of(pair.reference, pair.registered);
  const uint32_t header = pic.panels[0].y;
  EXPECT_GT(text_pixels(pic, 0, 0, pic.image.width, header), 500u);
  regpipe::QaAnnotation other = annotation();
  other.moving_name = "another_moving_image.nii.gz";
  other.final_cost = 0.75;
  const QaPicture renamed =
      regpipe::make_qa_picture(pair.reference, pair.registered, everywhere(pair.reference), other);
  const size_t header_bytes = size_t(header) * pic.image.width * 3;
  EXPECT_FALSE(std::equal(pic.image.rgb.begin(), pic.image.rgb.begin() + long(header_bytes), renamed.image.rgb.begin()))
      << "the names and the cost are not in the picture";
  EXPECT_TRUE(std::equal(pic.image.rgb.begin() + long(header_bytes), pic.image.rgb.end(),
                         renamed.image.rgb.begin() + long(header_bytes)))
      << "the text reached into the panels";
  // A name longer than the picture is cut, not drawn beyond it.
  other.moving_name = std::string(500, 'x') + ".nii.gz";
  EXPECT_NO_THROW(regpipe::make_qa_picture(pair.reference, pair.registered, everywhere(pair.reference), other));
}

TEST(QaPicture, CoarseImagesAreUpsampledKeepingTheHeadsShape) {
  const Pair pair;  // 4 mm voxels: 48 x 44 x 40
  const QaPicture pic = picture_of(pair.reference, pair.registered);
  for (const QaPanel& p : pic.panels) {
    EXPECT_GE(std::max(p.width, p.height), regpipe::kQaMinPanelPixels);
    EXPECT_LE(std::max(p.width, p.height), 2 * regpipe::kQaMinPanelPixels) << "upsampled too far";
  }
  EXPECT_GE(pic.image.width, 3 * regpipe::kQaMinPanelPixels);
  // The same head on 4 x 4 x 8 mm voxels (every other axial slice): the panels keep their
  // size in mm, so the head keeps its shape.
  Image reference;
  reference.dims = {kDims[0], kDims[1], 20};
  reference.data.resize(reference.voxel_count());
  reference.voxel_to_world = pair.reference.voxel_to_world;
  reference.voxel_to_world(2, 2) = 2 * kVoxelMm;
  reference.voxel_to_world(2, 3) += kVoxelMm;  // voxel z sits where voxel 2 z + 1 did
  for (uint32_t z = 0; z < 20; ++z)
    for (uint32_t y = 0; y < kDims[1]; ++y)
      for (uint32_t x = 0; x < kDims[0]; ++x)
        reference.data[x + size_t(kDims[0]) * (y + size_t(kDims[1]) * z)] = pair.reference.at(x, y, 2 * z + 1);
  const QaPicture anisotropic = picture_of(reference, reference);
  for (size_t i = 0; i < 9; ++i) {
    EXPECT_EQ(anisotropic.panels[i].width, pic.panels[i].width) << i;
    EXPECT_EQ(anisotropic.panels[i].height, pic.panels[i].height) << i;
  }
}

TEST(QaPicture, EdgesOnlyWhereTheMovingImageHasData) {
  const Pair pair;
  // A moving grid covering the upper half of the reference's axial slices (voxel centres 20..39).
  Image upper_half = regpipe::make_head_phantom({kDims[0], kDims[1], 20}, kVoxelMm, 1);
  upper_half.voxel_to_world(2, 3) = pair.reference.voxel_to_world(2, 3) + 20 * kVoxelMm;
  const std::vector<uint8_t> coverage =
      regpipe::moving_coverage(pair.reference, upper_half, Eigen::Matrix4d::Identity());
  const QaPicture partial = regpipe::make_qa_picture(pair.reference, pair.registered, coverage, annotation());
  const QaPicture full = picture_of(pair.reference, pair.registered);
  for (QaPlane plane : {QaPlane::coronal, QaPlane::sagittal})
    for (size_t k = 0; k < 3; ++k) {
      const QaPanel p = panels_of(partial, plane)[k];
      size_t upper = 0, lower_full = 0;
      for (uint32_t v = 0; v < p.height; ++v)
        for (uint32_t u = 0; u < p.width; ++u) {
          const bool edge = is_edge(pixel(partial, p, u, v));
          const bool below = v >= p.height / 2;  // superior is up: the lower half is uncovered
          ASSERT_FALSE(edge && below) << "an edge where the moving image has no data, " << u << "," << v;
          if (edge) ASSERT_TRUE(is_edge(pixel(full, p, u, v)));
          upper += edge;
          lower_full += below && is_edge(pixel(full, p, u, v));
        }
      EXPECT_GT(upper, 100u) << "no edges where the moving image has data";
      EXPECT_GT(lower_full, 100u) << "the negative control: full coverage draws edges below";
    }
}

TEST(QaPicture, CoverageFollowsTheTransformAndTheMovingGrid) {
  const Image reference = regpipe::make_head_phantom(kDims, kVoxelMm, 0);
  Eigen::Matrix4d shift = Eigen::Matrix4d::Identity();
  shift(0, 3) = 5 * kVoxelMm;  // reference world -> moving world: 5 voxels along +x
  const std::vector<uint8_t> covered = regpipe::moving_coverage(reference, reference, shift);
  for (uint32_t z = 0; z < kDims[2]; z += 13)
    for (uint32_t y = 0; y < kDims[1]; y += 11)
      for (uint32_t x = 0; x < kDims[0]; ++x)
        ASSERT_EQ(covered[x + size_t(kDims[0]) * (y + size_t(kDims[1]) * z)], x + 5 < kDims[0]) << x;
}

// A box of `value` on a zero background, on the kDims grid, `dx` voxels along x.
Image box(float value, int dx = 0) {
  return painted(regpipe::make_head_phantom(kDims, kVoxelMm, 0), value, [&](const Eigen::Vector3d& p) {
    const Eigen::Vector3d q = p - Eigen::Vector3d(dx * kVoxelMm, 0, 0);
    return std::abs(q.x()) < 45 && std::abs(q.y()) < 45 && std::abs(q.z()) < 40;
  });
}

// The reference's box outline lies on the moving box's outline when aligned, and off it when
// the moving box is 8 mm away along x (two contrasts: bright and dim box). The moving box's
// own outline is the picture of it over itself; axial and coronal slices do not move with x.
TEST(QaPicture, MisregistrationMovesTheEdgesOffTheMovingImagesBoundaries) {
  const Image reference = box(100.0f);
  auto shared = [&](const Image& moving) {
    const QaPicture over_moving = picture_of(reference, moving);
    const QaPicture own = picture_of(moving, moving);
    double on = 0, total = 0;
    for (size_t i = 0; i < 6; ++i) {
      const QaPanel& p = over_moving.panels[i];
      EXPECT_EQ(p.slice, own.panels[i].slice);
      for (uint32_t v = 0; v < p.height; ++v)
        for (uint32_t u = 0; u < p.width; ++u)
          if (is_edge(pixel(over_moving, p, u, v))) ++total, on += is_edge(pixel(own, p, u, v));
    }
    return total > 0 ? on / total : 0.0;
  };
  const double aligned = shared(box(30.0f)), shifted = shared(box(30.0f, 2));
  std::printf("reference edges on the moving image's edges: aligned %.2f, 8 mm off %.2f\n", aligned, shifted);
  EXPECT_GT(aligned, 0.99);
  EXPECT_LT(shifted, 0.6);  // the edges across x stay on, those along it move off
}

TEST(QaPicture, EdgesAreOneVoxelThick) {
  const Image b = box(100.0f);
  const std::vector<uint8_t> edges = regpipe::reference_edges(b);
  // Along a row through the box's middle: exactly two edge voxels, at its two faces.
  const uint32_t y = kDims[1] / 2, z = kDims[2] / 2;
  std::vector<uint32_t> at;
  for (uint32_t x = 0; x < kDims[0]; ++x)
    if (edges[x + size_t(kDims[0]) * (y + size_t(kDims[1]) * z)]) at.push_back(x);
  ASSERT_EQ(at.size(), 2u);
  EXPECT_GT(b.at(at[0] + 1, y, z) - b.at(at[0] - 1, y, z), 0.0f) << "the rising face";
  EXPECT_LT(b.at(at[1] + 1, y, z) - b.at(at[1] - 1, y, z), 0.0f) << "the falling face";
}

TEST(QaPicture, PngRoundTripThroughItk) {
  const Pair pair;
  const regpipe::RgbPicture pic = picture_of(pair.reference, pair.registered).image;
  regpipe::test::TempDir dir;
  regpipe::write_png(pic, dir / "qa.png");
  const regpipe::RgbPicture back = regpipe::read_png(dir / "qa.png");
  EXPECT_EQ(back.width, pic.width);
  EXPECT_EQ(back.height, pic.height);
  EXPECT_EQ(back.rgb, pic.rgb);
  EXPECT_THROW(regpipe::write_png(pic, dir / "missing" / "qa.png"), regpipe::UserError);
}

TEST(QaPicture, RefusesImagesOrCoverageOnDifferentGrids) {
  const Image a = regpipe::make_head_phantom(kDims, kVoxelMm, 0);
  const Image b = regpipe::make_head_phantom({40, 40, 40}, kVoxelMm, 1);
  EXPECT_THROW(picture_of(a, b), regpipe::UserError);
  EXPECT_THROW(regpipe::make_qa_picture(a, a, everywhere(b), annotation()), regpipe::UserError);
}

TEST(QaPicture, OrientationNames) {
  EXPECT_EQ(regpipe::qa_orientation_from_name("neurological"), QaOrientation::neurological);
  EXPECT_EQ(regpipe::qa_orientation_from_name("radiological"), QaOrientation::radiological);
  EXPECT_THROW(regpipe::qa_orientation_from_name("sideways"), regpipe::UserError);
}
