#include <doctest/doctest.h>

#include "mon/service/failure_detector.h"

namespace dfs::mon {
namespace {

ClusterMap up_osds(int count) {
  ClusterMap map;
  for (int i = 0; i < count; ++i) {
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

void mark_down(ClusterMap& map, int32_t osd) {
  proto::MapCommand c;
  c.mutable_mark_down()->set_id(osd);
  REQUIRE(map.apply(c));
}

}  // namespace

TEST_CASE("mon/failure_detector: silence past the grace marks down") {
  FailureDetector detector({.grace = Millis(20000), .beacon_interval = Millis(1000), .min_reporters = 2});
  ClusterMap map = up_osds(3);
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
  ClusterMap map = up_osds(3);
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
  ClusterMap map = up_osds(3);
  TimePoint t0{};
  for (int i = 0; i < 3; ++i) detector.reset(i, t0);
  detector.on_beacon(2, t0 + Millis(1000));
  detector.on_report(0, 2, true, t0 + Millis(1500));
  CHECK(detector.overdue(map, t0 + Millis(2000)).empty());  // it beaconed 1 s ago
  auto verdicts = detector.overdue(map, t0 + Millis(3500));
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].osd == 2);
}


TEST_CASE("mon/failure_detector: a down OSD is marked out after the interval") {
  FailureDetector detector({.grace = Millis(20000), .beacon_interval = Millis(1000),
                            .min_reporters = 2, .down_out_interval = Millis(600000)});
  ClusterMap map = up_osds(4);
  TimePoint t0{};
  CHECK(detector.out_due(map, t0).empty());
  mark_down(map, 3);
  CHECK(detector.out_due(map, t0 + Millis(1000)).empty());  // first seen down now
  CHECK(detector.out_due(map, t0 + Millis(600000)).empty());
  auto verdicts = detector.out_due(map, t0 + Millis(601500));
  REQUIRE(verdicts.size() == 1);
  CHECK(verdicts[0].osd == 3);

  SUBCASE("coming back up starts the interval over") {
    proto::MapCommand boot;
    boot.mutable_boot_osd()->set_id(3);
    boot.mutable_boot_osd()->set_addr("a");
    boot.mutable_boot_osd()->set_host("h3");
    boot.mutable_boot_osd()->set_weight(1);
    REQUIRE(map.apply(boot));
    CHECK(detector.out_due(map, t0 + Millis(602000)).empty());
    mark_down(map, 3);
    CHECK(detector.out_due(map, t0 + Millis(603000)).empty());
    CHECK(detector.out_due(map, t0 + Millis(1202000)).empty());
    CHECK(detector.out_due(map, t0 + Millis(1203500)).size() == 1);
  }
  SUBCASE("a new leader's reset starts it over too") {
    detector.reset(3, t0 + Millis(601000));
    CHECK(detector.out_due(map, t0 + Millis(602000)).empty());
    CHECK(detector.out_due(map, t0 + Millis(1202500)).size() == 1);
  }
}

TEST_CASE("mon/failure_detector: no automatic out below the minimum share of OSDs in") {
  FailureDetector detector({.grace = Millis(20000), .beacon_interval = Millis(1000),
                            .min_reporters = 2, .down_out_interval = Millis(1000),
                            .min_in_ratio = 0.75});
  SUBCASE("three OSDs: taking one out would leave 2 of 3 in") {
    ClusterMap map = up_osds(3);
    mark_down(map, 2);
    detector.out_due(map, TimePoint{});
    CHECK(detector.out_due(map, TimePoint{} + Millis(5000)).empty());
  }
  SUBCASE("four OSDs, two down: only one goes out") {
    ClusterMap map = up_osds(4);
    mark_down(map, 2);
    mark_down(map, 3);
    detector.out_due(map, TimePoint{});
    CHECK(detector.out_due(map, TimePoint{} + Millis(5000)).size() == 1);
  }
  SUBCASE("interval zero: never") {
    FailureDetector never({.grace = Millis(20000), .beacon_interval = Millis(1000),
                           .min_reporters = 2, .down_out_interval = Millis(0)});
    ClusterMap map = up_osds(4);
    mark_down(map, 3);
    never.out_due(map, TimePoint{});
    CHECK(never.out_due(map, TimePoint{} + Millis(10000000)).empty());
  }
}

}  // namespace dfs::mon
