#include <doctest/doctest.h>

#include "tests/unit/caps/cap_table_fixture.h"

namespace dfs::caps::test {
namespace {

CapTable second_instance() {
  CapTableOptions o = short_options();
  o.incarnation = 2;
  return CapTable(o);
}

TEST_CASE("caps/failover: nothing is granted until every known session reconnected") {
  CapTable t = second_instance();
  t.begin_reconnect({1, 2}, 0);
  CHECK(t.reconnecting());
  CHECK(t.renew(1, 1).error().code() == ErrorCode::kUnavailable);
  Result<TimeMs> lease =
      t.reconnect(1, Reconnect{2, 1, {HeldCap{7, InodeKind::kFile, kDataBuffer, kFileRights}}}, 1);
  REQUIRE(lease);
  CHECK(*lease == 1000);
  CHECK(t.held(1, 7) == kDataBuffer);
  // A reconnected session may ask, but is answered only once the phase ends.
  REQUIRE(t.want(1, want_of(8, kDataRead, 1), 2));
  CHECK(t.take_outbox().empty());
  REQUIRE(
      t.reconnect(2, Reconnect{2, 3, {HeldCap{9, InodeKind::kDir, kDirShared, kDirShared}}}, 3));
  CHECK_FALSE(t.reconnecting());
  std::vector<Grant> grants = sent<Grant>(t.take_outbox(), 1);
  REQUIRE(grants.size() == 2);  // the answer, and the rest of what it wants on 7 (alone)
  for (const Grant& g : grants) {
    CHECK(g.seq > seq_base(2));
    if (g.ino == 8) CHECK(g.want_id == 1);
    if (g.ino == 7) CHECK(g.issued == kFileRights);
  }
}

TEST_CASE("caps/failover: sessions missing at the end of the grace are evicted") {
  CapTable t = second_instance();
  t.begin_reconnect({1, 2}, 0);
  REQUIRE(t.reconnect(1, Reconnect{2, 0, {HeldCap{7, InodeKind::kFile, kDataRead, kDataRead}}}, 0));
  REQUIRE(t.renew(1, 900));
  t.tick(999);
  CHECK(t.reconnecting());
  t.tick(1000);
  CHECK_FALSE(t.reconnecting());
  CHECK(t.fenced(2));
  CHECK(only<Evicted>(t.take_outbox(), 2).session == 2);
  CHECK(t.reconnect(2, Reconnect{2, 0, {}}, 1001).error().code() == ErrorCode::kPermissionDenied);
  CHECK(t.reconnect(3, Reconnect{2, 0, {}}, 1001).error().code() == ErrorCode::kNotFound);
}

TEST_CASE("caps/failover: a reconnect meant for another instance is refused") {
  CapTable t = second_instance();
  t.begin_reconnect({1}, 0);
  CHECK(t.reconnect(1, Reconnect{1, 0, {}}, 0).error().code() == ErrorCode::kStaleEpoch);
  CHECK(t.reconnecting());
  REQUIRE(t.reconnect(1, Reconnect{2, 0, {}}, 0));
  CHECK_FALSE(t.reconnecting());
}

TEST_CASE("caps/failover: a claim that conflicts with another's gets its session evicted") {
  CapTable t = second_instance();
  t.begin_reconnect({1, 2}, 0);
  REQUIRE(t.reconnect(1, Reconnect{2, 0, {HeldCap{7, InodeKind::kFile, kDataBuffer, {}}}}, 0));
  Result<TimeMs> r =
      t.reconnect(2, Reconnect{2, 0, {HeldCap{7, InodeKind::kFile, kDataRead, {}}}}, 0);
  CHECK(r.error().code() == ErrorCode::kPermissionDenied);
  CHECK(t.fenced(2));
  CHECK(t.held(1, 7) == kDataBuffer);
}

TEST_CASE("caps/failover: acks from the previous instance are stale") {
  CapTable t = second_instance();
  t.begin_reconnect({1}, 0);
  REQUIRE(
      t.reconnect(1, Reconnect{2, 0, {HeldCap{7, InodeKind::kFile, kDataBuffer, kNoRights}}}, 0));
  REQUIRE(t.ack(1, Ack{7, seq_base(1) + 5, kNoRights}, 1));
  CHECK(t.held(1, 7) == kDataBuffer);
  // An ack at the new base (the client flushed a recall of the old instance) settles it.
  REQUIRE(t.ack(1, Ack{7, seq_base(2), kNoRights}, 1));
  CHECK(t.held(1, 7) == kNoRights);
}

}  // namespace
}  // namespace dfs::caps::test
