// A tiny synchronous harness for RaftNode unit tests: N nodes over MemStorage, a
// message queue delivered in FIFO order, and per-link cuts. Each node's Ready is
// processed by the book (send early, sync, send, apply, advance). A crash restarts a
// node from what its last sync made durable. Single-threaded.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/raft/mem_storage.h"
#include "common/raft/raft_node.h"

namespace dfs::raft::testing {

struct TestPeer {
  std::unique_ptr<MemStorage> storage;
  MemStorage synced;  // the storage as of its last sync: what a crash leaves
  int syncs = 0;      // Readys with must_sync since the node (re)started
  std::unique_ptr<SplitMixRandom> random;
  std::unique_ptr<RaftNode> node;
  std::vector<Entry> applied;  // committed entries in apply order
  std::optional<Snapshot> restored;
  std::vector<ReadState> reads;
};

class TestCluster {
 public:
  // Nodes 1..n, all voters in the initial configuration; `extra` more nodes
  // (n+1..n+extra) start outside it, waiting to be added.
  explicit TestCluster(int n, RaftConfig base = {}, int extra = 0);

  // Replaces node `id` with one built on `storage` (set up by the test), as synced.
  void reset_node(NodeId id, std::unique_ptr<MemStorage> storage);
  // Power loss and restart: node `id` comes back with what its last sync covered
  // (unsynced writes are lost). Messages already queued to or from it still arrive.
  void crash(NodeId id);

  RaftNode& node(NodeId id) { return *peers_.at(id).node; }
  TestPeer& peer(NodeId id) { return peers_.at(id); }
  std::vector<NodeId> ids() const;

  // Collects every Ready into the queue.
  void flush();
  // Delivers queued messages (and what they cause) until the queue is empty.
  // `observer` runs after each delivery. Returns the number delivered.
  int deliver_all();
  void tick(NodeId id, int n = 1);
  void tick_all(int n = 1);

  // Cut both directions between `a` and everyone else (isolate) or restore.
  void isolate(NodeId a);
  void heal() { cut_.clear(); }
  void cut(NodeId a, NodeId b) { cut_.insert({a, b}); cut_.insert({b, a}); }

  // Ticks and delivers until some node leads (returns it) or `max_rounds` pass.
  NodeId elect(int max_rounds = 200);
  NodeId leader() const;

  std::map<MessageType, int> delivered_by_type;
  std::function<void()> observer;  // called after every delivered message

 private:
  void process_ready(TestPeer& p);

  RaftConfig base_;
  std::map<NodeId, TestPeer> peers_;
  std::deque<Message> queue_;
  std::set<std::pair<NodeId, NodeId>> cut_;
};

}  // namespace dfs::raft::testing
