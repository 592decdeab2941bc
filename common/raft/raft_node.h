// RaftNode: one member of a Raft group as a pure, deterministic state machine. It has
// no clock, threads, sockets or disk: time arrives as tick(), peers' messages through
// step(), and everything it wants done comes back as a Ready batch. Single-threaded:
// the owner (a strand in a daemon, the simulator in tests) calls every method.
//
// Processing a Ready (the durability contract):
//   1. send rd.early_messages, before the sync of step 2 or while it runs, so that a
//      leader writes its log in parallel with replicating it (Raft thesis 10.2.1).
//      They are a leader's AppendEntries, heartbeats and snapshot chunks, and nothing
//      in them needs to survive a crash of this node: entries it replicates (followers
//      may keep entries it then loses, as if it had crashed just after sending them;
//      they are of a term it can never lead again), an image of committed state, and a
//      commit index that never rests on its unsynced copy, because a leader counts its
//      own copy toward a commit only once synced (step 6). Their term is durable: it
//      was synced before this node's vote requests left.
//   2. if rd.must_sync: storage.sync(). The node has already written rd.hard_state,
//      new entries and any installed snapshot through RaftLogStorage; none of it may
//      be relied on until it is durable. A failed sync is fatal for the node.
//      must_sync is set by new entries, a snapshot, or a new term or vote; a Ready
//      that only moves the commit index needs none (as etcd's MustSync). Its hard
//      state is written all the same and becomes durable with a later sync made for
//      another reason. The commit index is volatile state in Raft, and every entry
//      at or below it is durable already: a follower's commit covers entries it has
//      not synced only in a Ready that syncs them, and a leader counts its own copy
//      only once synced. So a node that restarts with an older commit index than it
//      had applied still holds every entry it applied; see the constructor.
//   3. send rd.messages, only after the sync returned: each may depend on step 2 (a
//      vote granted, a candidate's new term and its vote for itself, an append
//      acknowledged, a higher term answered).
//   4. if rd.snapshot: restore the state machine from it (it replaces all state up
//      to rd.snapshot->meta.index); then apply rd.committed_entries in order (after
//      the sync of step 2 when there is one; without one they are durable already).
//   5. serve rd.read_states once the applied index reaches each state's index.
//   6. advance(rd). It tells the node that everything written before ready() is
//      durable (when rd.must_sync): only then does a leader's own copy of new entries
//      count toward a commit, which may hand out committed entries (for a single-voter
//      group, always) in the next Ready. No other call may come between ready() and
//      advance().
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/raft/message.h"
#include "common/raft/progress.h"
#include "common/raft/random.h"
#include "common/raft/storage.h"
#include "common/raft/types.h"
#include "common/status/status.h"

namespace dfs::raft {

struct RaftConfig {
  NodeId id = kNoNode;
  int election_ticks = 10;   // election timeout is uniform in [T, 2T) ticks
  int heartbeat_ticks = 1;
  uint64_t max_append_bytes = 64 * 1024;  // per AppendEntries (at least one entry)
  size_t max_inflight = 8;                // appends in flight per follower
  uint64_t snapshot_chunk_bytes = 256 * 1024;
  uint64_t max_apply_bytes = 1024 * 1024;  // committed entries per Ready
  int snapshot_resend_ticks = 3;  // resend an unacknowledged chunk after this long
  // The application keeps its state durably itself and compacts with images that only
  // point at it (StateMachine::snapshot): such an image is never sent. A follower that
  // needs compacted entries waits until the owner attaches a whole image (wants_image,
  // attach_image).
  bool images_on_demand = false;
};

enum class Role : uint8_t { kFollower, kPreCandidate, kCandidate, kLeader };
const char* role_name(Role role);

// A read-index request confirmed by a quorum: reads with this context are
// linearizable once the state machine has applied `index`.
struct ReadState {
  uint64_t context = 0;
  Index index = 0;
};

struct Ready {
  std::optional<HardState> hard_state;  // changed since the last Ready (informational)
  bool must_sync = false;  // entries, a snapshot, a term or a vote to sync (step 2)
  std::optional<Snapshot> snapshot;     // installed from the leader; restore from it
  std::vector<Message> early_messages;  // may leave before the sync (contract step 1)
  std::vector<Message> messages;        // leave only after the sync (contract step 3)
  std::vector<Entry> committed_entries;
  std::vector<ReadState> read_states;
};

class RaftNode {
 public:
  // Restores term, vote, commit, snapshot and configuration from `storage` (what was
  // synced before a crash). The state machine must be restored by the application
  // from storage.snapshot(); entries after it come back as committed entries: at once
  // up to the restored commit index, which may be older than what was applied before
  // the crash (it is synced only along with other writes), and beyond it once the
  // leader's next append or heartbeat says so (a single voter: once it has committed
  // its new term's no-op). An application that records what it applied skips entries
  // it already has (MdsStateMachine's raft_applied).
  RaftNode(RaftConfig config, RaftLogStorage& storage, Random& random);

