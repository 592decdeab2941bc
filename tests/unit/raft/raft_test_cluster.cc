#include "tests/unit/raft/raft_test_cluster.h"

#include <doctest/doctest.h>

namespace dfs::raft::testing {

TestCluster::TestCluster(int n, RaftConfig base, int extra) : base_(base) {
  ConfState conf;
  for (int i = 1; i <= n; ++i) conf.voters.push_back(static_cast<NodeId>(i));
  for (int i = 1; i <= n + extra; ++i) {
    reset_node(i, std::make_unique<MemStorage>(i <= n ? conf : ConfState{}));
  }
}

void TestCluster::crash(NodeId id) {
  reset_node(id, std::make_unique<MemStorage>(peers_.at(id).synced));
}

void TestCluster::reset_node(NodeId id, std::unique_ptr<MemStorage> storage) {
  TestPeer p;
  p.synced = *storage;
  p.storage = std::move(storage);
  p.random = std::make_unique<SplitMixRandom>(id * 7919);
  RaftConfig cfg = base_;
  cfg.id = id;
  p.node = std::make_unique<RaftNode>(cfg, *p.storage, *p.random);
  peers_[id] = std::move(p);
}

std::vector<NodeId> TestCluster::ids() const {
  std::vector<NodeId> out;
  for (const auto& [id, p] : peers_) out.push_back(id);
  return out;
}

void TestCluster::process_ready(TestPeer& p) {
  while (p.node->has_ready()) {
    Ready rd = p.node->ready();
    for (Message& m : rd.early_messages) queue_.push_back(std::move(m));
    if (rd.must_sync) {
      REQUIRE(p.storage->sync().has_value());
      p.synced = *p.storage;
      p.syncs += 1;
    }
    for (Message& m : rd.messages) queue_.push_back(std::move(m));
    if (rd.snapshot) {
      p.restored = rd.snapshot;
      p.applied.clear();
    }
    for (const Entry& e : rd.committed_entries) p.applied.push_back(e);
    for (const ReadState& r : rd.read_states) p.reads.push_back(r);
    p.node->advance(rd);
  }
}

void TestCluster::flush() {
  for (auto& [id, p] : peers_) process_ready(p);
}

int TestCluster::deliver_all() {
  flush();
  int delivered = 0;
  while (!queue_.empty()) {
    Message m = std::move(queue_.front());
    queue_.pop_front();
    if (cut_.count({m.from, m.to}) || !peers_.count(m.to)) continue;
    delivered_by_type[m.type] += 1;
    TestPeer& p = peers_.at(m.to);
    p.node->step(m);
    process_ready(p);
    ++delivered;
    if (observer) observer();
  }
  return delivered;
}

void TestCluster::tick(NodeId id, int n) {
  for (int i = 0; i < n; ++i) {
    peers_.at(id).node->tick();
    deliver_all();
  }
}

void TestCluster::tick_all(int n) {
  for (int i = 0; i < n; ++i) {
    for (auto& [id, p] : peers_) p.node->tick();
    deliver_all();
  }
}

void TestCluster::isolate(NodeId a) {
  for (auto& [id, p] : peers_) {
    if (id != a) cut(a, id);
  }
}

NodeId TestCluster::leader() const {
  NodeId found = kNoNode;
  Term best = 0;
  for (const auto& [id, p] : peers_) {
    if (p.node->role() == Role::kLeader && p.node->term() >= best) {
      found = id;
      best = p.node->term();
    }
  }
  return found;
}

NodeId TestCluster::elect(int max_rounds) {
  for (int i = 0; i < max_rounds; ++i) {
    if (NodeId l = leader(); l != kNoNode) {
      deliver_all();
      return l;
    }
    tick_all();
  }
  return leader();
}

}  // namespace dfs::raft::testing
