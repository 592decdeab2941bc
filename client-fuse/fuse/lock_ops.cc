// flock(2) and fcntl(2) locks (FUSE getlk, setlk, flock), held by the MDS for every
// mount: the glue converts the kernel's struct flock to the lock table's terms and the
// table's answer to an errno. A waiting request is cancelled when the kernel interrupts
// it (the waiting process got a signal).
#include <fcntl.h>
#include <sys/file.h>

#include <atomic>
#include <limits>

#include "client-fuse/fuse/ops.h"
#include "common/locks/lock_proto.h"

namespace dfs::fuse {
namespace {

using vfs::Vfs;

// FileLock.kind, .type; LockRequest.op; LockReply.outcome (mds.proto).
constexpr uint32_t kRecordKind = locks::kWireRecordKind;
constexpr uint32_t kFlockKind = locks::kWireFlockKind;
constexpr uint32_t kRead = 0, kWrite = 1, kUnlock = 2;
constexpr uint32_t kTest = 0, kSet = 1, kSetWait = 2;
constexpr uint32_t kGranted = 0, kConflict = 1, kDeadlock = 2, kNoLocks = 3;

std::atomic<uint64_t> next_wait_id{1};

Result<proto::FileLock> from_flock(const struct flock& fl, uint64_t owner) {
  auto range = DFS_TRY(locks::Range::from_flock(fl.l_start, fl.l_len));
  proto::FileLock lock;
  lock.set_kind(kRecordKind);
  lock.set_owner(owner);
  lock.set_type(fl.l_type == F_WRLCK ? kWrite : fl.l_type == F_RDLCK ? kRead : kUnlock);
  lock.set_start(range.start);
  lock.set_end(range.end);
  lock.set_pid(fl.l_pid);
  return lock;
}

struct flock to_flock(const proto::FileLock& lock) {
  struct flock fl {};
  fl.l_type = lock.type() == kWrite ? F_WRLCK : F_RDLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(lock.start());
  fl.l_len = static_cast<off_t>(locks::Range{lock.start(), lock.end()}.flock_len());
  fl.l_pid = lock.pid();
  return fl;
}

// The errno of a refused set: `would_block` is EAGAIN for fcntl, EWOULDBLOCK for flock
// (the same number on Linux, named as each call documents it).
int errno_of(uint32_t outcome, int would_block) {
  switch (outcome) {
    case kConflict: return would_block;
    case kDeadlock: return EDEADLK;
    case kNoLocks: return ENOLCK;
    default: return EINTR;  // cancelled: the waiting process got a signal
  }
}

// libfuse calls this (on its own thread) when the kernel interrupts a waiting request;
// `data` is the wait's id, so nothing needs to outlive the request.
void on_interrupt(fuse_req_t req, void* data) {
  auto wait_id = reinterpret_cast<uintptr_t>(data);
  Vfs* v = &vfs_of(req);
  spawn_checked(v->executor(), v->client().cancel_lock(wait_id));
}

// Sends one lock request and answers the kernel. `op` kSetWait registers the interrupt.
void send_lock(fuse_req_t req, const char* name, uint64_t fh, proto::FileLock lock, uint32_t op,
               int would_block) {
  uint64_t wait_id = 0;
  if (op == kSetWait) {
    wait_id = next_wait_id.fetch_add(1);
    fuse_req_interrupt_func(req, on_interrupt, reinterpret_cast<void*>(uintptr_t(wait_id)));
  }
  spawn(req, [](FuseReply reply, Vfs* v, client::Creds creds, uint64_t fh, proto::FileLock lock,
                uint32_t op, uint64_t wait_id, int would_block) -> awaitable<void> {
    auto answer = co_await v->client().lock(creds, fh, std::move(lock), op, wait_id);
    if (!answer) {
      reply.fail(answer.error());
    } else if (op == kTest) {
      struct flock fl {};
      if (answer->has_conflict()) {
        fl = to_flock(answer->conflict());
      } else {
        fl.l_type = F_UNLCK;
      }
      reply.lock(fl);
    } else if (answer->outcome() == kGranted) {
      reply.ok();
    } else {
      reply.error(errno_of(answer->outcome(), would_block));
    }
  }(FuseReply(req, name), &vfs_of(req), creds_of(req), fh, std::move(lock), op, wait_id,
                              would_block));
}

void on_getlk(fuse_req_t req, fuse_ino_t, fuse_file_info* fi, struct flock* fl) {
  auto lock = from_flock(*fl, fi->lock_owner);
  if (!lock) {
    FuseReply(req, "getlk").error(EINVAL);
    return;
  }
  send_lock(req, "getlk", fi->fh, std::move(*lock), kTest, EAGAIN);
}

void on_setlk(fuse_req_t req, fuse_ino_t, fuse_file_info* fi, struct flock* fl, int sleep) {
  auto lock = from_flock(*fl, fi->lock_owner);
  if (!lock) {
    FuseReply(req, "setlk").error(EINVAL);
    return;
  }
  bool wait = sleep != 0 && lock->type() != kUnlock;
  send_lock(req, "setlk", fi->fh, std::move(*lock), wait ? kSetWait : kSet, EAGAIN);
}

void on_flock(fuse_req_t req, fuse_ino_t, fuse_file_info* fi, int op) {
  proto::FileLock lock;
  lock.set_kind(kFlockKind);
  lock.set_owner(fi->lock_owner);
  lock.set_start(0);
  lock.set_end(std::numeric_limits<uint64_t>::max());
  lock.set_pid(0);
  switch (op & ~LOCK_NB) {
    case LOCK_SH: lock.set_type(kRead); break;
    case LOCK_EX: lock.set_type(kWrite); break;
    case LOCK_UN: lock.set_type(kUnlock); break;
    default:
      FuseReply(req, "flock").error(EINVAL);
      return;
  }
  bool wait = !(op & LOCK_NB) && lock.type() != kUnlock;
  send_lock(req, "flock", fi->fh, std::move(lock), wait ? kSetWait : kSet, EWOULDBLOCK);
}

}  // namespace

void add_lock_ops(fuse_lowlevel_ops& ops) {
  ops.getlk = on_getlk;
  ops.setlk = on_setlk;
  ops.flock = on_flock;
}

}  // namespace dfs::fuse
