// Committer: the single writer of a metadata store, with group commit. Mutations queue
// up on the I/O thread; a posted writer takes everything queued as a group and, on the
// I/O thread (cached reads and a page-cache log append: cheaper than a hop to a pool
// thread), decides each entry's leader values (index, time, new inode number),
// applies the entries in order into one GroupTxn (each sees its predecessors' writes)
// and writes the group as one WriteBatch. Groups follow each other in log order.
//
// Early replies (docs/architecture.md, "Single MDS: early replies"): a group is written
// to the log without waiting for the disk, and its replies are released at once
// ("applied"; they survive a crash of this process, since the log write reached the
// kernel). A separate syncer makes the log durable in the background, one fsync for
// everything written meanwhile, and only then are entries "durable": listeners (which
// delete objects) hear of an entry only then, and wait_durable() (kMdsSync from fsync,
// fsyncdir and unmount, or a request marked `durable`) returns only then. Without a
// waiter the syncer first lets groups gather for `sync_delay`. With `reply_after_sync`
// (`early_replies = 0`), replies wait for durability as well.
//
// A replicated rank (set_raft) has no local log: each group is decided and applied on
// the leader in a scratch GroupTxn, and the store writes that made go to the rank's
// Raft group as one command (its entries instead, should the writes not fit one
// command); the state machine (MdsStateMachine) writes them to the store on every
// replica once they are committed, and only then are the replies released ("safe"
// replies: committed on a majority, so durable as the rank is). The leader's store thus
// never holds an uncommitted entry. Groups are pipelined: once a group is appended to
// the leader's Raft log, the next is decided on the committed state with the writes of
// the groups in flight on top (ProjectedWrites, up to kMaxGroupsInFlight groups), and
// names the Raft index of the group before it as the state it was decided on; every
// replica drops a group decided on another state than it has (an earlier leader's
// group committed first), and its requests fail with kUnavailable, which clients
// resend. After a group that fails, nothing is decided until the groups in flight have
// settled. Other than early replies, replies are released in the order the groups were
// decided: an error decided on a group in flight is not told before that group
// committed.
//
// Early ("unsafe") replies: an entry whose client keeps its request until it learns it
// is safe, and resends it to the next leader (set_early_replies), is answered once its
// group is appended to the leader's log; wait_durable() waits for the groups in flight
// to commit. A group with such replies that is not replicated after all is reported
// (on_early_lost), so that the service makes its clients resend. A client resends only
// its own requests, in its own order, and a new leader applies the resends of several
// clients in the order they arrive. So a group is answered early only while it and
// every group in flight before it hold nothing but one client's entries that may be
// answered early, those before it answered already: a resend then never lands on a
// state other than the one its answer was decided on. Other clients' entries wait for
// their commit, and their reads see committed state only (unsettled_only_of). The
// MDS's own entries (purges, session records, orphans: no request header) count as
// nobody's: no client's change depends on them, and a new leader makes them again from
// the replicated state. And a group is answered early only while the leader holds its
// Raft lease (RaftGroup::holds_lease): no other leader can have been elected, whose
// clients' changes a resend would otherwise follow.
// Public methods run on the I/O executor.
#pragma once

#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <optional>

#include "common/rpc/asio.h"
#include "mds/ops/op_context.h"
#include "common/rpc/completion.h"
#include "mds/store/meta_store.h"
#include "mds/store/projected_writes.h"

namespace dfs::raft {
class RaftGroup;
}

namespace dfs::mds {

using NowFn = std::function<proto::Timespec()>;
// The real-time clock as a Timespec (the default NowFn). Thread-safe.
proto::Timespec realtime_now();

struct CommitterOptions {
  size_t max_group_entries = 1024;
  size_t max_group_bytes = 32u << 20;
  bool reply_after_sync = false;  // true: no early replies
  // How long the syncer lets applied groups gather before one fsync covers them all,
  // unless someone waits for durability (fsync): a serial client would otherwise cost
  // one fsync per request. It bounds what a power loss can take beyond the fsync.
  Duration sync_delay{5};
};

struct CommitterStats {
  // Above every MdsLogEntry op's field number.
  static constexpr size_t kEntryKinds = 32;
  uint64_t groups = 0;  // written (a single MDS) or proposed (a replicated rank)
  uint64_t entries = 0;
  // `entries` by the entry's op (indexed by MdsLogEntry::op_case()): what a workload
  // costs the metadata tier, request kind by request kind.
  std::array<uint64_t, kEntryKinds> entries_by_kind{};
  uint64_t failed_entries = 0;  // rejected by their op (not logged)
  // Groups of a replicated rank decided while the one before was still in flight.
  uint64_t pipelined_groups = 0;
  // Entries of a replicated rank answered before their group committed.
  uint64_t early_replies = 0;
  uint64_t syncs = 0;
};

class Committer {
 public:
  Committer(asio::any_io_executor io, asio::thread_pool& pool, MetaStore& store, FsSettings fs,
            NowFn now, CommitterOptions options = {});

