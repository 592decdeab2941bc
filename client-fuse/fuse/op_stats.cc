#include "client-fuse/fuse/op_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

namespace dfs::fuse {
namespace {

struct OpStats {
  uint64_t count = 0;
  std::chrono::nanoseconds total{0};
  std::chrono::nanoseconds max{0};
};

std::mutex stats_mutex;
std::map<const char*, OpStats>& stats() {
  static std::map<const char*, OpStats> by_op;
  return by_op;
}

std::string duration_text(std::chrono::nanoseconds d) {
  double us = static_cast<double>(d.count()) / 1e3;
  if (us < 1000) return fmt::format("{:.0f} us", us);
  if (us < 1e6) return fmt::format("{:.1f} ms", us / 1e3);
  return fmt::format("{:.2f} s", us / 1e6);
}

}  // namespace

void record_op(const char* op, std::chrono::nanoseconds service_time) {
  std::lock_guard lock(stats_mutex);
  OpStats& s = stats()[op];
  ++s.count;
  s.total += service_time;
  s.max = std::max(s.max, service_time);
}

std::string op_stats_summary() {
  std::vector<std::pair<const char*, OpStats>> rows;
  {
    std::lock_guard lock(stats_mutex);
    rows.assign(stats().begin(), stats().end());
  }
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
  std::string out;
  for (const auto& [op, s] : rows) {
    out += fmt::format("{}{} {} x, avg {}, max {}, total {}", out.empty() ? "" : "\n", op,
                       s.count, duration_text(s.total / s.count), duration_text(s.max),
                       duration_text(s.total));
  }
  return out;
}

}  // namespace dfs::fuse
