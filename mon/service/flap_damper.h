// FlapDamper: keeps an OSD that keeps failing and coming back out of the map for a
// while, so that its PGs do not re-peer every few seconds. Each time an OSD is marked
// down is counted; one that went down `max_downs` times within `period` has its next
// boot refused for `hold`, which doubles with each further down inside the period (up
// to `max_hold`). Pure logic with time as an argument, like FailureDetector; owned by
// the Monitor (the leader's view only: a new leader starts with a clean slate).
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <optional>

namespace dfs::mon {

struct FlapDamperOptions {
  int max_downs = 5;                                 // 0: never damp
  std::chrono::milliseconds period{600000};          // 10 min
  std::chrono::milliseconds hold{60000};             // the first hold
  std::chrono::milliseconds max_hold{600000};
};

class FlapDamper {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  explicit FlapDamper(FlapDamperOptions options) : options_(options) {}

  void on_down(int32_t osd, TimePoint now);
  // How much longer a boot of `osd` must wait at `now`; nullopt: it may boot.
  std::optional<std::chrono::milliseconds> held_for(int32_t osd, TimePoint now) const;
  // Downs within the period before `now` (for the refusal's words).
  int downs_within_period(int32_t osd, TimePoint now) const;

 private:
  FlapDamperOptions options_;
  std::map<int32_t, std::deque<TimePoint>> downs_;  // each OSD's recent downs, oldest first
};

}  // namespace dfs::mon
