#include "tools/dfs/bench/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dfs::bench {
namespace {

constexpr double kWidth = 720, kHeight = 440;
constexpr double kLeft = 80, kRight = 170, kTop = 50, kBottom = 70;  // margins
// Distinguishable colours (Okabe-Ito), cycled.
constexpr const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                    "#E69F00", "#56B4E9", "#F0E442", "#000000"};

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string tick_label(double v) {
  if (v == std::floor(v)) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{:g}", v);
}

}  // namespace

double nice_step(double max) {
  if (!(max > 0)) return 1;
  double raw = max / 5;
  double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * magnitude) return m * magnitude;
  }
  return 10 * magnitude;
}

std::string render_svg(const LinePlot& plot) {
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  double max = 0;
  for (const auto& s : plot.series) {
    for (double v : s.values) max = std::max(max, v);
  }
  const double step = nice_step(max);
  const double top = std::max(step, std::ceil(max / step) * step);
  const size_t n = std::max<size_t>(plot.x_labels.size(), 1);
  auto x_of = [&](size_t i) { return kLeft + (n == 1 ? plot_w / 2 : plot_w * i / (n - 1)); };
  auto y_of = [&](double v) { return kTop + plot_h * (1 - v / top); };

  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">{3}</text>\n",
      kWidth, kHeight, kLeft + plot_w / 2, escape(plot.title));
  // Horizontal grid lines and y ticks.
  for (double v = 0; v <= top + step / 2; v += step) {
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kLeft, y_of(v), kLeft + plot_w, kLeft - 8, y_of(v) + 4, tick_label(v));
  }
  // Axes, x ticks and the axis labels.
  out += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n"
      "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"black\"/>\n",
      kLeft, kTop, kTop + plot_h, kLeft + plot_w);
  for (size_t i = 0; i < plot.x_labels.size(); ++i) {
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x_of(i),
                       kTop + plot_h + 18, escape(plot.x_labels[i]));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + plot_w / 2,
                     kHeight - 20, escape(plot.x_label));
  out += fmt::format(
      "<text x=\"18\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {0})\">{1}</text>\n",
      kTop + plot_h / 2, escape(plot.y_label));
  // One line per series, then its legend entry.
  for (size_t s = 0; s < plot.series.size(); ++s) {
    const auto& series = plot.series[s];
    const char* colour = kColours[s % std::size(kColours)];
    std::string points;
    for (size_t i = 0; i < series.values.size() && i < plot.x_labels.size(); ++i) {
      if (series.values[i] < 0) continue;
      points += fmt::format("{:.1f},{:.1f} ", x_of(i), y_of(series.values[i]));
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", x_of(i),
                         y_of(series.values[i]), colour);
    }
    if (!points.empty()) points.pop_back();
    out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n",
                       colour, points);
    const double ly = kTop + 10 + 20.0 * s;
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" stroke-width=\"2\"/>\n"
        "<text x=\"{4}\" y=\"{5:.1f}\">{6}</text>\n",
        kLeft + plot_w + 15, ly, kLeft + plot_w + 40, colour, kLeft + plot_w + 46, ly + 4,
        escape(series.name));
  }
  out += "</svg>\n";
  return out;
}

}  // namespace dfs::bench
