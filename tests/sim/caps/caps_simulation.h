// A seeded, single-threaded simulation of the capability protocol in virtual
// milliseconds: one MDS CapTable, 2 to 4 clients (ClientCaps plus what they cache and
// buffer), a few files and directories, and a network that delays, reorders, duplicates
// and drops messages. Faults: client crashes (the client comes back as a new session),
// client pauses (sometimes past the session timeout), MDS crashes (a new CapTable that
// rebuilds from the clients' reconnects). Everything derives from the seed, so a run
// replays exactly. The invariants (caps_checker.h) are checked after every event; after
// the faults stop, the run goes on until everything should have settled, then checks
// liveness.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/caps/cap_table.h"
#include "tests/sim/caps/sim_client.h"

namespace dfs::caps::sim {

struct SimOptions {
  uint64_t seed = 1;
  TimeMs fault_ms = 12'000;  // faults during this window...
  TimeMs heal_ms = 10'000;   // ...then a reliable network, no new requests, and settling
  // Short timeouts, so that a run sees evictions and expiries; few caps per session, so
  // that the MDS's LRU recall runs.
  CapTableOptions table{
      .session_timeout_ms = 2'000, .recall_resend_ms = 200, .max_caps_per_session = 3};
  ClientCapsOptions client{.want_resend_ms = 300};
  bool trace = false;  // keep every event, not only the last ones
};

struct SimResult {
  std::vector<std::string> violations;
  std::vector<std::string> events;  // the last events before the end (all with trace)
  SimStats stats;
  int clients = 0;
  TimeMs stopped_at = 0;
  uint64_t trace_hash = 0;
};

class CapsSimulation {
 public:
  explicit CapsSimulation(SimOptions options);
  SimResult run();

 private:
  struct Ticket {
    SessionId session = 0;
    MutateRequest request;
  };

  void setup();
  void choose_faults();
  void inject_faults();
  void heal();
  void deliver(const Delivery& d);
  void mds_receive(const Delivery& d);
  void mds_mutate(SessionId s, const MutateRequest& m);
  void apply_mutation(uint64_t ticket);
  void drain();
  void reply(SessionId s, ToClient m);
  void crash_mds();
  void open_session(SimClient& c);
  void step_clients();
  ClientContext context();
  void check();
  void log(std::string event);
  void violation(std::string what);

  SimOptions options_;
  std::mt19937_64 rng_;
  SimNetwork net_;
  SimStorage storage_;
  std::unique_ptr<CapTable> table_;
  uint32_t incarnation_ = 1;
  std::vector<InodeInfo> inodes_;
  std::vector<SimClient> clients_;
  std::vector<TimeMs> restart_at_;  // per client, while crashed
  SessionId next_session_ = 100;
  // Mutations: prepared tickets die with the MDS instance; what was applied is in its
  // durable idempotency table, so a resent request is answered, not applied again.
  std::map<uint64_t, Ticket> tickets_;
  std::set<std::pair<SessionId, uint64_t>> waiting_;
  std::set<std::pair<SessionId, uint64_t>> applied_;

  NetworkFaults faults_;
  double crash_per_s_ = 0, pause_per_s_ = 0, mds_crash_per_s_ = 0;
  TimeMs now_ = 0;
  bool healing_ = false;
  SimResult result_;
  std::deque<std::string> recent_;
};

// The environment variable line that replays `seed`.
std::string replay_command(uint64_t seed);

}  // namespace dfs::caps::sim
