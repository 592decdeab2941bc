// MdsStateMachine: the Raft state machine of a replicated metadata rank. A committed
// command is an MdsLogGroup: the store writes the leader's Committer made deciding and
// applying the group, written as they are, or its entries (writes too large for one
// command), applied here with apply_entry in one GroupTxn; either only if the group was
// decided on the state this replica has (no command applied since the one the leader
// had applied last, `last_command_index()`), otherwise every replica drops it and the
// proposer hears kStaleGroup. The Raft index is recorded with the writes and the batch
// written to the store without a sync: the Raft log is what makes entries durable.
// After a crash the group replays its log from the last snapshot; entries at or below
// the store's recorded Raft index are skipped, so a replay never applies an entry
// twice.
//
// Every replica, leader included, changes its store only here, and only with committed
// entries: a deposed leader's store never holds an entry the new leader lacks.
//
// A replica that cannot apply a committed entry (its store failed, or the entry fails
// here although it applied on the leader: the replicas diverged) stops the process
// rather than serve a state that differs from the others'; a restart replays the log.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <string_view>

#include "common/raft/state_machine.h"
#include "mds/ops/op_context.h"
#include "mds/store/meta_store.h"

namespace dfs::mds {

class MdsStateMachine final : public raft::StateMachine {
 public:
  // apply()'s result for a group of writes decided on another state: dropped.
  static constexpr char kStaleGroup[] = "stale";

  MdsStateMachine(MetaStore& store, FsSettings fs) : store_(store), fs_(std::move(fs)) {}

  // Reads the Raft index the store has applied. Blocking: call before the group starts.
  Status load();

  std::string apply(raft::Index index, std::string_view command) override;
  // Records `applied` as the store's Raft index (past the last command when Raft's own
  // entries followed it) and starts the store's sync on a thread of its own (under a
  // Raft log a memtable flush, tens of ms this replica's I/O thread would otherwise
  // wait); answers true once a sync begun at `applied` or later has completed, and
  // stops the process if it failed. The store is then its own image at `applied`.
  bool make_durable(raft::Index applied) override;
  // An empty image that points at the store, which make_durable() made durable at
  // `applied`: compacting copies nothing.
  std::string snapshot(raft::Index applied) override;
  // Syncs the store and returns every key and value as an MdsStoreImage, for a follower
  // that needs compacted entries.
  std::string full_image(raft::Index applied) override;
  // Replaces the store's contents by the image, unless the store has already applied
  // `index` (a restart: the image, whole or a pointer, is the state it holds). A
  // pointer to a state the store does not have (it lost synced writes) stops the
  // process.
  void restore(raft::Index index, std::string_view image) override;

  raft::Index applied_index() const { return applied_; }
  // The Raft index of the last command applied (Raft's own entries, a new leader's
  // no-op, do not reach apply(); a snapshot may be taken at one, and sets
  // applied_index() to it): the same on every replica that has applied as much.
  raft::Index last_command_index() const { return last_command_; }

 private:
  [[noreturn]] void fail_stop(raft::Index index, const std::string& why);
  // Syncs the store, or stops the process: an image must not point at writes the disk
  // may not have. `purpose` names what the sync is for in the reason.
  void sync_store(std::string_view purpose);
  // Writes `index` as the store's raft_applied (synced with `sync`), or stops the process.
  void record_applied(raft::Index index, bool sync);

  MetaStore& store_;
  FsSettings fs_;
  raft::Index applied_ = 0;
  raft::Index last_command_ = 0;
  // make_durable()'s sync while it runs (its destructor waits for it), what it makes
  // durable, and what the store holds durably (as loaded, restored, or synced since).
  struct TimedSync {
    Status status;
    std::chrono::milliseconds took;
  };
  std::future<TimedSync> sync_;
  raft::Index syncing_for_ = 0;
  raft::Index durable_ = 0;
};

}  // namespace dfs::mds
