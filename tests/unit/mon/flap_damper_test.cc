#include "mon/service/flap_damper.h"

#include <doctest/doctest.h>

namespace dfs::mon {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

FlapDamperOptions options() {
  FlapDamperOptions o;
  o.max_downs = 3;
  o.period = seconds(100);
  o.hold = seconds(10);
  o.max_hold = seconds(40);
  return o;
}

}  // namespace

TEST_CASE("mon/flap_damper: an OSD that went down too often is held back, longer each time") {
  FlapDamper damper(options());
  auto t = FlapDamper::TimePoint{} + seconds(1000);
  damper.on_down(7, t);
  damper.on_down(7, t + seconds(5));
  CHECK_FALSE(damper.held_for(7, t + seconds(6)));  // two downs: fine
  damper.on_down(7, t + seconds(10));
  auto held = damper.held_for(7, t + seconds(11));
  REQUIRE(held);
  CHECK(*held == seconds(9));  // 10 s from the third down
  CHECK_FALSE(damper.held_for(7, t + seconds(20)));
  CHECK_FALSE(damper.held_for(3, t + seconds(11)));  // other OSDs are not affected
  damper.on_down(7, t + seconds(30));
  CHECK(*damper.held_for(7, t + seconds(30)) == seconds(20));  // doubled
  damper.on_down(7, t + seconds(60));
  damper.on_down(7, t + seconds(61));
  CHECK(*damper.held_for(7, t + seconds(61)) == seconds(40));  // capped at max_hold
  CHECK(damper.downs_within_period(7, t + seconds(61)) == 6);
}

TEST_CASE("mon/flap_damper: downs older than the period are forgotten, 0 never damps") {
  FlapDamper damper(options());
  auto t = FlapDamper::TimePoint{} + seconds(1000);
  for (int i = 0; i < 3; ++i) damper.on_down(1, t + seconds(i));
  CHECK(damper.held_for(1, t + seconds(3)));
  CHECK_FALSE(damper.held_for(1, t + seconds(150)));
  CHECK(damper.downs_within_period(1, t + seconds(150)) == 0);
  auto never = options();
  never.max_downs = 0;
  FlapDamper off(never);
  for (int i = 0; i < 10; ++i) off.on_down(1, t + seconds(i));
  CHECK_FALSE(off.held_for(1, t + seconds(10)));
}

}  // namespace dfs::mon
