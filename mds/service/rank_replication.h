// RankReplication: what makes an MDS one replica of a replicated metadata rank. It owns
// the rank's Raft log (its own RocksDB beside the metadata store, so a log sync is one
// fsync of a small WAL), the state machine that applies committed groups to the store,
// and the Raft group; the MdsService serves clients only while this replica leads
// (docs/architecture.md, "Replicated metadata ranks").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/raft/members_config.h"
#include "common/raft/raft_group.h"
#include "mds/service/mds_state_machine.h"

namespace rocksdb {
class DB;
}

namespace dfs::mds {

// One replica of a rank as dfs.conf describes it ([mds.X] sections of the same rank);
// its addr is its RPC server's, for clients and Raft peers alike.
using RankReplica = raft::RaftMember;

struct ReplicationOptions {
  raft::NodeId id = 0;                // this replica
  std::vector<RankReplica> replicas;  // all of them, this one included
  std::string raft_dir;               // the Raft log's RocksDB
  Duration raft_tick{50};
  // The log is compacted every snapshot_every commit groups, keeping snapshot_keep
  // behind the compaction point for followers that lag; its image is the store itself
  // (a whole one is made only for a follower further behind). The log, in memory until
  // compacted, holds up to their sum; a group is at most 3 MiB, mostly far less.
  uint64_t snapshot_every = 1000;
  uint64_t snapshot_keep = 1000;
};

class RankReplication {
 public:
  // Creates the Raft log's store (with `create`) or opens it, and reads the state
  // machine's applied index from `store`. Blocking: call before serving.
  // Errors: kNotFound (no log and !create), kAlreadyExists, kIoError, kCorruption,
  // kInvalidArgument (this replica is not among `replicas`).
  static Result<std::unique_ptr<RankReplication>> open(ReplicationOptions options,
                                                       MetaStore& store, const FsSettings& fs,
                                                       bool create);
  ~RankReplication();

  // Starts the Raft group. Requires: `messenger`, `router` and `pool` outlive this, and
  // the pool is joined before this is destroyed (a log sync may be running on it).
  Status start(asio::any_io_executor executor, asio::thread_pool& pool,
               rpc::Messenger& messenger, raft::RaftRouter& router, uint32_t rank);

  raft::RaftGroup& group() { return *group_; }
  // The Raft index of the last command the state machine applied here.
  uint64_t last_command_index() const { return sm_.last_command_index(); }
  raft::RaftGroupStatus status() const { return group_->status(); }
  const ReplicationOptions& options() const { return options_; }
  // The replica with Raft id `id`, if it is one.
  const RankReplica* replica(raft::NodeId id) const;

 private:
  RankReplication(ReplicationOptions options, MetaStore& store, const FsSettings& fs,
                  std::unique_ptr<rocksdb::DB> db);

  ReplicationOptions options_;
  std::unique_ptr<rocksdb::DB> db_;
  MdsStateMachine sm_;
  std::unique_ptr<raft::RaftGroup> group_;
};

}  // namespace dfs::mds