  // The last log index in the store. Blocking, touches nothing of this object: read it
  // before serving (and a replicated rank's new leader again before it serves), on any
  // thread, and hand it to adopt_last_index() on the I/O executor.
  // Errors: store errors.
  Result<uint64_t> read_last_index() const;
  void adopt_last_index(uint64_t index);
  // Both, on the thread that runs the I/O executor or before it runs.
  Status load();

  // Replicates groups through `raft` instead of the local log (see above);
  // `last_command_index`: the Raft index of the last command the rank's state machine
  // applied here (MdsStateMachine::last_command_index). Requires: before the first
  // submit; `raft` outlives the committer's work.
  void set_raft(raft::RaftGroup* raft, std::function<uint64_t()> last_command_index);

  // Logs and applies the op set in `entry`; the committer fills index, now, new_ino and
  // layout. Returns the op's serialized reply once its entry is applied and logged (or
  // durable, with reply_after_sync; a replicated rank: committed, or in the leader's log
  // for an early reply), or the op's error (nothing logged), or the store's error
  // (kIoError, kReadOnly: the group failed and the store refuses writes until restart;
  // a replicated rank's kUnavailable: not replicated, resend).
  awaitable<Result<std::string>> submit(proto::MdsLogEntry entry);

  // Waits until every entry applied so far is durable (a replicated rank: every group
  // decided so far has committed). Errors: the store's, when the log could not be made
  // durable (what was applied may be lost in a power failure); a replicated rank's
  // kUnavailable when a group was not replicated.
  awaitable<Status> wait_durable();

  // A replicated rank's early replies: entries `may_reply_early` accepts are answered
  // once their group is appended to the leader's log (see above); `on_early_lost` hears
  // of a group answered so that was not replicated. Requires: before the first submit.
  void set_early_replies(std::function<bool(const proto::MdsLogEntry&)> may_reply_early,
                         std::function<void(const Error&)> on_early_lost);
  // Whether every group decided so far has settled: a reply given now reflects no change
  // that may still be lost. Always true for a single MDS.
  bool settled() const { return flights_.empty(); }
  // Whether every group in flight holds only `client`'s entries answered early (and the
  // MDS's own), but for the newest group while it is being appended: what a read of
  // `client` may see on top of the committed state. True when none is in flight; never
  // while a group holds another client's entries, nor one of this client's that is in
  // the log unanswered (it waits for its commit: no lease).
  bool unsettled_only_of(const std::string& client) const;
  // `base`, a reader of the store, with the groups in flight on top: what the leader's
  // reads see. Valid until the next suspension point of the caller.
  ProjectedView projected_view(const KvReader& base) const {
    return ProjectedView(projected_, base);
  }

  // Called on the I/O executor with each durable entry and its effects, in log order
  // (the service acts on orphans; tests record the log).
  using EntryListener = std::function<void(const proto::MdsLogEntry&, const ApplyEffects&)>;
  void add_listener(EntryListener listener) { listeners_.push_back(std::move(listener)); }
  // Called on the I/O executor after the entries that became durable together (a
  // replicated group, or a single MDS's sync round) were told to the entry listeners and
  // their replies released: work it posts runs after every one of those replies.
  using GroupListener = std::function<void()>;
  void add_group_listener(GroupListener listener) {
    group_listeners_.push_back(std::move(listener));
  }

  uint64_t last_index() const { return last_index_; }
  uint64_t durable_index() const { return durable_index_; }
  bool idle() const { return !writing_ && !syncing_ && queue_.empty() && flights_.empty(); }
  const CommitterStats& stats() const { return stats_; }
  const FsSettings& fs() const { return fs_; }

 private:
  struct Pending {
    explicit Pending(asio::any_io_executor ex, proto::MdsLogEntry e)
        : entry(std::move(e)), done(std::move(ex)) {}
    proto::MdsLogEntry entry;
    Result<std::string> result;
    ApplyEffects effects;
    Completion<bool> done;
  };
  using Group = std::vector<std::shared_ptr<Pending>>;

