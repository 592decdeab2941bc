// The monitors' Raft state machine: applying the same log gives the same map at the
// same epoch on every monitor, a snapshot restores exactly, rejected commands consume
// no epoch, subscribers are caught up from the kept incrementals, and results travel
// back to the proposer intact.
#include <doctest/doctest.h>

#include "common/config/config.h"
#include "mon/service/map_state_machine.h"
#include "common/raft/members_config.h"

namespace dfs::mon {
namespace {

proto::ClusterMap genesis() {
  proto::ClusterMap map;
  map.set_fsid("test-fsid");
  map.set_next_pool_id(1);
  return map;
}

std::string boot(int32_t id, uint64_t instance = 1) {
  proto::MapCommand c;
  auto* b = c.mutable_boot_osd();
  b->set_id(id);
  b->set_addr("127.0.0.1:" + std::to_string(7000 + id));
  b->set_host("host" + std::to_string(id));
  b->set_weight(1);
  b->set_instance(instance);
  return c.SerializeAsString();
}

std::string mark_down(int32_t id) {
  proto::MapCommand c;
  c.mutable_mark_down()->set_id(id);
  return c.SerializeAsString();
}

std::string create_pool(const std::string& name) {
  proto::MapCommand c;
  auto* p = c.mutable_create_pool();
  p->set_name(name);
  p->set_size(3);
  p->set_min_size(2);
  p->set_pg_num(16);
  return c.SerializeAsString();
}

// A log with valid and invalid commands (a pool created twice, an unknown OSD marked
// down, garbage bytes).
std::vector<std::string> sample_log() {
  std::vector<std::string> log = {boot(0), boot(1), boot(2), create_pool("data"),
                                  create_pool("data"), mark_down(1), mark_down(9),
                                  "\xff\xff not a command", boot(1, 2), create_pool("meta")};
  for (int i = 0; i < 40; ++i) log.push_back(i % 2 ? boot(i % 3, 10 + i) : mark_down(i % 3));
  return log;
}

}  // namespace

TEST_CASE("mon/map_state_machine: apply is deterministic across monitors") {
  MapStateMachine a(genesis()), b(genesis());
  std::vector<std::string> results_a, results_b;
  raft::Index index = 0;
  for (const auto& command : sample_log()) {
    ++index;
    results_a.push_back(a.apply(index, command));
    results_b.push_back(b.apply(index, command));
  }
  CHECK(results_a == results_b);
  CHECK(a.map().proto().SerializeAsString() == b.map().proto().SerializeAsString());
  CHECK(a.applied_index() == index);
  // Exactly the valid commands consumed an epoch: 3 invalid ones among 50.
  CHECK(a.map().epoch() == sample_log().size() - 3);
  // Results: the second create of "data" failed with kAlreadyExists and no epoch.
  auto dup = MapStateMachine::decode_result(results_a[4]);
  REQUIRE_FALSE(dup.has_value());
  CHECK(dup.error().code() == ErrorCode::kAlreadyExists);
  CHECK(dup.error().context() == "pool 'data' exists");
  auto first = MapStateMachine::decode_result(results_a[3]);
  REQUIRE(first.has_value());
  CHECK(*first == 4);
  CHECK_FALSE(MapStateMachine::decode_result(results_a[7]).has_value());
}

TEST_CASE("mon/map_state_machine: every applied command is one consecutive incremental") {
  MapStateMachine sm(genesis());
  std::vector<proto::MapUpdate> seen;
  sm.set_listener([&](const proto::MapUpdate& u) { seen.push_back(u); });
  raft::Index index = 0;
  for (const auto& command : sample_log()) sm.apply(++index, command);
  REQUIRE(seen.size() == sm.map().epoch());
  ClusterMap replica(genesis());
  for (size_t i = 0; i < seen.size(); ++i) {
    REQUIRE(seen[i].incrementals_size() == 1);
    CHECK(seen[i].incrementals(0).epoch() == i + 1);
    REQUIRE(replica.apply_incremental(seen[i].incrementals(0)));
  }
  CHECK(replica.proto().SerializeAsString() == sm.map().proto().SerializeAsString());
}

TEST_CASE("mon/map_state_machine: snapshot and restore round-trip") {
  MapStateMachine source(genesis());
  raft::Index index = 0;
  auto log = sample_log();
  size_t half = log.size() / 2;
  for (size_t i = 0; i < half; ++i) source.apply(++index, log[i]);
  std::string image = source.snapshot(0);
  raft::Index at = index;

  MapStateMachine restored(genesis());
  std::vector<proto::MapUpdate> pushed;
  restored.set_listener([&](const proto::MapUpdate& u) { pushed.push_back(u); });
  restored.restore(at, image);
  CHECK(restored.applied_index() == at);
  CHECK(restored.map().proto().SerializeAsString() == source.map().proto().SerializeAsString());
  REQUIRE(pushed.size() == 1);  // subscribers get the restored map whole
  CHECK(pushed[0].full().epoch() == source.map().epoch());
  CHECK(restored.snapshot(0) == image);

  // Both continue with the rest of the log and stay identical.
  for (size_t i = half; i < log.size(); ++i) {
    ++index;
    CHECK(source.apply(index, log[i]) == restored.apply(index, log[i]));
  }
  CHECK(restored.map().proto().SerializeAsString() == source.map().proto().SerializeAsString());

  // The restored one no longer has incrementals from before the image.
  auto update = restored.catch_up(2);
  CHECK(update.has_full());
  CHECK(update.full().epoch() == restored.map().epoch());
}

TEST_CASE("mon/map_state_machine: catch-up sends kept incrementals, else the full map") {
  MapStateMachine sm(genesis(), /*history=*/5);
  raft::Index index = 0;
  for (int i = 0; i < 3; ++i) sm.apply(++index, boot(i));
  for (int i = 0; i < 7; ++i) sm.apply(++index, i % 2 ? boot(0, 100 + i) : mark_down(0));
  REQUIRE(sm.map().epoch() == 10);
  CHECK(sm.catch_up(10).ByteSizeLong() == 0);
  CHECK(sm.catch_up(12).ByteSizeLong() == 0);  // a subscriber ahead of a lagging monitor
  auto recent = sm.catch_up(7);
  CHECK_FALSE(recent.has_full());
  REQUIRE(recent.incrementals_size() == 3);
  CHECK(recent.incrementals(0).epoch() == 8);
  CHECK(recent.incrementals(2).epoch() == 10);
  CHECK(sm.catch_up(5).incrementals_size() == 5);  // exactly the kept ones: 6..10
  CHECK(sm.catch_up(4).has_full());                // 5 is gone
  CHECK(sm.catch_up(0).has_full());
}

TEST_CASE("raft/members_config: ids follow section order unless set") {
  auto config = Config::parse(
      "[global]\nmon_addrs = h1:1,h2:2,h3:3\n"
      "[mon.c]\naddr = h3:3\n[mon.a]\naddr = h1:1\n[mon.b]\naddr = h2:2\n[osd.0]\naddr = x\n",
      "test");
  REQUIRE(config.has_value());
  auto members = raft::members_from_config(*config, "mon", "d:1");
  REQUIRE(members.has_value());
  REQUIRE(members->size() == 3);
  CHECK((*members)[0].name == "mon.a");
  CHECK((*members)[0].id == 1);
  CHECK((*members)[2].name == "mon.c");
  CHECK((*members)[2].id == 3);
  CHECK((*members)[2].addr == "h3:3");

  auto explicit_ids = Config::parse("[mon.a]\nid = 7\n[mon.b]\naddr = h:2\n", "test");
  REQUIRE(explicit_ids.has_value());
  auto m2 = raft::members_from_config(*explicit_ids, "mon", "d:1");
  REQUIRE(m2.has_value());
  CHECK((*m2)[0].id == 7);
  CHECK((*m2)[0].addr == "d:1");
  CHECK((*m2)[1].id == 2);

  auto dup = Config::parse("[mon.a]\nid = 2\n[mon.b]\naddr = h:2\n", "test");
  REQUIRE(dup.has_value());
  auto bad = raft::members_from_config(*dup, "mon", "d:1");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().code() == ErrorCode::kInvalidArgument);
}

}  // namespace dfs::mon
