// RaftGroup: the public facade and lifecycle. The work happens in RaftGroupRuntime
// (raft_group_loop.cc, raft_group_ops.cc, raft_group_send.cc).
#include "common/raft/raft_group.h"

#include <spdlog/spdlog.h>

#include <random>

#include "common/raft/raft_group_runtime.h"

namespace dfs::raft {
namespace {

uint64_t pick_seed(const RaftGroupOptions& o) {
  if (o.seed != 0) return o.seed;
  return (uint64_t{std::random_device()()} << 32) ^ std::random_device()() ^ o.raft.id;
}

}  // namespace

RaftGroupRuntime::RaftGroupRuntime(asio::any_io_executor executor, asio::thread_pool& pool,
                                   rpc::Messenger& messenger,
                                   std::unique_ptr<RaftLogStorage> storage, StateMachine& sm,
                                   RaftGroupOptions options)
    : executor_(executor),
      pool_(pool),
      messenger_(messenger),
      storage_(std::move(storage)),
      sm_(sm),
      options_(std::move(options)),
      random_(pick_seed(options_)),
      node_(options_.raft, *storage_, random_),
      ticker_(executor),
      idle_(executor) {
  const Snapshot& snap = storage_->snapshot();
  if (snap.meta.index > 0) sm_.restore(snap.meta.index, snap.data);
  counters_.group_id = options_.group_id;
}

void RaftGroupRuntime::start() {
  if (started_ || stopped_) return;
  started_ = true;
  spawn_checked(executor_, tick_loop(shared_from_this()));
  kick();  // entries committed before a restart are applied again
}

void RaftGroupRuntime::shutdown() {
  if (stopped_) return;
  stopped_ = true;
  ticker_.cancel();
  fail_all(Error(ErrorCode::kCancelled, "raft group stopped"));
  if (!running_) idle_.set(true);
}

awaitable<void> RaftGroupRuntime::wait_idle() { co_await idle_.wait(); }

RaftGroup::RaftGroup(asio::any_io_executor executor, asio::thread_pool& pool,
                     rpc::Messenger& messenger, RaftRouter& router,
                     std::unique_ptr<RaftLogStorage> storage, StateMachine& sm,
                     RaftGroupOptions options)
    : rt_(std::make_shared<RaftGroupRuntime>(std::move(executor), pool, messenger,
                                             std::move(storage), sm, std::move(options))),
      router_(router) {
  // The router holds a weak reference: a message for a destroyed group is dropped.
  std::weak_ptr<RaftGroupRuntime> weak = rt_;
  router_.add(rt_->group_id(), [weak](Message m) {
    if (auto rt = weak.lock()) rt->receive(std::move(m));
  });
}

RaftGroup::~RaftGroup() {
  router_.remove(rt_->group_id());
  rt_->shutdown();
}

void RaftGroup::start() { rt_->start(); }

awaitable<void> RaftGroup::stop() {
  auto rt = rt_;  // the group may be destroyed by the caller right after
  rt->shutdown();
  co_await rt->wait_idle();
}

awaitable<Result<Applied>> RaftGroup::propose(std::string command, AppendedFn appended) {
  return rt_->propose(std::move(command), std::move(appended));
}

awaitable<Status> RaftGroup::linearizable_read() { return rt_->read(); }

RaftGroupStatus RaftGroup::status() const { return rt_->status(); }

bool RaftGroup::holds_lease() const { return rt_->holds_lease(); }

void RaftGroup::set_peer_address(NodeId id, std::string address) {
  rt_->set_peer_address(id, std::move(address));
}

uint64_t RaftGroup::id() const { return rt_->group_id(); }

std::optional<NodeId> leader_hint(const Error& error) {
  const std::string& ctx = error.context();
  size_t pos = ctx.find("leader=");
  if (error.code() != ErrorCode::kUnavailable || pos == std::string::npos) return std::nullopt;
  NodeId id = std::strtoull(ctx.c_str() + pos + 7, nullptr, 10);
  if (id == kNoNode) return std::nullopt;
  return id;
}

}  // namespace dfs::raft
