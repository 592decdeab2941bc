#include "mds/service/lock_service.h"

#include "common/locks/lock_proto.h"

namespace dfs::mds {
namespace {

// LockReply.outcome values (mds.proto).
constexpr uint32_t kGranted = 0;
constexpr uint32_t kConflict = 1;
constexpr uint32_t kDeadlock = 2;
constexpr uint32_t kNoLocks = 3;
constexpr uint32_t kCancelled = 4;
// Not on the wire: the waiting request ends with kUnavailable (this MDS stopped serving).
constexpr uint32_t kAskAgain = 100;

// kMdsLock ops.
constexpr uint32_t kTest = 0;
constexpr uint32_t kSet = 1;
constexpr uint32_t kSetWait = 2;


locks::TimeMs now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
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
  auto asked = DFS_CO_TRY(locks::from_proto(s, spec));
  const auto type = asked.type;
  const auto& owner = asked.owner;
  const auto& range = asked.range;
  proto::LockReply reply;
  if (request.op() == kTest) {
    if (type == locks::LockType::kUnlock) {
      co_return make_error(ErrorCode::kInvalidArgument, "testing for an unlock");
    }
    auto conflict = DFS_CO_TRY(table_.test(spec.ino(), owner, range, type, now_ms()));
    if (conflict) *reply.mutable_conflict() = locks::to_proto(*conflict);
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
      auto outcome = co_await w->outcome.wait();
      if (outcome == kAskAgain) co_return make_error(ErrorCode::kUnavailable, "the MDS stopped serving");
      reply.set_outcome(outcome);
      co_return reply;
    }
  }
  locks::LockRequest r{spec.ino(), owner, range, type, spec.pid(), wait};
  auto set = DFS_CO_TRY(table_.set(r, now_ms()));
  answer_granted();  // an unlock may have woken others
  if (set.outcome != locks::SetOutcome::kQueued) {
    reply.set_outcome(outcome_of(set.outcome));
    if (set.conflict) *reply.mutable_conflict() = locks::to_proto(*set.conflict);
    co_return reply;
  }
  auto w = std::make_shared<Wait>(executor_);
  w->session = s;
  w->client_id = request.wait_id();
  waits_[set.waiter] = w;
  by_client_id_[{s, request.wait_id()}] = set.waiter;
  auto outcome = co_await w->outcome.wait();
  if (outcome == kAskAgain) co_return make_error(ErrorCode::kUnavailable, "the MDS stopped serving");
  reply.set_outcome(outcome);
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
  if (locks::owner_kind_of(request.kind()) == locks::OwnerKind::kFlock) {
    for (auto id : table_.release_open(s, request.ino(), request.owner())) finish(id, kCancelled);
  } else {
    table_.release_owner(s, request.ino(), request.owner());
  }
  answer_granted();
}

void LockService::begin_reassert(Duration grace) {
  stop_serving();
  locks::LockTableOptions options;
  options.reassert_grace_ms = grace.count();
  table_ = locks::LockTable(options);
  table_.begin_reassert(now_ms());
}

void LockService::end_reassert() { table_.end_reassert(now_ms()); }

void LockService::stop_serving() {
  auto waits = std::move(waits_);
  waits_.clear();
  by_client_id_.clear();
  for (auto& [id, w] : waits) w->outcome.set(kAskAgain);
}

Result<proto::LockReassertReply> LockService::reassert(locks::SessionId s,
                                                       const proto::LockReassertRequest& request) {
  std::vector<locks::HeldLock> held;
  proto::LockReassertReply reply;
  for (const auto& lock : request.locks()) {
    auto one = locks::from_proto(s, lock);
    if (!one) return unexpected(std::move(one).error());
    held.push_back(*one);
  }
  auto codes = DFS_TRY(table_.reassert(s, held, now_ms()));
  for (const auto& code : codes) {
    reply.add_codes(code ? 0u : static_cast<uint32_t>(code.error().code()));
  }
  return reply;
}

void LockService::end_session(locks::SessionId s) {
  for (auto id : table_.evict_session(s)) finish(id, kCancelled);
  answer_granted();
}

}  // namespace dfs::mds
