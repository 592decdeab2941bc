#include "mds/service/lock_service.h"

namespace dfs::mds {
namespace {

// LockReply.outcome values (mds.proto).
constexpr uint32_t kGranted = 0;
constexpr uint32_t kConflict = 1;
constexpr uint32_t kDeadlock = 2;
constexpr uint32_t kNoLocks = 3;
constexpr uint32_t kCancelled = 4;

// kMdsLock ops.
constexpr uint32_t kTest = 0;
constexpr uint32_t kSet = 1;
constexpr uint32_t kSetWait = 2;

constexpr uint32_t kFlockKind = 2;

locks::TimeMs now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

locks::OwnerKind owner_kind(uint32_t kind) {
  return kind == kFlockKind ? locks::OwnerKind::kFlock : locks::OwnerKind::kPosix;
}

Result<locks::LockType> lock_type(uint32_t type) {
  switch (type) {
    case 0: return locks::LockType::kRead;
    case 1: return locks::LockType::kWrite;
    case 2: return locks::LockType::kUnlock;
    default: return make_error(ErrorCode::kInvalidArgument, "lock type " + std::to_string(type));
  }
}

proto::FileLock to_proto(const locks::HeldLock& held) {
  proto::FileLock out;
  out.set_ino(held.ino);
  out.set_kind(held.owner.kind == locks::OwnerKind::kFlock ? kFlockKind : 0);
  out.set_owner(held.owner.id);
  out.set_type(held.type == locks::LockType::kWrite ? 1 : 0);
  out.set_start(held.range.start);
  out.set_end(held.range.end);
  out.set_pid(held.pid);
  return out;
}

uint32_t outcome_of(locks::SetOutcome outcome) {
  switch (outcome) {
    case locks::SetOutcome::kGranted: return kGranted;
    case locks::SetOutcome::kConflict: return kConflict;
    case locks::SetOutcome::kDeadlock: return kDeadlock;
    case locks::SetOutcome::kNoLocks: return kNoLocks;
    case locks::SetOutcome::kQueued: break;
  }
  return kConflict;
}

}  // namespace

LockService::LockService(asio::any_io_executor executor)
    : executor_(std::move(executor)), table_(locks::LockTableOptions{}) {}

awaitable<Result<proto::LockReply>> LockService::lock(locks::SessionId s,
                                                      const proto::LockRequest& request) {
  const auto& spec = request.lock();
  auto type = DFS_CO_TRY(lock_type(spec.type()));
  locks::Owner owner{s, spec.owner(), owner_kind(spec.kind())};
  locks::Range range{spec.start(), spec.end()};
  if (owner.kind == locks::OwnerKind::kFlock) range = locks::Range::whole();
  proto::LockReply reply;
  if (request.op() == kTest) {
    if (type == locks::LockType::kUnlock) {
      co_return make_error(ErrorCode::kInvalidArgument, "testing for an unlock");
    }
    auto conflict = DFS_CO_TRY(table_.test(spec.ino(), owner, range, type, now_ms()));
    if (conflict) *reply.mutable_conflict() = to_proto(*conflict);
    co_return reply;
  }
  if (request.op() != kSet && request.op() != kSetWait) {
    co_return make_error(ErrorCode::kInvalidArgument, "lock op " + std::to_string(request.op()));
  }
  const bool wait = request.op() == kSetWait && type != locks::LockType::kUnlock;
  if (wait) {
    // A resend (the client's connection dropped while it waited) joins the wait.
    if (auto it = by_client_id_.find({s, request.wait_id()}); it != by_client_id_.end()) {
      auto w = waits_.at(it->second);
      reply.set_outcome(co_await w->outcome.wait());
      co_return reply;
    }
  }
  locks::LockRequest r{spec.ino(), owner, range, type, spec.pid(), wait};
  auto set = DFS_CO_TRY(table_.set(r, now_ms()));
  answer_granted();  // an unlock may have woken others
  if (set.outcome != locks::SetOutcome::kQueued) {
    reply.set_outcome(outcome_of(set.outcome));
    if (set.conflict) *reply.mutable_conflict() = to_proto(*set.conflict);
    co_return reply;
  }
  auto w = std::make_shared<Wait>(executor_);
  w->session = s;
  w->client_id = request.wait_id();
  waits_[set.waiter] = w;
  by_client_id_[{s, request.wait_id()}] = set.waiter;
  reply.set_outcome(co_await w->outcome.wait());
  co_return reply;
}

void LockService::finish(locks::WaiterId id, uint32_t outcome) {
  auto it = waits_.find(id);
  if (it == waits_.end()) return;
  auto w = it->second;
  waits_.erase(it);
  by_client_id_.erase({w->session, w->client_id});
  w->outcome.set(outcome);
}

void LockService::answer_granted() {
  for (auto id : table_.take_granted()) finish(id, kGranted);
}

void LockService::cancel(locks::SessionId s, uint64_t wait_id) {
  auto it = by_client_id_.find({s, wait_id});
  if (it == by_client_id_.end()) return;
  auto id = it->second;
  if (table_.cancel_wait(id)) finish(id, kCancelled);
  answer_granted();  // what queued behind it may go now
}

void LockService::release(locks::SessionId s, const proto::LockReleaseRequest& request) {
  if (owner_kind(request.kind()) == locks::OwnerKind::kFlock) {
    for (auto id : table_.release_open(s, request.ino(), request.owner())) finish(id, kCancelled);
  } else {
    table_.release_owner(s, request.ino(), request.owner());
  }
  answer_granted();
}

void LockService::end_session(locks::SessionId s) {
  for (auto id : table_.evict_session(s)) finish(id, kCancelled);
  answer_granted();
}

}  // namespace dfs::mds
