// raft_sim_test: many seeded runs of RaftSimulation, each checked for Raft safety and
// for linearizability of the clients' history. Environment:
//   DFS_SIM_SEEDS=n   run seeds 1..n (default 2000; nightly runs use 100000)
//   DFS_SEED=n        run only seed n, printing its statistics (replay a failure)
#include <doctest/doctest.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "tests/sim/raft/raft_simulation.h"

namespace dfs::raft::sim {
namespace {

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);  // test configuration, read once per test case
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

std::string describe(uint64_t seed, const SimResult& r) {
  std::string out = "seed " + std::to_string(seed) + " failed:\n";
  for (const std::string& v : r.violations) out += "  " + v + "\n";
  out += "replay: " + replay_command(seed);
  return out;
}

TEST_CASE("raft/sim: safety and linearizability over many seeds") {
  if (const char* one = std::getenv("DFS_SEED"); one && *one) {
    uint64_t seed = std::strtoull(one, nullptr, 10);
    SimResult r = RaftSimulation(SimOptions{.seed = seed}).run();
    std::cout << "seed " << seed << ": committed " << r.committed << ", client ops "
              << r.completed_ops << "/" << r.client_ops << ", crashes " << r.crashes
              << ", snapshot chunks " << r.snapshots_sent << ", conf changes " << r.conf_changes
              << ", transfers " << r.transfers << ", trace " << std::hex << r.trace_hash
              << std::dec << "\n";
    CHECK_MESSAGE(r.violations.empty(), describe(seed, r));
    return;
  }
  uint64_t seeds = env_u64("DFS_SIM_SEEDS", 2000);
  size_t failures = 0;
  SimResult total;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    SimResult r = RaftSimulation(SimOptions{.seed = seed}).run();
    total.committed += r.committed;
    total.completed_ops += r.completed_ops;
    total.crashes += r.crashes;
    total.snapshots_sent += r.snapshots_sent;
    total.conf_changes += r.conf_changes;
    total.transfers += r.transfers;
    if (!r.violations.empty()) {
      CHECK_MESSAGE(r.violations.empty(), describe(seed, r));
      if (++failures >= 5) break;
    }
  }
  MESSAGE("seeds " << seeds << ": committed " << total.committed << ", client ops "
                   << total.completed_ops << ", crashes " << total.crashes
                   << ", snapshot chunks " << total.snapshots_sent << ", conf changes "
                   << total.conf_changes << ", transfers " << total.transfers);
  // The run must actually exercise what it claims to.
  CHECK(total.crashes > seeds);
  CHECK(total.snapshots_sent > seeds);
  CHECK(total.conf_changes > seeds / 2);
  CHECK(total.transfers > seeds / 2);
}

TEST_CASE("raft/sim: a seed replays to the same event trace") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SimResult a = RaftSimulation(SimOptions{.seed = seed}).run();
    SimResult b = RaftSimulation(SimOptions{.seed = seed}).run();
    CHECK_MESSAGE(a.trace_hash == b.trace_hash, "seed " << seed << " is not deterministic");
  }
}

}  // namespace
}  // namespace dfs::raft::sim
