// FailureDetector: decides when an up OSD is to be marked down, from its beacons to
// the monitor and from peers' failure reports. Pure logic: time comes in as arguments,
// so the decision is testable without clocks or sockets. Owned by the Monitor.
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <vector>

#include "common/map/cluster_map.h"

namespace dfs::mon {

using TimePoint = std::chrono::steady_clock::time_point;
using Millis = std::chrono::milliseconds;

struct FailureDetectorOptions {
  Millis grace{20000};           // no beacon for this long: down
  Millis beacon_interval{1000};  // how often OSDs send beacons
  int min_reporters = 2;         // distinct peers whose reports mark an OSD down
};

class FailureDetector {
 public:
  explicit FailureDetector(FailureDetectorOptions options) : options_(options) {}

  // Starts the clock for every up OSD (after monitor start or an OSD boot).
  void reset(int32_t osd, TimePoint now);
  void on_beacon(int32_t osd, TimePoint now);
  // A peer failed to reach `failed`. `refused`: nothing listens at its address, which
  // is decisive once the OSD's own beacons have also stopped.
  void on_report(int32_t reporter, int32_t failed, bool refused, TimePoint now);

  // Up OSDs of `map` that should be marked down at `now`, with the reason.
  struct Verdict {
    int32_t osd;
    std::string reason;
  };
  std::vector<Verdict> overdue(const ClusterMap& map, TimePoint now) const;

  Millis since_beacon(int32_t osd, TimePoint now) const;

 private:
  struct Report {
    TimePoint at;
    bool refused;
  };
  FailureDetectorOptions options_;
  std::map<int32_t, TimePoint> last_beacon_;
  std::map<int32_t, std::map<int32_t, Report>> reports_;  // failed -> reporter -> report
};

}  // namespace dfs::mon