  // Advances logical time by one tick: election timeouts, heartbeats, check-quorum.
  void tick();

  // Handles a message from a peer. Messages may be lost, duplicated or reordered.
  void step(const Message& m);

  // Appends a command to the leader's log; returns its index. The entry may still be
  // lost if leadership changes before it commits: the caller learns the outcome only
  // by seeing it in committed_entries. Errors: kUnavailable (not the leader: retry at
  // leader(), a hint that may be kNoNode), kBusy (leadership transfer in progress).
  Result<Index> propose(std::string data);

  // Proposes adding or removing one voter. It takes effect on append (thesis, 4.1).
  // Errors: kUnavailable (not the leader, or no entry of its term committed yet),
  // kBusy (another change not yet committed, or a transfer in progress),
  // kInvalidArgument (no-op change, or removing the leader: transfer first).
  Result<Index> propose_conf_change(ConfChange change);

  // Starts a linearizable read. The leader confirms it is still leader with a
  // heartbeat round; then Ready::read_states carries (context, commit index at the
  // time of the call). Requests lost to a leadership change never complete: callers
  // time out. Errors: kUnavailable (not leader, or no entry of its term committed).
  Status read_index(uint64_t context);

  // Hands leadership to voter `to`: catches it up, then sends TimeoutNow. Proposals
  // are refused until it completes or an election timeout passes.
  // Errors: kUnavailable (not leader), kInvalidArgument (not a voter).
  Status transfer_leadership(NodeId to);

  // The leader lease. A voter that heard from the leader refuses to vote for another
  // candidate for an election timeout (refuses_votes: the check-quorum lease), and a
  // node that just started does so for its first election timeout. So once a quorum has
  // answered a heartbeat round, no other leader can be elected for an election timeout
  // after that round left. lease_start_tick() is the tick (this node's tick() count)
  // at which the newest such round left; unset when this node does not lead, while it
  // hands leadership over and, once it told the transferee to campaign, for the rest of
  // its term; and before a quorum answered a round of its own. The lease
  // lasts lease_ticks() ticks from there: an election timeout less one tick for a
  // voter's first tick coming right after the heartbeat and one for ticks of different
  // nodes out of step. Ticks stop while a process is paused: an application measures
  // the lease in real time from when that tick was fed (RaftGroup::holds_lease).
  std::optional<uint64_t> lease_start_tick() const;
  int lease_ticks() const { return config_.election_ticks - 2; }
  // Whether the lease holds at this node's tick count.
  bool holds_lease() const;
  // tick() calls since this node started.
  uint64_t ticks() const { return ticks_; }

  // Replaces the log up to `index` (<= applied) by the application's image of its
  // state at `index`. Written to storage (synced with the next Ready).
  // Errors: kInvalidArgument (index beyond applied or not above the last snapshot).
  Status compact(Index index, std::string image);

  // With images_on_demand: a follower needs compacted entries and the log's image is
  // not a whole one. Leader only.
  bool wants_image() const { return wants_image_ && role_ == Role::kLeader; }
  // Replaces the log up to `index` (<= applied, at or above the last snapshot) by
  // `image`, a whole image of the state at `index` that followers may be sent, and
  // starts sending it to those waiting for one. Written to storage like compact().
  // Errors: kInvalidArgument (index outside [snapshot, applied]).
  Status attach_image(Index index, std::string image);
  // Leader only: whether a snapshot is being sent to a follower that answered a chunk
  // within an election timeout (compacting meanwhile would start the transfer over;
  // one that is down must not hold compaction back).
  bool sending_snapshot() const;

  bool has_ready() const;
  Ready ready();
  void advance(const Ready& rd);

  NodeId id() const { return config_.id; }
  Role role() const { return role_; }
  Term term() const { return term_; }
  NodeId leader() const { return leader_; }
  Index commit_index() const { return commit_; }
  Index applied_index() const { return applied_; }
  const ConfState& conf() const { return conf_; }
  Index last_index() const { return storage_.last_index(); }
  const RaftLogStorage& storage() const { return storage_; }
  // Leader only (empty otherwise): what it knows of each follower's log, for status.
  const std::map<NodeId, Progress>& progress() const { return progress_; }

