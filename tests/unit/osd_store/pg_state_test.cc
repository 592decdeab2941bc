// PgState: what peering compares (last_update) is rebuilt from the PG log and from
// what an earlier peering recorded, and survives a restart.
#include <doctest/doctest.h>

#include "osd/pg/pg_state.h"

namespace dfs::osd {
namespace {

proto::Version version(uint64_t epoch, uint64_t seq) {
  proto::Version v;
  v.set_epoch(epoch);
  v.set_seq(seq);
  return v;
}

void log_write(ObjectStore& store, PgState& pg, const proto::Version& v, const std::string& name) {
  proto::PgLogEntry entry;
  *entry.mutable_version() = v;
  entry.mutable_reqid()->set_client("client.test");
  entry.mutable_reqid()->set_seq(v.seq());
  entry.set_kind(proto::OP_WRITE_FULL);
  entry.set_name(name);
  Transaction txn;
  pg.log_to(txn, 1, 7, entry);
  REQUIRE(store.apply(std::move(txn)));
  pg.observe(v);
}

TEST_CASE("osd/pg_state: versions order by epoch, then sequence") {
  CHECK(version_less(version(3, 9), version(4, 1)));
  CHECK(version_less(version(4, 1), version(4, 2)));
  CHECK_FALSE(version_less(version(4, 2), version(4, 2)));
  CHECK_FALSE(version_less(version(5, 1), version(4, 9)));
}

TEST_CASE("osd/pg_state: last_update comes back from the log and from peering") {
  auto store = make_memory_store();
  auto pg = PgState::load(*store, 1, 7);
  REQUIRE(pg);
  CHECK(pg->last_update().seq() == 0);

  log_write(*store, *pg, version(4, 1), "a");
  log_write(*store, *pg, version(4, 2), "b");
  // A later interval's primary continues the sequence in a later epoch.
  log_write(*store, *pg, version(9, 3), "a");
  auto reloaded = PgState::load(*store, 1, 7);
  REQUIRE(reloaded);
  CHECK(reloaded->last_update().epoch() == 9);
  CHECK(reloaded->last_update().seq() == 3);
  CHECK(reloaded->last_seq() == 3);

  // Peering brought this OSD up to a version it has no log entry for (objects are
  // copied, not their ops): recorded, and kept across a restart.
  Transaction txn;
  reloaded->activate_to(txn, 1, 7, version(12, 40));
  REQUIRE(store->apply(std::move(txn)));
  CHECK(reloaded->last_update().seq() == 40);
  auto after = PgState::load(*store, 1, 7);
  REQUIRE(after);
  CHECK(after->last_update().epoch() == 12);
  CHECK(after->last_update().seq() == 40);
  CHECK(after->next_seq() == 41);  // a new primary never reuses a sequence number
}

TEST_CASE("osd/pg_state: a primary serves only for the acting set it peered") {
  PgState pg;
  std::vector<PgMember> acting = {{0, 5}, {1, 5}, {2, 5}};
  CHECK_FALSE(pg.active_for(acting));
  pg.set_active(acting);
  CHECK(pg.active_for(acting));
  // The same OSD restarted (a new up_from) is a new member: it may have missed writes.
  CHECK_FALSE(pg.active_for({{0, 5}, {1, 9}, {2, 5}}));
  CHECK_FALSE(pg.active_for({{0, 5}, {2, 5}}));
  {
    PgState::OpGuard op(&pg);
    CHECK(pg.inflight() == 1);
  }
  CHECK(pg.inflight() == 0);
  pg.deactivate();
  CHECK_FALSE(pg.active_for(acting));
}

}  // namespace
}  // namespace dfs::osd
