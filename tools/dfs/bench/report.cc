#include "tools/dfs/bench/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace dfs::bench {
namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string format_value(double v) {
  if (v >= 100) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

// One figure on one target: its rounds' values, or why it failed.
struct Cell {
  std::vector<double> values;
  std::string error;
};

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

Table markdown_table(const std::vector<Sample>& samples, const std::string& suite) {
  std::vector<std::string> figures, targets;
  std::string baseline;
  std::map<std::string, const Sample*> first_of_figure;
  std::map<std::pair<std::string, std::string>, Cell> cells;  // (figure, target)
  for (const auto& s : samples) {
    if (s.suite != suite) continue;
    if (first_of_figure.emplace(s.figure, &s).second) figures.push_back(s.figure);
    if (s.baseline) {
      baseline = s.target;
    } else if (std::find(targets.begin(), targets.end(), s.target) == targets.end()) {
      targets.push_back(s.target);
    }
    auto& cell = cells[{s.figure, s.target}];
    if (!s.error.empty()) {
      cell.error = s.error;
    } else {
      cell.values.push_back(s.value);
    }
  }
  Table table;
  table.markdown = "| figure | target | value | baseline | ratio |\n|---|---|--:|--:|--:|\n";
  for (const auto& figure : figures) {
    const Sample& f = *first_of_figure[figure];
    const Cell& base = cells[{figure, baseline}];
    const bool base_ok = base.error.empty() && !base.values.empty();
    const double base_value = median(base.values);
    for (const auto& target : targets) {
      const Cell& cell = cells[{figure, target}];
      std::string value, ratio;
      if (!cell.error.empty() || cell.values.empty()) {
        value = "failed: " + (cell.error.empty() ? std::string("not run") : cell.error);
        table.complete = false;
      } else {
        double v = median(cell.values);
        value = format_value(v) + " " + f.unit;
        ratio = base_ok && base_value > 0 ? fmt::format("{:.2f}", v / base_value) : "-";
      }
      std::string base_text = base_ok ? format_value(base_value) + " " + f.unit
                                      : "failed: " + (base.error.empty() ? std::string("not run") : base.error);
      if (!base_ok) table.complete = false;
      table.markdown += fmt::format("| {} | {} | {} | {} | {} |\n", figure, target, value, base_text,
                                    ratio.empty() ? "-" : ratio);
    }
  }
  table.markdown += fmt::format(
      "\nMedians of the rounds; ratio = target / baseline ({} is better for times and "
      "latencies, higher for rates).\n",
      "lower");
  if (!table.complete) {
    table.markdown = "**INCOMPLETE: some figures failed (below); this table is not a result.**\n\n" +
                     table.markdown;
  }
  return table;
}

std::string to_csv(const std::vector<Sample>& samples) {
  std::string out = "suite,figure,unit,target,baseline,round,value,error\n";
  for (const auto& s : samples) {
    out += fmt::format("{},{},{},{},{},{},{},{}\n", csv_field(s.suite), csv_field(s.figure),
                       csv_field(s.unit), csv_field(s.target), s.baseline ? 1 : 0, s.round,
                       s.error.empty() ? fmt::format("{:g}", s.value) : "", csv_field(s.error));
  }
  return out;
}

}  // namespace dfs::bench
