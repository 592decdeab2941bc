// RocksStorage: what sync() wrote comes back on reopen, exactly (round trip, conflicting
// suffixes, compaction, installed snapshots, groups sharing a DB), and a real kill -9 at
// random moments never loses a synced write or exposes a torn one.
#include <doctest/doctest.h>

#include <random>

#include "common/raft/raft_node.h"
#include "common/raft/rocks_storage.h"
#include "tests/unit/raft/rocks_fixture.h"

namespace dfs::raft::testing {
namespace {

const ConfState kConf{{1, 2, 3}};

std::unique_ptr<RocksStorage> open_log(rocksdb::DB* db, const std::string& prefix = "raft/1/") {
  auto s = RocksStorage::open(db, prefix, kConf);
  REQUIRE_MESSAGE(s.has_value(), s.error().to_string());
  return std::move(*s);
}

}  // namespace

TEST_CASE("raft/rocks_storage: synced state survives a reopen, unsynced writes do not") {
  TempDir dir;
  auto db = open_db(dir.path());
  std::vector<Entry> written = make_entries(1, 10, 1);
  written[3].type = EntryType::kNoop;
  written[3].data.clear();
  written[4].type = EntryType::kConfChange;
  written[4].data = encode_conf_state(kConf);
  {
    auto s = open_log(db.get());
    CHECK(s->snapshot().meta.conf == kConf);
    s->append(written);
    s->set_hard_state(HardState{3, 2, 7});
    REQUIRE(s->sync().has_value());
    CHECK(s->sync_count() == 1);
    REQUIRE(s->sync().has_value());  // nothing pending: no write
    CHECK(s->sync_count() == 1);
    s->append(make_entries(11, 12, 3));  // never synced
    s->set_hard_state(HardState{4, 0, 7});
  }
  auto s = open_log(db.get());
  CHECK(s->hard_state() == HardState{3, 2, 7});
  CHECK(s->first_index() == 1);
  CHECK(s->last_index() == 10);
  CHECK(all_entries(*s) == written);
  CHECK(s->snapshot().meta == SnapshotMeta{0, 0, kConf});
}

// The core writes a commit index without asking for a sync when nothing else changed
// (Ready::must_sync): it comes back older after a crash, and durable with the next sync.
TEST_CASE("raft/rocks_storage: a commit index written without a sync waits for the next one") {
  TempDir dir;
  auto db = open_db(dir.path());
  {
    auto s = open_log(db.get());
    s->append(make_entries(1, 5, 1));
    s->set_hard_state(HardState{1, 1, 2});
    REQUIRE(s->sync().has_value());
    s->set_hard_state(HardState{1, 1, 5});  // commit only: no sync
  }
  {
    auto s = open_log(db.get());
    CHECK(s->hard_state() == HardState{1, 1, 2});
    CHECK(s->last_index() == 5);  // every entry it may have applied is still there
    SplitMixRandom random(1);
    RaftNode node(RaftConfig{.id = 1}, *s, random);
    CHECK(node.commit_index() == 2);
    CHECK(node.applied_index() == 0);
    s->set_hard_state(HardState{1, 1, 5});
    s->append(make_entries(6, 6, 1));
    REQUIRE(s->sync().has_value());
  }
  auto s = open_log(db.get());
  CHECK(s->hard_state() == HardState{1, 1, 5});
  CHECK(s->last_index() == 6);
}

TEST_CASE("raft/rocks_storage: a conflicting suffix stays truncated across reopen") {
  TempDir dir;
  auto db = open_db(dir.path());
  {
    auto s = open_log(db.get());
    s->append(make_entries(1, 10, 1));
    REQUIRE(s->sync().has_value());
    s->append(make_entries(6, 8, 2));  // drops 9 and 10
    REQUIRE(s->sync().has_value());
  }
  auto s = open_log(db.get());
  CHECK(s->last_index() == 8);
  CHECK(s->term(5) == 1u);
  CHECK(s->term(6) == 2u);
  CHECK(s->term(8) == 2u);
  CHECK_FALSE(s->term(9).has_value());
  // Growing again past the old end must not resurrect anything stale.
  s->append(make_entries(9, 9, 3));
  REQUIRE(s->sync().has_value());
  s.reset();
  s = open_log(db.get());
  CHECK(s->last_index() == 9);
  CHECK(s->term(9) == 3u);
}

TEST_CASE("raft/rocks_storage: compaction and installed snapshots survive reopen") {
  TempDir dir;
  auto db = open_db(dir.path());
  {
    auto s = open_log(db.get());
    s->append(make_entries(1, 10, 1));
    s->apply_snapshot(Snapshot{SnapshotMeta{5, 1, kConf}, "image@5"});  // compaction
    REQUIRE(s->sync().has_value());
  }
  {
    auto s = open_log(db.get());
    CHECK(s->first_index() == 6);
    CHECK(s->last_index() == 10);
    CHECK(s->snapshot().data == "image@5");
    CHECK(s->term(5) == 1u);
    CHECK_FALSE(s->term(4).has_value());
    CHECK(all_entries(*s) == make_entries(6, 10, 1));
    // From the leader: a snapshot the log does not contain replaces the whole log.
    s->apply_snapshot(Snapshot{SnapshotMeta{20, 4, ConfState{{1, 2, 3, 4}}}, "image@20"});
    REQUIRE(s->sync().has_value());
  }
  auto s = open_log(db.get());
  CHECK(s->first_index() == 21);
  CHECK(s->last_index() == 20);
  CHECK(s->snapshot().meta == SnapshotMeta{20, 4, ConfState{{1, 2, 3, 4}}});
  CHECK(s->snapshot().data == "image@20");
  CHECK(all_entries(*s).empty());
  // No stale entry key remains below or after the snapshot.
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  int entry_keys = 0;
  for (it->Seek("raft/1/e"); it->Valid() && it->key().starts_with("raft/1/e"); it->Next()) {
    ++entry_keys;
  }
  CHECK(entry_keys == 0);
}

TEST_CASE("raft/rocks_storage: groups under different prefixes share one DB") {
  TempDir dir;
  auto db = open_db(dir.path());
  {
    auto a = open_log(db.get(), "raft/0000000000000001/");
    auto b = open_log(db.get(), "raft/0000000000000002/");
    a->append(make_entries(1, 5, 1));
    b->append(make_entries(1, 3, 7));
    b->apply_snapshot(Snapshot{SnapshotMeta{2, 7, kConf}, "b"});
    REQUIRE(a->sync().has_value());
    REQUIRE(b->sync().has_value());
  }
  auto a = open_log(db.get(), "raft/0000000000000001/");
  auto b = open_log(db.get(), "raft/0000000000000002/");
  CHECK(all_entries(*a) == make_entries(1, 5, 1));
  CHECK(a->snapshot().meta.index == 0);
  CHECK(all_entries(*b) == make_entries(3, 3, 7));
  CHECK(b->snapshot().data == "b");
}


TEST_CASE("raft/rocks_storage: kill -9 never loses a synced write nor tears a batch") {
  TempDir dir;
  uint64_t seed = test::test_seed();
  INFO("DFS_SEED=", seed);
  std::mt19937_64 rng(seed);
  Index total_synced = 0;
  std::optional<CrashAck> floor;  // the last acknowledged state over all rounds
  for (int round = 0; round < 12; ++round) {
    INFO("round ", round);
    auto delay = std::chrono::milliseconds(40 + rng() % 160);
    ChildRun run = run_child_and_kill(dir.path(), rng(), delay, "rocks");
    REQUIRE_MESSAGE(!run.child_failed, "the child failed; see its stderr");
    if (run.last_ack) floor = run.last_ack;

    auto db = open_db(dir.path());
    auto opened = RocksStorage::open(db.get(), "raft/1/", kConf);
    REQUIRE_MESSAGE(opened.has_value(), opened.error().to_string());
    RocksStorage& s = **opened;
    check_consistent(s);
    if (floor) {
      // Everything whose sync returned is there; at most the batch in flight is extra
      // (and it always grows the log).
      CHECK(s.last_index() >= floor->last_index);
      if (s.last_index() == floor->last_index) CHECK(s.term(s.last_index()) == floor->last_term);
      total_synced = s.last_index();
    }
  }
  MESSAGE("raft crash test: log reached index ", total_synced, " over 12 kills, seed ", seed);
  CHECK(total_synced > 0);  // the kills landed after the child got going
}

}  // namespace dfs::raft::testing
