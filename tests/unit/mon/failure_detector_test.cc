#include <doctest/doctest.h>

#include "mon/service/failure_detector.h"

namespace dfs::mon {
namespace {

ClusterMap three_up_osds() {
  ClusterMap map;
  for (int i = 0; i < 3; ++i) {
    proto::MapCommand c;
    auto* b = c.mutable_boot_osd();
    b->set_id(i);
    b->set_addr("a");
    b->set_host("h" + std::to_string(i));
    b->set_weight(1);
    REQUIRE(map.apply(c));
  }
  return map;
}

}  // namespace

TEST_CASE("mon/failure_detector: silence past the grace marks down") {
  FailureDetector detector({.grace = Millis(20000), .beacon_interval = Millis(1000), .min_reporters = 2});
  ClusterMap map = three_up_osds();
  TimePoint t0{};
  for (int i = 0; i < 3; ++i) detector.reset(i, t0);
  detector.on_beacon(0, t0 + Millis(19000));
  detector.on_beacon(1, t0 + Millis(19000));
  CHECK(detector.overdue(map, t0 + Millis(19500)).empty());
  auto verdicts = detector.overdue(map, t0 + Millis(20500));
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].osd == 2);
}

TEST_CASE("mon/failure_detector: reports need enough distinct live reporters") {
  FailureDetector detector({.grace = Millis(20000), .beacon_interval = Millis(1000), .min_reporters = 2});
  ClusterMap map = three_up_osds();
  TimePoint t0{};
  for (int i = 0; i < 3; ++i) detector.reset(i, t0);
  detector.on_report(0, 2, false, t0 + Millis(100));
  detector.on_report(0, 2, false, t0 + Millis(200));  // same reporter twice counts once
  CHECK(detector.overdue(map, t0 + Millis(300)).empty());
  detector.on_report(1, 2, false, t0 + Millis(400));
  auto verdicts = detector.overdue(map, t0 + Millis(500));
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].osd == 2);
  // Self-reports are ignored.
  detector.on_report(1, 1, false, t0 + Millis(600));
  CHECK(detector.overdue(map, t0 + Millis(700)).size() == 1);
}

TEST_CASE("mon/failure_detector: refused connections count once beacons stop") {
  FailureDetector detector({.grace = Millis(20000), .beacon_interval = Millis(1000), .min_reporters = 2});
  ClusterMap map = three_up_osds();
  TimePoint t0{};
  for (int i = 0; i < 3; ++i) detector.reset(i, t0);
  detector.on_beacon(2, t0 + Millis(1000));
  detector.on_report(0, 2, true, t0 + Millis(1500));
  CHECK(detector.overdue(map, t0 + Millis(2000)).empty());  // it beaconed 1 s ago
  auto verdicts = detector.overdue(map, t0 + Millis(3500));
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].osd == 2);
}

}  // namespace dfs::mon
