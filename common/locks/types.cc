#include "common/locks/types.h"

namespace dfs::locks {

Result<Range> Range::from_flock(int64_t l_start, int64_t l_len) {
  if (l_start < 0 || l_len < 0) {
    return make_error(ErrorCode::kInvalidArgument, "negative lock offset or length");
  }
  if (l_len == 0) return Range{static_cast<uint64_t>(l_start), kEof};
  if (l_len - 1 > std::numeric_limits<int64_t>::max() - l_start) {
    return make_error(ErrorCode::kInvalidArgument, "lock range past the largest offset");
  }
  return Range{static_cast<uint64_t>(l_start), static_cast<uint64_t>(l_start + (l_len - 1))};
}

int64_t Range::flock_len() const {
  // A range ending at or past the largest signed offset is how the kernel spells "to EOF" too
  // (OFFSET_MAX), so both read back as l_len 0.
  if (end >= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return 0;
  return static_cast<int64_t>(end - start + 1);
}

bool same_space(OwnerKind a, OwnerKind b) {
  return (a == OwnerKind::kFlock) == (b == OwnerKind::kFlock);
}

bool incompatible(LockType a, LockType b) { return a == LockType::kWrite || b == LockType::kWrite; }

const char* type_name(LockType t) {
  switch (t) {
    case LockType::kRead:
      return "read";
    case LockType::kWrite:
      return "write";
    case LockType::kUnlock:
      return "unlock";
  }
  return "?";
}

namespace {

const char* kind_name(OwnerKind k) {
  switch (k) {
    case OwnerKind::kPosix:
      return "posix";
    case OwnerKind::kOfd:
      return "ofd";
    case OwnerKind::kFlock:
      return "flock";
  }
  return "?";
}

std::string range_string(const Range& r) {
  return "[" + std::to_string(r.start) + "," +
         (r.end == Range::kEof ? std::string("EOF") : std::to_string(r.end)) + "]";
}

}  // namespace

std::string to_string(const Owner& o) {
  return std::string(kind_name(o.kind)) + ":" + std::to_string(o.session) + "/" +
         std::to_string(o.id);
}

std::string to_string(const HeldLock& l) {
  return "ino " + std::to_string(l.ino) + " " + to_string(l.owner) + " " + type_name(l.type) + " " +
         range_string(l.range) + " pid " + std::to_string(l.pid);
}

}  // namespace dfs::locks
