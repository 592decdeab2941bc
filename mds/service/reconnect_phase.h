// ReconnectPhase: after a takeover or a restart, the new active MDS serves nothing a
// mount of the previous instance may have cached or deferred until that mount is back
// (docs/capabilities.md, "Failover"). What mounts hold (exclusive caching, owned
// directories) lives in the MDS's memory only; a new instance learns it from each
// mount's session open, which re-asserts it. A request served before the owner of a
// directory re-asserted it could read the directory without the owner's deferred
// creates, or create a name the owner already answered for. So until every session the
// store remembers has re-opened, or the grace period is over, requests wait; sessions
// still missing then are evicted and fenced by the owner before the phase ends, so that
// what they deferred never lands over what others do next. Locks are re-asserted in a
// request of their own after the session open; the phase awaits those of the sessions
// that said they held some, and its end also ends the lock table's re-assertion grace.
//
// Pure bookkeeping with a wait: the MdsService decides what waits and evicts. Owned by
// the MdsService on its I/O thread; no locking.
#pragma once

#include <set>
#include <string>

#include "common/rpc/completion.h"

namespace dfs::mds {

class ReconnectPhase {
 public:
  explicit ReconnectPhase(asio::any_io_executor executor);

  // Starts a phase in which `awaited` (client entities) re-open their sessions by
  // `deadline`. With nobody awaited no phase starts.
  void begin(std::set<std::string> awaited, Clock::time_point deadline);
  // `client` opened its session here: it is no longer awaited, unless it said it held
  // locks (`reasserts_locks`), which it re-asserts next: then the phase awaits that.
  void reconnected(const std::string& client, bool reasserts_locks);
  // `client` re-asserted the locks it held (kMdsLockReassert).
  void locks_reasserted(const std::string& client);
  bool running() const { return running_; }
  // Whether a running phase can end: every awaited session is back with its locks, or
  // the deadline has passed (the owner evicts the sessions still awaited, then calls
  // end()).
  bool due(Clock::time_point now) const;
  // Sessions not re-opened yet.
  const std::set<std::string>& awaited() const { return awaited_; }
  Clock::time_point deadline() const { return deadline_; }
  // Ends the phase: every wait() returns.
  void end();
  // Returns once no phase runs (at once when none does).
  awaitable<void> wait();
  // This replica stops serving: the phase is dropped and waiters return.
  void clear() { end(); }

 private:
  bool running_ = false;
  std::set<std::string> awaited_;
  std::set<std::string> locks_awaited_;  // re-opened; their locks not re-asserted yet
  Clock::time_point deadline_{};
  asio::steady_timer ended_;  // cancelled to wake every wait()
};

}  // namespace dfs::mds
