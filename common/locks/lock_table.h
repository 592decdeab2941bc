// LockTable: the MDS's cluster-wide table of flock(2) and fcntl(2) locks (POSIX record locks, OFD
// locks) for every client session. A pure, single-threaded state machine: the owner (the MDS's lock
// strand; tests) calls every method, passes the time in, and drains take_granted() after each call
// to answer or wake the queued requests granted. The table is volatile: after a failover the
// clients re-assert what they hold.
//
// Semantics (Linux's, at cluster scope):
//   - Two locks conflict when their owners differ, they are in the same lock space (record locks:
//     POSIX and OFD together; flock locks apart), their ranges overlap and one of them is a write
//     lock. An owner never conflicts with itself: its new lock replaces what it held on that range
//     (upgrade, downgrade, split), and its ranges of one type that touch merge. POSIX upgrades are
//     atomic (refused or queued, the old lock stays); flock conversions are not (the old lock goes
//     first, as flock(2) says).
//   - Fairness: queued requests are granted in FIFO order, and a new request that would be
//     compatible with the held locks still waits behind (or, not waiting, is refused for) an
//     earlier queued request of another owner it conflicts with, so a stream of readers cannot
//     starve a queued writer. Exception: an owner that a queued request already waits for (it holds
//     a lock in its way), or that has another request queued, does not yield: making it wait behind
//     a request that waits for it would invent a deadlock Linux does not have. With this rule no
//     wait-for cycle ever goes through a yield; every cycle is one the application made.
//   - Deadlocks: a POSIX request that would wait (wait == true) is refused with kDeadlock when
//     waiting would close a cycle in the wait-for graph, across sessions and across lock kinds (an
//     OFD holder can be on the cycle). As on Linux, OFD and flock requests are never refused for
//     deadlock: the application's cycle waits until a waiter is cancelled (a signal: EINTR) or a
//     session is evicted. The check is conservative like Linux's: an owner with several queued
//     requests (threads) waits for the union of their blockers.
//
// Answers. Expected failures are values: SetOutcome for the lock-specific refusals (status.h has no
// EAGAIN/EDEADLK/ENOLCK codes); Error only for bad arguments (kInvalidArgument) and for the
// reassert grace (kUnavailable, kPermissionDenied). The FUSE glue maps kConflict to EAGAIN
// (EWOULDBLOCK for flock), kDeadlock to EDEADLK and kNoLocks to ENOLCK.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "common/locks/inode_locks.h"
#include "common/locks/types.h"
#include "common/status/status.h"

namespace dfs::locks {

struct LockTableOptions {
  // Locks (maximal ranges, and flock locks) one session may hold; each queued request reserves room
  // for the 2 more locks its grant may take (a split range), so a grant never fails for room. Past
  // it: kNoLocks.
  size_t max_locks_per_session = 10'000;
  size_t max_waiters_per_inode = 1'000;  // queued requests on one inode; past it: kNoLocks
  TimeMs reassert_grace_ms = 30'000;     // after begin_reassert()
  // Deliberate bugs for the randomized checker's self-test; never set outside tests: An owner
  // holding a lock on the inode is granted without looking at the others.
  bool testing_holder_skips_check = false;
  // Unlocks and releases leave the queue as it is.
  bool testing_unlock_wakes_nobody = false;
};

struct LockRequest {
  Ino ino = 0;
  Owner owner;
  Range range;  // ignored for kFlock owners: flock locks the whole file
  LockType type = LockType::kRead;
  int32_t pid = 0;    // the requesting process, for others' F_GETLK
  bool wait = false;  // F_SETLKW / F_OFD_SETLKW / flock without LOCK_NB
};

enum class SetOutcome : uint8_t {
  kGranted,   // held from now on (an unlock: done)
  kQueued,    // waits as `waiter`; take_granted() reports it when granted
  kConflict,  // wait == false and the request would wait: EAGAIN
  kDeadlock,  // POSIX, wait == true, and waiting would close a wait-for cycle: EDEADLK
  kNoLocks,   // past max_locks_per_session or max_waiters_per_inode: ENOLCK
};

struct SetReply {
  SetOutcome outcome = SetOutcome::kGranted;
  WaiterId waiter = 0;  // kQueued
  // kConflict, kDeadlock, kQueued: what it waits for first: a held lock, or else the earlier queued
  // request it yields to (its owner and what that request asks for).
  std::optional<HeldLock> conflict;
};

class LockTable {
 public:
  explicit LockTable(LockTableOptions options);

  // ---- Requests ----

  // F_GETLK / F_OFD_GETLK: the held lock that would conflict with `owner` taking `type` over
  // `range`, the one starting first (ties: the lowest owner); none: F_UNLCK. Queued requests are
  // not locks and are not reported, so F_GETLK can answer F_UNLCK while a F_SETLK is refused
  // because it yields to a queued writer.
  // Errors: kInvalidArgument (type kUnlock, start > end), kUnavailable (reassert grace: the table
  // is incomplete; retry).
  Result<std::optional<HeldLock>> test(Ino ino, const Owner& owner, Range range, LockType type,
                                       TimeMs now) const;

  // F_SETLK(W) / F_OFD_SETLK(W) / flock: takes, changes or (kUnlock) drops a lock of `r.owner`. An
  // unlock never waits and never fails but for kNoLocks (it would split a lock with the session at
  // its limit), and wakes what it unblocks. See the header comment for conflicts, fairness and
  // deadlocks; the reply says what happened.
  // Errors: kInvalidArgument (start > end), kUnavailable (reassert grace, for anything but an
  // unlock: retry after it).
  Result<SetReply> set(const LockRequest& r, TimeMs now);

