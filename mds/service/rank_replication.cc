#include "mds/service/rank_replication.h"

#include <rocksdb/db.h>
#include <rocksdb/table.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "common/raft/file_storage.h"
#include "common/raft/rocks_storage.h"

namespace dfs::mds {
namespace {

// Group ids on the wire: one per rank (the router of one MDS may host several ranks).
constexpr uint64_t kRankGroupBase = 0x6d64730000000000;  // "mds" << 40
constexpr char kLogPrefix[] = "raft/rank/";

// A rank's log in a RocksDB of its own, as versions before the file log made it.
Result<std::unique_ptr<rocksdb::DB>> open_legacy_log_db(const std::string& path) {
  rocksdb::Options options;
  options.keep_log_file_num = 3;
  // Entries live until the next compaction of the log, a few thousand groups: the table
  // files they reach are soon dropped, and compressing them is CPU for nothing. XXH3
  // rather than the CRC32C of Debian's portable RocksDB build, which is table-driven.
  options.compression = rocksdb::kNoCompression;
  rocksdb::BlockBasedTableOptions table;
  table.checksum = rocksdb::kXXH3;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  rocksdb::DB* raw = nullptr;
  auto s = rocksdb::DB::Open(options, path, &raw);
  if (s.ok()) return std::unique_ptr<rocksdb::DB>(raw);
  return make_error(s.IsCorruption() ? ErrorCode::kCorruption : ErrorCode::kIoError,
                    "opening the raft log " + path + ": " + s.ToString());
}

raft::ConfState voters_of(const ReplicationOptions& options) {
  raft::ConfState voters;
  for (const auto& r : options.replicas) voters.voters.push_back(r.id);
  std::sort(voters.voters.begin(), voters.voters.end());
  return voters;
}

}  // namespace

RankReplication::RankReplication(ReplicationOptions options, MetaStore& store,
                                 const FsSettings& fs)
    : options_(std::move(options)), sm_(store, fs) {}

RankReplication::~RankReplication() {
  group_.reset();  // before the DB under its storage
  storage_.reset();
  legacy_db_.reset();
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
  std::unique_ptr<RankReplication> r(new RankReplication(std::move(options), store, fs));
  const std::string& dir = r->options_.raft_dir;
  std::error_code ec;
  const bool legacy = std::filesystem::exists(dir + "/CURRENT", ec);
  if (ec) return make_error(ErrorCode::kIoError, "looking into " + dir + ": " + ec.message());
  if (legacy && std::filesystem::exists(dir + "/log", ec)) {
    return make_error(ErrorCode::kCorruption,
                      dir + " holds both a RocksDB Raft log and a file one: which is the "
                            "rank's log cannot be told");
  }
  if (!create && legacy) {
    r->legacy_db_ = DFS_TRY(open_legacy_log_db(dir));
    r->storage_ = DFS_TRY(raft::RocksStorage::open(r->legacy_db_.get(), kLogPrefix,
                                                   voters_of(r->options_)));
    spdlog::info("the rank's Raft log is the RocksDB in {} (made by an older version)", dir);
  } else {
    if (create && legacy) {
      return make_error(ErrorCode::kAlreadyExists, "a raft log already exists at " + dir);
    }
    if (create && !std::filesystem::create_directories(dir, ec) && ec) {
      return make_error(ErrorCode::kIoError, "creating " + dir + ": " + ec.message());
    }
    auto file = raft::FileStorage::open(dir + "/log", voters_of(r->options_), create);
    if (!file && file.error().code() == ErrorCode::kNotFound) {
      return make_error(ErrorCode::kNotFound, "no raft log at " + dir + " (run dfs-mds --mkfs)");
    }
    r->storage_ = DFS_TRY(std::move(file));
  }
  DFS_TRY_STATUS(r->sm_.load());
  return r;
}

Status RankReplication::start(asio::any_io_executor executor, asio::thread_pool& pool,
                              rpc::Messenger& messenger, raft::RaftRouter& router, uint32_t rank) {
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
    if (r.id != options_.id) group.peers[r.id] = r.addr;
  }
  group_ = std::make_unique<raft::RaftGroup>(executor, pool, messenger, router,
                                             std::move(storage_), sm_, group);
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
