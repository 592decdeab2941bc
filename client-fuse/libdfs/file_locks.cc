// FileClient: flock(2) and fcntl(2) locks, held by the MDS for every client at once
// (docs/architecture.md, "Locks"; the calls are MountLocks'). This side adds what a
// lock means for cached data: an unlock first pushes the file's buffered writes, so the
// next holder, on any mount, finds them at the MDS and the OSDs; a grant drops what this
// client cached of the file's attributes and read-ahead.
#include "client-fuse/libdfs/file_client.h"
#include "client-fuse/libdfs/file_state.h"

namespace dfs::client {

awaitable<Result<proto::LockReply>> FileClient::lock(Creds creds, Fh fh, proto::FileLock lock,
                                                     uint32_t op, uint64_t wait_id) {
  auto h = DFS_CO_TRY(handle(fh));
  lock.set_ino(h->ino);
  if (op != MountLocks::kTest && MountLocks::is_unlock(lock) && h->state) {
    // What was written under the lock goes out before anyone else can take it.
    DFS_CO_AWAIT_CHECK(flush_state(h->state));
  }
  const proto::FileLock taken = lock;
  auto reply = co_await locks_.lock(creds, std::move(lock), op, wait_id);
  if (!reply || !MountLocks::took(taken, op, *reply)) co_return reply;
  if (MountLocks::is_record_lock(taken)) {
    // Its locks go when the handle is released (the kernel stops sending flushes).
    if (auto again = files_.find(fh)) again->record_lock_owners.insert(taken.owner());
  }
  // Another mount may have changed the file while it held the lock.
  known_.erase(taken.ino());
  if (auto st = held(taken.ino())) st->readahead.clear();
  co_return reply;
}

awaitable<void> FileClient::cancel_lock(uint64_t wait_id) { co_await locks_.cancel(wait_id); }

awaitable<void> FileClient::release_record_locks(Fh fh, uint64_t owner) {
  auto h = handle(fh);
  if (!h || !(*h)->record_lock_owners.count(owner)) co_return;
  (*h)->record_lock_owners.erase(owner);
  co_await locks_.release_record_locks((*h)->ino, owner);
}

awaitable<void> FileClient::release_locks_of(const Handle& h, bool flock_release,
                                             uint64_t lock_owner) {
  if (!locks_.ever_locked()) co_return;
  for (uint64_t owner : h.record_lock_owners) co_await locks_.release_record_locks(h.ino, owner);
  if (flock_release) co_await locks_.release_flock(h.ino, lock_owner);
}

}  // namespace dfs::client