  // The queued requests granted since the last call, in the order granted. Each holds its lock from
  // the moment it was granted: the owner answers the held request or pushes a wake to its client.
  std::vector<WaiterId> take_granted();

  // The client stopped waiting (EINTR, or it gave up). What queued behind it is re-evaluated.
  // Errors: kNotFound (not queued: granted already, so it is in take_granted() and its lock is
  // held, or cancelled, or never queued).
  Status cancel_wait(WaiterId id);

  // ---- Releases ----

  // A FUSE flush/release by process `lock_owner`: POSIX drops all of that process's record locks on
  // `ino` (any close of the file does). Its queued requests stay, as on Linux a blocked F_SETLKW on
  // a still-open descriptor survives another close; the client cancels the ones whose descriptor it
  // closed.
  void release_owner(SessionId s, Ino ino, uint64_t lock_owner);

  // The last reference to open file `file` is gone: its OFD and flock locks on `ino` go, and so do
  // its queued requests (nothing can still wait on a released file). Returns the ids of those
  // requests, to be answered as cancelled.
  std::vector<WaiterId> release_open(SessionId s, Ino ino, uint64_t file);

  // The session ended or was evicted (its client may have been SIGKILLed or lost): all its locks
  // and queued requests go. Returns its queued requests' ids, to drop.
  std::vector<WaiterId> evict_session(SessionId s);

  // ---- Failover ----

  // Starts the grace of a new MDS instance: for reassert_grace_ms, only reassert(), unlocks and
  // releases are served, so that no new lock takes what a client that has not re-asserted yet still
  // holds.
  // Requires: a fresh table.
  void begin_reassert(TimeMs now);

  // Session `s` re-asserts the locks it held under the previous instance. Each lock is checked
  // against what is already re-asserted: its Status is ok (held again), kBusy (another owner
  // re-asserted a conflicting lock first: the client lost it and must report the loss) or
  // kInvalidArgument (not s's, bad range or type). Limits are not applied: the previous instance
  // admitted these locks.
  // Errors: kPermissionDenied (no grace running or over: the locks may have gone to others
  // meanwhile, so the client must treat them all as lost).
  Result<std::vector<Status>> reassert(SessionId s, const std::vector<HeldLock>& locks, TimeMs now);
  // Ends a running grace early: every client that held locks has re-asserted them.
  void end_reassert(TimeMs now);
  bool in_grace(TimeMs now) const { return reasserting_ && now < grace_end_; }

  // ---- Queries (status pages, tests) ----

  std::vector<HeldLock> locks_of(Ino ino) const;  // by owner, then start
  std::vector<Waiter> waiters_of(Ino ino) const;  // FIFO order
  std::vector<Ino> inodes() const;                // with locks or queued requests
  size_t locks_held(SessionId s) const;
  const LockTableOptions& options() const { return options_; }

 private:
  // Per owner: where it holds locks and what it has queued (for evictions, fairness and deadlock
  // detection). Dropped when both are empty.
  struct OwnerState {
    size_t locks = 0;
    std::set<Ino> held_on;
    std::set<WaiterId> pending;
  };
  struct SessionState {
    size_t locks = 0;
    size_t waiters = 0;
    std::set<Owner> owners;
  };

  SetReply lock(const HeldLock& want, bool wait, TimeMs now);
  SetReply grant_now(InodeLocks& node, const HeldLock& want);
  SetReply enqueue(InodeLocks& node, const HeldLock& want, HeldLock conflict, TimeMs now);
  SetReply unlock(const HeldLock& want);
  void drop_flock_of_other_type(const HeldLock& want);
  std::optional<HeldLock> blocker(const InodeLocks& node, const HeldLock& want,
                                  size_t queued_before, bool yields) const;
  bool deadlocks(const InodeLocks& node, const HeldLock& want) const;
  std::set<Owner> waits_for(const Owner& o) const;
  bool yields(const Owner& o, size_t own_pending) const;
  bool waited_on(const Owner& o) const;
  bool over_limit(SessionId s, size_t locks_before, size_t locks_after, size_t new_waiters) const;

  Status reassert_one(SessionId s, HeldLock l);

  void hold(const HeldLock& l);
  void drop_locks(const Owner& o, Ino ino, std::set<Ino>& dirty);
  Waiter dequeue(InodeLocks& node, size_t index);
  std::vector<WaiterId> drop_waiters(const Owner& o, Ino ino, std::set<Ino>& dirty);
  void mark_pending(const Owner& o, std::set<Ino>& dirty) const;
  void settle(std::set<Ino> dirty);
  bool wake_one(InodeLocks& node, std::set<Ino>& dirty);
  bool grantable(const InodeLocks& node, size_t index) const;
  InodeLocks& node_for(Ino ino);
  void forget_if_idle(const Owner& o);
  void collect_garbage(Ino ino);

  LockTableOptions options_;
  std::map<Ino, InodeLocks> inodes_;  // none idle after a call returns
  std::map<WaiterId, Ino> waiters_;   // every queued request, to its inode
  std::map<Owner, OwnerState> owners_;
  std::map<SessionId, SessionState> sessions_;
  std::vector<WaiterId> granted_;
  WaiterId next_waiter_ = 1;
  bool reasserting_ = false;
  TimeMs grace_end_ = 0;
};

}  // namespace dfs::locks
