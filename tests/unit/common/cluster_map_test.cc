#include <doctest/doctest.h>

#include <set>

#include "common/map/cluster_map.h"

namespace dfs {
namespace {

proto::MapCommand boot(int id, std::string host) {
  proto::MapCommand c;
  auto* b = c.mutable_boot_osd();
  b->set_id(id);
  b->set_addr("127.0.0.1:" + std::to_string(7000 + id));
  b->set_host(std::move(host));
  b->set_weight(1.0);
  return c;
}

proto::MapCommand create_pool(std::string name, uint32_t size, uint32_t min_size, uint32_t pgs) {
  proto::MapCommand c;
  auto* p = c.mutable_create_pool();
  p->set_name(std::move(name));
  p->set_size(size);
  p->set_min_size(min_size);
  p->set_pg_num(pgs);
  return c;
}

}  // namespace

TEST_CASE("common/map: commands bump the epoch, invalid ones change nothing") {
  ClusterMap map;
  for (int i = 0; i < 3; ++i) REQUIRE(map.apply(boot(i, "h" + std::to_string(i))));
  REQUIRE(map.apply(create_pool("data", 3, 2, 32)));
  CHECK(map.epoch() == 4);
  auto dup = map.apply(create_pool("data", 3, 2, 32));
  CHECK(dup.error().code() == ErrorCode::kAlreadyExists);
  CHECK_FALSE(map.apply(create_pool("bad", 3, 4, 32)));
  CHECK_FALSE(map.apply(create_pool("bad", 0, 0, 32)));
  proto::MapCommand down;
  down.mutable_mark_down()->set_id(9);
  CHECK(map.apply(down).error().code() == ErrorCode::kNotFound);
  CHECK(map.epoch() == 4);
}

TEST_CASE("common/map: an OSD's space state is recorded without moving any PG") {
  ClusterMap map;
  for (int i = 0; i < 3; ++i) REQUIRE(map.apply(boot(i, "h" + std::to_string(i))));
  REQUIRE(map.apply(create_pool("data", 3, 2, 16)));
  const proto::Pool pool = *map.pool_by_name("data");
  std::vector<std::vector<int32_t>> before;
  for (uint32_t pg = 0; pg < 16; ++pg) before.push_back(map.acting(pool, pg));
  proto::MapCommand full;
  full.mutable_set_space()->set_id(1);
  full.mutable_set_space()->set_space(proto::SPACE_FULL);
  full.mutable_set_space()->set_used_permille(961);
  REQUIRE(map.apply(full));
  CHECK(map.epoch() == 5);
  CHECK(map.osd(1)->space() == proto::SPACE_FULL);
  CHECK(map.osd(1)->used_permille() == 961);
  CHECK(map.osd(0)->space() == proto::SPACE_OK);
  for (uint32_t pg = 0; pg < 16; ++pg) CHECK(map.acting(pool, pg) == before[pg]);
  full.mutable_set_space()->set_id(7);
  CHECK(map.apply(full).error().code() == ErrorCode::kNotFound);
  CHECK(map.epoch() == 5);
}

TEST_CASE("common/map: only a down and out OSD can be purged") {
  ClusterMap map;
  for (int i = 0; i < 4; ++i) REQUIRE(map.apply(boot(i, "h" + std::to_string(i))));
  proto::MapCommand purge;
  purge.mutable_purge_osd()->set_id(3);
  CHECK(map.apply(purge).error().code() == ErrorCode::kBusy);  // up
  proto::MapCommand down;
  down.mutable_mark_down()->set_id(3);
  REQUIRE(map.apply(down));
  CHECK(map.apply(purge).error().code() == ErrorCode::kBusy);  // still in
  proto::MapCommand out;
  out.mutable_mark_out()->set_id(3);
  REQUIRE(map.apply(out));
  uint64_t epoch = map.epoch();
  REQUIRE(map.apply(purge));
  CHECK(map.epoch() == epoch + 1);
  CHECK(map.osd(3) == nullptr);
  CHECK(map.proto().osds_size() == 3);
  CHECK(map.apply(purge).error().code() == ErrorCode::kNotFound);
}

TEST_CASE("common/map: replaying the same incrementals yields the same map") {
  ClusterMap leader;
  std::vector<proto::MapIncremental> log;
  auto record = [&](const proto::MapCommand& c) {
    REQUIRE(leader.apply(c));
    proto::MapIncremental inc;
    inc.set_epoch(leader.epoch());
    *inc.mutable_command() = c;
    log.push_back(inc);
  };
  for (int i = 0; i < 4; ++i) record(boot(i, "h" + std::to_string(i)));
  record(create_pool("data", 3, 2, 64));
  proto::MapCommand down;
  down.mutable_mark_down()->set_id(2);
  record(down);
  ClusterMap follower;
  for (const auto& inc : log) REQUIRE(follower.apply_incremental(inc));
  CHECK(follower.proto().SerializeAsString() == leader.proto().SerializeAsString());
  const auto* pool = follower.pool_by_name("data");
  REQUIRE(pool);
  for (uint32_t pg = 0; pg < pool->pg_num(); ++pg) {
    CHECK(follower.pg_osds(*pool, pg) == leader.pg_osds(*pool, pg));
  }
  // A gap is refused rather than applied out of order.
  proto::MapIncremental future = log.back();
  future.set_epoch(follower.epoch() + 2);
  CHECK(follower.apply_incremental(future).error().code() == ErrorCode::kStaleEpoch);
}

TEST_CASE("common/map: acting set skips down OSDs, placement spans hosts") {
  ClusterMap map;
  for (int i = 0; i < 3; ++i) REQUIRE(map.apply(boot(i, "h" + std::to_string(i))));
  REQUIRE(map.apply(create_pool("data", 3, 2, 64)));
  const auto* pool = map.pool_by_name("data");
  for (uint32_t pg = 0; pg < 64; ++pg) {
    auto osds = map.pg_osds(*pool, pg);
    CHECK(std::set<int32_t>(osds.begin(), osds.end()).size() == 3);
  }
  proto::MapCommand down;
  down.mutable_mark_down()->set_id(1);
  REQUIRE(map.apply(down));
  pool = map.pool_by_name("data");
  for (uint32_t pg = 0; pg < 64; ++pg) {
    auto acting = map.acting(*pool, pg);
    CHECK(acting.size() == 2);
    CHECK(std::find(acting.begin(), acting.end(), 1) == acting.end());
    // Down keeps placement: the OSD is still in the PG, just not acting.
    auto osds = map.pg_osds(*pool, pg);
    CHECK(std::find(osds.begin(), osds.end(), 1) != osds.end());
  }
}

}  // namespace dfs

