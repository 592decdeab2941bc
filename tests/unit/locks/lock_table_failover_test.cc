// LockTable: re-assertion after an MDS failover, and the configured limits.
#include <doctest/doctest.h>

#include "tests/unit/locks/lock_table_fixture.h"

namespace dfs::locks::test {
namespace {

const Owner kA = posix(1, 100);
const Owner kB = posix(2, 200);

constexpr TimeMs kGrace = 1000;

LockTableOptions grace_options() { return LockTableOptions{.reassert_grace_ms = kGrace}; }

std::vector<HeldLock> held_by(const LockTable& t, SessionId s) {
  std::vector<HeldLock> out;
  for (Ino ino : t.inodes()) {
    for (const HeldLock& l : t.locks_of(ino)) {
      if (l.owner.session == s) out.push_back(l);
    }
  }
  return out;
}

TEST_CASE("locks/failover: clients re-assert their locks within the grace") {
  LockTable before({});
  REQUIRE(outcome(before, wr(kA, 0, 9)) == SetOutcome::kGranted);
  REQUIRE(outcome(before, rd(kA, 20, kEof)) == SetOutcome::kGranted);
  REQUIRE(outcome(before, on(3, wr(flocker(1, 5), 0, 0))) == SetOutcome::kGranted);
  REQUIRE(outcome(before, rd(kB, 30, 39)) == SetOutcome::kGranted);

  LockTable after(grace_options());
  after.begin_reassert(10'000);
  // During the grace nothing new is granted or reported: the table is incomplete.
  CHECK(after.set(wr(kB, 0, 9), 10'001).error().code() == ErrorCode::kUnavailable);
  CHECK(after.test(kIno, kB, Range{0, 9}, LockType::kWrite, 10'001).error().code() ==
        ErrorCode::kUnavailable);

  Result<std::vector<Status>> a = after.reassert(1, held_by(before, 1), 10'100);
  REQUIRE(a);
  REQUIRE(a->size() == 3);
  for (const Status& s : *a) CHECK(s);
  Result<std::vector<Status>> b = after.reassert(2, held_by(before, 2), 10'200);
  REQUIRE(b);
  CHECK((*b)[0]);
  CHECK(after.locks_of(kIno) == before.locks_of(kIno));
  CHECK(after.locks_of(3) == before.locks_of(3));

  // Unlocks are served in the grace: they only give back.
  CHECK(outcome(after, un(kB, 30, 39), 10'300) == SetOutcome::kGranted);
  // After it, service is normal and late re-assertions are refused.
  CHECK(after.set(wr(kB, 0, 9), 11'000)->outcome == SetOutcome::kConflict);
  CHECK(after.reassert(2, {}, 11'000).error().code() == ErrorCode::kPermissionDenied);
}

TEST_CASE(
    "locks/failover: a conflicting re-assertion is refused for that lock "
    "only") {
  LockTable t(grace_options());
  t.begin_reassert(0);
  Result<std::vector<Status>> a =
      t.reassert(1, {HeldLock{kIno, kA, Range{0, 9}, LockType::kWrite, 1}}, 1);
  REQUIRE(a);
  REQUIRE((*a)[0]);
  Result<std::vector<Status>> b =
      t.reassert(2,
                 {HeldLock{kIno, kB, Range{5, 5}, LockType::kRead, 2},
                  HeldLock{kIno, kB, Range{10, 19}, LockType::kWrite, 2},
                  HeldLock{kIno, kA, Range{50, 59}, LockType::kWrite, 2},
                  HeldLock{kIno, kB, Range{9, 8}, LockType::kWrite, 2}},
                 2);
  REQUIRE(b);
  CHECK((*b)[0].error().code() == ErrorCode::kBusy);
  CHECK((*b)[1]);
  CHECK((*b)[2].error().code() == ErrorCode::kInvalidArgument);  // not session 2's
  CHECK((*b)[3].error().code() == ErrorCode::kInvalidArgument);
  CHECK(held(t, kB) == std::vector<Held>{W(10, 19)});
}

TEST_CASE("locks/failover: a table that was not told to reassert refuses it") {
  LockTable t({});
  CHECK(t.reassert(1, {}, 0).error().code() == ErrorCode::kPermissionDenied);
}

TEST_CASE("locks/limits: locks per session") {
  LockTable t(LockTableOptions{.max_locks_per_session = 3});
  REQUIRE(outcome(t, wr(kA, 0, 99)) == SetOutcome::kGranted);
  REQUIRE(outcome(t, un(kA, 10, 19)) == SetOutcome::kGranted);              // 2 locks
  REQUIRE(outcome(t, un(kA, 30, 39)) == SetOutcome::kGranted);              // 3 locks
  CHECK(outcome(t, un(kA, 50, 59)) == SetOutcome::kNoLocks);                // a 4th by splitting
  CHECK(outcome(t, on(2, rd(posix(1, 5), 0, 0))) == SetOutcome::kNoLocks);  // per session
  CHECK(outcome(t, wr(kA, 0, 39)) == SetOutcome::kGranted);  // merges all into [0,99]
  CHECK(t.locks_held(1) == 1);
  CHECK(outcome(t, on(2, rd(kB, 0, 0))) == SetOutcome::kGranted);  // another session
  SUBCASE("a queued request reserves room for its grant") {
    REQUIRE(outcome(t, wr(kB, 200, 200)) == SetOutcome::kGranted);
    REQUIRE(outcome(t, on(9, rd(kA, 5, 5))) == SetOutcome::kGranted);   // 2 locks
    CHECK(outcome(t, rd(kA, 200, 200, true)) == SetOutcome::kNoLocks);  // 2 + 2 > 3
    REQUIRE(outcome(t, on(9, un(kA, 5, 5))) == SetOutcome::kGranted);   // 1 lock left
    WaiterId w = queue(t, rd(kA, 200, 200, true));                      // 1 + 2 <= 3
    CHECK(outcome(t, on(9, rd(kA, 0, 0))) == SetOutcome::kNoLocks);     // reserved
    REQUIRE(outcome(t, un(kB, 200, 200)) == SetOutcome::kGranted);
    CHECK(t.take_granted() == std::vector<WaiterId>{w});
    CHECK(t.locks_held(1) == 2);
  }
}

TEST_CASE("locks/limits: queued requests per inode") {
  LockTable t(LockTableOptions{.max_waiters_per_inode = 2});
  REQUIRE(outcome(t, wr(kA, 0, 0)) == SetOutcome::kGranted);
  queue(t, rd(posix(2, 1), 0, 0, true));
  queue(t, rd(posix(3, 1), 0, 0, true));
  CHECK(outcome(t, rd(posix(4, 1), 0, 0, true)) == SetOutcome::kNoLocks);
  CHECK(outcome(t, on(2, rd(posix(4, 1), 0, 0, true))) == SetOutcome::kGranted);
}

}  // namespace
}  // namespace dfs::locks::test
