// Which log makes a RocksDB metadata store durable (StoreLog). A crash is imitated by
// copying the store's files while it is open: what a killed process leaves on disk.
#include <doctest/doctest.h>

#include <filesystem>

#include "mds/store/meta_store.h"
#include "tests/unit/mds/mds_harness.h"

namespace dfs::mds::test {
namespace {

void put(MetaStore& store, const std::string& key, bool sync) {
  WriteBatch batch;
  batch.put(key, "v");
  REQUIRE(store.write(batch, sync));
}

// The keys among `keys` that a copy of `path`, taken now, holds once opened.
std::vector<std::string> survivors(const std::string& path, const std::string& copy,
                                   const std::vector<std::string>& keys) {
  std::filesystem::copy(path, copy, std::filesystem::copy_options::recursive);
  auto reopened = open_rocks_meta_store(copy, /*create=*/false);
  REQUIRE(reopened);
  std::vector<std::string> found;
  for (const auto& key : keys) {
    auto value = (*reopened)->get(key);
    REQUIRE(value);
    if (value->has_value()) found.push_back(key);
  }
  return found;
}

TEST_CASE("mds/store: its own log keeps every write a crash of the process finds") {
  TempDir dir;
  auto store = open_rocks_meta_store(dir.path + "/meta", true, StoreLog::kOwn);
  REQUIRE(store);
  put(**store, "unsynced", false);
  CHECK(survivors(dir.path + "/meta", dir.path + "/copy", {"unsynced"}) ==
        std::vector<std::string>{"unsynced"});
}

TEST_CASE("mds/store: under a Raft log only what was synced survives a crash") {
  TempDir dir;
  auto store = open_rocks_meta_store(dir.path + "/meta", true, StoreLog::kRaft);
  REQUIRE(store);
  put(**store, "a-synced-later", false);
  REQUIRE((*store)->sync());
  put(**store, "b-written-synced", true);
  put(**store, "c-unsynced", false);
  // The unsynced write was never logged by the store: the Raft log replays it.
  CHECK(survivors(dir.path + "/meta", dir.path + "/copy",
                  {"a-synced-later", "b-written-synced", "c-unsynced"}) ==
        std::vector<std::string>{"a-synced-later", "b-written-synced"});
  // A clean close keeps everything.
  store->reset();
  auto reopened = open_rocks_meta_store(dir.path + "/meta", false, StoreLog::kRaft);
  REQUIRE(reopened);
  auto value = (*reopened)->get("c-unsynced");
  REQUIRE(value);
  CHECK(value->has_value());
}

}  // namespace
}  // namespace dfs::mds::test
