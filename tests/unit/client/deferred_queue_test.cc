// DeferredQueue: the order deferred changes go out in, their states, what comes back
// from a batch that did not reach the MDS, and an eviction's failures; then the same
// queue against an in-process MDS (MdsHarness): a batch of its ops applies in order, a
// refused op fails without holding up the ones after it, and a batch resent after it
// was lost on the way back is applied once.
#include "client-fuse/libdfs/deferred_queue.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "common/rpc/methods.h"
#include "tests/unit/mds/mds_harness.h"

namespace dfs::client {
namespace {

// Ops whose outcomes land in `outcomes` as "name:ok" or "name:error".
struct Recorder {
  std::vector<std::string> outcomes;
  DeferredOp op(const std::string& name, uint32_t method = 1, std::string body = "") {
    return DeferredOp{method, body.empty() ? name : std::move(body),
                      [this, name](Result<rpc::Frame> r) {
                        outcomes.push_back(name + (r ? ":ok" : ":error"));
                      }};
  }
};

std::vector<std::string> bodies(const std::vector<DeferredOp>& ops) {
  std::vector<std::string> out;
  for (const auto& op : ops) out.push_back(op.body);
  return out;
}

using Names = std::vector<std::string>;

TEST_CASE("client/deferred_queue: ops go out in the order they were predicted, the late ones last") {
  asio::io_context io;
  DeferredQueue q(io.get_executor());
  Recorder r;
  std::vector<DeferredOp> late;
  q.set_late_source([&] { return std::move(late); });
  CHECK_FALSE(q.pending());
  q.predict(r.op("mkdir a"));
  q.predict(r.op("create a/f"));
  late.push_back(r.op("chmod a/f"));
  CHECK(q.predicted() == 2);
  CHECK(q.pending());
  auto sent = q.take();
  CHECK(bodies(sent) == Names{"mkdir a", "create a/f", "chmod a/f"});
  for (const auto& op : sent) CHECK(op.state == DeferredState::kSent);
  CHECK(q.predicted() == 0);
  CHECK(q.take().empty());  // the late source was sealed by the take

  q.finish(sent[0], rpc::Frame{});
  q.finish(sent[1], Error(ErrorCode::kAlreadyExists, "taken"));
  CHECK(sent[0].state == DeferredState::kSettled);
  CHECK(sent[1].state == DeferredState::kFailed);
  CHECK(r.outcomes == Names{"mkdir a:ok", "create a/f:error"});
  CHECK(q.settled() == 1);
  CHECK(q.failed() == 1);
  CHECK(sent[0].done == nullptr);  // `done` runs once
}

TEST_CASE("client/deferred_queue: a batch that did not arrive goes first, in order, next time") {
  asio::io_context io;
  DeferredQueue q(io.get_executor());
  Recorder r;
  q.predict(r.op("1"));
  q.predict(r.op("2"));
  auto first = q.take();
  q.predict(r.op("3"));  // predicted while the batch was out
  q.returned(std::move(first));
  CHECK(q.returned_count() == 2);
  auto second = q.take();  // 1 and 2 do not reach the MDS either
  CHECK(bodies(second) == Names{"1", "2", "3"});
  q.predict(r.op("4"));
  std::vector<DeferredOp> tail(std::make_move_iterator(second.begin() + 1),
                               std::make_move_iterator(second.end()));
  q.returned(std::move(tail));  // 1 was answered; 2 and 3 come back
  q.predict(r.op("5"));
  CHECK(q.returned_count() == 2);
  auto third = q.take();
  CHECK(bodies(third) == Names{"2", "3", "4", "5"});
  for (const auto& op : third) CHECK(op.state == DeferredState::kSent);
  CHECK(q.returned_count() == 0);
  CHECK(r.outcomes.empty());  // nothing was dropped for the MDS being away
}

TEST_CASE("client/deferred_queue: an eviction fails everything predicted, the late ones too") {
  asio::io_context io;
  DeferredQueue q(io.get_executor());
  Recorder r;
  std::vector<DeferredOp> late;
  q.set_late_source([&] { return std::move(late); });
  q.predict(r.op("a"));
  auto out = q.take();
  q.returned(std::move(out));
  q.predict(r.op("b"));
  late.push_back(r.op("c"));
  CHECK(q.fail_all(Error(ErrorCode::kFenced, "evicted")) == 3);
  CHECK(r.outcomes == Names{"a:error", "b:error", "c:error"});
  CHECK(q.failed() == 3);
  CHECK_FALSE(q.pending());
}

TEST_CASE("client/deferred_queue: batches_answered() waits for every batch in flight") {
  asio::io_context io;
  DeferredQueue q(io.get_executor());
  q.batch_sent();
  q.batch_sent();
  bool done = false;
  asio::co_spawn(
      io,
      [](DeferredQueue* q, bool* done) -> awaitable<void> {
        co_await q->batches_answered();
        *done = true;
      }(&q, &done),
      asio::detached);
  io.poll();
  CHECK_FALSE(done);
  CHECK(q.pending());
  q.batch_answered();
  io.restart();
  io.poll();
  CHECK_FALSE(done);
  q.batch_answered();
  io.restart();
  io.poll();
  CHECK(done);
  CHECK_FALSE(q.pending());
}

// ---- against an in-process MDS ----

// Sends `ops` as one kMdsBatch through the harness and finishes each with its result.
void send_batch(mds::test::MdsHarness& h, DeferredQueue& q, std::vector<DeferredOp>& ops) {
  proto::BatchRequest batch;
  for (const auto& op : ops) {
    auto* item = batch.add_items();
    item->set_method(op.method);
    item->set_body(op.body);
  }
  q.batch_sent();
  auto reply = h.call<proto::BatchReply>(rpc::kMdsBatch, batch);
  q.batch_answered();
  REQUIRE(reply);
  REQUIRE(reply->results_size() == static_cast<int>(ops.size()));
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto& result = reply->results(static_cast<int>(i));
    if (result.code() != 0) {
      q.finish(ops[i], Error(static_cast<ErrorCode>(result.code()), result.message()));
    } else {
      rpc::Frame frame;
      frame.body = result.body();
      q.finish(ops[i], std::move(frame));
    }
  }
}

DeferredOp mknod_op(mds::test::MdsHarness& h, Recorder& r, const std::string& name,
                    uint64_t parent, uint32_t mode) {
  proto::MknodRequest req;
  *req.mutable_header() = h.header();  // a fresh request id
  req.set_parent(parent);
  req.set_name(name);
  req.set_mode(mode);
  req.set_exclusive(true);
  return r.op(name, rpc::kMdsMknod, req.SerializeAsString());
}

TEST_CASE("client/deferred_queue: against an in-process MDS, in order, refusals apart, once") {
  mds::test::MdsHarness h;
  DeferredQueue q(h.io().get_executor());
  Recorder r;
  const uint64_t root = 1;
  q.predict(mknod_op(h, r, "d", root, S_IFDIR | 0755));
  q.predict(mknod_op(h, r, "d", root, S_IFREG | 0644));  // refused: the name is taken
  q.predict(mknod_op(h, r, "f", root, S_IFREG | 0644));
  auto ops = q.take();
  send_batch(h, q, ops);
  CHECK(r.outcomes == Names{"d:ok", "d:error", "f:ok"});
  CHECK(ops[1].state == DeferredState::kFailed);
  CHECK(h.lookup(root, "f"));

  // A batch the MDS applied but whose answer was lost is sent again with the same
  // request ids: the MDS answers it from what it applied, without applying it twice.
  auto dir = h.lookup(root, "d");
  REQUIRE(dir);
  q.predict(mknod_op(h, r, "g", dir->ino(), S_IFREG | 0644));
  auto lost = q.take();
  proto::BatchRequest batch;
  batch.add_items()->set_method(lost[0].method);
  batch.mutable_items(0)->set_body(lost[0].body);
  REQUIRE(h.call<proto::BatchReply>(rpc::kMdsBatch, batch));  // the answer goes nowhere
  q.returned(std::move(lost));
  auto again = q.take();
  send_batch(h, q, again);
  CHECK(r.outcomes.back() == "g:ok");  // not "exists": the resend was recognized
  CHECK(h.list(dir->ino()) == Names{"g"});
}

}  // namespace
}  // namespace dfs::client
