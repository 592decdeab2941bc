// What `dfs bench` writes: every raw run as CSV, and per suite a Markdown table of the
// median of each figure on each target beside the baseline's, as a ratio. A figure that
// failed on any target is shown as failed with its reason, and the table says it is
// incomplete: a partial result is never passed off as a whole one.
#pragma once

#include <string>
#include <vector>

namespace dfs::bench {

struct Sample {
  std::string suite;   // "fio", "db", "tree", "meta"
  std::string figure;  // "randwrite 4k, 1 job"
  std::string unit;    // "MB/s", "IOPS", "s", "us", "files/s"
  bool higher_is_better = true;
  std::string target;  // a label: "/mnt/dfs" or "baseline /var/tmp/dfs-bench"
  bool baseline = false;
  int round = 1;
  double value = 0;
  std::string error;  // non-empty: this run failed and `value` means nothing
};

struct Table {
  std::string markdown;
  bool complete = true;  // every figure measured on every target
};

// The table of `suite`'s samples, figures in the order first seen.
Table markdown_table(const std::vector<Sample>& samples, const std::string& suite);

// One line per sample: suite,figure,unit,target,baseline,round,value,error (RFC 4180
// quoting).
std::string to_csv(const std::vector<Sample>& samples);

// The median of `values` (empty: 0).
double median(std::vector<double> values);

}  // namespace dfs::bench