  // A replicated rank's group from its decision until it settles: committed, dropped,
  // or failed before it was replicated (`outcome`).
  struct Flight {
    Flight(Group g, uint64_t i) : group(std::move(g)), id(i) {}
    Group group;
    uint64_t id;            // numbers its writes in projected_
    bool proposed = false;  // a group whose every entry failed proposes nothing
    bool appended = false;  // in the leader's log
    // Set when the entries of the group that applied are one client's, each one
    // may_reply_early_ accepts, and the MDS's own: that client (empty with the MDS's
    // own entries only). Unset: never answered early.
    std::optional<std::string> early_client;
    bool replied_early = false;
    std::optional<Status> outcome;
  };
  static constexpr size_t kMaxGroupsInFlight = 8;

  struct DurableWaiter {
    uint64_t index;
    std::shared_ptr<Completion<Status>> done;
  };

  void write_groups();
  awaitable<void> replicate_groups();
  // Proposes `flight`'s command; `appended` is set once the leader appended it (true) or
  // it failed before that (false).
  awaitable<void> replicate(std::shared_ptr<Flight> flight, proto::MdsLogGroup command,
                            std::shared_ptr<Completion<bool>> appended);
  // Releases the groups at the front of flights_ that settled, in order.
  void settle_flights();
  // Flight::early_client of `group`.
  std::optional<std::string> sole_early_client(const Group& group) const;
  // Answers early, from the oldest group in flight on, the groups that are in the log
  // and hold only one client's entries that may be answered early (see above).
  void reply_early_in_order();
  void count_entry(const proto::MdsLogEntry& entry);
  awaitable<void> syncer_loop();
  void start_syncer();
  // The entries up to `index` are durable: tell the listeners and the waiters.
  void on_durable(uint64_t index);
  // The log could not be made durable: waiters get `failure`, now and from now on.
  void on_sync_failed(const Error& failure);
  Group take_group();
  // Decides and applies one group into `txn`: each entry gets its result (an entry
  // that fails, by its op or a store read, leaves no writes).
  void apply_group(Group& group, uint64_t first_index, GroupTxn& txn);
  // apply_group, then writes the group (without sync). Returns the write status.
  Status process(Group& group, uint64_t first_index);
  Status decide(Pending& p, GroupTxn& txn, uint64_t index);
  // A client's wanted inode number (MdsRequestHeader.want_ino) must have been handed
  // out (below the counter `next`) and be free. Errors: kInvalidArgument, kAlreadyExists.
  static Status check_wanted_ino(GroupTxn& txn, uint64_t want, uint64_t floor, uint64_t next);

  asio::any_io_executor io_;
  asio::thread_pool& pool_;
  MetaStore& store_;
  FsSettings fs_;
  NowFn now_;
  CommitterOptions options_;
  raft::RaftGroup* raft_ = nullptr;
  std::function<uint64_t()> raft_last_command_;
  std::deque<std::shared_ptr<Pending>> queue_;  // I/O thread
  bool writing_ = false;
  bool syncing_ = false;
  uint64_t last_index_ = 0;
  uint64_t durable_index_ = 0;
  Status sync_failure_ = ok_status();  // sticky, like the store's
  std::deque<std::shared_ptr<Pending>> applied_;  // logged, not yet durable, in log order
  std::vector<DurableWaiter> durable_waiters_;
  Signal sync_wake_;  // a durability waiter arrived: sync now
  CommitterStats stats_;
  ProjectedWrites projected_;  // a replicated rank's groups in flight, over store_
  std::deque<std::shared_ptr<Flight>> flights_;  // in the order they were decided
  uint64_t next_flight_ = 1;
  // The Raft index of the newest group appended while groups are in flight.
  std::optional<uint64_t> projected_command_;
  // A group that was not replicated: the groups decided after it are void.
  std::optional<uint64_t> void_after_;
  std::function<bool(const proto::MdsLogEntry&)> may_reply_early_;
  std::function<void(const Error&)> on_early_lost_;
  // A replicated rank's wait_durable() callers, by the id of the newest flight then.
  std::vector<DurableWaiter> settle_waiters_;
  Signal flight_settled_;
  std::vector<EntryListener> listeners_;
  std::vector<GroupListener> group_listeners_;
};

}  // namespace dfs::mds
