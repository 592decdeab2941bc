// LockTable: queued requests: FIFO wake-up, fairness, deadlocks, cancels, releases and evictions.
#include <doctest/doctest.h>

#include "tests/unit/locks/lock_table_fixture.h"

namespace dfs::locks::test {
namespace {

const Owner kA = posix(1, 100);
const Owner kB = posix(2, 200);
const Owner kC = posix(3, 300);
const Owner kD = posix(4, 400);

using Ids = std::vector<WaiterId>;

TEST_CASE("locks/wait: queued requests are granted in FIFO order") {
  LockTable t({});
  REQUIRE(outcome(t, wr(kA, 0, 9)) == SetOutcome::kGranted);
  WaiterId b = queue(t, wr(kB, 0, 9, true));
  WaiterId c = queue(t, wr(kC, 5, 5, true));
  WaiterId d = queue(t, wr(kD, 0, 0, true));
  CHECK(t.take_granted().empty());
  REQUIRE(outcome(t, un(kA, 0, 9)) == SetOutcome::kGranted);
  CHECK(t.take_granted() == Ids{b});
  CHECK(held(t, kB) == std::vector<Held>{W(0, 9)});  // held from the grant on
  REQUIRE(outcome(t, un(kB, 0, 9)) == SetOutcome::kGranted);
  CHECK(t.take_granted() == Ids{c, d});  // both fit: [5,5] and [0,0]
  CHECK(t.waiters_of(kIno).empty());
}

TEST_CASE("locks/wait: shared requests queued together are granted together") {
  LockTable t({});
  REQUIRE(outcome(t, wr(kA, 0, 9)) == SetOutcome::kGranted);
  WaiterId b = queue(t, rd(kB, 0, 9, true));
  WaiterId c = queue(t, rd(kC, 0, 9, true));
  WaiterId d = queue(t, wr(kD, 0, 9, true));
  REQUIRE(outcome(t, un(kA, 0, 9)) == SetOutcome::kGranted);
  CHECK(t.take_granted() == Ids{b, c});
  REQUIRE(outcome(t, un(kB, 0, 9)) == SetOutcome::kGranted);
  CHECK(t.take_granted().empty());
  REQUIRE(outcome(t, un(kC, 0, 9)) == SetOutcome::kGranted);
  CHECK(t.take_granted() == Ids{d});
}

TEST_CASE("locks/wait: readers do not starve a queued writer") {
  LockTable t({});
  REQUIRE(outcome(t, rd(kA, 0, 99)) == SetOutcome::kGranted);
  WaiterId w = queue(t, wr(kB, 50, 59, true));
  // New readers would be compatible with A's read lock, but the writer was first.
  SetReply nb = set_ok(t, rd(kC, 0, 99));
  CHECK(nb.outcome == SetOutcome::kConflict);
  CHECK(nb.conflict->owner == kB);  // what it yields to: the queued writer's request
  CHECK(!probe(t, rd(kC, 0, 99)));  // F_GETLK only reports held locks
  CHECK(outcome(t, rd(kC, 0, 9)) == SetOutcome::kGranted);  // not in the writer's way
  WaiterId r = queue(t, rd(kD, 55, 55, true));
  REQUIRE(outcome(t, un(kA, 0, 99)) == SetOutcome::kGranted);
  CHECK(t.take_granted() == Ids{w});
  REQUIRE(outcome(t, un(kB, 50, 59)) == SetOutcome::kGranted);
  CHECK(t.take_granted() == Ids{r});
}

TEST_CASE("locks/wait: an owner a queued writer waits for does not yield to it") {
  // Yielding would deadlock: B waits for A's read lock, and A would wait behind B.
  LockTable t({});
  REQUIRE(outcome(t, rd(kA, 0, 9)) == SetOutcome::kGranted);
  queue(t, wr(kB, 0, 19, true));
  CHECK(outcome(t, rd(kA, 10, 19)) == SetOutcome::kGranted);  // extends its read lock
  CHECK(held(t, kA) == std::vector<Held>{R(0, 19)});
  SUBCASE("nor does an upgrade of the same owner") {
    CHECK(outcome(t, wr(kA, 0, 19)) == SetOutcome::kGranted);
  }
  SUBCASE("an unrelated holder still yields") {
    REQUIRE(outcome(t, rd(kC, 100, 109)) == SetOutcome::kGranted);
    CHECK(outcome(t, rd(kC, 15, 15)) == SetOutcome::kConflict);
  }
}

TEST_CASE("locks/wait: a cycle of two POSIX owners is refused with EDEADLK") {
  LockTable t({});
  REQUIRE(outcome(t, wr(kA, 0, 9)) == SetOutcome::kGranted);
  REQUIRE(outcome(t, wr(kB, 10, 19)) == SetOutcome::kGranted);
  WaiterId a = queue(t, wr(kA, 10, 19, true));
  SetReply r = set_ok(t, wr(kB, 0, 9, true));
  CHECK(r.outcome == SetOutcome::kDeadlock);
  CHECK(r.conflict->owner == kA);
  CHECK(t.waiters_of(kIno).size() == 1);
  SUBCASE("no EDEADLK once the cycle is broken by a cancel") {
    REQUIRE(t.cancel_wait(a));
    CHECK(outcome(t, wr(kB, 0, 9, true)) == SetOutcome::kQueued);
  }
  SUBCASE("no EDEADLK once the cycle is broken by an unlock") {
    REQUIRE(outcome(t, un(kB, 10, 19)) == SetOutcome::kGranted);
    CHECK(t.take_granted() == Ids{a});
    CHECK(outcome(t, wr(kB, 0, 9, true)) == SetOutcome::kQueued);
  }
  SUBCASE("a request that does not wait is just refused") {
    CHECK(outcome(t, wr(kB, 0, 9)) == SetOutcome::kConflict);
  }
}

TEST_CASE("locks/wait: a cycle of three owners across sessions and inodes") {
  LockTable t({});
  REQUIRE(outcome(t, on(1, wr(kA, 0, 0))) == SetOutcome::kGranted);
  REQUIRE(outcome(t, on(2, wr(kB, 0, 0))) == SetOutcome::kGranted);
  REQUIRE(outcome(t, on(3, wr(kC, 0, 0))) == SetOutcome::kGranted);
  queue(t, on(2, wr(kA, 0, 0, true)));                                    // A waits for B
  WaiterId b = queue(t, on(3, rd(kB, 0, 0, true)));                       // B waits for C
  CHECK(outcome(t, on(1, rd(kC, 0, 0, true))) == SetOutcome::kDeadlock);  // C for A
  CHECK(outcome(t, on(1, rd(kD, 0, 0, true))) == SetOutcome::kQueued);    // D: no cycle
  REQUIRE(t.cancel_wait(b));
  CHECK(outcome(t, on(1, rd(kC, 0, 0, true))) == SetOutcome::kQueued);
}

TEST_CASE("locks/wait: an OFD holder on a POSIX owner's cycle counts") {
  LockTable t({});
  const Owner file = ofd(5, 55);
  REQUIRE(outcome(t, wr(file, 0, 9)) == SetOutcome::kGranted);
  REQUIRE(outcome(t, wr(kA, 10, 19)) == SetOutcome::kGranted);
  queue(t, wr(file, 10, 19, true));  // OFD requests are never refused for deadlock
  CHECK(outcome(t, wr(kA, 0, 9, true)) == SetOutcome::kDeadlock);
}

TEST_CASE("locks/wait: OFD and flock cycles wait, as on Linux, until a cancel") {
  LockTable t({});
  const Owner f1 = ofd(1, 1);
  const Owner f2 = ofd(2, 2);
  REQUIRE(outcome(t, wr(f1, 0, 9)) == SetOutcome::kGranted);
  REQUIRE(outcome(t, wr(f2, 10, 19)) == SetOutcome::kGranted);
  WaiterId w1 = queue(t, wr(f1, 10, 19, true));
  WaiterId w2 = queue(t, wr(f2, 0, 9, true));
  REQUIRE(t.cancel_wait(w2));  // EINTR in the second process
  REQUIRE(outcome(t, un(f2, 10, 19)) == SetOutcome::kGranted);
  CHECK(t.take_granted() == Ids{w1});
  CHECK(t.cancel_wait(w1).error().code() == ErrorCode::kNotFound);  // granted already
}

TEST_CASE("locks/wait: a cancelled request lets the ones behind it go") {
  LockTable t({});
  REQUIRE(outcome(t, rd(kA, 0, 9)) == SetOutcome::kGranted);
  WaiterId w = queue(t, wr(kB, 0, 9, true));
  WaiterId r = queue(t, rd(kC, 0, 9, true));  // yields to the writer
  REQUIRE(t.cancel_wait(w));
  CHECK(t.take_granted() == Ids{r});
  CHECK(t.cancel_wait(w).error().code() == ErrorCode::kNotFound);
  REQUIRE(outcome(t, un(kA, 0, 9)) == SetOutcome::kGranted);
  CHECK(held(t, kB).empty());  // a cancelled request is never granted
}

TEST_CASE("locks/wait: release_owner drops one process's record locks on one inode") {
  LockTable t({});
  REQUIRE(outcome(t, wr(kA, 0, 9)) == SetOutcome::kGranted);
  REQUIRE(outcome(t, wr(kA, 20, 29)) == SetOutcome::kGranted);
  REQUIRE(outcome(t, on(8, wr(kA, 0, 9))) == SetOutcome::kGranted);
  REQUIRE(outcome(t, wr(ofd(1, 100), 50, 59)) == SetOutcome::kGranted);  // same number
  REQUIRE(outcome(t, wr(flocker(1, 100), 0, 0)) == SetOutcome::kGranted);
  WaiterId b = queue(t, wr(kB, 0, 29, true));
  t.release_owner(1, kIno, 100);
  CHECK(t.take_granted() == Ids{b});
  CHECK(held(t, kA).empty());
  CHECK(held(t, kA, 8) == std::vector<Held>{W(0, 9)});
  CHECK(held(t, ofd(1, 100)) == std::vector<Held>{W(50, 59)});
  CHECK(held(t, flocker(1, 100)) == std::vector<Held>{W(0, kEof)});
}

TEST_CASE(
    "locks/wait: release_open drops a file's OFD and flock locks and "
    "requests") {
  LockTable t({});
  const Owner file = ofd(1, 9);
  REQUIRE(outcome(t, wr(file, 0, 9)) == SetOutcome::kGranted);
  REQUIRE(outcome(t, wr(flocker(1, 9), 0, 0)) == SetOutcome::kGranted);
  REQUIRE(outcome(t, wr(kB, 20, 29)) == SetOutcome::kGranted);
  WaiterId mine = queue(t, wr(file, 20, 29, true));
  WaiterId other = queue(t, wr(flocker(2, 3), 0, 0, true));
  CHECK(t.release_open(1, kIno, 9) == Ids{mine});
  CHECK(t.take_granted() == Ids{other});
  CHECK(held(t, file).empty());
  CHECK(outcome(t, wr(kC, 0, 9)) == SetOutcome::kGranted);
}

TEST_CASE("locks/wait: evicting a session frees its locks and wakes the waiters") {
  LockTable t({});
  const Owner a2 = posix(1, 101);  // another process of session 1
  REQUIRE(outcome(t, wr(kA, 0, 9)) == SetOutcome::kGranted);
  REQUIRE(outcome(t, on(3, wr(a2, 0, 9))) == SetOutcome::kGranted);
  REQUIRE(outcome(t, wr(kB, 100, 109)) == SetOutcome::kGranted);
  WaiterId b = queue(t, wr(kB, 0, 9, true));
  WaiterId c = queue(t, on(3, rd(kC, 0, 0, true)));
  WaiterId a = queue(t, wr(a2, 100, 100, true));
  CHECK(t.evict_session(1) == Ids{a});
  Ids granted = t.take_granted();
  std::sort(granted.begin(), granted.end());
  CHECK(granted == Ids{b, c});
  CHECK(t.locks_held(1) == 0);
  CHECK(t.locks_of(3).size() == 1);
  CHECK(t.evict_session(1).empty());
}

}  // namespace
}  // namespace dfs::locks::test
