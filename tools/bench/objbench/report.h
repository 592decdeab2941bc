// objbench's results table: one row per figure with the dfs value, the local baseline,
// their ratio and the target for that ratio. Printed as aligned text or as
// Markdown, followed by the list of missed targets.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "tools/bench/objbench/stats.h"

namespace dfs::bench {

// Everything one side measured, summed over the rounds.
struct SideResults {
  Throughput write;
  Throughput read;
  std::vector<double> small_us;
};

struct Row {
  std::string figure;
  double dfs = 0;
  double local = 0;
  int decimals = 0;  // for dfs and local
  double ratio = 0;
  Target target;
  bool pass() const { return target.met_by(ratio); }
};

// The targets of the object-tier issue, as ratios dfs / local:
//   4 MiB writes >= 1/6 (half of a third: 3 replicas share the bandwidth),
//   4 MiB reads >= 1/2, 4 KiB write p50 <= 4x a local write + fdatasync.
std::vector<Row> make_rows(const SideResults& dfs, const SideResults& local);

void print_table(std::FILE* out, const std::vector<Row>& rows, bool markdown);

// "all targets met", or one line per missed target.
std::vector<std::string> verdict(const std::vector<Row>& rows);

}  // namespace dfs::bench
