// The vocabulary of dfs's cluster-wide lock table: who locks (an Owner: a process or an open file
// of one client session), what (a byte Range of an inode, read or write), and what the table
// answers with. Pure values, no I/O; shared by the MDS side (LockTable) and, later, the FUSE glue
// that converts struct flock to and from them.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <string>

#include "common/status/status.h"

namespace dfs::locks {

using SessionId = uint64_t;  // one client mount's session with the MDS
using Ino = uint64_t;
using WaiterId = uint64_t;  // names a queued F_SETLKW/flock request; never 0
// Milliseconds on the MDS's monotonic clock, passed in: the table never reads a clock.
using TimeMs = int64_t;

// Which lock API took the lock. Record locks (kPosix, kOfd) share one lock space and conflict with
// each other; flock locks live in a space of their own (Linux semantics: flock(2) and fcntl(2)
// locks on one file never interact).
enum class OwnerKind : uint8_t {
  kPosix,  // fcntl F_SETLK*: owned by a process (FUSE lock_owner); dropped on any close
  kOfd,    // fcntl F_OFD_SETLK*: owned by an open file description; dropped on release
  kFlock,  // flock(2): whole file, owned by an open file description
};

// `id` is FUSE's lock_owner for kPosix and the open file (its handle) for kOfd and kFlock. Owners
// of different sessions or kinds are different owners, whatever the id.
struct Owner {
  SessionId session = 0;
  uint64_t id = 0;
  OwnerKind kind = OwnerKind::kPosix;

  auto operator<=>(const Owner&) const = default;
};

enum class LockType : uint8_t { kRead, kWrite, kUnlock };

// Bytes [start, end], both inclusive; end == kEof locks to end of file and beyond (what l_len == 0
// asks for), so a lock taken at EOF still covers data appended later.
struct Range {
  static constexpr uint64_t kEof = std::numeric_limits<uint64_t>::max();

  uint64_t start = 0;
  uint64_t end = kEof;

  static constexpr Range whole() { return Range{0, kEof}; }
  // From struct flock as libfuse hands it over (l_whence resolved, l_len >= 0; l_len 0 means to
  // EOF).
  // Errors: kInvalidArgument (negative, or past the largest offset).
  static Result<Range> from_flock(int64_t l_start, int64_t l_len);
  // Back to l_len: 0 for a range to EOF.
  int64_t flock_len() const;

  bool valid() const { return start <= end; }
  bool overlaps(const Range& o) const { return start <= o.end && o.start <= end; }
  auto operator<=>(const Range&) const = default;
};

// Two held or requested locks conflict when their owners differ, they are in the same lock space,
// their ranges overlap and at least one is a write lock.
bool same_space(OwnerKind a, OwnerKind b);
bool incompatible(LockType a, LockType b);

// A lock as the table holds it: one maximal range of one owner (an owner's adjacent or overlapping
// ranges of one type are merged into one). Also what reassert() takes.
struct HeldLock {
  Ino ino = 0;
  Owner owner;
  Range range;
  LockType type = LockType::kRead;
  // The holder's pid as its client gave it, for F_GETLK's l_pid. The FUSE glue reports -1 for OFD
  // holders, as Linux does.
  int32_t pid = 0;

  bool operator==(const HeldLock&) const = default;
};

std::string to_string(const Owner& o);
std::string to_string(const HeldLock& l);
const char* type_name(LockType t);

}  // namespace dfs::locks
