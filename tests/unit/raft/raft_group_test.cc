// RaftGroup end to end: three nodes in one process, each with its own I/O thread,
// RocksDB and RPC server on 127.0.0.1, so a "crash" tears one down completely.
// Checks election, group commit under 1,000 concurrent proposals, not-leader hints,
// failover after the leader dies, linearizable reads, and a restarted node catching
// up from its own log plus a snapshot of the compacted leader log; a single-voter
// group; and, on request only, measures serial proposal latency (DFS_RAFT_LATENCY).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "tests/unit/raft/raft_group_fixture.h"

namespace dfs::raft::testing {
namespace {

using namespace std::chrono_literals;
using Ms = std::chrono::milliseconds;

struct Cluster {
  TempDir dir;
  std::map<NodeId, std::unique_ptr<TestNode>> nodes;
  std::map<NodeId, std::string> addresses;
  RaftGroupOptions options;

  ConfState voters;

  // Nodes 1..n, all voters.
  explicit Cluster(int n = 3) {
    options.snapshot_every = 200;  // compacts several times during the test
    for (NodeId id = 1; id <= static_cast<NodeId>(n); ++id) {
      nodes[id] = std::make_unique<TestNode>(id, node_dir(id), "127.0.0.1:0");
      addresses[id] = nodes[id]->address();
      voters.voters.push_back(id);
    }
    for (auto& [id, node] : nodes) node->start(peers_of(id), options, voters);
  }

  std::string node_dir(NodeId id) const { return dir.path() + "/node" + std::to_string(id); }
  std::map<NodeId, std::string> peers_of(NodeId id) const {
    auto peers = addresses;
    peers.erase(id);
    return peers;
  }

  void crash(NodeId id) { nodes.erase(id); }
  void restart(NodeId id) {
    nodes[id] = std::make_unique<TestNode>(id, node_dir(id), addresses[id]);
    nodes[id]->start(peers_of(id), options, voters);
  }

  // Waits until the live nodes agree on one leader; returns it.
  NodeId wait_leader(Ms timeout = 8000ms) {
    auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      std::map<NodeId, int> votes;
      NodeId leader = kNoNode;
      for (auto& [id, node] : nodes) {
        RaftGroupStatus s = node->status();
        if (s.role == Role::kLeader) leader = id;
        votes[s.leader] += 1;
      }
      if (leader != kNoNode && votes[leader] == static_cast<int>(nodes.size())) return leader;
      std::this_thread::sleep_for(20ms);
    }
    FAIL("no leader agreed on in time");
    return kNoNode;
  }

  // Proposes "prefix<i>=v<i>" for i in [0, n) concurrently on `id`; returns the results.
  std::vector<Result<Applied>> propose_many(NodeId id, const std::string& prefix, int n) {
    RaftGroup& g = nodes[id]->group();
    return nodes[id]->run([](RaftGroup& g, std::string prefix,
                             int n) -> awaitable<std::vector<Result<Applied>>> {
      std::vector<awaitable<Result<Applied>>> tasks;
      for (int i = 0; i < n; ++i) {
        tasks.push_back(g.propose(prefix + std::to_string(i) + "=v" + std::to_string(i)));
      }
      co_return co_await gather(std::move(tasks));
    }(g, prefix, n));
  }
};

Ms since(Clock::time_point t) { return std::chrono::duration_cast<Ms>(Clock::now() - t); }

// Proposes `n` commands on `g` one after the other, each once the previous one was
// applied; returns each one's latency in microseconds, measured on the group's executor.
awaitable<std::vector<int64_t>> propose_serially(RaftGroup& g, int n) {
  std::vector<int64_t> micros;
  for (int i = 0; i < n; ++i) {
    auto start = Clock::now();
    Result<Applied> r = co_await g.propose("lat" + std::to_string(i) + "=x");
    if (!r) co_return std::vector<int64_t>{};  // the caller checks the count
    micros.push_back(
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count());
  }
  co_return micros;
}

// "median 1234 us, p90 ..." of `micros` (sorted in place).
std::string describe_latency(std::vector<int64_t>& micros) {
  std::sort(micros.begin(), micros.end());
  auto at = [&](double q) { return micros[static_cast<size_t>(q * (micros.size() - 1))]; };
  return "median " + std::to_string(at(0.5)) + " us, p10 " + std::to_string(at(0.1)) +
         " us, p90 " + std::to_string(at(0.9)) + " us, p99 " + std::to_string(at(0.99)) + " us";
}

}  // namespace

