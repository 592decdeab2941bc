// Where a replicated rank's Raft log lives: `dfs-mds --mkfs` makes the file
// <raft_dir>/log (raft::FileStorage); a raft_dir that holds a RocksDB, as older versions
// made it, keeps its log there; each refuses a second --mkfs and a missing log is named.
#include <doctest/doctest.h>
#include <rocksdb/db.h>

#include <filesystem>

#include "common/raft/rocks_storage.h"
#include "mds/service/rank_replication.h"
#include "mds/store/meta_store.h"
#include "tests/unit/mds/mds_harness.h"

namespace dfs::mds::test {
namespace {

ReplicationOptions replica_options(const std::string& raft_dir) {
  ReplicationOptions options;
  options.id = 1;
  options.replicas = {{1, "mds.a", "127.0.0.1:1"}, {2, "mds.b", "127.0.0.1:2"},
                      {3, "mds.c", "127.0.0.1:3"}};
  options.raft_dir = raft_dir;
  return options;
}

Result<std::unique_ptr<RankReplication>> open_rank(MetaStore& store, const std::string& dir,
                                                   bool create) {
  return RankReplication::open(replica_options(dir), store, default_fs_settings(), create);
}

}  // namespace

TEST_CASE("mds/rank log: --mkfs makes a file log, which reopens, and refuses a second --mkfs") {
  TempDir dir;
  auto store = make_mem_meta_store();
  const std::string raft = dir.path + "/raft";
  auto missing = open_rank(*store, raft, false);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code() == ErrorCode::kNotFound);
  CHECK(missing.error().to_string().find("--mkfs") != std::string::npos);

  REQUIRE(open_rank(*store, raft, true));
  CHECK(std::filesystem::exists(raft + "/log"));
  CHECK_FALSE(std::filesystem::exists(raft + "/CURRENT"));
  CHECK(open_rank(*store, raft, false));
  auto again = open_rank(*store, raft, true);
  REQUIRE_FALSE(again);
  CHECK(again.error().code() == ErrorCode::kAlreadyExists);
}

TEST_CASE("mds/rank log: a RocksDB log an older version made stays in use") {
  TempDir dir;
  auto store = make_mem_meta_store();
  const std::string raft = dir.path + "/raft";
  {
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    REQUIRE(rocksdb::DB::Open(options, raft, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    // The key prefix those versions gave the rank's group.
    auto log = raft::RocksStorage::open(db.get(), "raft/rank/", raft::ConfState{{1, 2, 3}});
    REQUIRE(log);
    (*log)->append({raft::Entry{1, 1, raft::EntryType::kNoop, ""}});
    REQUIRE((*log)->sync());
  }
  CHECK(open_rank(*store, raft, false));
  CHECK_FALSE(std::filesystem::exists(raft + "/log"));  // no file log beside it
  auto again = open_rank(*store, raft, true);
  REQUIRE_FALSE(again);
  CHECK(again.error().code() == ErrorCode::kAlreadyExists);
}

}  // namespace dfs::mds::test