 private:
  // Roles (raft_election.cc).
  void become_follower(Term term, NodeId leader);
  void become_pre_candidate();
  void become_candidate();
  void become_leader();
  void campaign(bool pre_vote, bool transfer);
  // Whether a (pre-)vote request falls within the check-quorum lease (see
  // leader_heard_elapsed_), which only a leadership transfer's campaign passes.
  bool refuses_votes(const Message& m) const;
  void handle_vote_request(const Message& m);
  void handle_vote_response(const Message& m);
  void reset_election_timer();
  bool promotable() const;
  bool log_up_to_date(Index index, Term term) const;
  void tick_leader();
  bool quorum_active();

  // Replication (raft_replication.cc).
  void append_local(std::vector<Entry> entries);
  void bcast_append(bool send_if_empty);
  bool send_append(NodeId to, bool send_if_empty);
  void send_snapshot_chunk(NodeId to, Progress& pr);
  void bcast_heartbeat(uint64_t context);
  // Tells the transferee to campaign now (kTimeoutNow).
  void send_timeout_now(NodeId to);
  bool maybe_commit();
  void handle_append(const Message& m);
  void handle_append_response(const Message& m);
  void handle_heartbeat(const Message& m);
  void handle_heartbeat_response(const Message& m);
  Index find_conflict_by_term(Index index, Term term) const;

  // Snapshots (raft_snapshot.cc).
  void handle_snapshot_chunk(const Message& m);
  void handle_snapshot_response(const Message& m);
  void install_snapshot(Snapshot snap);

  // Configuration (raft_membership.cc).
  void refresh_conf();
  void note_appended_conf(const std::vector<Entry>& entries);
  void set_conf(ConfState conf);
  ConfState conf_at(Index index) const;

  void send(Message m);
  void send_early(Message m);
  void forget_synced_from(Index index);
  Term last_term() const;
  void abort_transfer() { transferee_ = kNoNode; }

  RaftConfig config_;
  RaftLogStorage& storage_;
  Random& random_;

  Term term_ = 0;
  NodeId vote_ = kNoNode;
  Index commit_ = 0;
  Index applied_ = 0;  // last index handed to the application and advanced
  Role role_ = Role::kFollower;
  NodeId leader_ = kNoNode;

  uint64_t ticks_ = 0;
  // Ticks since this node last heard from a leader of its term (or led, or started):
  // it votes for nobody within an election timeout of that (refuses_votes).
  int leader_heard_elapsed_ = 0;
  int election_elapsed_ = 0;
  int heartbeat_elapsed_ = 0;
  int randomized_timeout_ = 0;
  std::map<NodeId, bool> votes_;  // (pre-)candidate: granted or rejected per voter

  ConfState conf_;
  Index conf_index_ = 0;  // index of the entry that set conf_ (0: the snapshot's)
  // Every entry of the log up to here is durable: a leader's own match. Set from the
  // log at advance() after a sync; lowered when entries at or below it are replaced.
  Index synced_last_ = 0;

  // Leader only.
  std::map<NodeId, Progress> progress_;  // every voter except this node
  Index term_start_index_ = 0;           // this term's no-op; reads wait for its commit
  NodeId transferee_ = kNoNode;
  int transfer_elapsed_ = 0;
  // Heartbeat rounds: the newest one's number and the tick each recent one left at.
  uint64_t heartbeat_round_ = 0;
  std::deque<std::pair<uint64_t, uint64_t>> round_ticks_;  // (round, tick), oldest first
  bool sent_timeout_now_ = false;  // in this term: no lease (send_timeout_now)
  bool need_broadcast_ = false;  // proposals since the last Ready: batch them
  struct PendingRead {
    uint64_t context;
    Index index;
    std::set<NodeId> acks;
  };
  std::deque<PendingRead> pending_reads_;

  // Follower only: the snapshot being received, chunk by chunk.
  struct Assembly {
    SnapshotMeta meta;
    std::string data;
  };
  std::optional<Assembly> assembly_;

  // Output accumulated for the next Ready.
  std::vector<Message> early_outbox_;
  std::vector<Message> outbox_;
  std::vector<ReadState> read_states_;
  std::optional<Snapshot> installed_snapshot_;
  // With images_on_demand: the snapshot index whose stored image is a whole one (0:
  // none), and whether a follower waits for one.
  Index sendable_image_index_ = 0;
  bool wants_image_ = false;
  bool must_sync_ = false;
  HardState reported_hard_state_;
};

}  // namespace dfs::raft
