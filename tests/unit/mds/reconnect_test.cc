// The reconnect phase of a new MDS instance (ReconnectPhase, MdsService): requests wait
// until the client sessions the store remembers have re-opened; sessions still missing
// at the end of the grace are evicted before anyone else is served; a mount that
// re-asserts exclusive caching after others opened their sessions pushes before they
// read. Through MdsService::handle() on RocksDB, restarted as a crash would.
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "mds/service/reconnect_phase.h"
#include "mds/store/keys.h"
#include "tests/unit/mds/mds_harness.h"

namespace dfs::mds::test {
namespace {

// A lookup of `name` in the root by `client` (reads carry no seq, only the client).
proto::LookupRequest lookup_by(MdsHarness& h, const std::string& client, const std::string& name) {
  proto::LookupRequest req;
  *req.mutable_header() = h.header(false);
  req.mutable_header()->mutable_reqid()->set_client(client);
  req.set_parent(kRootIno);
  req.set_name(name);
  return req;
}

void run_until(MdsHarness& h, const PendingReply& p, Duration limit) {
  auto until = Clock::now() + limit;
  while (!p.done() && Clock::now() < until) h.run_for(Duration(10));
}

uint64_t looked_up_ino(const PendingReply& p) {
  REQUIRE(p.done());
  REQUIRE_MESSAGE(p.reply->has_value(), p.reply->error().to_string());
  proto::InodeReply reply;
  REQUIRE(reply.ParseFromString((*p.reply)->body));
  return reply.inode().ino();
}

// The test client closes its session, and the store forgets it (its remembered replies
// go): a restart does not await it.
void close_session_and_forget(MdsHarness& h) {
  proto::SessionCloseRequest close;
  *close.mutable_header() = h.header(false);
  DFS_REQUIRE_OK(h.call<proto::SessionCloseReply>(rpc::kMdsSessionClose, close));
  auto remembered = [&] {
    return h.store().scan(request_prefix(), prefix_end(request_prefix()), 10)->size();
  };
  for (int i = 0; i < 100 && remembered() > 0; ++i) h.run_for(Duration(10));
  REQUIRE(remembered() == 0);
}

// `client` answers the recall of exclusive caching numbered `seq`: it cached nothing since.
Result<proto::CacheAckReply> acknowledge_recall(MdsHarness& h, const std::string& client,
                                                uint64_t seq) {
  proto::CacheAckRequest ack;
  *ack.mutable_header() = h.header(false);
  ack.mutable_header()->mutable_reqid()->set_client(client);
  ack.set_seq(seq);
  return h.call<proto::CacheAckReply>(rpc::kMdsCacheAck, ack);
}

// A lock of `client`'s on bytes [start, end] of `ino`; op 1 sets it without waiting.
proto::LockRequest write_lock(MdsHarness& h, const std::string& client, uint64_t ino,
                              uint64_t start, uint64_t end) {
  proto::LockRequest req;
  *req.mutable_header() = h.header(false);
  req.mutable_header()->mutable_reqid()->set_client(client);
  auto* lock = req.mutable_lock();
  lock->set_ino(ino);
  lock->set_owner(1);
  lock->set_type(1);  // F_WRLCK
  lock->set_start(start);
  lock->set_end(end);
  lock->set_pid(1);
  req.set_op(1);
  return req;
}

MdsOptions with_grace(Duration grace) {
  auto options = MdsHarness::default_options();
  options.reconnect_grace = grace;
  return options;
}

}  // namespace

TEST_CASE("mds/reconnect_phase: bookkeeping") {
  asio::io_context io;
  ReconnectPhase phase(io.get_executor());
  auto now = Clock::now();
  phase.begin({}, now + Duration(1000));
  CHECK_FALSE(phase.running());  // nobody to wait for

  phase.begin({"a", "b"}, now + Duration(1000));
  CHECK(phase.running());
  CHECK_FALSE(phase.due(now));
  bool waited = false;
  asio::co_spawn(
      io,
      [](ReconnectPhase* p, bool* waited) -> awaitable<void> {
        co_await p->wait();
        *waited = true;
      }(&phase, &waited),
      asio::detached);
  io.poll();
  CHECK_FALSE(waited);
  phase.reconnected("a", /*reasserts_locks=*/false);
  CHECK_FALSE(phase.due(now));
  CHECK(phase.due(now + Duration(1000)));  // the deadline: "b" is to be evicted
  CHECK(phase.awaited() == std::set<std::string>{"b"});
  phase.reconnected("b", /*reasserts_locks=*/true);  // back, its locks come next
  CHECK(phase.awaited().empty());
  CHECK_FALSE(phase.due(now));
  phase.reconnected("b", true);  // a second open of a session already back changes nothing
  phase.locks_reasserted("b");
  CHECK(phase.due(now));
  phase.end();
  io.restart();
  io.poll();
  CHECK(waited);
  CHECK_FALSE(phase.running());
}

TEST_CASE("mds/reconnect: after a restart, requests wait until the sessions of before are back") {
  auto options = with_grace(Duration(60000));
  MdsHarness h(Backend::kRocks, options);
  auto dir = h.mkdir(kRootIno, "d");  // the store now remembers the test client
  REQUIRE(dir);
  h.restart(options, /*reconnect=*/false);

  DFS_REQUIRE_OK(h.open_session("client.other"));  // a session the old instance did not have
  PendingReply lookup;
  start_request(h, rpc::kMdsLookup, lookup_by(h, "client.other", "d"), &lookup);
  h.run_for(Duration(200));
  CHECK_FALSE(lookup.done());  // the test client may own "d" and defer changes in it

  DFS_REQUIRE_OK(h.open_session(h.client()));  // it is back: the phase is over
  run_until(h, lookup, Duration(2000));
  CHECK(looked_up_ino(lookup) == dir->ino());
  // And the test client itself is served as before.
  CHECK(h.lookup(kRootIno, "d")->ino() == dir->ino());
}

TEST_CASE("mds/reconnect: a mount that only read is awaited too (its session is recorded)") {
  auto options = with_grace(Duration(60000));
  MdsHarness h(Backend::kRocks, options);
  REQUIRE(h.mkdir(kRootIno, "d"));
  // The one-shot tool that made the change closes its session: nothing of it is left.
  close_session_and_forget(h);
  auto remembered = [&] {
    return h.store().scan(request_prefix(), prefix_end(request_prefix()), 10)->size();
  };
  // A mount that caches alone and has only read so far: its session is recorded.
  auto reader = h.open_session("client.reader", /*wants_cache=*/true, false, /*renews=*/true);
  REQUIRE(reader);
  CHECK(reader->exclusive());
  CHECK(remembered() == 1);
  h.restart(options, /*reconnect=*/false);

  // Another mount comes first: its read waits for the reader, which may still answer
  // from what it cached alone.
  DFS_REQUIRE_OK(h.open_session("client.other", /*wants_cache=*/true, false, true));
  PendingReply lookup;
  start_request(h, rpc::kMdsLookup, lookup_by(h, "client.other", "d"), &lookup);
  h.run_for(Duration(200));
  CHECK_FALSE(lookup.done());
  // The reader re-asserts the right: it is recalled, and the read waits for its answer.
  auto back = h.open_session("client.reader", true, /*holds_exclusive=*/true, true);
  REQUIRE(back);
  CHECK_FALSE(back->exclusive());
  h.run_for(Duration(200));
  CHECK_FALSE(lookup.done());
  DFS_REQUIRE_OK(acknowledge_recall(h, "client.reader", back->cache_seq()));
  run_until(h, lookup, Duration(2000));
  CHECK(looked_up_ino(lookup) > 0);
}

TEST_CASE("mds/reconnect: a session not back by the end of the grace is evicted first") {
  auto options = with_grace(Duration(300));
  // The phase lasts at least the longest lease granted before (3/4 of the timeout).
  options.session_timeout = Duration(400);
  MdsHarness h(Backend::kRocks, options);
  REQUIRE(h.mkdir(kRootIno, "d"));
  h.restart(options, /*reconnect=*/false);

  DFS_REQUIRE_OK(h.open_session("client.other"));
  PendingReply lookup;
  start_request(h, rpc::kMdsLookup, lookup_by(h, "client.other", "d"), &lookup);
  h.run_for(Duration(100));
  CHECK_FALSE(lookup.done());
  run_until(h, lookup, Duration(5000));  // the lease loop ends the phase within a second
  CHECK(looked_up_ino(lookup) > 0);
  // What the missing client deferred can never land now.
  DFS_REQUIRE_CODE(h.create(kRootIno, "late"), ErrorCode::kFenced);
  DFS_REQUIRE_CODE(h.open_session(h.client()), ErrorCode::kFenced);
}

TEST_CASE("mds/reconnect: exclusive caching re-asserted after others opened is pushed first") {
  auto options = with_grace(Duration(60000));
  MdsHarness h(Backend::kRocks, options);
  auto alone = h.open_session(h.client(), /*wants_cache=*/true);
  REQUIRE(alone);
  CHECK(alone->exclusive());
  REQUIRE(h.mkdir(kRootIno, "d"));
  h.restart(options, /*reconnect=*/false);

  // Another mount reaches the new instance first: in the grace it is not granted the
  // right, and its requests wait for the holder of before.
  auto other = h.open_session("client.other", /*wants_cache=*/true);
  REQUIRE(other);
  CHECK_FALSE(other->exclusive());
  PendingReply lookup;
  start_request(h, rpc::kMdsLookup, lookup_by(h, "client.other", "f"), &lookup);
  h.run_for(Duration(100));
  CHECK_FALSE(lookup.done());

  // The holder comes back claiming the right: it is recalled at once (the phase is over,
  // everyone is back), and the other mount still waits for it to push.
  auto back = h.open_session(h.client(), /*wants_cache=*/true, /*holds_exclusive=*/true);
  REQUIRE(back);
  CHECK_FALSE(back->exclusive());
  CHECK(h.service().sessions().find(h.client()) != nullptr);
  h.run_for(Duration(200));
  CHECK_FALSE(lookup.done());

  // Its pushes are served meanwhile (a deferred create), then it acknowledges.
  auto pushed = h.create(kRootIno, "f");
  REQUIRE(pushed);
  CHECK_FALSE(lookup.done());
  DFS_REQUIRE_OK(acknowledge_recall(h, h.client(), back->cache_seq()));
  run_until(h, lookup, Duration(2000));
  CHECK(looked_up_ino(lookup) == pushed->ino());  // the read sees what was deferred
}

TEST_CASE("mds/reconnect: the phase awaits the locks of before, and its end serves new ones") {
  auto options = with_grace(Duration(60000));
  MdsHarness h(Backend::kRocks, options);
  auto file = h.create(kRootIno, "f");
  REQUIRE(file);
  h.restart(options, /*reconnect=*/false);

  // The mount of before is back and says it held locks: the phase goes on until it has
  // re-asserted them, and no new lock is granted meanwhile.
  proto::SessionRequest hello;
  hello.set_client(h.client());
  hello.set_renews(true);
  hello.set_reasserts_locks(true);
  DFS_REQUIRE_OK(h.call<proto::SessionReply>(rpc::kMdsSession, hello));
  DFS_REQUIRE_OK(h.open_session("client.other"));
  PendingReply lookup;
  start_request(h, rpc::kMdsLookup, lookup_by(h, "client.other", "f"), &lookup);
  h.run_for(Duration(200));
  CHECK_FALSE(lookup.done());
  auto early = h.call<proto::LockReply>(rpc::kMdsLock, write_lock(h, "client.other", file->ino(),
                                                                  100, 199));
  DFS_REQUIRE_CODE(early, ErrorCode::kUnavailable);

  proto::LockReassertRequest reassert;
  *reassert.mutable_header() = h.header(false);
  *reassert.add_locks() = write_lock(h, h.client(), file->ino(), 0, 99).lock();
  auto kept = h.call<proto::LockReassertReply>(rpc::kMdsLockReassert, reassert);
  REQUIRE(kept);
  REQUIRE(kept->codes_size() == 1);
  CHECK(kept->codes(0) == 0);

  // Everyone is back with their locks: the phase is over long before its 60 s, reads
  // go on, and lock requests are decided against what was re-asserted.
  run_until(h, lookup, Duration(2000));
  CHECK(looked_up_ino(lookup) == file->ino());
  auto beside = h.call<proto::LockReply>(rpc::kMdsLock, write_lock(h, "client.other",
                                                                   file->ino(), 100, 199));
  REQUIRE(beside);
  CHECK(beside->outcome() == 0);  // granted
  auto over = h.call<proto::LockReply>(rpc::kMdsLock, write_lock(h, "client.other",
                                                                 file->ino(), 50, 60));
  REQUIRE(over);
  CHECK(over->outcome() == 1);  // the re-asserted lock is in the way
}

TEST_CASE("mds/reconnect: with no session to await, locks are served at once") {
  auto options = with_grace(Duration(60000));
  MdsHarness h(Backend::kRocks, options);
  auto file = h.create(kRootIno, "f");
  REQUIRE(file);
  // The tool that made it closed its session: nothing of it is left, and a restart
  // awaits nobody.
  close_session_and_forget(h);
  h.restart(options, /*reconnect=*/false);
  auto lock = h.call<proto::LockReply>(rpc::kMdsLock, write_lock(h, "client.other", file->ino(),
                                                                 0, 9));
  REQUIRE(lock);
  CHECK(lock->outcome() == 0);
}

}  // namespace dfs::mds::test
