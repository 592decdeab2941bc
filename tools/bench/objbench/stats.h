// The arithmetic of objbench: percentiles of latency samples, throughput of a timed
// phase, dfs/local ratios and the targets. Pure functions, no I/O, so that
// stats_test.cc can pin them down.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace dfs::bench {

// The p-th percentile (0 < p <= 100) of `samples` by the nearest-rank method: the
// smallest sample that at least p% of the samples are less than or equal to.
// Returns 0 for no samples.
double percentile(std::vector<double> samples, double p);

struct LatencySummary {
  size_t count = 0;
  double p50_us = 0;
  double p99_us = 0;
};
LatencySummary summarize(const std::vector<double>& samples_us);

// Bytes moved and the wall time they took, summed over the rounds of one figure.
struct Throughput {
  uint64_t bytes = 0;
  std::chrono::nanoseconds elapsed{0};

  void add(const Throughput& other) {
    bytes += other.bytes;
    elapsed += other.elapsed;
  }
  // Decimal megabytes (10^6 bytes) per second; 0 when nothing was timed.
  double mb_per_s() const;
};

// dfs / local; 0 when local is 0 (nothing to compare with).
double ratio(double dfs, double local);

// A bound on a ratio: throughput ratios must reach a minimum, latency ratios stay
// under a maximum; kNone marks an informational row.
struct Target {
  enum class Kind { kNone, kAtLeast, kAtMost };
  Kind kind = Kind::kNone;
  double bound = 0;

  static Target at_least(double bound) { return {Kind::kAtLeast, bound}; }
  static Target at_most(double bound) { return {Kind::kAtMost, bound}; }
  // Whether `value` meets the target; always true for kNone.
  bool met_by(double value) const;
  // ">= 0.167", "<= 4", or "-".
  std::string to_string() const;
};

}  // namespace dfs::bench
