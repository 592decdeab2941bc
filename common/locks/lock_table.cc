#include "common/locks/lock_table.h"

#include <utility>

#include "common/locks/wait_graph.h"

namespace dfs::locks {
namespace {

// Granting a queued request can split one of its owner's locks in three: 2 more locks.
constexpr size_t kWaiterReserve = 2;

Status check_range(Range r) {
  if (!r.valid()) return make_error(ErrorCode::kInvalidArgument, "lock range start > end");
  return ok_status();
}

// flock locks the whole file, whatever range the caller passed.
Range range_for(const Owner& o, Range r) {
  return o.kind == OwnerKind::kFlock ? Range::whole() : r;
}

Error grace_error() {
  return Error(ErrorCode::kUnavailable, "locks are being re-asserted after a failover");
}

}  // namespace

LockTable::LockTable(LockTableOptions options) : options_(options) {}

// ---- Requests ----

Result<std::optional<HeldLock>> LockTable::test(Ino ino, const Owner& owner, Range range,
                                                LockType type, TimeMs now) const {
  if (type == LockType::kUnlock) {
    return make_error(ErrorCode::kInvalidArgument, "F_GETLK of F_UNLCK");
  }
  range = range_for(owner, range);
  DFS_TRY_STATUS(check_range(range));
  if (in_grace(now)) return grace_error();
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return std::optional<HeldLock>();
  return it->second.first_conflict(owner, range, type);
}

Result<SetReply> LockTable::set(const LockRequest& r, TimeMs now) {
  const HeldLock want{r.ino, r.owner, range_for(r.owner, r.range), r.type, r.pid};
  DFS_TRY_STATUS(check_range(want.range));
  if (want.type == LockType::kUnlock) return unlock(want);
  if (in_grace(now)) return grace_error();
  if (want.owner.kind == OwnerKind::kFlock) drop_flock_of_other_type(want);
  return lock(want, r.wait, now);
}

SetReply LockTable::unlock(const HeldLock& want) {
  auto it = inodes_.find(want.ino);
  if (it == inodes_.end()) return SetReply{};
  InodeLocks& node = it->second;
  const size_t before = node.count(want.owner);
  if (over_limit(want.owner.session, before, node.count_after(want.owner, want.range, want.type),
                 0)) {
    return SetReply{SetOutcome::kNoLocks, 0, std::nullopt};
  }
  hold(want);
  if (options_.testing_unlock_wakes_nobody) {
    collect_garbage(want.ino);
  } else {
    settle({want.ino});
  }
  return SetReply{};
}

void LockTable::drop_flock_of_other_type(const HeldLock& want) {
  // flock(2): "Converting a lock is not guaranteed to be atomic: the existing lock is first
  // removed, and then a new lock is established." Linux drops it even when the new lock is then
  // refused; so does this table, and what waited for it may go first.
  auto it = inodes_.find(want.ino);
  if (it == inodes_.end()) return;
  for (const HeldLock& l : it->second.locks()) {
    if (l.owner != want.owner || l.type == want.type) continue;
    hold(HeldLock{want.ino, want.owner, Range::whole(), LockType::kUnlock, want.pid});
    settle({want.ino});
    return;
  }
}

SetReply LockTable::lock(const HeldLock& want, bool wait, TimeMs now) {
  InodeLocks& node = node_for(want.ino);
  const Owner& o = want.owner;
  std::optional<HeldLock> conflict = blocker(node, want, node.queue().size(), yields(o, 0));
  if (options_.testing_holder_skips_check && node.count(o) > 0) conflict.reset();
  if (!conflict) return grant_now(node, want);

  SetOutcome refusal = SetOutcome::kConflict;  // EAGAIN, unless it may wait
  if (wait) {
    if (node.queue().size() >= options_.max_waiters_per_inode || over_limit(o.session, 0, 0, 1)) {
      refusal = SetOutcome::kNoLocks;
    } else if (o.kind == OwnerKind::kPosix && deadlocks(node, want)) {
      refusal = SetOutcome::kDeadlock;
    } else {
      return enqueue(node, want, std::move(*conflict), now);
    }
  }
  collect_garbage(want.ino);
  return SetReply{refusal, 0, std::move(conflict)};
}

SetReply LockTable::grant_now(InodeLocks& node, const HeldLock& want) {
  const Owner& o = want.owner;
  if (over_limit(o.session, node.count(o), node.count_after(o, want.range, want.type), 0)) {
    collect_garbage(want.ino);
    return SetReply{SetOutcome::kNoLocks, 0, std::nullopt};
  }
  hold(want);
  std::set<Ino> dirty{want.ino};  // a downgrade can unblock others
  // o may now be waited on, and its queued requests stop yielding.
  mark_pending(o, dirty);
  settle(std::move(dirty));
  return SetReply{};
}

SetReply LockTable::enqueue(InodeLocks& node, const HeldLock& want, HeldLock conflict, TimeMs now) {
  const Owner& o = want.owner;
  const WaiterId id = next_waiter_++;
  node.enqueue(Waiter{id, want, now});
  waiters_[id] = want.ino;
  owners_[o].pending.insert(id);
  SessionState& session = sessions_[o.session];
  ++session.waiters;
  session.owners.insert(o);
  // The owners it waits for are waited on now, and o has one more request queued: their queued
  // requests may stop yielding (see the header), and so become grantable.
  std::set<Ino> dirty;
  mark_pending(o, dirty);
  std::set<Owner> holders;
  node.held_blockers(o, want.range, want.type, holders);
  for (const Owner& h : holders) mark_pending(h, dirty);
  settle(std::move(dirty));
  return SetReply{SetOutcome::kQueued, id, std::move(conflict)};
}

std::vector<WaiterId> LockTable::take_granted() { return std::exchange(granted_, {}); }

Status LockTable::cancel_wait(WaiterId id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return make_error(ErrorCode::kNotFound, "no such queued request");
  const Ino ino = it->second;
  InodeLocks& node = inodes_.at(ino);
  Waiter w = dequeue(node, *node.position(id));
  forget_if_idle(w.request.owner);
  settle({ino});  // what yielded to it may go
  return ok_status();
}

// ---- Policy ----

std::optional<HeldLock> LockTable::blocker(const InodeLocks& node, const HeldLock& want,
                                           size_t queued_before, bool yields) const {
  if (auto held = node.first_conflict(want.owner, want.range, want.type)) return held;
  if (!yields) return std::nullopt;
  const Waiter* ahead =
      node.first_queued_conflict(want.owner, want.range, want.type, queued_before);
  if (ahead == nullptr) return std::nullopt;
  return ahead->request;
}

// Whether `o`'s request (own_pending: 1 if it is queued, 0 if new) waits behind earlier queued
// requests it conflicts with. Not when o is waited on by a queued request (it holds a lock in its
// way) or has another request queued. Why that is enough: a yielding owner then has no incoming
// wait-for edge but from later yielding requests; so walking back from a yield along a cycle would
// meet ever later requests, which cannot close.
bool LockTable::yields(const Owner& o, size_t own_pending) const {
  auto it = owners_.find(o);
  const size_t pending = it == owners_.end() ? 0 : it->second.pending.size();
  return pending == own_pending && !waited_on(o);
}

bool LockTable::waited_on(const Owner& o) const {
  auto it = owners_.find(o);
  if (it == owners_.end()) return false;
  for (Ino ino : it->second.held_on) {
    if (inodes_.at(ino).blocks_queued(o)) return true;
  }
  return false;
}

bool LockTable::deadlocks(const InodeLocks& node, const HeldLock& want) const {
  std::set<Owner> blockers;
  node.held_blockers(want.owner, want.range, want.type, blockers);
  if (yields(want.owner, 0)) {
    node.queued_blockers(want.owner, want.range, want.type, node.queue().size(), blockers);
  }
  return reaches(blockers, want.owner, [this](const Owner& x) { return waits_for(x); });
}

std::set<Owner> LockTable::waits_for(const Owner& o) const {
  std::set<Owner> out;
  auto it = owners_.find(o);
  if (it == owners_.end()) return out;
  const bool yielding = yields(o, 1);
  for (WaiterId id : it->second.pending) {
    const InodeLocks& node = inodes_.at(waiters_.at(id));
    const size_t pos = *node.position(id);
    const HeldLock& r = node.queue()[pos].request;
    node.held_blockers(o, r.range, r.type, out);
    if (yielding) node.queued_blockers(o, r.range, r.type, pos, out);
  }
  return out;
}

bool LockTable::over_limit(SessionId s, size_t locks_before, size_t locks_after,
                           size_t new_waiters) const {
  if (locks_after <= locks_before && new_waiters == 0) return false;  // shrinking is free
  auto it = sessions_.find(s);
  const size_t locks = it == sessions_.end() ? 0 : it->second.locks;
  const size_t waiters = it == sessions_.end() ? 0 : it->second.waiters;
  const size_t committed =
      locks - locks_before + locks_after + kWaiterReserve * (waiters + new_waiters);
  return committed > options_.max_locks_per_session;
}

// ---- Book-keeping: every change of held locks and queues goes through these ----

void LockTable::hold(const HeldLock& l) {
  InodeLocks& node = node_for(l.ino);
  const size_t before = node.count(l.owner);
  node.apply(l.owner, l.range, l.type, l.pid);
  const size_t after = node.count(l.owner);
  OwnerState& owner = owners_[l.owner];
  SessionState& session = sessions_[l.owner.session];
  owner.locks = owner.locks - before + after;
  session.locks = session.locks - before + after;
  session.owners.insert(l.owner);
  if (after > 0) {
    owner.held_on.insert(l.ino);
  } else {
    owner.held_on.erase(l.ino);
  }
  forget_if_idle(l.owner);
}

void LockTable::drop_locks(const Owner& o, Ino ino, std::set<Ino>& dirty) {
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return;
  const size_t n = it->second.drop(o);
  if (n == 0) return;
  OwnerState& owner = owners_.at(o);
  owner.locks -= n;
  owner.held_on.erase(ino);
  sessions_.at(o.session).locks -= n;
  dirty.insert(ino);
}

Waiter LockTable::dequeue(InodeLocks& node, size_t index) {
  Waiter w = node.take(index);
  waiters_.erase(w.id);
  owners_.at(w.request.owner).pending.erase(w.id);
  --sessions_.at(w.request.owner.session).waiters;
  return w;
}

std::vector<WaiterId> LockTable::drop_waiters(const Owner& o, Ino ino, std::set<Ino>& dirty) {
  std::vector<WaiterId> dropped;
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return dropped;
  for (size_t i = 0; i < it->second.queue().size();) {
    if (it->second.queue()[i].request.owner != o) {
      ++i;
      continue;
    }
    dropped.push_back(dequeue(it->second, i).id);
    dirty.insert(ino);
  }
  return dropped;
}

void LockTable::mark_pending(const Owner& o, std::set<Ino>& dirty) const {
  auto it = owners_.find(o);
  if (it == owners_.end()) return;
  for (WaiterId id : it->second.pending) dirty.insert(waiters_.at(id));
}

// Grants every queued request that has become grantable on the `dirty` inodes, and on the inodes
// that these grants make dirty in turn. Ends: each round grants one request.
void LockTable::settle(std::set<Ino> dirty) {
  while (!dirty.empty()) {
    const Ino ino = *dirty.begin();
    dirty.erase(dirty.begin());
    auto it = inodes_.find(ino);
    if (it == inodes_.end()) continue;
    while (wake_one(it->second, dirty)) {
    }
    collect_garbage(ino);
  }
}

bool LockTable::wake_one(InodeLocks& node, std::set<Ino>& dirty) {
  // FIFO: the earliest grantable request goes first. Scanning from the front again after each grant
  // also catches an earlier request that a grant unblocked (a downgrade).
  for (size_t i = 0; i < node.queue().size(); ++i) {
    if (!grantable(node, i)) continue;
    Waiter w = dequeue(node, i);
    hold(w.request);
    granted_.push_back(w.id);
    mark_pending(w.request.owner, dirty);  // it may be waited on now
    return true;
  }
  return false;
}

bool LockTable::grantable(const InodeLocks& node, size_t index) const {
  const HeldLock& r = node.queue()[index].request;
  return !blocker(node, r, index, yields(r.owner, 1));
}

InodeLocks& LockTable::node_for(Ino ino) { return inodes_.try_emplace(ino, ino).first->second; }

void LockTable::forget_if_idle(const Owner& o) {
  auto it = owners_.find(o);
  if (it == owners_.end() || it->second.locks > 0 || !it->second.pending.empty()) return;
  owners_.erase(it);
  auto sit = sessions_.find(o.session);
  if (sit == sessions_.end()) return;
  sit->second.owners.erase(o);
  if (sit->second.owners.empty()) sessions_.erase(sit);
}

void LockTable::collect_garbage(Ino ino) {
  auto it = inodes_.find(ino);
  if (it != inodes_.end() && it->second.idle()) inodes_.erase(it);
}

// ---- Releases ----

void LockTable::release_owner(SessionId s, Ino ino, uint64_t lock_owner) {
  const Owner o{s, lock_owner, OwnerKind::kPosix};
  std::set<Ino> dirty;
  drop_locks(o, ino, dirty);
  forget_if_idle(o);
  if (options_.testing_unlock_wakes_nobody) {
    collect_garbage(ino);
  } else {
    settle(std::move(dirty));
  }
}

std::vector<WaiterId> LockTable::release_open(SessionId s, Ino ino, uint64_t file) {
  std::vector<WaiterId> dropped;
  std::set<Ino> dirty;
  for (OwnerKind kind : {OwnerKind::kOfd, OwnerKind::kFlock}) {
    const Owner o{s, file, kind};
    drop_locks(o, ino, dirty);
    for (WaiterId id : drop_waiters(o, ino, dirty)) dropped.push_back(id);
    forget_if_idle(o);
  }
  settle(std::move(dirty));
  return dropped;
}

std::vector<WaiterId> LockTable::evict_session(SessionId s) {
  std::vector<WaiterId> dropped;
  auto sit = sessions_.find(s);
  if (sit == sessions_.end()) return dropped;
  std::set<Ino> dirty;
  const std::set<Owner> owners = sit->second.owners;  // forget_if_idle edits it
  for (const Owner& o : owners) {
    const OwnerState& state = owners_.at(o);
    std::set<Ino> touched = state.held_on;
    for (WaiterId id : state.pending) touched.insert(waiters_.at(id));
    for (Ino ino : touched) {
      drop_locks(o, ino, dirty);
      for (WaiterId id : drop_waiters(o, ino, dirty)) dropped.push_back(id);
    }
    forget_if_idle(o);
  }
  settle(std::move(dirty));
  return dropped;
}

// ---- Failover ----

void LockTable::begin_reassert(TimeMs now) {
  reasserting_ = true;
  grace_end_ = now + options_.reassert_grace_ms;
}

void LockTable::end_reassert(TimeMs now) {
  if (reasserting_) grace_end_ = std::min(grace_end_, now);
}

Result<std::vector<Status>> LockTable::reassert(SessionId s, const std::vector<HeldLock>& locks,
                                                TimeMs now) {
  if (!in_grace(now)) {
    return make_error(ErrorCode::kPermissionDenied, "no reassert grace running: locks lost");
  }
  std::vector<Status> out;
  out.reserve(locks.size());
  for (const HeldLock& l : locks) out.push_back(reassert_one(s, l));
  return out;
}

Status LockTable::reassert_one(SessionId s, HeldLock l) {
  if (l.owner.session != s) {
    return make_error(ErrorCode::kInvalidArgument, "lock of another session");
  }
  if (l.type == LockType::kUnlock) {
    return make_error(ErrorCode::kInvalidArgument, "re-asserted an unlock");
  }
  l.range = range_for(l.owner, l.range);
  DFS_TRY_STATUS(check_range(l.range));
  InodeLocks& node = node_for(l.ino);
  if (auto c = node.first_conflict(l.owner, l.range, l.type)) {
    collect_garbage(l.ino);
    return make_error(ErrorCode::kBusy, "conflicts with re-asserted " + to_string(*c));
  }
  hold(l);
  return ok_status();
}

// ---- Queries ----

std::vector<HeldLock> LockTable::locks_of(Ino ino) const {
  auto it = inodes_.find(ino);
  return it == inodes_.end() ? std::vector<HeldLock>{} : it->second.locks();
}

std::vector<Waiter> LockTable::waiters_of(Ino ino) const {
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return {};
  return std::vector<Waiter>(it->second.queue().begin(), it->second.queue().end());
}

std::vector<Ino> LockTable::inodes() const {
  std::vector<Ino> out;
  for (const auto& [ino, node] : inodes_) out.push_back(ino);
  return out;
}

size_t LockTable::locks_held(SessionId s) const {
  auto it = sessions_.find(s);
  return it == sessions_.end() ? 0 : it->second.locks;
}

}  // namespace dfs::locks
