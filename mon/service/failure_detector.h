// FailureDetector: decides when an up OSD is to be marked down, from its beacons to
// the monitor and from peers' failure reports, and when a down OSD is to be marked out
// (its data re-replicated elsewhere: peering backfills the OSDs CRUSH then picks). Pure
// logic: time comes in as arguments, so the decisions are testable without clocks or
// sockets. Owned by the Monitor.
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
  // Down (as this monitor saw it) for this long: out. Zero: never automatically.
  Millis down_out_interval{600000};
  // No automatic out that would leave fewer than this share of the OSDs in: when many
  // are down at once (a rack, a switch) moving their data would do more harm than
  // waiting for them.
  double min_in_ratio = 0.75;
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
  // Down and in OSDs of `map` that should be marked out at `now`. Notes when each
  // down OSD was first seen down, so call it on every tick; an OSD seen up again, or a
  // new leader's reset(), starts its interval over.
  std::vector<Verdict> out_due(const ClusterMap& map, TimePoint now);

  Millis since_beacon(int32_t osd, TimePoint now) const;

 private:
  struct Report {
    TimePoint at;
    bool refused;
  };
  FailureDetectorOptions options_;
  std::map<int32_t, TimePoint> last_beacon_;
  std::map<int32_t, TimePoint> down_since_;  // down OSDs, from when this monitor saw it
  std::map<int32_t, std::map<int32_t, Report>> reports_;  // failed -> reporter -> report
};

}  // namespace dfs::mon