TEST_CASE("raft/group: elect, group-commit, fail over, read, restart and catch up") {
  Cluster c;
  auto t0 = Clock::now();
  NodeId leader = c.wait_leader();
  MESSAGE("first leader ", leader, " after ", since(t0).count(), " ms");

  // 1,000 concurrent proposals: all applied, each at its own index, sharing syncs.
  uint64_t syncs_before = c.nodes[leader]->status().syncs;
  auto t1 = Clock::now();
  auto results = c.propose_many(leader, "k", 1000);
  Ms took = since(t1);
  std::set<Index> indexes;
  for (auto& r : results) {
    REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
    indexes.insert(r->index);
  }
  CHECK(indexes.size() == 1000);
  uint64_t syncs = c.nodes[leader]->status().syncs - syncs_before;
  MESSAGE("1000 proposals in ", took.count(), " ms with ", syncs, " leader syncs");
  CHECK(syncs < 1000);
  CHECK(syncs < 200);  // many entries per fsync, not one each

  // Overwriting returns the state machine's result (the previous value).
  auto again = c.nodes[leader]->run(c.nodes[leader]->group().propose("k7=new"));
  REQUIRE(again.has_value());
  CHECK(again->result == "v7");

  // A follower refuses at once and names the leader.
  NodeId follower = leader % 3 + 1;
  auto refused = c.nodes[follower]->run(c.nodes[follower]->group().propose("x=1"));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code() == ErrorCode::kUnavailable);
  CHECK(leader_hint(refused.error()) == leader);
  auto refused_read = c.nodes[follower]->run(c.nodes[follower]->group().linearizable_read());
  REQUIRE_FALSE(refused_read.has_value());
  CHECK(leader_hint(refused_read.error()) == leader);

  // The leader reports each follower's match index.
  RaftGroupStatus ls = c.nodes[leader]->status();
  CHECK(ls.peers.size() == 2);
  for (auto& [id, p] : ls.peers) CHECK(p.match <= ls.last_index);

  // The leader crashes; the others elect a new one and carry on.
  NodeId crashed = leader;
  Index crashed_last = ls.last_index;
  c.crash(crashed);
  auto t2 = Clock::now();
  leader = c.wait_leader();
  Ms failover = since(t2);
  MESSAGE("new leader ", leader, " ", failover.count(), " ms after the crash");
  CHECK(leader != crashed);
  CHECK(failover < 5000ms);
  // The entries the new leader is proposed while the old one is down outrun several
  // compactions, so the old one can only catch up from a snapshot.
  for (int round = 0; round < 3; ++round) {
    auto more = c.propose_many(leader, "r" + std::to_string(round) + "_", 200);
    for (auto& r : more) REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
  }
  auto last = c.nodes[leader]->run(c.nodes[leader]->group().propose("latest=42"));
  REQUIRE(last.has_value());

  // A linearizable read on the new leader sees the latest write.
  Status read = c.nodes[leader]->run(c.nodes[leader]->group().linearizable_read());
  REQUIRE_MESSAGE(read.has_value(), read.error().to_string());
  CHECK(c.nodes[leader]->on_io([&] { return c.nodes[leader]->sm().kv["latest"]; }) == "42");
  RaftGroupStatus ns = c.nodes[leader]->status();
  CHECK(ns.snapshot_index > crashed_last);

  // The crashed node restarts from its RocksDB and catches up, via a snapshot.
  auto t3 = Clock::now();
  c.restart(crashed);
  Index target = ns.commit;
  auto deadline = Clock::now() + 10s;
  while (c.nodes[crashed]->status().applied < target && Clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  RaftGroupStatus rs = c.nodes[crashed]->status();
  MESSAGE("restarted node caught up to ", rs.applied, " in ", since(t3).count(), " ms");
  REQUIRE(rs.applied >= target);
  CHECK(rs.leader == leader);
  auto restored = c.nodes[crashed]->on_io([&] { return c.nodes[crashed]->sm().max_restored; });
  CHECK(restored > crashed_last);  // installed from the leader, not replayed
  auto kv_of = [&](NodeId id) { return c.nodes[id]->on_io([&] { return c.nodes[id]->sm().kv; }); };
  // Compare once both have applied the same prefix: the leader's state at `target`
  // may have moved on only if something else was proposed, which nothing was.
  CHECK(kv_of(crashed) == kv_of(leader));
  CHECK(kv_of(crashed).size() == 1000 + 600 + 1);
}

