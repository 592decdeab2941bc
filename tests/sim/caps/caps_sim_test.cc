// caps_sim_test: many seeded runs of CapsSimulation, each checked for the safety
// invariants after every event and for liveness once healed. Environment:
//   DFS_SIM_SEEDS=n   run seeds 1..n (default 1000)
//   DFS_SEED=n        run only seed n and print its whole event trace (replay a failure)
// Two more cases inject a protocol bug each and require the checker to catch it.
#include <doctest/doctest.h>

#include <chrono>
#include <iostream>
#include <string>

#include "tests/sim/caps/caps_simulation.h"
#include "tests/support/seeded_runs.h"

namespace dfs::caps::sim {
namespace {

std::string describe(uint64_t seed, const SimResult& r) {
  std::string out =
      "seed " + std::to_string(seed) + " (" + std::to_string(r.clients) + " clients) failed:\n";
  for (const std::string& v : r.violations) out += "  " + v + "\n";
  out += "last events:\n";
  for (const std::string& e : r.events) out += "  " + e + "\n";
  out += "replay: " + replay_command(seed);
  return out;
}

void add(SimStats& total, const SimStats& s) {
  total.events += s.events;
  total.grants += s.grants;
  total.revokes += s.revokes;
  total.evictions += s.evictions;
  total.cached_reads += s.cached_reads;
  total.buffered_writes += s.buffered_writes;
  total.sync_writes += s.sync_writes;
  total.mutations += s.mutations;
  total.refused_writes += s.refused_writes;
  total.client_crashes += s.client_crashes;
  total.pauses += s.pauses;
  total.mds_crashes += s.mds_crashes;
}

std::string summary(const SimStats& s) {
  return "deliveries " + std::to_string(s.events) + ", grants " + std::to_string(s.grants) +
         ", revokes " + std::to_string(s.revokes) + ", evictions " + std::to_string(s.evictions) +
         ", cached reads " + std::to_string(s.cached_reads) + ", buffered writes " +
         std::to_string(s.buffered_writes) + ", sync writes " + std::to_string(s.sync_writes) +
         ", mutations " + std::to_string(s.mutations) + ", writes refused by the fence " +
         std::to_string(s.refused_writes) + ", client crashes " + std::to_string(s.client_crashes) +
         ", pauses " + std::to_string(s.pauses) + ", mds crashes " + std::to_string(s.mds_crashes);
}

// The first seed of 1..limit whose run reports a violation, 0 if none.
uint64_t first_failing_seed(const SimOptions& base, uint64_t limit, SimResult* out) {
  for (uint64_t seed = 1; seed <= limit; ++seed) {
    SimOptions o = base;
    o.seed = seed;
    SimResult r = CapsSimulation(o).run();
    if (!r.violations.empty()) {
      *out = r;
      return seed;
    }
  }
  return 0;
}

TEST_CASE("caps/sim: safety and liveness over many seeds") {
  if (auto replay = dfs::test::replay_seed()) {
    const uint64_t seed = *replay;
    SimResult r = CapsSimulation(SimOptions{.seed = seed, .trace = true}).run();
    for (const std::string& e : r.events) std::cout << e << "\n";
    std::cout << "seed " << seed << " (" << r.clients << " clients): " << summary(r.stats)
              << ", trace " << std::hex << r.trace_hash << std::dec << "\n";
    CHECK_MESSAGE(r.violations.empty(), describe(seed, r));
    return;
  }
  const uint64_t seeds = dfs::test::seed_count("DFS_SIM_SEEDS", 1000);
  auto start = std::chrono::steady_clock::now();
  SimStats total;
  size_t failures = 0;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    SimResult r = CapsSimulation(SimOptions{.seed = seed}).run();
    add(total, r.stats);
    if (!r.violations.empty()) {
      CHECK_MESSAGE(r.violations.empty(), describe(seed, r));
      if (++failures >= 3) break;
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(seeds << " seeds in " << secs << " s: " << summary(total));
  if (failures > 0) return;
  // The runs must exercise what they claim to.
  CHECK(total.evictions > seeds / 2);
  CHECK(total.refused_writes > 0);
  CHECK(total.mds_crashes > seeds / 4);
  CHECK(total.client_crashes > seeds / 4);
  CHECK(total.buffered_writes > seeds);
  CHECK(total.mutations > seeds);
}

TEST_CASE("caps/sim: a seed replays to the same event trace") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SimResult a = CapsSimulation(SimOptions{.seed = seed}).run();
    SimResult b = CapsSimulation(SimOptions{.seed = seed}).run();
    CHECK_MESSAGE(a.trace_hash == b.trace_hash, "seed " << seed << " is not deterministic");
  }
}

TEST_CASE("caps/sim: catches an MDS that grants before the recall is acknowledged") {
  SimOptions o;
  o.table.testing_grant_before_ack = true;
  SimResult r;
  uint64_t seed = first_failing_seed(o, 20, &r);
  REQUIRE_MESSAGE(seed != 0, "the injected bug went unnoticed for 20 seeds");
  MESSAGE("caught at seed " << seed << ": " << r.violations[0]);
}

TEST_CASE("caps/sim: catches a client that ignores seq order") {
  SimOptions o;
  o.client.testing_ignore_seq = true;
  SimResult r;
  uint64_t seed = first_failing_seed(o, 50, &r);
  REQUIRE_MESSAGE(seed != 0, "the injected bug went unnoticed for 50 seeds");
  MESSAGE("caught at seed " << seed << ": " << r.violations[0]);
}

}  // namespace
}  // namespace dfs::caps::sim
