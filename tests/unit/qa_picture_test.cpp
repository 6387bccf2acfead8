// The QA picture: its layout and size, reference edges drawn exactly where the reference has
// them, and a misregistered pair told apart from an aligned one; PNG round trip through ITK.
#include <regpipe/host/error.hpp>
#include <regpipe/host/phantom.hpp>
#include <regpipe/host/qa_picture.hpp>

#include "support/test_support.hpp"

namespace {

using regpipe::Image;

constexpr std::array<uint32_t, 3> kDims{48, 44, 40};  // unequal, so a swapped axis shows

// The image moved by `voxels` along every axis (content shifted, background 0 entering).
Image shifted(const Image& image, int voxels) {
  Image out = image;
  const auto& d = image.dims;
  auto inside = [&](int v, int a) { return v >= 0 && v < int(d[a]); };
  for (uint32_t z = 0; z < d[2]; ++z)
    for (uint32_t y = 0; y < d[1]; ++y)
      for (uint32_t x = 0; x < d[0]; ++x) {
        const int sx = int(x) - voxels, sy = int(y) - voxels, sz = int(z) - voxels;
        out.data[x + size_t(d[0]) * (y + size_t(d[1]) * z)] =
            inside(sx, 0) && inside(sy, 1) && inside(sz, 2) ? image.at(uint32_t(sx), uint32_t(sy), uint32_t(sz)) : 0.0f;
      }
  return out;
}

bool is_edge_colour(const std::array<uint8_t, 3>& px) { return px == regpipe::kQaEdgeColour; }

// Of the picture's axial edge pixels, the fraction where the registered image has an edge too.
double edges_shared_with(const regpipe::RgbPicture& pic, const Image& registered) {
  const std::vector<uint8_t> own = regpipe::reference_edges(registered);
  const uint32_t mz = kDims[2] / 2;
  double shared = 0, total = 0;
  for (uint32_t y = 0; y < kDims[1]; ++y)
    for (uint32_t x = 0; x < kDims[0]; ++x)
      if (is_edge_colour(pic.at(x, y))) {
        ++total;
        shared += own[x + size_t(kDims[0]) * (y + size_t(kDims[1]) * mz)];
      }
  return total > 0 ? shared / total : 0.0;
}

}  // namespace

TEST(QaPicture, ThreeMidSlicesSideBySide) {
  const Image t1 = regpipe::make_head_phantom(kDims, 4.0, 0);
  const regpipe::RgbPicture pic = regpipe::make_qa_picture(t1, regpipe::make_head_phantom(kDims, 4.0, 1));
  EXPECT_EQ(pic.width, 2 * kDims[0] + kDims[1]);
  EXPECT_EQ(pic.height, std::max(kDims[1], kDims[2]));
  ASSERT_EQ(pic.rgb.size(), size_t(pic.width) * pic.height * 3);
  // Below the shorter coronal and sagittal slices the picture is black.
  for (uint32_t u = kDims[0]; u < pic.width; ++u)
    for (uint32_t v = kDims[2]; v < pic.height; ++v)
      ASSERT_EQ(pic.at(u, v), (std::array<uint8_t, 3>{0, 0, 0})) << u << "," << v;
}

