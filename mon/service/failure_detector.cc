#include "mon/service/failure_detector.h"

#include <string>

namespace dfs::mon {

void FailureDetector::reset(int32_t osd, TimePoint now) {
  last_beacon_[osd] = now;
  reports_.erase(osd);
  down_since_.erase(osd);
}

void FailureDetector::on_beacon(int32_t osd, TimePoint now) { last_beacon_[osd] = now; }

void FailureDetector::on_report(int32_t reporter, int32_t failed, bool refused, TimePoint now) {
  if (reporter == failed) return;
  reports_[failed][reporter] = Report{now, refused};
}

Millis FailureDetector::since_beacon(int32_t osd, TimePoint now) const {
  auto it = last_beacon_.find(osd);
  if (it == last_beacon_.end()) return Millis::max();
  return std::chrono::duration_cast<Millis>(now - it->second);
}

std::vector<FailureDetector::Verdict> FailureDetector::overdue(const ClusterMap& map,
                                                               TimePoint now) const {
  std::vector<Verdict> out;
  for (const auto& osd : map.proto().osds()) {
    if (!osd.up()) continue;
    Millis silent = since_beacon(osd.id(), now);
    if (silent > options_.grace) {
      out.push_back({osd.id(), "no beacon for " + std::to_string(silent.count() / 1000) + " s"});
      continue;
    }
    auto it = reports_.find(osd.id());
    if (it == reports_.end()) continue;
    int reporters = 0;
    bool refused = false;
    for (const auto& [reporter, report] : it->second) {
      if (now - report.at > options_.grace || !map.is_up(reporter)) continue;
      ++reporters;
      refused |= report.refused;
    }
    if (reporters >= options_.min_reporters) {
      out.push_back({osd.id(), "reported failed by " + std::to_string(reporters) + " peers"});
    } else if (refused && silent > 2 * options_.beacon_interval) {
      out.push_back({osd.id(), "refuses connections and sent no beacon for " +
                                   std::to_string(silent.count()) + " ms"});
    }
  }
  return out;
}

std::vector<FailureDetector::Verdict> FailureDetector::out_due(const ClusterMap& map,
                                                               TimePoint now) {
  std::vector<Verdict> out;
  int total = map.proto().osds_size();
  int in = 0;
  for (const auto& osd : map.proto().osds()) {
    if (osd.in()) ++in;
    if (osd.up()) {
      down_since_.erase(osd.id());
    } else {
      down_since_.emplace(osd.id(), now);  // keeps the first sighting
    }
  }
  if (options_.down_out_interval.count() <= 0) return out;
  for (const auto& osd : map.proto().osds()) {
    if (osd.up() || !osd.in()) continue;
    auto down_for = std::chrono::duration_cast<Millis>(now - down_since_.at(osd.id()));
    if (down_for < options_.down_out_interval) continue;
    if (in - 1 < options_.min_in_ratio * total) continue;  // too many would be out
    --in;
    out.push_back({osd.id(), "down for " + std::to_string(down_for.count() / 1000) + " s"});
  }
  return out;
}

}  // namespace dfs::mon
