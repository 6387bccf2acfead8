// Text on an RgbPicture: a 5x7 bitmap font of printable ASCII, drawn scaled on a dark backing
// so that it reads on any image (the QA picture's labels, file names and cost).
#pragma once

#include <regpipe/host/qa_picture.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace regpipe {

// A glyph is 5 x 7 font pixels, each `scale` x `scale` picture pixels, over a descent of 2
// (the tails of g, p, q, y); characters stand one font pixel apart, and the backing reaches
// one font pixel round the text.
constexpr uint32_t kGlyphWidth = 5, kGlyphHeight = 7, kDescent = 2;

struct TextBox {
  uint32_t width = 0, height = 0;  // picture pixels, backing included
};

// The size `text` takes when drawn at `scale`.
TextBox text_box(const std::string& text, uint32_t scale);

// Draws `text` in `colour` with its top-left backing corner at (x, y), on a black backing;
// what falls outside the picture is clipped. Characters outside printable ASCII draw as '?'.
void draw_text(RgbPicture& picture, int x, int y, const std::string& text, uint32_t scale,
               const std::array<uint8_t, 3>& colour);

}  // namespace regpipe
