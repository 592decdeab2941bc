// A seeded, single-threaded simulation of a Raft group serving a key-value store, in
// virtual milliseconds: a lossy network (drop, duplicate, delay, reorder, partitions),
// disks that lose unsynced writes on a crash, restarts from synced state only,
// membership changes, leader transfers and frequent compaction; clients that retry
// with the same request id. Everything derives from the seed, so a run replays exactly.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/raft/raft_node.h"
#include "tests/sim/linearizability.h"
#include "tests/sim/raft/kv_state_machine.h"
#include "tests/sim/raft/safety_checker.h"
#include "tests/sim/raft/sim_storage.h"

namespace dfs::raft::sim {

struct SimOptions {
  uint64_t seed = 1;
  int nodes = 5;           // node ids 1..nodes
  int initial_voters = 3;  // 1..initial_voters; the rest wait to be added
  int clients = 3;
  uint64_t fault_ms = 3000;  // faults are injected during this window...
  uint64_t heal_ms = 1500;   // ...then the network heals and every node restarts
};

struct SimResult {
  std::vector<std::string> violations;  // empty: every check passed
  uint64_t trace_hash = 0;              // identical for identical runs
  size_t committed = 0;
  size_t client_ops = 0;
  size_t completed_ops = 0;
  size_t crashes = 0;
  size_t snapshots_sent = 0;
  size_t conf_changes = 0;
  size_t transfers = 0;
};

enum class ReplyStatus : uint8_t { kOk, kNotLeader };

struct ClientRequest {
  uint32_t client = 0;
  uint64_t seq = 0;
  dfs::sim::KvOpKind kind = dfs::sim::KvOpKind::kGet;
  std::string key;
  std::string value;
  std::string expected;
};

struct ClientReply {
  uint32_t client = 0;
  uint64_t seq = 0;
  ReplyStatus status = ReplyStatus::kOk;
  NodeId leader_hint = kNoNode;
  std::string value;
  bool cas_ok = false;
};

class RaftSimulation {
 public:
  explicit RaftSimulation(SimOptions options);
  ~RaftSimulation();
  SimResult run();

 private:
  struct Event {
    enum Kind : uint8_t { kRaft, kRequest, kReply } kind = kRaft;
    Message msg;
    ClientRequest request;
    ClientReply reply;
    NodeId node = kNoNode;  // destination node (kRaft, kRequest)
  };
  struct SimNode;
  struct SimClient;

  // Network (raft_simulation.cc).
  void send_event(Event ev, NodeId from, NodeId to);
  bool link_up(NodeId from, NodeId to) const;
  void deliver_due();

  // Nodes (sim_node.cc).
  void start_node(SimNode& n);
  void crash_node(SimNode& n);
  void pump(SimNode& n);
  void finish_ready(SimNode& n, Ready rd);
  void apply_entry(SimNode& n, const Entry& e);
  void serve_reads(SimNode& n);
  void handle_at_node(SimNode& n, Event ev);
  void handle_request(SimNode& n, const ClientRequest& req);
  void drain(SimNode& n);
  void reply(NodeId from, ClientReply r);

  // Clients (sim_clients.cc).
  void step_clients();
  void start_op(SimClient& c);
  void send_request(SimClient& c);
  void handle_reply(const ClientReply& r);

  // Faults and checks (sim_faults.cc).
  void inject_fault();
  void heal_all();
  void check_logs();
  void final_checks();
  SimNode* leader();

  void trace(uint64_t a, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0);

  SimOptions options_;
  SplitMixRandom random_;
  uint64_t now_ = 0;
  uint64_t event_seq_ = 0;
  std::map<std::pair<uint64_t, uint64_t>, Event> queue_;  // (time, seq) -> event

  // Per-seed fault profile.
  double drop_p_ = 0;
  double dup_p_ = 0;
  uint64_t max_delay_ms_ = 10;
  Index compact_every_ = 10;
  uint64_t append_bytes_ = 256;  // 1: one entry per append, the Figure 8 shape
  size_t max_inflight_ = 4;
  uint64_t fault_one_in_ = 40;  // a fault each ms with probability 1/fault_one_in_
  std::map<NodeId, int> partition_;  // group per node; absent = group 0

  std::vector<std::unique_ptr<SimNode>> nodes_;  // nodes_[id - 1]
  std::vector<std::unique_ptr<SimClient>> clients_;
  dfs::sim::KvHistoryRecorder history_;
  SafetyChecker checker_;
  SimResult result_;
};

// Node id and seed of a failing run, formatted as the command that replays it.
std::string replay_command(uint64_t seed);

}  // namespace dfs::raft::sim
