// Line plots as standalone SVG, the way the public storage comparisons draw them:
// throughput against block size, one line per target. No plotting library in Debian's
// C++ set does this without a GUI stack; an SVG is a few hundred lines of text.
#pragma once

#include <string>
#include <vector>

namespace dfs::bench {

struct PlotSeries {
  std::string name;          // the legend's entry
  std::vector<double> values;  // one per x label; negative: no point (missing)
};

struct LinePlot {
  std::string title;
  std::string x_label;                // "block size"
  std::string y_label;                // "MB/s"
  std::vector<std::string> x_labels;  // categories, evenly spaced: "4k", "8k", ...
  std::vector<PlotSeries> series;
};

// A complete SVG document (XML declaration, width and height, axes with labels and
// ticks, one polyline with markers per series, a legend). Text is escaped.
std::string render_svg(const LinePlot& plot);

// The tick step for an axis from 0 to `max` with about five ticks: 1, 2 or 5 x 10^n.
double nice_step(double max);

}  // namespace dfs::bench
