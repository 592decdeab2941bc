#include "mds/service/rank_replication.h"

#include <rocksdb/db.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <filesystem>

#include "common/raft/rocks_storage.h"

namespace dfs::mds {
namespace {

// Group ids on the wire: one per rank (the router of one MDS may host several ranks).
constexpr uint64_t kRankGroupBase = 0x6d64730000000000;  // "mds" << 40
constexpr char kLogPrefix[] = "raft/rank/";

Result<std::unique_ptr<rocksdb::DB>> open_log_db(const std::string& path, bool create) {
  rocksdb::Options options;
  options.create_if_missing = create;
  options.error_if_exists = create;
  options.keep_log_file_num = 3;
  // Entries live until the next compaction of the log, a few thousand groups: the table
  // files they reach are soon dropped, and compressing them is CPU for nothing. XXH3
  // rather than the CRC32C of Debian's portable RocksDB build, which is table-driven.
  options.compression = rocksdb::kNoCompression;
  rocksdb::BlockBasedTableOptions table;
  table.checksum = rocksdb::kXXH3;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  if (create) {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
  }
  rocksdb::DB* raw = nullptr;
  auto s = rocksdb::DB::Open(options, path, &raw);
  if (s.ok()) return std::unique_ptr<rocksdb::DB>(raw);
  if (!create && (s.IsInvalidArgument() || s.IsPathNotFound())) {
    return make_error(ErrorCode::kNotFound, "no raft log at " + path + " (run dfs-mds --mkfs)");
  }
  if (create && s.IsInvalidArgument()) {
    return make_error(ErrorCode::kAlreadyExists, "a raft log already exists at " + path);
  }
  return make_error(s.IsCorruption() ? ErrorCode::kCorruption : ErrorCode::kIoError,
                    "opening the raft log " + path + ": " + s.ToString());
}

}  // namespace

RankReplication::RankReplication(ReplicationOptions options, MetaStore& store,
                                 const FsSettings& fs, std::unique_ptr<rocksdb::DB> db)
    : options_(std::move(options)), db_(std::move(db)), sm_(store, fs) {}

RankReplication::~RankReplication() {
  group_.reset();  // before the DB under its storage
  db_.reset();
}

Result<std::unique_ptr<RankReplication>> RankReplication::open(ReplicationOptions options,
                                                               MetaStore& store,
                                                               const FsSettings& fs, bool create) {
  bool member = std::any_of(options.replicas.begin(), options.replicas.end(),
                            [&](const RankReplica& r) { return r.id == options.id; });
  if (!member) {
    return make_error(ErrorCode::kInvalidArgument,
                      "replica id " + std::to_string(options.id) + " is not one of the rank's");
  }
  auto db = DFS_TRY(open_log_db(options.raft_dir, create));
  std::unique_ptr<RankReplication> r(
      new RankReplication(std::move(options), store, fs, std::move(db)));
  DFS_TRY_STATUS(r->sm_.load());
  return r;
}

Status RankReplication::start(asio::any_io_executor executor, asio::thread_pool& pool,
                              rpc::Messenger& messenger, raft::RaftRouter& router, uint32_t rank) {
  raft::ConfState voters;
  raft::RaftGroupOptions group;
  group.group_id = kRankGroupBase + rank;
  group.raft.id = options_.id;
  group.tick_interval = options_.raft_tick;
  group.snapshot_every = options_.snapshot_every;
  group.snapshot_keep = options_.snapshot_keep;
  group.raft.images_on_demand = true;  // the store is the image: MdsStateMachine::snapshot
  // One command is one commit group: up to the committer's 512 KiB, or one entry of any
  // size an MDS request allows (an inline write of up to inline_threshold, at most 1 MiB).
  group.max_command_bytes = 3u << 20;
  for (const auto& r : options_.replicas) {
    voters.voters.push_back(r.id);
    if (r.id != options_.id) group.peers[r.id] = r.addr;
  }
  std::sort(voters.voters.begin(), voters.voters.end());
  auto storage = DFS_TRY(raft::RocksStorage::open(db_.get(), kLogPrefix, voters));
  group_ = std::make_unique<raft::RaftGroup>(executor, pool, messenger, router,
                                             std::move(storage), sm_, group);
  group_->start();
  return ok_status();
}

const RankReplica* RankReplication::replica(raft::NodeId id) const {
  for (const auto& r : options_.replicas) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

}  // namespace dfs::mds
