#include "tools/bench/objbench/report.h"

#include <fmt/format.h>

namespace dfs::bench {
namespace {

std::string result_of(const Row& row) {
  if (row.target.kind == Target::Kind::kNone) return "info";
  return row.pass() ? "pass" : "FAIL";
}

std::vector<std::string> cells(const Row& row) {
  return {row.figure,
          fmt::format("{:.{}f}", row.dfs, row.decimals),
          fmt::format("{:.{}f}", row.local, row.decimals),
          fmt::format("{:.3f}", row.ratio),
          row.target.to_string(),
          result_of(row)};
}

const std::vector<std::string> kHeader = {"figure", "dfs", "local", "ratio", "target", "result"};

}  // namespace

std::vector<Row> make_rows(const SideResults& dfs, const SideResults& local) {
  auto d = summarize(dfs.small_us);
  auto l = summarize(local.small_us);
  auto row = [](std::string figure, double dfs_value, double local_value, int decimals,
                Target target) {
    return Row{
        std::move(figure), dfs_value, local_value, decimals, ratio(dfs_value, local_value), target};
  };
  return {
      row("4 MiB write, MB/s", dfs.write.mb_per_s(), local.write.mb_per_s(), 1,
          Target::at_least(1.0 / 6.0)),
      row("4 MiB read, MB/s", dfs.read.mb_per_s(), local.read.mb_per_s(), 1, Target::at_least(0.5)),
      row("4 KiB write p50, µs", d.p50_us, l.p50_us, 0, Target::at_most(4)),
      row("4 KiB write p99, µs", d.p99_us, l.p99_us, 0, Target{}),
  };
}

void print_table(std::FILE* out, const std::vector<Row>& rows, bool markdown) {
  std::vector<std::vector<std::string>> table{kHeader};
  for (const auto& row : rows) table.push_back(cells(row));
  if (markdown) {
    auto line = [&](const std::vector<std::string>& c) {
      fmt::print(out, "| {} | {} | {} | {} | {} | {} |\n", c[0], c[1], c[2], c[3], c[4], c[5]);
    };
    line(table[0]);
    fmt::print(out, "|---|--:|--:|--:|:-:|:-:|\n");
    for (size_t i = 1; i < table.size(); ++i) line(table[i]);
    return;
  }
  // fmt pads by display width, so "µs" lines up.
  fmt::print(out, "{:<22} {:>9} {:>9} {:>7}  {:<8} {}\n", table[0][0], table[0][1], table[0][2],
             table[0][3], table[0][4], table[0][5]);
  for (size_t i = 1; i < table.size(); ++i) {
    const auto& c = table[i];
    fmt::print(out, "{:<22} {:>9} {:>9} {:>7}  {:<8} {}\n", c[0], c[1], c[2], c[3], c[4], c[5]);
  }
}

std::vector<std::string> verdict(const std::vector<Row>& rows) {
  std::vector<std::string> missed;
  for (const auto& row : rows) {
    if (row.pass()) continue;
    missed.push_back(fmt::format("target missed: {}: ratio {:.3f}, target {}", row.figure,
                                 row.ratio, row.target.to_string()));
  }
  if (missed.empty()) missed.push_back("all targets met");
  return missed;
}

}  // namespace dfs::bench
