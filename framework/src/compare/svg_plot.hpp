// Line plots written directly as SVG: small, dependency-free figures for papers.
#pragma once

#include <string>
#include <vector>

namespace regpipe {

struct PlotSeries {
  std::string name;        // legend entry
  std::vector<double> y;   // one value per x; non-finite values break the line
};

// One figure: labelled axes with ticks, one coloured polyline per series, a legend.
std::string svg_line_plot(const std::string& title, const std::string& x_label,
                          const std::string& y_label, const std::vector<double>& x,
                          const std::vector<PlotSeries>& series);

}  // namespace regpipe
