// Internal to RaftSimulation: the per-node and per-client state shared by its .cc
// files (raft_simulation.cc, sim_node.cc, sim_clients.cc, sim_faults.cc).
#pragma once

#include "tests/sim/raft/raft_simulation.h"

namespace dfs::raft::sim {

inline constexpr int kTickMs = 10;
inline constexpr uint64_t kClientTimeoutMs = 80;
inline constexpr uint64_t kQuietMs = 300;

struct RaftSimulation::SimNode {
  NodeId id = kNoNode;
  std::unique_ptr<SimStorage> storage;   // survives crashes (its synced part)
  std::unique_ptr<SplitMixRandom> random;
  std::unique_ptr<RaftNode> raft;        // null while crashed
  KvStateMachine kv;
  bool up = false;

  // A Ready whose sync is in progress: the node takes no input until it completes.
  std::optional<Ready> syncing;
  uint64_t sync_done_at = 0;
  std::deque<Event> inbox;
  int deferred_ticks = 0;

  // Client requests this node owes an answer (lost on a crash).
  std::set<std::pair<uint32_t, uint64_t>> waiting_writes;
  uint64_t next_read_context = 1;
  std::map<uint64_t, ClientRequest> reads_unconfirmed;            // context -> request
  std::vector<std::pair<Index, ClientRequest>> reads_confirmed;  // wait for applied
};

struct RaftSimulation::SimClient {
  uint32_t id = 0;
  uint64_t seq = 0;
  bool busy = false;
  ClientRequest request;
  dfs::sim::KvHistoryRecorder::OpId op = 0;
  NodeId target = 1;
  uint64_t deadline = 0;
  uint64_t resend_at = 0;     // after a not-leader answer, a short back-off
  uint64_t next_start = 0;
  std::map<std::string, std::string> last_seen;  // cas expectations
};

}  // namespace dfs::raft::sim
