#include "tools/bench/objbench/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dfs::bench {

double percentile(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  // Nearest rank: ceil(p/100 * n), 1-based, clamped into [1, n].
  double rank = std::ceil(p / 100.0 * static_cast<double>(samples.size()));
  size_t index =
      static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(samples.size()))) - 1;
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(index),
                   samples.end());
  return samples[index];
}

LatencySummary summarize(const std::vector<double>& samples_us) {
  return LatencySummary{samples_us.size(), percentile(samples_us, 50), percentile(samples_us, 99)};
}

double Throughput::mb_per_s() const {
  if (elapsed.count() <= 0) return 0;
  return static_cast<double>(bytes) / 1e6 / std::chrono::duration<double>(elapsed).count();
}

double ratio(double dfs, double local) { return local == 0 ? 0 : dfs / local; }

bool Target::met_by(double value) const {
  switch (kind) {
    case Kind::kAtLeast:
      return value >= bound;
    case Kind::kAtMost:
      return value <= bound;
    case Kind::kNone:
      break;
  }
  return true;
}

std::string Target::to_string() const {
  switch (kind) {
    case Kind::kAtLeast:
      return fmt::format(">= {:.3g}", bound);
    case Kind::kAtMost:
      return fmt::format("<= {:.3g}", bound);
    case Kind::kNone:
      break;
  }
  return "-";
}

}  // namespace dfs::bench
