// A seeded, single-threaded simulation of a Raft group serving a key-value store, in
// virtual milliseconds: a lossy network (drop, duplicate, delay, reorder, partitions),
// disks that lose unsynced writes on a crash (a leader's appends leave before its own
// write is synced, so crashes also land after they left), restarts from synced state
// only, membership changes, leader transfers and frequent compaction; clients that
// retry with the same request id. Everything derives from the seed, so a run replays
// exactly.
//
// Most seeds inject faults at random. A fraction run a targeted schedule instead (see
// SimScenario): bugs that need a precise interleaving, which random faults reach only
// once in tens of thousands of seeds, are then found within the default run.
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

// What a seed runs. kAuto picks from the seed: most seeds are kRandom; about 15% each
// run one of the targeted schedules, which then continue with random faults.
enum class SimScenario : uint8_t {
  kAuto,
  kRandom,     // faults at random from the start
  // Raft paper, Figure 8: the leader appends an entry of its term that nobody else
  // gets; a new leader of a later term appends a different entry at that index that
  // nobody else gets; the first node leads again and copies its old-term entry to a
  // majority but not the entry of its new term; then it is cut off and the second
  // node leads again. Committing the old-term entry by counting replicas loses it.
  kFigure8,
  // A stale leader: it stalls (a paused process: no ticks, no input) while cut off
  // from every other voter; the others elect a leader and complete writes; then it
  // resumes, still cut off and still believing it leads, and a client reads from it.
  // Only the heartbeat round of read index stops it answering with old data.
  kStaleRead,
};
const char* scenario_name(SimScenario scenario);

struct SimOptions {
  uint64_t seed = 1;
  int nodes = 5;           // node ids 1..nodes
  int initial_voters = 3;  // 1..initial_voters; the rest wait to be added
  int clients = 3;
  uint64_t fault_ms = 3000;  // faults are injected during this window...
  uint64_t heal_ms = 1500;   // ...then the network heals and every node restarts
  SimScenario scenario = SimScenario::kAuto;
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
  SimScenario scenario = SimScenario::kRandom;
  // The targeted schedule reached its decisive step (see SimScenario): the old-term
  // entry on a majority with the newer leader cut off (Figure 8), or the stale leader
  // resumed with a read queued (stale read). Counted so the test can insist they run.
  size_t figure8_runs = 0;
  size_t stale_read_runs = 0;
  // Early messages (Ready::early_messages) exercised: crashes that lost unsynced writes
  // after the syncing Ready's early messages had left, and append acknowledgements that
  // reached a leader while it was syncing (they wait for the sync, as any input does).
  size_t crashes_after_early_send = 0;
  // Crashes that left a node's durable commit index below what it had applied (the
  // commit index alone is never synced): it must apply again and learn the rest.
  size_t crashes_below_applied = 0;
  size_t acks_during_leader_sync = 0;
  uint64_t stopped_at_ms = 0;  // a violation stops the run early (0: ran to the end)
  uint64_t overtime_ms = 0;    // quiet time past the end that convergence needed
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
  void send_messages(SimNode& n, std::vector<Message>& messages);
  void apply_entry(SimNode& n, const Entry& e);
  void serve_reads(SimNode& n);
  void handle_at_node(SimNode& n, Event ev);
  void handle_request(SimNode& n, const ClientRequest& req);
  void drain(SimNode& n);
  void tick_node(SimNode& n);  // one tick, noted in tick_fed_ms
  void reply(NodeId from, ClientReply r);

  // Clients (sim_clients.cc).
  void step_clients();
  void start_op(SimClient& c);
  void send_request(SimClient& c);
  void handle_reply(const ClientReply& r);

  // Targeted schedules (sim_scenarios.cc).
  struct Script;
  void pick_scenario();
  void step_script();
  void end_script();
  bool script_drops(const SimNode& to, const Message& m) const;

  // Faults and checks (sim_faults.cc).
  void inject_fault();
  void heal_all();
  void check_logs();
  // No node leads a later term while a leader's lease holds (RaftNode::lease_start_tick,
  // measured from when that tick was fed).
  void check_leases();
  void final_checks();
  bool converged();  // a leader, and every voter applied as far with the same state
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
  uint64_t max_sync_ms_ = 3;    // a sync takes 1..max_sync_ms_ virtual ms
  std::map<NodeId, int> partition_;  // group per node; absent = group 0
  std::unique_ptr<Script> script_;   // null: random faults only (or the script ended)

  std::vector<std::unique_ptr<SimNode>> nodes_;  // nodes_[id - 1]
  std::vector<std::unique_ptr<SimClient>> clients_;
  dfs::sim::KvHistoryRecorder history_;
  SafetyChecker checker_;
  SimResult result_;
};

// Node id and seed of a failing run, formatted as the command that replays it.
std::string replay_command(uint64_t seed);

}  // namespace dfs::raft::sim
