// LockModel: the reference the randomized checker holds LockTable to. As simple as it can be: per
// inode and owner, which bytes it holds read and which write, as bitmaps of 65 cells (bytes 0..63
// one each, then one cell for every offset from 64 on, which only ranges to EOF reach). It knows
// nothing of ranges, merging or queues.
#pragma once

#include <bitset>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/locks/types.h"

namespace dfs::locks::test {

inline constexpr uint64_t kModelBytes = 64;  // ranges start below this, end below or at EOF

class LockModel {
 public:
  // `l.owner` now holds `l.type` on l.range (kUnlock: nothing).
  // Requires: the range fits the model (start < 64, end < 64 or EOF).
  void apply(const HeldLock& l);
  void drop(const Owner& o, Ino ino);
  void drop_session(SessionId s);

  // Owners other than `o`, in o's lock space, holding a lock incompatible with `type` on some byte
  // of `r`.
  std::set<Owner> blockers(Ino ino, const Owner& o, Range r, LockType type) const;
  // Whether `holder` (not `o`) holds a lock on `ino` in the way of (o, r, type).
  bool blocks(Ino ino, const Owner& holder, const Owner& o, Range r, LockType type) const;
  // What `o` holds on the first byte of `ino`: how a flock owner's lock is read back.
  std::optional<LockType> first_byte(Ino ino, const Owner& o) const;
  // Two owners holding conflicting locks on a byte, as text; empty if none.
  std::string conflict() const;
  // How `locks` (the table's, for `ino`) differs from the model; empty if it does not. Also
  // requires each owner's ranges to be disjoint and maximal (no same-type touch).
  std::string diff(Ino ino, const std::vector<HeldLock>& locks) const;
  std::vector<Ino> inodes() const;

 private:
  using Bits = std::bitset<kModelBytes + 1>;
  struct Held {
    Bits read;
    Bits write;
    bool operator==(const Held&) const = default;
  };
  using Holders = std::map<Owner, Held>;  // no owner holding nothing

  static Bits bits_of(Range r);
  static bool in_way(const Held& h, const Bits& bits, LockType type);

  std::map<Ino, Holders> inodes_;  // no inode without holders
};

}  // namespace dfs::locks::test
