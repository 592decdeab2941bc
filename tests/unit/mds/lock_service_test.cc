// LockService: the MDS's lock requests over the cluster-wide lock table, on an
// io_context: answers, a waiting request granted by an unlock, cancelled by its client
// or by its session ending, asked again after a step-down, and re-assertion after a
// takeover.
#include <doctest/doctest.h>

#include <optional>

#include "common/rpc/asio.h"
#include "mds/service/lock_service.h"

namespace dfs::mds::test {
namespace {

constexpr uint32_t kRead = 0, kWrite = 1, kUnlock = 2;
constexpr uint32_t kTest = 0, kSet = 1, kSetWait = 2;
constexpr uint32_t kGranted = 0, kConflict = 1, kCancelled = 4;

proto::LockRequest request(uint64_t owner, uint32_t type, uint32_t op, uint64_t wait_id = 0) {
  proto::LockRequest r;
  auto* lock = r.mutable_lock();
  lock->set_ino(7);
  lock->set_kind(0);
  lock->set_owner(owner);
  lock->set_type(type);
  lock->set_start(0);
  lock->set_end(99);
  lock->set_pid(static_cast<int32_t>(owner));
  r.set_op(op);
  r.set_wait_id(wait_id);
  return r;
}

struct Fixture {
  asio::io_context io;
  LockService locks{io.get_executor()};

  // Starts a request; its answer lands in *out once it comes.
  void start(locks::SessionId s, proto::LockRequest r,
             std::optional<Result<proto::LockReply>>* out) {
    asio::co_spawn(
        io,
        [](LockService* l, locks::SessionId s, proto::LockRequest r,
           std::optional<Result<proto::LockReply>>* out) -> awaitable<void> {
          *out = co_await l->lock(s, r);
        }(&locks, s, std::move(r), out),
        asio::detached);
    io.restart();
    io.poll();
  }
  Result<proto::LockReply> call(locks::SessionId s, proto::LockRequest r) {
    std::optional<Result<proto::LockReply>> out;
    start(s, std::move(r), &out);
    REQUIRE(out.has_value());
    return std::move(*out);
  }
};

}  // namespace

TEST_CASE("mds/locks: a conflicting lock of another session is refused and reported") {
  Fixture f;
  f.locks.begin_reassert(Duration(0));  // no grace: a fresh cluster
  auto first = f.call(1, request(10, kWrite, kSet));
  REQUIRE(first);
  CHECK(first->outcome() == kGranted);
  auto second = f.call(2, request(20, kRead, kSet));
  REQUIRE(second);
  CHECK(second->outcome() == kConflict);
  auto tested = f.call(2, request(20, kWrite, kTest));
  REQUIRE(tested);
  REQUIRE(tested->has_conflict());
  CHECK(tested->conflict().owner() == 10);
  CHECK(tested->conflict().type() == kWrite);
  CHECK(tested->conflict().pid() == 10);
}

TEST_CASE("mds/locks: a waiting request is granted by the unlock, cancelled by its client") {
  Fixture f;
  f.locks.begin_reassert(Duration(0));
  REQUIRE(f.call(1, request(10, kWrite, kSet))->outcome() == kGranted);
  std::optional<Result<proto::LockReply>> waiting;
  f.start(2, request(20, kWrite, kSetWait, 5), &waiting);
  CHECK_FALSE(waiting.has_value());
  CHECK(f.locks.waiting() == 1);
  REQUIRE(f.call(1, request(10, kUnlock, kSet))->outcome() == kGranted);
  f.io.restart();
  f.io.poll();
  REQUIRE(waiting.has_value());
  REQUIRE(*waiting);
  CHECK((*waiting)->outcome() == kGranted);

  // Session 1 waits behind session 2 now; its client cancels.
  std::optional<Result<proto::LockReply>> cancelled;
  f.start(1, request(10, kRead, kSetWait, 6), &cancelled);
  CHECK_FALSE(cancelled.has_value());
  f.locks.cancel(1, 6);
  f.io.restart();
  f.io.poll();
  REQUIRE(cancelled.has_value());
  REQUIRE(*cancelled);
  CHECK((*cancelled)->outcome() == kCancelled);
  CHECK(f.locks.waiting() == 0);
}

TEST_CASE("mds/locks: an ending session frees its locks for the next waiter") {
  Fixture f;
  f.locks.begin_reassert(Duration(0));
  REQUIRE(f.call(1, request(10, kWrite, kSet))->outcome() == kGranted);
  std::optional<Result<proto::LockReply>> waiting;
  f.start(2, request(20, kWrite, kSetWait, 1), &waiting);
  f.locks.end_session(1);  // evicted, or its client was killed and the session expired
  f.io.restart();
  f.io.poll();
  REQUIRE(waiting.has_value());
  CHECK((*waiting)->outcome() == kGranted);
}

TEST_CASE("mds/locks: a step-down ends waits with kUnavailable and a resend joins a wait") {
  Fixture f;
  f.locks.begin_reassert(Duration(0));
  REQUIRE(f.call(1, request(10, kWrite, kSet))->outcome() == kGranted);
  std::optional<Result<proto::LockReply>> first, resent;
  f.start(2, request(20, kWrite, kSetWait, 3), &first);
  f.start(2, request(20, kWrite, kSetWait, 3), &resent);  // the same wait, asked again
  CHECK(f.locks.waiting() == 1);
  f.locks.stop_serving();
  f.io.restart();
  f.io.poll();
  REQUIRE(first.has_value());
  REQUIRE(resent.has_value());
  REQUIRE_FALSE(*first);
  CHECK(first->error().code() == ErrorCode::kUnavailable);
  REQUIRE_FALSE(*resent);
  CHECK(resent->error().code() == ErrorCode::kUnavailable);
}

TEST_CASE("mds/locks: after a takeover clients re-assert first, conflicting claims lose") {
  Fixture f;
  f.locks.begin_reassert(Duration(60000));
  // Until the grace ends, new locks wait for the re-assertions (the client retries).
  auto early = f.call(3, request(30, kWrite, kSet));
  REQUIRE_FALSE(early);
  CHECK(early.error().code() == ErrorCode::kUnavailable);
  proto::LockReassertRequest mine;
  *mine.add_locks() = request(10, kWrite, kSet).lock();
  auto kept = f.locks.reassert(1, mine);
  REQUIRE(kept);
  REQUIRE(kept->codes_size() == 1);
  CHECK(kept->codes(0) == 0);
  proto::LockReassertRequest theirs;
  *theirs.add_locks() = request(20, kRead, kSet).lock();
  auto refused = f.locks.reassert(2, theirs);
  REQUIRE(refused);
  CHECK(refused->codes(0) == static_cast<uint32_t>(ErrorCode::kBusy));
  // The table is incomplete until the grace ends: a test is asked again later too.
  auto tested = f.call(2, request(20, kWrite, kTest));
  REQUIRE_FALSE(tested);
  CHECK(tested.error().code() == ErrorCode::kUnavailable);
}

}  // namespace dfs::mds::test
