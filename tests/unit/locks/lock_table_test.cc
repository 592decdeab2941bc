// LockTable: what conflicts with what, and how an owner's own ranges change.
#include <doctest/doctest.h>

#include "tests/unit/locks/lock_table_fixture.h"

namespace dfs::locks::test {
namespace {

const Owner kA = posix(1, 100);
const Owner kB = posix(2, 200);
const Owner kC = posix(2, 201);  // same session as kB, another process

TEST_CASE("locks/table: read locks share, a write lock excludes") {
  LockTable t({});
  CHECK(outcome(t, rd(kA, 0, 9)) == SetOutcome::kGranted);
  CHECK(outcome(t, rd(kB, 5, 14)) == SetOutcome::kGranted);
  SetReply refused = set_ok(t, wr(kC, 9, 9));
  CHECK(refused.outcome == SetOutcome::kConflict);
  CHECK(refused.conflict->owner == kA);  // the one starting first
  CHECK(outcome(t, wr(kC, 15, 20)) == SetOutcome::kGranted);
  CHECK(outcome(t, rd(kA, 20, 20)) == SetOutcome::kConflict);
  CHECK(held(t, kC) == std::vector<Held>{W(15, 20)});
}

TEST_CASE("locks/table: a lock to EOF covers every offset past its start") {
  LockTable t({});
  REQUIRE(outcome(t, wr(kA, 1000, kEof)) == SetOutcome::kGranted);
  CHECK(outcome(t, rd(kB, 0, 999)) == SetOutcome::kGranted);
  CHECK(outcome(t, rd(kB, 999, 1000)) == SetOutcome::kConflict);
  CHECK(outcome(t, rd(kB, uint64_t{1} << 62, uint64_t{1} << 62)) == SetOutcome::kConflict);
  CHECK(outcome(t, wr(kB, 5000, kEof)) == SetOutcome::kConflict);
}

TEST_CASE("locks/table: a partial unlock splits the lock") {
  LockTable t({});
  REQUIRE(outcome(t, wr(kA, 0, 99)) == SetOutcome::kGranted);
  REQUIRE(outcome(t, un(kA, 40, 59)) == SetOutcome::kGranted);
  CHECK(held(t, kA) == std::vector<Held>{W(0, 39), W(60, 99)});
  CHECK(outcome(t, wr(kB, 40, 59)) == SetOutcome::kGranted);
  CHECK(outcome(t, rd(kB, 39, 40)) == SetOutcome::kConflict);
  CHECK(t.locks_held(1) == 2);
}

TEST_CASE("locks/table: an owner's adjacent and overlapping ranges merge") {
  LockTable t({});
  REQUIRE(outcome(t, rd(kA, 0, 9)) == SetOutcome::kGranted);
  REQUIRE(outcome(t, rd(kA, 10, 19)) == SetOutcome::kGranted);
  REQUIRE(outcome(t, rd(kA, 15, 29)) == SetOutcome::kGranted);
  CHECK(held(t, kA) == std::vector<Held>{R(0, 29)});
  CHECK(t.locks_held(1) == 1);
  SUBCASE("F_GETLK reports the merged range") {
    CHECK(probe(t, wr(kB, 25, 25))->range == Range{0, 29});
  }
  SUBCASE("another owner's adjacent range stays apart") {
    REQUIRE(outcome(t, rd(kB, 30, 39)) == SetOutcome::kGranted);
    CHECK(held(t, kA) == std::vector<Held>{R(0, 29)});
    CHECK(held(t, kB) == std::vector<Held>{R(30, 39)});
  }
}

TEST_CASE("locks/table: upgrade and downgrade of part of a range split it") {
  LockTable t({});
  REQUIRE(outcome(t, rd(kA, 0, 99)) == SetOutcome::kGranted);
  REQUIRE(outcome(t, wr(kA, 40, 59)) == SetOutcome::kGranted);  // upgrade of the middle
  CHECK(held(t, kA) == std::vector<Held>{R(0, 39), W(40, 59), R(60, 99)});
  CHECK(outcome(t, rd(kB, 0, 39)) == SetOutcome::kGranted);
  CHECK(outcome(t, rd(kB, 50, 50)) == SetOutcome::kConflict);
  REQUIRE(outcome(t, rd(kA, 50, 59)) == SetOutcome::kGranted);  // downgrade of a part
  CHECK(held(t, kA) == std::vector<Held>{R(0, 39), W(40, 49), R(50, 99)});
  CHECK(outcome(t, rd(kB, 50, 50)) == SetOutcome::kGranted);
}

TEST_CASE("locks/table: a refused POSIX upgrade keeps the read lock (atomic)") {
  LockTable t({});
  REQUIRE(outcome(t, rd(kA, 0, 9)) == SetOutcome::kGranted);
  REQUIRE(outcome(t, rd(kB, 0, 9)) == SetOutcome::kGranted);
  CHECK(outcome(t, wr(kA, 0, 9)) == SetOutcome::kConflict);
  CHECK(held(t, kA) == std::vector<Held>{R(0, 9)});
}

TEST_CASE("locks/table: POSIX and OFD locks conflict, even of one process") {
  LockTable t({});
  const Owner file = ofd(1, 100);  // same session and number as kA, another owner
  REQUIRE(outcome(t, wr(kA, 0, 9)) == SetOutcome::kGranted);
  SetReply r = set_ok(t, rd(file, 5, 5));
  CHECK(r.outcome == SetOutcome::kConflict);
  CHECK(r.conflict->owner == kA);
  REQUIRE(outcome(t, un(kA, 0, 9)) == SetOutcome::kGranted);
  REQUIRE(outcome(t, wr(file, 5, 5)) == SetOutcome::kGranted);
  CHECK(outcome(t, rd(kB, 0, kEof)) == SetOutcome::kConflict);
}

TEST_CASE("locks/table: flock and fcntl locks do not interact") {
  LockTable t({});
  REQUIRE(outcome(t, wr(kA, 0, kEof)) == SetOutcome::kGranted);
  CHECK(outcome(t, wr(flocker(2, 9), 0, 0)) == SetOutcome::kGranted);
  CHECK(probe(t, rd(flocker(3, 9), 0, 0))->owner == flocker(2, 9));  // flock sees flock
  CHECK(probe(t, rd(ofd(3, 9), 0, 0))->owner == kA);                 // and the record lock by fcntl
  CHECK(outcome(t, rd(flocker(3, 9), 0, 0)) == SetOutcome::kConflict);
  CHECK(outcome(t, un(kA, 0, kEof)) == SetOutcome::kGranted);
  CHECK(outcome(t, rd(flocker(3, 9), 0, 0)) == SetOutcome::kConflict);  // flock still held
}

TEST_CASE("locks/table: flock locks the whole file and converts non-atomically") {
  LockTable t({});
  const Owner f1 = flocker(1, 1);
  const Owner f2 = flocker(2, 2);
  REQUIRE(outcome(t, rd(f1, 50, 60)) == SetOutcome::kGranted);
  CHECK(held(t, f1) == std::vector<Held>{R(0, kEof)});
  REQUIRE(outcome(t, rd(f2, 0, 0)) == SetOutcome::kGranted);
  // LOCK_EX|LOCK_NB while f2 shares: refused, and f1's shared lock is gone (flock(2)).
  CHECK(outcome(t, wr(f1, 0, 0)) == SetOutcome::kConflict);
  CHECK(held(t, f1).empty());
  CHECK(outcome(t, wr(f2, 0, 0)) == SetOutcome::kGranted);  // converts: now alone
  CHECK(held(t, f2) == std::vector<Held>{W(0, kEof)});
}

TEST_CASE(
    "locks/table: F_GETLK reports the first conflicting holder's pid and "
    "range") {
  LockTable t({});
  LockRequest a = wr(kA, 50, 59);
  a.pid = 4242;
  LockRequest b = rd(kB, 10, 19);
  b.pid = 777;
  REQUIRE(outcome(t, a) == SetOutcome::kGranted);
  REQUIRE(outcome(t, b) == SetOutcome::kGranted);
  std::optional<HeldLock> got = probe(t, wr(kC, 0, kEof));
  REQUIRE(got);
  CHECK(got->owner == kB);
  CHECK(got->pid == 777);
  CHECK(got->range == Range{10, 19});
  CHECK(got->type == LockType::kRead);
  got = probe(t, rd(kC, 0, kEof));  // reads do not conflict with B's read lock
  REQUIRE(got);
  CHECK(got->pid == 4242);
  CHECK(got->range == Range{50, 59});
  CHECK(got->type == LockType::kWrite);
  CHECK(!probe(t, wr(kA, 50, 59)));  // an owner never conflicts with itself...
  CHECK(probe(t, wr(kA, 0, 59))->owner == kB);
  CHECK(!probe(t, rd(kC, 20, 49)));  // ...and a gap is free
}

TEST_CASE("locks/table: bad arguments are refused") {
  LockTable t({});
  CHECK(t.set(wr(kA, 10, 9), 0).error().code() == ErrorCode::kInvalidArgument);
  CHECK(t.test(kIno, kA, Range{0, 9}, LockType::kUnlock, 0).error().code() ==
        ErrorCode::kInvalidArgument);
  CHECK(t.cancel_wait(12345).error().code() == ErrorCode::kNotFound);
  CHECK(t.inodes().empty());
}

TEST_CASE("locks/types: struct flock ranges convert both ways") {
  CHECK(*Range::from_flock(0, 0) == Range{0, kEof});
  CHECK(*Range::from_flock(10, 5) == Range{10, 14});
  CHECK(Range{10, 14}.flock_len() == 5);
  CHECK(Range{10, kEof}.flock_len() == 0);
  CHECK(Range{0, uint64_t(INT64_MAX)}.flock_len() == 0);  // the kernel's OFFSET_MAX
  CHECK(Range::from_flock(-1, 5).error().code() == ErrorCode::kInvalidArgument);
  CHECK(Range::from_flock(INT64_MAX, 2).error().code() == ErrorCode::kInvalidArgument);
  CHECK(*Range::from_flock(INT64_MAX, 1) == Range{uint64_t(INT64_MAX), uint64_t(INT64_MAX)});
}

}  // namespace
}  // namespace dfs::locks::test
