// FileClient: flock(2) and fcntl(2) locks, held by the MDS for every client at once
// (docs/architecture.md, "Locks"). The FUSE layer passes the kernel's lock owner; this
// side adds what a lock means for cached data: an unlock first pushes the file's buffered
// writes, so the next holder, on any mount, finds them at the MDS and the OSDs; a grant
// drops what this client cached of the file's attributes and read-ahead. (The kernel's
// caches of the file are not invalidated: that waits for capabilities, capabilities.md.)
#include <spdlog/spdlog.h>

#include "client-fuse/libdfs/file_client.h"
#include "client-fuse/libdfs/file_state.h"
#include "common/locks/lock_proto.h"
#include "common/rpc/methods.h"

namespace dfs::client {
namespace {

constexpr uint32_t kUnlockType = 2;  // FileLock.type
constexpr uint32_t kRecordKind = locks::kWireRecordKind;
constexpr uint32_t kFlockKind = locks::kWireFlockKind;
constexpr uint32_t kGranted = 0;     // LockReply.outcome
constexpr uint32_t kCancelled = 4;
constexpr uint32_t kTest = 0;        // LockRequest.op
constexpr uint32_t kSetWait = 2;

}  // namespace

awaitable<Result<proto::LockReply>> FileClient::lock(Creds creds, Fh fh, proto::FileLock lock,
                                                     uint32_t op, uint64_t wait_id) {
  auto h = DFS_CO_TRY(handle(fh));
  lock.set_ino(h->ino);
  if (op != kTest && lock.type() == kUnlockType && h->state) {
    // What was written under the lock goes out before anyone else can take it.
    DFS_CO_AWAIT_CHECK(flush_state(h->state));
  }
  const proto::FileLock taken = lock;  // the request is moved into the call
  proto::LockRequest request;
  *request.mutable_lock() = std::move(lock);
  request.set_op(op);
  request.set_wait_id(wait_id);
  Result<proto::LockReply> reply;
  if (op == kSetWait && cancelled_waits_.erase(wait_id)) {
    proto::LockReply cancelled;
    cancelled.set_outcome(kCancelled);
    co_return cancelled;
  }
  if (op == kSetWait) {
    reply = co_await mds_.call_unbounded<proto::LockReply>(rpc::kMdsLock, std::move(request), creds);
  } else {
    reply = co_await mds_.call<proto::LockReply>(rpc::kMdsLock, std::move(request), creds, false);
  }
  if (op == kSetWait) cancelled_waits_.erase(wait_id);
  if (!reply) co_return reply;
  if (op != kTest && reply->outcome() == kGranted) note_held(taken);
  if (op != kTest && taken.type() != kUnlockType && reply->outcome() == kGranted) {
    ++locks_taken_;
    if (taken.kind() == kRecordKind) {
      if (auto again = handles_.find(fh); again != handles_.end()) {
        again->second->record_lock_owners.insert(taken.owner());
      }
    }
    // Another mount may have changed the file while it held the lock.
    known_.erase(taken.ino());
    if (auto st = held(taken.ino())) st->readahead.clear();
  }
  co_return reply;
}

void FileClient::note_held(const proto::FileLock& lock) {
  auto held = locks::from_proto(kOwnSession, lock);
  if (!held) return;
  locks::LockRequest r{held->ino, held->owner, held->range, held->type, held->pid, false};
  auto applied = held_locks_.set(r, 0);
  // The MDS granted it, so it fits with everything else this mount holds.
  if (!applied || applied->outcome != locks::SetOutcome::kGranted) {
    spdlog::warn("lock bookkeeping: the MDS granted a lock on inode {:#x} the local table refused",
                 lock.ino());
  }
}

awaitable<void> FileClient::reassert_locks() {
  proto::LockReassertRequest request;
  for (locks::Ino ino : held_locks_.inodes()) {
    for (const auto& held : held_locks_.locks_of(ino)) *request.add_locks() = locks::to_proto(held);
  }
  if (request.locks_size() == 0) co_return;
  auto reply = co_await mds_.call_alone<proto::LockReassertReply>(rpc::kMdsLockReassert, request,
                                                                  Creds{}, false);
  size_t lost = 0;
  for (int i = 0; i < request.locks_size(); ++i) {
    bool kept = reply && i < reply->codes_size() && reply->codes(i) == 0;
    if (kept) continue;
    ++lost;
    auto gone = request.locks(i);
    gone.set_type(kUnlockType);
    note_held(gone);
  }
  if (lost == 0) {
    spdlog::info("re-asserted {} lock(s) at the new MDS", request.locks_size());
  } else {
    spdlog::error("{} of {} lock(s) could not be re-asserted after the MDS failover ({}): their "
                  "holders no longer hold them",
                  lost, request.locks_size(),
                  reply ? "another client took them first" : reply.error().to_string());
  }
}

awaitable<void> FileClient::cancel_lock(uint64_t wait_id) {
  // Bounded: a cancel whose wait already ended leaves an id nobody takes.
  if (cancelled_waits_.size() > 1024) cancelled_waits_.erase(cancelled_waits_.begin());
  cancelled_waits_.insert(wait_id);
  proto::LockCancelRequest request;
  request.set_wait_id(wait_id);
  auto sent = co_await mds_.call<proto::Empty>(rpc::kMdsLockCancel, std::move(request),
                                               Creds{}, false);
  if (!sent) spdlog::warn("cancelling lock wait {}: {}", wait_id, sent.error().to_string());
}

awaitable<void> FileClient::release_record_locks(Fh fh, uint64_t owner) {
  auto h = handle(fh);
  if (!h || !(*h)->record_lock_owners.count(owner)) co_return;
  (*h)->record_lock_owners.erase(owner);
  held_locks_.release_owner(kOwnSession, (*h)->ino, owner);
  co_await send_lock_release((*h)->ino, kRecordKind, owner);
}

awaitable<void> FileClient::release_locks_of(const Handle& h, bool flock_release,
                                             uint64_t lock_owner) {
  if (locks_taken_ == 0) co_return;  // this mount never locked anything
  for (uint64_t owner : h.record_lock_owners) {
    held_locks_.release_owner(kOwnSession, h.ino, owner);
    co_await send_lock_release(h.ino, kRecordKind, owner);
  }
  if (flock_release) {
    held_locks_.release_open(kOwnSession, h.ino, lock_owner);
    co_await send_lock_release(h.ino, kFlockKind, lock_owner);
  }
}

awaitable<void> FileClient::send_lock_release(Ino ino, uint32_t kind, uint64_t owner) {
  proto::LockReleaseRequest request;
  request.set_ino(ino);
  request.set_kind(kind);
  request.set_owner(owner);
  auto sent = co_await mds_.call<proto::Empty>(rpc::kMdsLockRelease, std::move(request),
                                               Creds{}, false);
  if (!sent) spdlog::warn("releasing locks on inode {:#x}: {}", ino, sent.error().to_string());
}

}  // namespace dfs::client
