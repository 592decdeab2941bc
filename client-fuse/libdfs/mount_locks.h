// MountLocks: this mount's side of the flock(2) and fcntl(2) locks the MDS holds for
// every client at once (docs/architecture.md, "Locks"): the lock calls, and a copy of
// what this mount holds as the MDS's table has it (every grant, unlock and release is
// applied here too), so that after a failover, when the new MDS's table is empty, the
// mount re-asserts exactly what it held.
//
// What a lock means for cached data (an unlock pushes the file's buffered writes first;
// a grant drops what was cached of the file) and which handle took a record lock are
// the FileClient's: it calls around lock() (took() says when a lock was taken).
//
// Owned by the FileClient, on its I/O thread.
#pragma once

#include <cstdint>
#include <set>

#include "client-fuse/libdfs/creds.h"
#include "client-fuse/libdfs/mds_session.h"
#include "common/locks/lock_table.h"
#include "common/proto/mds.pb.h"

namespace dfs::client {

class MountLocks {
 public:
  // LockRequest.op
  static constexpr uint32_t kTest = 0;     // F_GETLK
  static constexpr uint32_t kSet = 1;      // F_SETLK, LOCK_NB
  static constexpr uint32_t kSetWait = 2;  // F_SETLKW: waits until granted or cancelled

  explicit MountLocks(MdsSession& mds) : mds_(mds) {}

  static bool is_unlock(const proto::FileLock& lock);
  // A lock (not an unlock, not a test) was granted by `reply`.
  static bool took(const proto::FileLock& lock, uint32_t op, const proto::LockReply& reply);
  static bool is_record_lock(const proto::FileLock& lock);

  // kMdsLock for `lock` (its ino set): a wait (kSetWait) has no deadline but the MDS's
  // and ends "cancelled" when cancel(wait_id) came first or meanwhile. Errors: the
  // MDS's; kFenced.
  awaitable<Result<proto::LockReply>> lock(const Creds& creds, proto::FileLock lock, uint32_t op,
                                           uint64_t wait_id);
  // Ends the wait `wait_id` of lock() (the waiting process got a signal).
  awaitable<void> cancel(uint64_t wait_id);
  // The record locks of lock owner `owner` on `ino` go (a close by that owner).
  awaitable<void> release_record_locks(uint64_t ino, uint64_t owner);
  // The flock lock of the open file description `lock_owner` names on `ino` goes.
  awaitable<void> release_flock(uint64_t ino, uint64_t lock_owner);
  // Whether this mount ever took a lock (releases are sent only then).
  bool ever_locked() const { return locks_taken_ > 0; }
  // Whether this mount holds a lock now (the session open says it will re-assert).
  bool holds_any() const { return held_.locks_held(kOwnSession) > 0; }

  // After a failover: re-asserts every lock held here at the new MDS (alone, before
  // other calls); the ones refused (another client took them first) are lost and
  // forgotten, and the log says how many.
  awaitable<void> reassert();
  // The session was evicted: the MDS dropped its locks.
  void evicted() { held_.evict_session(kOwnSession); }

 private:
  static constexpr locks::SessionId kOwnSession = 1;  // this mount, in the copy
  void note_held(const proto::FileLock& lock);
  awaitable<void> send_release(uint64_t ino, uint32_t kind, uint64_t owner);

  MdsSession& mds_;
  uint64_t locks_taken_ = 0;
  locks::LockTable held_{locks::LockTableOptions{}};
  std::set<uint64_t> cancelled_waits_;  // cancelled before their request went out
};

}  // namespace dfs::client
