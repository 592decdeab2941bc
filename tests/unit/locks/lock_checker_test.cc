// locks_checker: many seeded runs of the randomized checker (lock_checker.h). Environment:
//   DFS_LOCK_SEEDS=n  run seeds 1..n (default 1000)
//   DFS_SEED=n        run only seed n and print its whole event trace (replay a failure)
// Two more cases inject a bug each into LockTable and require the checker to catch it.
#include "tests/unit/locks/lock_checker.h"

#include <doctest/doctest.h>

#include <chrono>
#include <iostream>
#include <string>

#include "tests/support/seeded_runs.h"

namespace dfs::locks::test {
namespace {

std::string describe(uint64_t seed, const CheckerResult& r) {
  std::string out = "seed " + std::to_string(seed) + " failed:\n";
  for (const std::string& v : r.violations) out += "  " + v + "\n";
  out += "last events:\n";
  for (const std::string& e : r.events) out += "  " + e + "\n";
  out += "replay: DFS_SEED=" + std::to_string(seed) +
         " tests/unit/locks/locks_test --test-case='locks/checker: *many seeds'";
  return out;
}

// The first seed of 1..limit whose run reports a violation, 0 if none.
uint64_t first_failing_seed(CheckerOptions o, uint64_t limit, CheckerResult* out) {
  for (uint64_t seed = 1; seed <= limit; ++seed) {
    o.seed = seed;
    CheckerResult r = run_checker(o);
    if (!r.violations.empty()) {
      *out = std::move(r);
      return seed;
    }
  }
  return 0;
}

TEST_CASE("locks/checker: the table agrees with the model over many seeds") {
  if (auto replay = dfs::test::replay_seed()) {
    const uint64_t seed = *replay;
    CheckerResult r = run_checker(CheckerOptions{.seed = seed, .trace = true});
    for (const std::string& e : r.events) std::cout << e << "\n";
    std::cout << "seed " << seed << ": " << r.stats.to_string() << "\n";
    CHECK_MESSAGE(r.violations.empty(), describe(seed, r));
    return;
  }
  const uint64_t seeds = dfs::test::seed_count("DFS_LOCK_SEEDS", 1000);
  const auto start = std::chrono::steady_clock::now();
  CheckerStats total;
  size_t failures = 0;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    CheckerResult r = run_checker(CheckerOptions{.seed = seed});
    total.add(r.stats);
    if (!r.violations.empty()) {
      CHECK_MESSAGE(r.violations.empty(), describe(seed, r));
      if (++failures >= 3) break;
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("seeds 1.." << seeds << " in " << secs << " s: " << total.to_string());
  if (failures > 0) return;
  // The runs must exercise what they claim to.
  CHECK(total.woken > seeds);
  CHECK(total.refused > seeds);
  CHECK(total.deadlocks > seeds / 10);
  CHECK(total.no_locks > 0);
  CHECK(total.cancels > seeds);
  CHECK(total.failovers > seeds / 2);
  CHECK(total.probes_conflicting > seeds * 10);
}

TEST_CASE("locks/checker: a seed replays the same run") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    CheckerResult a = run_checker(CheckerOptions{.seed = seed, .trace = true});
    CheckerResult b = run_checker(CheckerOptions{.seed = seed, .trace = true});
    CHECK_MESSAGE(a.events == b.events, "seed " << seed << " is not deterministic");
  }
}

TEST_CASE(
    "locks/checker: catches a table that skips the conflict check for "
    "holders") {
  CheckerOptions o;
  o.table.testing_holder_skips_check = true;
  CheckerResult r;
  const uint64_t seed = first_failing_seed(o, 5, &r);
  REQUIRE_MESSAGE(seed != 0, "the injected bug went unnoticed for 5 seeds");
  MESSAGE("caught at seed " << seed << ": " << r.violations[0]);
}

TEST_CASE("locks/checker: catches a table whose unlocks wake nobody") {
  CheckerOptions o;
  o.table.testing_unlock_wakes_nobody = true;
  CheckerResult r;
  const uint64_t seed = first_failing_seed(o, 5, &r);
  REQUIRE_MESSAGE(seed != 0, "the injected bug went unnoticed for 5 seeds");
  MESSAGE("caught at seed " << seed << ": " << r.violations[0]);
}

}  // namespace
}  // namespace dfs::locks::test
