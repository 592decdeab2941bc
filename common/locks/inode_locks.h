// InodeLocks: everything locked or waited for on one inode: each owner's held ranges (a RangeSet
// per owner, both lock spaces) and the FIFO of queued requests. It answers conflict questions and
// applies changes it is told to; the policy (who may be granted, who waits, limits, deadlocks) is
// LockTable's. Single-threaded, no I/O.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "common/locks/range_set.h"
#include "common/locks/types.h"

namespace dfs::locks {

// A queued F_SETLKW / F_OFD_SETLKW / blocking flock request.
struct Waiter {
  WaiterId id = 0;
  HeldLock request;  // what it will hold once granted; type is kRead or kWrite
  TimeMs since = 0;  // when it was queued, for status pages
};

class InodeLocks {
 public:
  explicit InodeLocks(Ino ino) : ino_(ino) {}

  // ---- Held locks ----

  // The held lock of an owner other than `o`, in o's lock space, overlapping `r` and incompatible
  // with `type`, that starts first (ties: the lowest owner), if any.
  std::optional<HeldLock> first_conflict(const Owner& o, Range r, LockType type) const;
  // Adds to `out` every owner other than `o` holding a lock that conflicts with (r, type).
  void held_blockers(const Owner& o, Range r, LockType type, std::set<Owner>& out) const;

  size_t count(const Owner& o) const;  // o's held locks here (maximal ranges)
  size_t count_after(const Owner& o, Range r, LockType type) const;  // if apply()ed
  // `o` now holds `type` over `r` (kUnlock: nothing there), whoever else holds what; the owner's
  // pid for F_GETLK becomes `pid` unless this is an unlock.
  void apply(const Owner& o, Range r, LockType type, int32_t pid);
  // Drops every lock of `o` here; returns how many there were.
  size_t drop(const Owner& o);
  // Held locks, ordered by owner then start.
  std::vector<HeldLock> locks() const;
  std::vector<Owner> holders() const;
  // Whether some queued request of an owner other than `holder` conflicts with a lock `holder`
  // holds here (so that request waits, at least in part, for `holder`).
  bool blocks_queued(const Owner& holder) const;

  // ---- Queue (FIFO: index 0 waited longest) ----

  // The first of the first `n` queued requests whose owner is not `o` and which conflicts with (r,
  // type) in o's lock space, if any.
  const Waiter* first_queued_conflict(const Owner& o, Range r, LockType type, size_t n) const;
  void queued_blockers(const Owner& o, Range r, LockType type, size_t n,
                       std::set<Owner>& out) const;
  const std::deque<Waiter>& queue() const { return queue_; }
  void enqueue(Waiter w) { queue_.push_back(std::move(w)); }
  Waiter take(size_t index);
  std::optional<size_t> position(WaiterId id) const;

  Ino ino() const { return ino_; }
  bool idle() const { return held_.empty() && queue_.empty(); }

 private:
  struct Holding {
    RangeSet ranges;
    int32_t pid = 0;
  };

  Ino ino_;
  std::map<Owner, Holding> held_;  // no empty RangeSets
  std::deque<Waiter> queue_;
};

}  // namespace dfs::locks