TEST_CASE("raft/group: a group destroyed with operations pending cancels them") {
  Cluster c;
  NodeId leader = c.wait_leader();
  for (NodeId id = 1; id <= 3; ++id) {
    if (id != leader) c.crash(id);
  }
  TestNode& node = *c.nodes[leader];
  // Still leader for up to an election timeout: these append but can never commit.
  std::vector<std::future<Result<Applied>>> pending;
  for (int i = 0; i < 5; ++i) {
    std::string command = "p=" + std::to_string(i);
    pending.push_back(asio::co_spawn(node.io(), node.group().propose(command), asio::use_future));
  }
  auto read = asio::co_spawn(node.io(), node.group().linearizable_read(), asio::use_future);
  std::this_thread::sleep_for(50ms);
  node.on_io([&] {
    node.destroy_group();
    return 0;
  });
  for (auto& f : pending) {
    REQUIRE(f.wait_for(5s) == std::future_status::ready);
    Result<Applied> r = f.get();
    REQUIRE_FALSE(r.has_value());
    // Cancelled by the destruction, or failed earlier when check-quorum deposed it.
    CHECK((r.error().code() == ErrorCode::kCancelled ||
           r.error().code() == ErrorCode::kUnavailable));
  }
  REQUIRE(read.wait_for(5s) == std::future_status::ready);
  CHECK_FALSE(read.get().has_value());
}

TEST_CASE("raft/group: a single-voter group commits, applies and reads") {
  Cluster c(1);
  NodeId leader = c.wait_leader();
  CHECK(leader == 1);
  RaftGroup& g = c.nodes[1]->group();
  for (int i = 0; i < 20; ++i) {
    auto r = c.nodes[1]->run(g.propose("s" + std::to_string(i) + "=v"));
    REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
  }
  auto results = c.propose_many(1, "m", 300);  // past snapshot_every: compacts too
  for (auto& r : results) REQUIRE_MESSAGE(r.has_value(), r.error().to_string());
  Status read = c.nodes[1]->run(g.linearizable_read());
  REQUIRE_MESSAGE(read.has_value(), read.error().to_string());
  CHECK(c.nodes[1]->on_io([&] { return c.nodes[1]->sm().kv.size(); }) == 320);
  Index applied = c.nodes[1]->status().applied;

  // After a crash it knows an older commit index than it applied (a commit index is
  // never synced alone): it elects itself again and commits its log behind the new
  // term's no-op.
  c.crash(1);
  c.restart(1);
  REQUIRE(c.wait_leader() == 1);
  read = c.nodes[1]->run(c.nodes[1]->group().linearizable_read());
  REQUIRE_MESSAGE(read.has_value(), read.error().to_string());
  CHECK(c.nodes[1]->status().applied > applied);
  CHECK(c.nodes[1]->on_io([&] { return c.nodes[1]->sm().kv.size(); }) == 320);
}

// Not a check: with DFS_RAFT_LATENCY=n, proposes n commands one at a time on the leader
// of a 3-voter group, then of a single-voter group, and prints latency percentiles, to
// compare commit paths on one machine. Timing is never asserted (machines vary).
TEST_CASE("raft/group: serial proposal latency (measured only with DFS_RAFT_LATENCY=n)") {
  const char* env = std::getenv("DFS_RAFT_LATENCY");  // test configuration, read once
  int n = env ? std::atoi(env) : 0;
  if (n <= 0) return;
  for (int voters : {3, 1}) {
    Cluster c(voters);
    NodeId leader = c.wait_leader();
    RaftGroup& g = c.nodes[leader]->group();
    // Connections and the RocksDB WAL warm up first.
    REQUIRE(c.nodes[leader]->run(propose_serially(g, 20)).size() == 20);
    uint64_t syncs_before = c.nodes[leader]->status().syncs;
    std::vector<int64_t> micros = c.nodes[leader]->run(propose_serially(g, n));
    uint64_t syncs = c.nodes[leader]->status().syncs - syncs_before;
    REQUIRE(micros.size() == static_cast<size_t>(n));
    MESSAGE(voters, " voter(s), ", n, " serial proposals: ", describe_latency(micros), "; ",
            static_cast<double>(syncs) / n, " leader syncs per proposal");
  }
}

}  // namespace dfs::raft::testing
