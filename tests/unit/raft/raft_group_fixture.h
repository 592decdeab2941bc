// A RaftGroup "daemon" for tests: its own io_context thread, blocking pool, RpcServer,
// RaftRouter, Messenger and RocksDB in a directory, and a small KV state machine.
// Destroying a TestNode without stop() is a crash: nothing is flushed or said to peers.
// Tests talk to a node from their own thread through run(), which runs a coroutine on
// the node's executor and waits for it.
#pragma once

#include <doctest/doctest.h>

#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "common/raft/raft_group.h"
#include "common/raft/rocks_storage.h"
#include "tests/unit/raft/rocks_fixture.h"

namespace dfs::raft::testing {

// Commands "key=value"; apply returns the previous value. Snapshots are "k=v\n" lines.
class KvStateMachine final : public StateMachine {
 public:
  std::string apply(Index index, std::string_view command) override;
  std::string snapshot(Index applied) override;
  void restore(Index index, std::string_view image) override;

  std::map<std::string, std::string> kv;
  Index applied = 0;
  Index max_restored = 0;  // highest snapshot index restored from
};

class TestNode {
 public:
  // Binds `address` ("127.0.0.1:0" picks a port); the group is created by start().
  TestNode(NodeId id, std::string dir, std::string address);
  ~TestNode();  // a crash: stops the threads, then tears down without a clean stop

  // Opens the RocksDB log (restoring what it holds), creates the group with `peers`
  // (every other node's address) and starts the I/O thread. `initial` is the voter set
  // of a fresh log (what is stored wins on restart).
  void start(std::map<NodeId, std::string> peers, RaftGroupOptions base = {},
             ConfState initial = ConfState{{1, 2, 3}});

  // Runs `task` on the node's executor and waits up to 30 s for its result.
  template <class T>
  T run(awaitable<T> task) {
    auto future = asio::co_spawn(io_, std::move(task), asio::use_future);
    REQUIRE(future.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
    return future.get();
  }
  template <class F>
  auto on_io(F fn) {
    return run([](F f) -> awaitable<decltype(f())> { co_return f(); }(std::move(fn)));
  }

  RaftGroupStatus status() { return on_io([this] { return group_->status(); }); }
  RaftGroup& group() { return *group_; }
  KvStateMachine& sm() { return sm_; }  // touch only through on_io()
  void destroy_group() { group_.reset(); }  // on the executor: a group dropped while busy
  asio::io_context& io() { return io_; }
  const std::string& address() const { return address_; }
  NodeId id() const { return id_; }

 private:
  NodeId id_;
  std::string dir_;
  asio::io_context io_;  // first: destroyed last, after everything that uses it
  std::unique_ptr<rocksdb::DB> db_;
  std::unique_ptr<asio::thread_pool> pool_;
  std::unique_ptr<rpc::RpcServer> server_;
  std::unique_ptr<RaftRouter> router_;
  std::unique_ptr<rpc::Messenger> messenger_;
  KvStateMachine sm_;
  std::unique_ptr<RaftGroup> group_;
  std::string address_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::thread thread_;
};

}  // namespace dfs::raft::testing
