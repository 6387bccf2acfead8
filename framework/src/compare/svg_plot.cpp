#include "compare/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace regpipe {
namespace {

constexpr double kWidth = 640, kHeight = 420;
constexpr double kLeft = 70, kRight = 190, kTop = 40, kBottom = 60;  // legend on the right
// Colour-blind-safe palette (Okabe & Ito), then greys.
constexpr const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                    "#56B4E9", "#F0E442", "#000000", "#777777", "#BBBBBB"};

std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", std::abs(v) < 1e-12 ? 0.0 : v);
  return buf;
}

// Evenly spaced tick values covering [lo, hi].
std::vector<double> ticks(double lo, double hi) {
  std::vector<double> out;
  for (int i = 0; i <= 4; ++i) out.push_back(lo + (hi - lo) * i / 4.0);
  return out;
}

}  // namespace

std::string svg_line_plot(const std::string& title, const std::string& x_label,
                          const std::string& y_label, const std::vector<double>& x,
                          const std::vector<PlotSeries>& series) {
  double x_lo = x.empty() ? 0.0 : *std::min_element(x.begin(), x.end());
  double x_hi = x.empty() ? 1.0 : *std::max_element(x.begin(), x.end());
  double y_lo = INFINITY, y_hi = -INFINITY;
  for (const auto& s : series)
    for (double v : s.y)
      if (std::isfinite(v)) y_lo = std::min(y_lo, v), y_hi = std::max(y_hi, v);
  if (!(y_lo < y_hi)) y_lo = std::isfinite(y_lo) ? y_lo - 0.5 : 0.0, y_hi = y_lo + 1.0;
  if (!(x_lo < x_hi)) x_hi = x_lo + 1.0;
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto px = [&](double v) { return kLeft + (v - x_lo) / (x_hi - x_lo) * pw; };
  auto py = [&](double v) { return kTop + (1.0 - (v - y_lo) / (y_hi - y_lo)) * ph; };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" viewBox=\"0 0 " << kWidth << ' ' << kHeight << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << kLeft + pw / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">"
      << escaped(title) << "</text>\n"
      << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << pw << "\" height=\"" << ph
      << "\" fill=\"none\" stroke=\"black\"/>\n";
  for (double t : ticks(x_lo, x_hi))
    svg << "<line x1=\"" << px(t) << "\" y1=\"" << kTop + ph << "\" x2=\"" << px(t) << "\" y2=\""
        << kTop + ph + 5 << "\" stroke=\"black\"/><text x=\"" << px(t) << "\" y=\"" << kTop + ph + 18
        << "\" text-anchor=\"middle\">" << number(t) << "</text>\n";
  for (double t : ticks(y_lo, y_hi))
    svg << "<line x1=\"" << kLeft - 5 << "\" y1=\"" << py(t) << "\" x2=\"" << kLeft << "\" y2=\""
        << py(t) << "\" stroke=\"black\"/><text x=\"" << kLeft - 8 << "\" y=\"" << py(t) + 4
        << "\" text-anchor=\"end\">" << number(t) << "</text>\n";
  svg << "<text x=\"" << kLeft + pw / 2 << "\" y=\"" << kHeight - 15 << "\" text-anchor=\"middle\">"
      << escaped(x_label) << "</text>\n"
      << "<text transform=\"translate(18 " << kTop + ph / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
      << escaped(y_label) << "</text>\n";
  for (size_t i = 0; i < series.size(); ++i) {
    const char* colour = kColours[i % std::size(kColours)];
    std::ostringstream points;
    auto flush = [&] {
      if (!points.str().empty())
        svg << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.8\" points=\""
            << points.str() << "\"/>\n";
      points.str("");
    };
    for (size_t j = 0; j < x.size() && j < series[i].y.size(); ++j) {
      if (!std::isfinite(series[i].y[j])) {
        flush();
        continue;
      }
      points << px(x[j]) << ',' << py(series[i].y[j]) << ' ';
    }
    flush();
    const double ly = kTop + 10 + 18.0 * double(i);
    svg << "<line x1=\"" << kWidth - kRight + 12 << "\" y1=\"" << ly << "\" x2=\"" << kWidth - kRight + 36
        << "\" y2=\"" << ly << "\" stroke=\"" << colour << "\" stroke-width=\"2.5\"/><text x=\""
        << kWidth - kRight + 42 << "\" y=\"" << ly + 4 << "\">" << escaped(series[i].name) << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace regpipe
