// Helpers for LockTable tests: owners of each kind, requests, and short ways to make a request and
// read the table back.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "common/locks/lock_table.h"

namespace dfs::locks::test {

constexpr Ino kIno = 7;
constexpr uint64_t kEof = Range::kEof;

inline Owner posix(SessionId s, uint64_t id) { return Owner{s, id, OwnerKind::kPosix}; }
inline Owner ofd(SessionId s, uint64_t file) { return Owner{s, file, OwnerKind::kOfd}; }
inline Owner flocker(SessionId s, uint64_t file) { return Owner{s, file, OwnerKind::kFlock}; }

inline LockRequest rd(Owner o, uint64_t start, uint64_t end, bool wait = false) {
  return LockRequest{kIno, o, Range{start, end}, LockType::kRead, static_cast<int32_t>(o.id), wait};
}
inline LockRequest wr(Owner o, uint64_t start, uint64_t end, bool wait = false) {
  LockRequest r = rd(o, start, end, wait);
  r.type = LockType::kWrite;
  return r;
}
inline LockRequest un(Owner o, uint64_t start, uint64_t end) {
  LockRequest r = rd(o, start, end);
  r.type = LockType::kUnlock;
  return r;
}
inline LockRequest on(Ino ino, LockRequest r) {
  r.ino = ino;
  return r;
}

inline SetReply set_ok(LockTable& t, const LockRequest& r, TimeMs now = 0) {
  Result<SetReply> reply = t.set(r, now);
  REQUIRE(reply);
  return *reply;
}
inline SetOutcome outcome(LockTable& t, const LockRequest& r, TimeMs now = 0) {
  return set_ok(t, r, now).outcome;
}
// Queues `r` (which must wait) and returns its waiter id.
inline WaiterId queue(LockTable& t, const LockRequest& r, TimeMs now = 0) {
  SetReply reply = set_ok(t, r, now);
  REQUIRE(reply.outcome == SetOutcome::kQueued);
  return reply.waiter;
}

inline std::optional<HeldLock> probe(const LockTable& t, const LockRequest& r) {
  Result<std::optional<HeldLock>> got = t.test(r.ino, r.owner, r.range, r.type, 0);
  REQUIRE(got);
  return *got;
}

// What `o` holds on kIno, as (range, type) pairs by start.
struct Held {
  Range range;
  LockType type;
  bool operator==(const Held&) const = default;
};
inline std::vector<Held> held(const LockTable& t, Owner o, Ino ino = kIno) {
  std::vector<Held> out;
  for (const HeldLock& l : t.locks_of(ino)) {
    if (l.owner == o) out.push_back(Held{l.range, l.type});
  }
  return out;
}
inline Held R(uint64_t a, uint64_t b) { return Held{Range{a, b}, LockType::kRead}; }
inline Held W(uint64_t a, uint64_t b) { return Held{Range{a, b}, LockType::kWrite}; }

inline doctest::String toString(const Held& h) {
  return (std::string(type_name(h.type)) + "[" + std::to_string(h.range.start) + "," +
          std::to_string(h.range.end) + "]")
      .c_str();
}

}  // namespace dfs::locks::test
