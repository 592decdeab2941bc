// RaftGroup: runs one RaftNode for real. Ticks from a steady_timer, sends messages over
// rpc::Messenger (method kRaftMessage, routed by RaftRouter), syncs the log storage on
// a blocking pool, and applies committed entries to a StateMachine. Single owner: every
// public method, the router's deliveries and the StateMachine calls run on `executor`,
// which must be single-threaded (the daemon's I/O thread) and also run the Messenger.
//
// Group commit: a Ready's writes are synced with one storage.sync() on the pool; while
// it runs, the node is not touched (no call may come between ready() and advance()),
// so proposals and messages that arrive queue up and all join the next Ready and its
// one sync. A leader's replication messages (appends, heartbeats, snapshot chunks)
// leave before the sync and travel while it runs (Raft thesis 10.2.1); every other
// message of a Ready leaves only after its sync returned.
//
// Timing defaults: a 50 ms tick, heartbeats every tick and an election timeout of 10
// ticks (randomized in [500, 1000) ms). A follower notices a dead leader after at most
// 1 s, a pre-vote and a vote round on a LAN take a few ms plus one fsync each, so a new
// leader is usually up within ~1.1 s: failover well under 2 s. Not shorter, because an
// fsync on a busy disk or a stalled I/O thread can take a few hundred ms, and a
// leader that misses that many heartbeats would be deposed needlessly.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/raft/raft_node.h"
#include "common/raft/raft_router.h"
#include "common/raft/state_machine.h"
#include "common/rpc/messenger.h"

namespace dfs::raft {

struct RaftGroupOptions {
  uint64_t group_id = 0;                // names the group on the wire (kRaftMessage)
  RaftConfig raft;                      // raft.id is this node's id
  std::map<NodeId, std::string> peers;  // "host:port" of every other voter
  Duration tick_interval{50};
  uint64_t seed = 0;                    // election randomness; 0 picks one at random
  // Compact the log into a state-machine snapshot every this many applied entries
  // (0: never). Followers that fall further behind catch up from the snapshot.
  uint64_t snapshot_every = 10000;
  // With raft.images_on_demand: entries kept behind the compaction point, so that a
  // follower that lags by fewer catches up from the log rather than from a whole image
  // of the state. Ignored otherwise (an image is of the state at the point).
  uint64_t snapshot_keep = 0;
  // Commands above this are refused: one must fit an RPC body with its envelope.
  uint64_t max_command_bytes = 1 << 20;
  int read_timeout_ticks = 40;          // a read not confirmed by then fails (kTimeout)
  Duration connect_timeout{500};        // per dial of a peer; its queue is dropped after
  size_t max_queued_per_peer = 4096;    // messages waiting for a connection; more dropped
};

// What a committed proposal produced on this node.
struct Applied {
  Index index = 0;
  std::string result;  // StateMachine::apply's return value
};

struct PeerStatus {
  Index match = 0;  // highest index known to be in the follower's log
  Index next = 0;
  ProgressState state = ProgressState::kProbe;
};

struct RaftGroupStatus {
  uint64_t group_id = 0;
  NodeId id = kNoNode;
  Role role = Role::kFollower;
  Term term = 0;
  NodeId leader = kNoNode;
  Index commit = 0;
  Index applied = 0;
  Index last_index = 0;
  Index snapshot_index = 0;
  std::map<NodeId, PeerStatus> peers;  // leader only: lag = last_index - match
  bool failed = false;                 // a sync failed: the group stopped
  uint64_t syncs = 0;                  // storage syncs (fewer than proposals: group commit)
  uint64_t applied_entries = 0;        // entries applied since start
  uint64_t messages_sent = 0;
  uint64_t messages_dropped = 0;       // peer unreachable or its queue full
};

// Told a proposal's log index once the leader appended it (RaftGroup::propose).
using AppendedFn = std::function<void(Index)>;

class RaftGroupRuntime;  // raft_group_runtime.h

class RaftGroup {
 public:
  // Restores the state machine from storage's snapshot (if any) and registers with
  // `router`; start() begins ticking. The node's committed entries after the snapshot
  // are applied again as they come back from the log (a state machine that persists
  // its own state must tolerate that, e.g. by skipping indexes it has applied).
  // Requires: `pool`, `messenger`, `router` and `sm` outlive the group, and `messenger`
  // every coroutine it runs; the DB under `storage` stays open until stop() returned.
  RaftGroup(asio::any_io_executor executor, asio::thread_pool& pool, rpc::Messenger& messenger,
            RaftRouter& router, std::unique_ptr<RaftLogStorage> storage, StateMachine& sm,
            RaftGroupOptions options);
  // On the executor, or after it stopped. Without stop(): pending operations complete
  // with kCancelled, but a sync in flight still finishes on the pool afterwards (the
  // storage lives until it does, so the DB must too: join the pool before closing it).
  ~RaftGroup();
  RaftGroup(const RaftGroup&) = delete;
  RaftGroup& operator=(const RaftGroup&) = delete;

  void start();

  // Clean shutdown: pending operations complete with kCancelled, ticking stops, and it
  // returns once no sync is in flight (then the storage's DB may be closed).
  awaitable<void> stop();

  // Replicates `command` and completes once it is applied here, with its index and the
  // state machine's result. Errors:
  //   kUnavailable "not the raft leader" — not appended; leader_hint() names the
  //     leader if known; retry there.
  //   kUnavailable "leadership lost" — the entry may still commit later: callers that
  //     retry must make commands idempotent (a request id the state machine dedups).
  //   kBusy (leadership transfer), kInvalidArgument (command above max_command_bytes),
  //   kCancelled (group stopped), kIoError (a sync failed; the group has stopped).
  // `appended`, if set, is called on the executor with the command's index once this
  // leader has appended it to its log (before the log is synced or the command
  // commits); not called when the command fails before that.
  awaitable<Result<Applied>> propose(std::string command, AppendedFn appended = {});

  // Completes once reads served from the state machine reflect every write committed
  // before the call (read index: the leader confirms its leadership with a heartbeat
  // round, then waits until it has applied its commit index). Errors: kUnavailable
  // (not the leader, with a hint, or leadership lost), kTimeout (no quorum answered
  // within read_timeout_ticks), kCancelled, kIoError.
  awaitable<Status> linearizable_read();

  // A snapshot of the node's state, for `dfs status` and tests.
  RaftGroupStatus status() const;
  // Whether this node leads with a lease that holds now: no other leader can have been
  // elected (RaftNode::lease_start_tick), measured in real time. On the executor.
  bool holds_lease() const;

  // Updates the address of a peer (e.g. after a membership change).
  void set_peer_address(NodeId id, std::string address);

  uint64_t id() const;

 private:
  std::shared_ptr<RaftGroupRuntime> rt_;
  RaftRouter& router_;
};

// The leader named by a "not the raft leader" error, if it named one.
std::optional<NodeId> leader_hint(const Error& error);

}  // namespace dfs::raft