TEST(QaPicture, EdgePixelsAreColouredExactlyWhereTheReferenceHasEdges) {
  const Image t1 = regpipe::make_head_phantom(kDims, 4.0, 0);
  const regpipe::RgbPicture pic = regpipe::make_qa_picture(t1, regpipe::make_head_phantom(kDims, 4.0, 1));
  const std::vector<uint8_t> edges = regpipe::reference_edges(t1);
  const auto edge = [&](uint32_t x, uint32_t y, uint32_t z) {
    return edges[x + size_t(kDims[0]) * (y + size_t(kDims[1]) * z)] != 0;
  };
  const uint32_t mx = kDims[0] / 2, my = kDims[1] / 2, mz = kDims[2] / 2;
  size_t coloured = 0;
  for (uint32_t y = 0; y < kDims[1]; ++y)
    for (uint32_t x = 0; x < kDims[0]; ++x) {
      ASSERT_EQ(is_edge_colour(pic.at(x, y)), edge(x, y, mz)) << "axial " << x << "," << y;
      coloured += edge(x, y, mz);
    }
  for (uint32_t z = 0; z < kDims[2]; ++z) {
    for (uint32_t x = 0; x < kDims[0]; ++x)
      ASSERT_EQ(is_edge_colour(pic.at(kDims[0] + x, kDims[2] - 1 - z)), edge(x, my, z)) << "coronal " << x << "," << z;
    for (uint32_t y = 0; y < kDims[1]; ++y)
      ASSERT_EQ(is_edge_colour(pic.at(2 * kDims[0] + y, kDims[2] - 1 - z)), edge(mx, y, z)) << "sagittal " << y << "," << z;
  }
  // The head's outline and inner boundaries, not noise or nothing: a few percent of the slice.
  EXPECT_GT(coloured, kDims[0] * kDims[1] / 20) << "too few edge pixels";
  EXPECT_LT(coloured, kDims[0] * kDims[1] / 2) << "too many edge pixels";
  EXPECT_FALSE(is_edge_colour(pic.at(0, 0))) << "background corner drawn as an edge";
}

// A box of `value` on a zero background, on the kDims grid of 4 mm voxels.
Image box(float value) {
  Image image = regpipe::make_head_phantom(kDims, 4.0, 0);  // for the grid
  for (uint32_t z = 0; z < kDims[2]; ++z)
    for (uint32_t y = 0; y < kDims[1]; ++y)
      for (uint32_t x = 0; x < kDims[0]; ++x)
        image.data[x + size_t(kDims[0]) * (y + size_t(kDims[1]) * z)] =
            x >= 12 && x < 36 && y >= 10 && y < 34 && z >= 10 && z < 30 ? value : 0.0f;
  return image;
}

// The reference's box outline lies on the moving box's outline when aligned, and off it when
// the moving box is 8 mm away along each axis (two contrasts: bright and dim box).
TEST(QaPicture, MisregistrationMovesTheEdgesOffTheMovingImagesBoundaries) {
  const Image reference = box(100.0f);
  const Image aligned = box(30.0f);
  const Image misregistered = shifted(aligned, 2);
  const double on_aligned = edges_shared_with(regpipe::make_qa_picture(reference, aligned), aligned);
  const double on_shifted = edges_shared_with(regpipe::make_qa_picture(reference, misregistered), misregistered);
  std::printf("reference edges on the moving image's edges: aligned %.2f, 8 mm off along each axis %.2f\n",
              on_aligned, on_shifted);
  EXPECT_GT(on_aligned, 0.99);
  EXPECT_LT(on_shifted, 0.2);
}

TEST(QaPicture, PngRoundTripThroughItk) {
  const Image t1 = regpipe::make_head_phantom(kDims, 4.0, 0);
  const regpipe::RgbPicture pic = regpipe::make_qa_picture(t1, regpipe::make_head_phantom(kDims, 4.0, 1));
  regpipe::test::TempDir dir;
  regpipe::write_png(pic, dir / "qa.png");
  const regpipe::RgbPicture back = regpipe::read_png(dir / "qa.png");
  EXPECT_EQ(back.width, pic.width);
  EXPECT_EQ(back.height, pic.height);
  EXPECT_EQ(back.rgb, pic.rgb);
  EXPECT_THROW(regpipe::write_png(pic, dir / "missing" / "qa.png"), regpipe::UserError);
}

TEST(QaPicture, RefusesImagesOnDifferentGrids) {
  const Image a = regpipe::make_head_phantom(kDims, 4.0, 0);
  const Image b = regpipe::make_head_phantom({40, 40, 40}, 4.0, 1);
  EXPECT_THROW(regpipe::make_qa_picture(a, b), regpipe::UserError);
}
