#include "common/locks/inode_locks.h"

namespace dfs::locks {
namespace {

// Whether a lock or request of `other` can stand in the way of `o`'s request.
bool rival(const Owner& other, const Owner& o) {
  return other != o && same_space(other.kind, o.kind);
}

bool blocks(const Waiter& w, const Owner& o, Range r, LockType type) {
  return rival(w.request.owner, o) && w.request.range.overlaps(r) &&
         incompatible(w.request.type, type);
}

}  // namespace

std::optional<HeldLock> InodeLocks::first_conflict(const Owner& o, Range r, LockType type) const {
  std::optional<HeldLock> best;
  for (const auto& [owner, holding] : held_) {
    if (!rival(owner, o)) continue;
    std::optional<Segment> s = holding.ranges.first_conflict(r, type);
    // Owners are visited in order, so a strictly lower start is needed to replace.
    if (!s || (best && best->range.start <= s->range.start)) continue;
    best = HeldLock{ino_, owner, s->range, s->type, holding.pid};
  }
  return best;
}

void InodeLocks::held_blockers(const Owner& o, Range r, LockType type, std::set<Owner>& out) const {
  for (const auto& [owner, holding] : held_) {
    if (rival(owner, o) && holding.ranges.first_conflict(r, type)) out.insert(owner);
  }
}

size_t InodeLocks::count(const Owner& o) const {
  auto it = held_.find(o);
  return it == held_.end() ? 0 : it->second.ranges.size();
}

size_t InodeLocks::count_after(const Owner& o, Range r, LockType type) const {
  auto it = held_.find(o);
  if (it != held_.end()) return it->second.ranges.size_after(r, type);
  return type == LockType::kUnlock ? 0 : 1;
}

void InodeLocks::apply(const Owner& o, Range r, LockType type, int32_t pid) {
  if (type == LockType::kUnlock) {
    auto it = held_.find(o);
    if (it == held_.end()) return;
    it->second.ranges.clear(r);
    if (it->second.ranges.empty()) held_.erase(it);
    return;
  }
  Holding& h = held_[o];
  h.ranges.set(r, type);
  h.pid = pid;
}

size_t InodeLocks::drop(const Owner& o) {
  auto it = held_.find(o);
  if (it == held_.end()) return 0;
  size_t n = it->second.ranges.size();
  held_.erase(it);
  return n;
}

std::vector<HeldLock> InodeLocks::locks() const {
  std::vector<HeldLock> out;
  for (const auto& [owner, holding] : held_) {
    for (const Segment& s : holding.ranges.segments()) {
      out.push_back(HeldLock{ino_, owner, s.range, s.type, holding.pid});
    }
  }
  return out;
}

std::vector<Owner> InodeLocks::holders() const {
  std::vector<Owner> out;
  for (const auto& [owner, holding] : held_) out.push_back(owner);
  return out;
}

bool InodeLocks::blocks_queued(const Owner& holder) const {
  auto it = held_.find(holder);
  if (it == held_.end()) return false;
  for (const Waiter& w : queue_) {
    if (rival(w.request.owner, holder) &&
        it->second.ranges.first_conflict(w.request.range, w.request.type)) {
      return true;
    }
  }
  return false;
}

const Waiter* InodeLocks::first_queued_conflict(const Owner& o, Range r, LockType type,
                                                size_t n) const {
  for (size_t i = 0; i < n && i < queue_.size(); ++i) {
    if (blocks(queue_[i], o, r, type)) return &queue_[i];
  }
  return nullptr;
}

void InodeLocks::queued_blockers(const Owner& o, Range r, LockType type, size_t n,
                                 std::set<Owner>& out) const {
  for (size_t i = 0; i < n && i < queue_.size(); ++i) {
    if (blocks(queue_[i], o, r, type)) out.insert(queue_[i].request.owner);
  }
}

Waiter InodeLocks::take(size_t index) {
  Waiter w = std::move(queue_[index]);
  queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(index));
  return w;
}

std::optional<size_t> InodeLocks::position(WaiterId id) const {
  for (size_t i = 0; i < queue_.size(); ++i) {
    if (queue_[i].id == id) return i;
  }
  return std::nullopt;
}

}  // namespace dfs::locks
