// FileStorage: what sync() wrote comes back on reopen, exactly (round trip, conflicting
// suffixes, compaction, installed snapshots, the file rewritten once mostly dead); a
// torn or damaged tail is cut off and the log ends at the last whole record; and a real
// kill -9 at random moments, rewrites included, never loses a synced write.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "common/raft/file_storage.h"
#include "common/raft/log_bytes.h"
#include "common/raft/raft_node.h"
#include "tests/unit/raft/rocks_fixture.h"

namespace dfs::raft::testing {
namespace {

const ConfState kConf{{1, 2, 3}};

std::unique_ptr<FileStorage> open_log(const std::string& path, bool create = false,
                                      uint64_t rewrite_floor = FileStorage::kRewriteFloor) {
  auto s = FileStorage::open(path, kConf, create, rewrite_floor);
  REQUIRE_MESSAGE(s.has_value(), s.error().to_string());
  return std::move(*s);
}

uint64_t file_size(const std::string& path) { return std::filesystem::file_size(path); }

}  // namespace

TEST_CASE("raft/file_storage: synced state survives a reopen, unsynced writes do not") {
  TempDir dir;
  const std::string path = dir.path() + "/log";
  std::vector<Entry> written = make_entries(1, 10, 1);
  written[3].type = EntryType::kNoop;
  written[3].data.clear();
  written[4].type = EntryType::kConfChange;
  written[4].data = encode_conf_state(kConf);
  {
    auto s = open_log(path, /*create=*/true);
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
  auto s = open_log(path);
  CHECK(s->snapshot().meta.conf == kConf);
  CHECK(s->hard_state() == HardState{3, 2, 7});
  CHECK(all_entries(*s) == written);
  CHECK(s->torn_bytes() == 0);
}

TEST_CASE("raft/file_storage: create refuses an existing log, open a missing one") {
  TempDir dir;
  const std::string path = dir.path() + "/log";
  auto missing = FileStorage::open(path, kConf, false);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code() == ErrorCode::kNotFound);
  open_log(path, /*create=*/true);
  auto again = FileStorage::open(path, kConf, true);
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code() == ErrorCode::kAlreadyExists);
  CHECK(open_log(path)->snapshot().meta.conf == kConf);  // the first one stands
}

TEST_CASE("raft/file_storage: a conflicting suffix stays truncated across reopen") {
  TempDir dir;
  const std::string path = dir.path() + "/log";
  {
    auto s = open_log(path, true);
    s->append(make_entries(1, 8, 1));
    REQUIRE(s->sync().has_value());
    s->append(make_entries(5, 6, 2));  // a new leader replaces 5..8 with 5..6
    REQUIRE(s->sync().has_value());
  }
  auto s = open_log(path);
  auto expected = make_entries(1, 4, 1);
  for (auto& e : make_entries(5, 6, 2)) expected.push_back(e);
  CHECK(all_entries(*s) == expected);
  CHECK(s->last_index() == 6);
}

TEST_CASE("raft/file_storage: compaction and installed snapshots survive reopen") {
  TempDir dir;
  const std::string path = dir.path() + "/log";
  {
    auto s = open_log(path, true);
    s->append(make_entries(1, 10, 1));
    s->set_hard_state(HardState{1, 1, 10});
    s->apply_snapshot(Snapshot{SnapshotMeta{5, 1, kConf}, "image@5"});  // compaction
    REQUIRE(s->sync().has_value());
  }
  {
    auto s = open_log(path);
    CHECK(s->first_index() == 6);
    CHECK(s->snapshot().data == "image@5");
    CHECK(all_entries(*s) == make_entries(6, 10, 1));
    // A snapshot from a leader that does not match the log drops all of it.
    s->apply_snapshot(Snapshot{SnapshotMeta{20, 3, kConf}, "image@20"});
    s->set_hard_state(HardState{3, 1, 20});
    REQUIRE(s->sync().has_value());
  }
  auto s = open_log(path);
  CHECK(s->snapshot().meta.index == 20);
  CHECK(s->snapshot().data == "image@20");
  CHECK(all_entries(*s).empty());
  CHECK(s->first_index() == 21);
  CHECK(s->hard_state() == HardState{3, 1, 20});
}

TEST_CASE("raft/file_storage: a file mostly of compacted entries is rewritten to the live ones") {
  TempDir dir;
  const std::string path = dir.path() + "/log";
  constexpr uint64_t kFloor = 64u << 10;
  Index last = 0;
  {
    auto s = open_log(path, true, kFloor);
    // 40 rounds of 50 entries of ~100 bytes, compacting all but the last 20 each time.
    for (int round = 0; round < 40; ++round) {
      auto more = make_entries(last + 1, last + 50, 2);
      for (auto& e : more) e.data.resize(100, 'x');
      s->append(more);
      last += 50;
      s->set_hard_state(HardState{2, 1, last});
      s->apply_snapshot(Snapshot{SnapshotMeta{last - 20, 2, kConf}, "img"});
      REQUIRE(s->sync().has_value());
      CHECK(s->file_bytes() == file_size(path));
    }
    CHECK(s->rewrites() >= 2);
    CHECK(file_size(path) < 2 * kFloor);
  }
  auto s = open_log(path, false, kFloor);
  CHECK(s->first_index() == last - 19);
  CHECK(s->last_index() == last);
  CHECK(s->hard_state() == HardState{2, 1, last});
  auto entries = all_entries(*s);
  REQUIRE(entries.size() == 20);
  CHECK(entries.front().index == last - 19);
  CHECK(entries.front().data == std::string("cmd") + std::to_string(last - 19) +
                                    std::string(100 - 3 - std::to_string(last - 19).size(), 'x'));
  CHECK_FALSE(std::filesystem::exists(path + ".new"));
}

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

