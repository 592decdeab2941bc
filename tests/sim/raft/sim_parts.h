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
  // Last index `kv` reflects. Not raft->applied_index(): installing a snapshot moves
  // that at once, before the Ready that restores the image has been synced.
  Index applied = 0;
  bool up = false;
  // Paused (a stalled process, a frozen VM): no ticks, no sync completion, and input
  // waits in `inbox` until it resumes. Only targeted schedules pause nodes.
  bool stalled = false;

  // A Ready whose sync is in progress: the node takes no input until it completes.
  // Its early messages have already left.
  std::optional<Ready> syncing;
  uint64_t sync_done_at = 0;
  size_t syncing_early_sent = 0;  // early messages of `syncing` already sent
  // Crash when the next sync would complete, after that Ready's early messages left
  // and before its writes are durable (a fault armed on a leader).
  bool crash_before_sync_done = false;
  std::deque<Event> inbox;
  int deferred_ticks = 0;
  // When recent ticks were fed to `raft` (its tick count, the virtual ms): the leader
  // lease in virtual time, as RaftGroupRuntime measures it in real time.
  std::deque<std::pair<uint64_t, uint64_t>> tick_fed_ms;

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
  // Driven by a targeted schedule: starts no operation of its own and never retries;
  // an operation left unanswered stays an unknown outcome.
  bool scripted = false;
};

// The state of a targeted schedule (SimScenario), advanced once per virtual ms.
struct RaftSimulation::Script {
  enum Phase : uint8_t {
    // kFigure8
    kF8Stable,     // wait for a leader A with an entry of its term committed
    kF8Elect,      // A cut off with an entry (ia, ta) only it has; B or C gets elected
    kF8Commit,     // new leader B cut off; A leads {A, C}, C gets A's log up to ia only
    kF8Overwrite,  // A cut off; B leads {B, C} again
    // kStaleRead
    kSrStable,     // wait for a leader L with an entry of its term committed
    kSrStalled,    // L cut off and paused; the rest complete a write invoked since
    kSrProbe,      // a get for that key travels to L, still paused
    kSrResumed,    // L resumed and handled the get
    kDone,
  };
  SimScenario scenario = SimScenario::kRandom;
  Phase phase = kDone;
  uint64_t phase_start = 0;
  NodeId a = kNoNode;  // Figure 8: first leader; stale read: the stale leader
  NodeId b = kNoNode;  // Figure 8: the leader of the later term
  NodeId c = kNoNode;  // Figure 8: the third voter
  Term ta = 0;         // Figure 8: A's term when it appended (ia)
  Index ia = 0;        // Figure 8: the entry only A holds
  uint64_t c_has_ia_since = 0;  // Figure 8: when C first held ia (0: not yet)
  uint64_t script_seq = 0;      // Figure 8: seq of the script's own commands
};

}  // namespace dfs::raft::sim
