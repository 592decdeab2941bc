#include "client-fuse/libdfs/mount_locks.h"

#include <spdlog/spdlog.h>

#include "common/locks/lock_proto.h"
#include "common/rpc/methods.h"

namespace dfs::client {
namespace {

constexpr uint32_t kUnlockType = 2;  // FileLock.type
constexpr uint32_t kRecordKind = locks::kWireRecordKind;
constexpr uint32_t kFlockKind = locks::kWireFlockKind;
constexpr uint32_t kGranted = 0;  // LockReply.outcome
constexpr uint32_t kCancelled = 4;

}  // namespace

bool MountLocks::is_unlock(const proto::FileLock& lock) { return lock.type() == kUnlockType; }

bool MountLocks::took(const proto::FileLock& lock, uint32_t op, const proto::LockReply& reply) {
  return op != kTest && !is_unlock(lock) && reply.outcome() == kGranted;
}

bool MountLocks::is_record_lock(const proto::FileLock& lock) { return lock.kind() == kRecordKind; }

awaitable<Result<proto::LockReply>> MountLocks::lock(const Creds& creds, proto::FileLock lock,
                                                     uint32_t op, uint64_t wait_id) {
  if (op == kSetWait && cancelled_waits_.erase(wait_id)) {
    proto::LockReply cancelled;
    cancelled.set_outcome(kCancelled);
    co_return cancelled;
  }
  const proto::FileLock asked = lock;  // the request is moved into the call
  proto::LockRequest request;
  *request.mutable_lock() = std::move(lock);
  request.set_op(op);
  request.set_wait_id(wait_id);
  Result<proto::LockReply> reply;
  if (op == kSetWait) {
    reply = co_await mds_.call_unbounded<proto::LockReply>(rpc::kMdsLock, std::move(request),
                                                           creds);
    cancelled_waits_.erase(wait_id);
  } else {
    reply = co_await mds_.call<proto::LockReply>(rpc::kMdsLock, std::move(request), creds, false);
  }
  if (!reply) co_return reply;
  if (op != kTest && reply->outcome() == kGranted) note_held(asked);
  if (took(asked, op, *reply)) ++locks_taken_;
  co_return reply;
}

void MountLocks::note_held(const proto::FileLock& lock) {
  auto held = locks::from_proto(kOwnSession, lock);
  if (!held) return;
  locks::LockRequest r{held->ino, held->owner, held->range, held->type, held->pid, false};
  auto applied = held_.set(r, 0);
  // The MDS granted it, so it fits with everything else this mount holds.
  if (!applied || applied->outcome != locks::SetOutcome::kGranted) {
    spdlog::warn("lock bookkeeping: the MDS granted a lock on inode {:#x} the local table refused",
                 lock.ino());
  }
}

awaitable<void> MountLocks::reassert() {
  proto::LockReassertRequest request;
  for (locks::Ino ino : held_.inodes()) {
    for (const auto& held : held_.locks_of(ino)) *request.add_locks() = locks::to_proto(held);
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

awaitable<void> MountLocks::cancel(uint64_t wait_id) {
  // Bounded: a cancel whose wait already ended leaves an id nobody takes.
  if (cancelled_waits_.size() > 1024) cancelled_waits_.erase(cancelled_waits_.begin());
  cancelled_waits_.insert(wait_id);
  proto::LockCancelRequest request;
  request.set_wait_id(wait_id);
  auto sent = co_await mds_.call<proto::Empty>(rpc::kMdsLockCancel, std::move(request),
                                               Creds{}, false);
  if (!sent) spdlog::warn("cancelling lock wait {}: {}", wait_id, sent.error().to_string());
}

awaitable<void> MountLocks::release_record_locks(uint64_t ino, uint64_t owner) {
  held_.release_owner(kOwnSession, ino, owner);
  co_await send_release(ino, kRecordKind, owner);
}

awaitable<void> MountLocks::release_flock(uint64_t ino, uint64_t lock_owner) {
  held_.release_open(kOwnSession, ino, lock_owner);
  co_await send_release(ino, kFlockKind, lock_owner);
}

awaitable<void> MountLocks::send_release(uint64_t ino, uint32_t kind, uint64_t owner) {
  proto::LockReleaseRequest request;
  request.set_ino(ino);
  request.set_kind(kind);
  request.set_owner(owner);
  auto sent = co_await mds_.call<proto::Empty>(rpc::kMdsLockRelease, std::move(request),
                                               Creds{}, false);
  if (!sent) spdlog::warn("releasing locks on inode {:#x}: {}", ino, sent.error().to_string());
}

}  // namespace dfs::client