TEST_CASE("raft/file_storage: a torn last batch is cut off, damage before a whole one refused") {
  TempDir dir;
  const std::string path = dir.path() + "/log";
  uint64_t after_create = 0, after_first = 0;
  {
    auto s = open_log(path, true);
    after_create = file_size(path);
    s->append(make_entries(1, 5, 1));
    REQUIRE(s->sync().has_value());
    after_first = file_size(path);
    s->append(make_entries(6, 7, 1));
    s->set_hard_state(HardState{1, 1, 7});
    REQUIRE(s->sync().has_value());
  }
  const std::string whole = read_file(path);
  std::string bytes = whole;
  bool torn = true;  // else: damage to synced batches
  SUBCASE("the last batch cut short") { bytes.resize(after_first + 30); }
  SUBCASE("the last batch's header cut short") { bytes.resize(after_first + 7); }
  SUBCASE("a byte of the last batch's body flipped") { bytes[bytes.size() - 3] ^= 0x40; }
  SUBCASE("the last batch zeroed, as unwritten pages read") {
    std::fill(bytes.begin() + after_first, bytes.end(), '\0');
  }
  SUBCASE("a byte of an earlier batch's body flipped") {
    bytes[after_first - 3] ^= 0x40;
    torn = false;
  }
  SUBCASE("an earlier batch's header damaged") {
    bytes[after_create] ^= 0x01;  // the magic of the first sync's batch
    torn = false;
  }
  write_file(path, bytes);
  auto opened = FileStorage::open(path, kConf, false);
  if (torn) {
    REQUIRE_MESSAGE(opened.has_value(), opened.error().to_string());
    auto& s = **opened;
    CHECK(s.torn_bytes() == bytes.size() - after_first);
    CHECK(file_size(path) == after_first);  // cut, so that new batches follow whole ones
    CHECK(all_entries(s) == make_entries(1, 5, 1));
    s.append(make_entries(6, 8, 2));
    REQUIRE(s.sync().has_value());
    auto reopened = open_log(path);
    CHECK(reopened->torn_bytes() == 0);
    auto expected = make_entries(1, 5, 1);
    for (auto& e : make_entries(6, 8, 2)) expected.push_back(e);
    CHECK(all_entries(*reopened) == expected);
  } else {
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().code() == ErrorCode::kCorruption);
    CHECK(read_file(path) == bytes);  // nothing cut
  }
}

TEST_CASE("raft/file_storage: a torn last batch is cut even when its entries hold a whole batch") {
  // Entries carry client bytes: a file that holds a copy of a raft log puts whole batches
  // inside one. Cut short, the batch around them is still the tail a crash tore.
  TempDir dir;
  const std::string path = dir.path() + "/log";
  {
    auto other = open_log(dir.path() + "/other", true);
    other->append(make_entries(1, 3, 1));
    REQUIRE(other->sync().has_value());
  }
  uint64_t after_first = 0;
  {
    auto s = open_log(path, true);
    s->append(make_entries(1, 5, 1));
    REQUIRE(s->sync().has_value());
    after_first = file_size(path);
    auto carrying = make_entries(6, 6, 1);
    carrying[0].data = read_file(dir.path() + "/other") + std::string(64, 'z');
    s->append(carrying);
    REQUIRE(s->sync().has_value());
  }
  std::string bytes = read_file(path);
  bytes.resize(bytes.size() - 10);  // the last batch's end, after the embedded log, lost
  write_file(path, bytes);
  auto s = open_log(path);
  CHECK(s->torn_bytes() == bytes.size() - after_first);
  CHECK(all_entries(*s) == make_entries(1, 5, 1));
}

TEST_CASE("raft/file_storage: kill -9 never loses a synced write, rewrites included") {
  TempDir dir;
  uint64_t seed = test::test_seed();
  INFO("DFS_SEED=", seed);
  std::mt19937_64 rng(seed);
  std::optional<CrashAck> floor;
  uint64_t rewrites_seen = 0;
  for (int round = 0; round < 12; ++round) {
    INFO("round ", round);
    auto delay = std::chrono::milliseconds(40 + rng() % 160);
    ChildRun run = run_child_and_kill(dir.path(), rng(), delay, "file");
    REQUIRE_MESSAGE(!run.child_failed, "the child failed; see its stderr");
    if (run.last_ack) floor = run.last_ack;
    auto opened = FileStorage::open(dir.path() + "/log", kConf, false);
    if (!floor && !opened && opened.error().code() == ErrorCode::kNotFound) {
      continue;  // killed before it had made its log
    }
    REQUIRE_MESSAGE(opened.has_value(), opened.error().to_string());
    FileStorage& s = **opened;
    check_consistent(s);
    if (floor) {
      CHECK(s.last_index() >= floor->last_index);
      if (s.last_index() == floor->last_index) CHECK(s.term(s.last_index()) == floor->last_term);
    }
    // The child rewrites once its file passes 256 KiB; a rewritten file starts with the
    // snapshot of its time rather than the initial configuration (index 0).
    // (batch header 16 bytes, record length 4, kind, index).
    std::string head = read_file(dir.path() + "/log").substr(0, 29);
    size_t pos = 21;
    uint64_t first_snapshot = 0;
    if (head.size() == 29 && head[20] == 's' && get_u64(head, &pos, &first_snapshot) &&
        first_snapshot > 0) {
      ++rewrites_seen;
    }
  }
  REQUIRE(floor);
  MESSAGE("file log crash test: reached index ", floor->last_index, ", seed ", seed);
  CHECK(rewrites_seen > 0);
}

}  // namespace dfs::raft::testing
