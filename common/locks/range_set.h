// RangeSet: the locks one owner holds on one inode, as disjoint maximal byte ranges each read or
// write. Setting a type over a range replaces whatever the owner had there (an upgrade or downgrade
// of part of a range splits it); unlocking punches a hole; ranges of one type that touch are
// merged. Plain value type, single-threaded, no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "common/locks/types.h"

namespace dfs::locks {

struct Segment {
  Range range;
  LockType type = LockType::kRead;  // never kUnlock

  bool operator==(const Segment&) const = default;
};

class RangeSet {
 public:
  // `type` kRead or kWrite now covers `r`; what was there before is replaced.
  // Requires: r.valid().
  void set(Range r, LockType type);
  // Nothing covers `r` any more: segments overlapping it are cut (possibly in two).
  void clear(Range r);
  // set() or clear() by type.
  void apply(Range r, LockType type);

  // How many segments apply(r, type) would leave, without changing this set.
  size_t size_after(Range r, LockType type) const;

  // The first segment (lowest start) overlapping `r` whose type is incompatible with `type`, if
  // any.
  std::optional<Segment> first_conflict(Range r, LockType type) const;

  bool empty() const { return segments_.empty(); }
  size_t size() const { return segments_.size(); }
  std::vector<Segment> segments() const;

 private:
  struct Tail {
    uint64_t end;
    LockType type;
  };
  using Map = std::map<uint64_t, Tail>;  // start -> end and type

  Map::iterator first_touching(uint64_t start);
  Map::const_iterator first_overlapping(uint64_t start) const;
  void merge_around(Map::iterator it);

  Map segments_;
};

}  // namespace dfs::locks
