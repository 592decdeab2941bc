#include "common/locks/range_set.h"

#include <iterator>

namespace dfs::locks {

RangeSet::Map::const_iterator RangeSet::first_overlapping(uint64_t start) const {
  auto it = segments_.upper_bound(start);
  if (it != segments_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end >= start) return prev;
  }
  return it;
}

RangeSet::Map::iterator RangeSet::first_touching(uint64_t start) {
  auto it = first_overlapping(start);
  return segments_.erase(it, it);  // const_iterator to iterator
}

void RangeSet::clear(Range r) {
  auto it = first_touching(r.start);
  while (it != segments_.end() && it->first <= r.end) {
    const uint64_t start = it->first;
    const Tail tail = it->second;
    it = segments_.erase(it);
    // The parts outside `r` survive: a hole in the middle leaves two pieces.
    if (start < r.start) segments_.emplace(start, Tail{r.start - 1, tail.type});
    if (tail.end > r.end) it = segments_.emplace(r.end + 1, Tail{tail.end, tail.type}).first;
  }
}

void RangeSet::set(Range r, LockType type) {
  clear(r);
  merge_around(segments_.emplace(r.start, Tail{r.end, type}).first);
}

void RangeSet::apply(Range r, LockType type) {
  if (type == LockType::kUnlock) {
    clear(r);
  } else {
    set(r, type);
  }
}

void RangeSet::merge_around(Map::iterator it) {
  // POSIX merges an owner's adjacent locks of one type: F_GETLK then reports the union.
  if (it != segments_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.type == it->second.type && prev->second.end + 1 == it->first) {
      prev->second.end = it->second.end;
      segments_.erase(it);
      it = prev;
    }
  }
  auto next = std::next(it);
  if (next != segments_.end() && it->second.end != Range::kEof &&
      next->second.type == it->second.type && it->second.end + 1 == next->first) {
    it->second.end = next->second.end;
    segments_.erase(next);
  }
}

size_t RangeSet::size_after(Range r, LockType type) const {
  // Small sets (one owner, one inode): a copy is simpler than predicting splits.
  RangeSet copy = *this;
  copy.apply(r, type);
  return copy.size();
}

std::optional<Segment> RangeSet::first_conflict(Range r, LockType type) const {
  for (auto it = first_overlapping(r.start); it != segments_.end() && it->first <= r.end; ++it) {
    if (incompatible(it->second.type, type)) {
      return Segment{Range{it->first, it->second.end}, it->second.type};
    }
  }
  return std::nullopt;
}

std::vector<Segment> RangeSet::segments() const {
  std::vector<Segment> out;
  out.reserve(segments_.size());
  for (const auto& [start, tail] : segments_) {
    out.push_back(Segment{Range{start, tail.end}, tail.type});
  }
  return out;
}

}  // namespace dfs::locks