namespace dfs {
namespace {

proto::MapCommand boot_mds(const std::string& name, bool standby, uint64_t term) {
  proto::MapCommand c;
  auto* b = c.mutable_boot_mds();
  b->set_name(name);
  b->set_addr(name + ":1");
  b->set_rank(0);
  b->set_instance(term + 1);
  b->set_standby(standby);
  b->set_leader_term(term);
  return c;
}

}  // namespace

TEST_CASE("common/map: clients go to the rank's active MDS with the newest leader term") {
  ClusterMap map;
  REQUIRE(map.apply(boot_mds("mds.a", true, 0)));
  REQUIRE(map.apply(boot_mds("mds.b", true, 0)));
  CHECK(map.mds_for_rank(0) == nullptr);  // standbys only: nobody serves yet
  REQUIRE(map.apply(boot_mds("mds.b", false, 3)));
  REQUIRE(map.mds_for_rank(0));
  CHECK(map.mds_for_rank(0)->name() == "mds.b");
  // A new leader makes the old one standby.
  REQUIRE(map.apply(boot_mds("mds.a", false, 4)));
  CHECK(map.mds_for_rank(0)->name() == "mds.a");
  CHECK(map.mds("mds.b")->standby());
  // A deposed leader's late boot (older term) does not win clients back.
  REQUIRE(map.apply(boot_mds("mds.b", false, 3)));
  CHECK(map.mds_for_rank(0)->name() == "mds.a");
  CHECK_FALSE(map.mds("mds.a")->standby());
  // A single-replica rank boots active at term 0, as before replication.
  ClusterMap single;
  REQUIRE(single.apply(boot_mds("mds.a", false, 0)));
  CHECK(single.mds_for_rank(0)->name() == "mds.a");
}

}  // namespace dfs
