// Whole-cluster crash: SIGKILL the monitor and every OSD (with writes in flight),
// restart them all from their stores, and check that no acknowledged write was lost.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <random>

#include "tests/support/background_writers.h"
#include "tests/support/data_pool_cluster.h"
#include "tests/support/elapsed.h"
#include "tests/support/object_checks.h"
#include "tests/support/test_cluster.h"

namespace dfs::test {
namespace {

constexpr size_t kKiB = 1 << 10;

// 300 objects up to 1 MiB; every third also gets partial writes (inside, straddling the
// end, and past the end leaving a hole), which go through the store's journal.
std::vector<ObjectSpec> patched_specs(size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<ObjectSpec> specs;
  for (size_t i = 0; i < count; ++i) {
    ObjectSpec spec;
    spec.name = "base-" + std::to_string(i);
    spec.seed = rng();
    spec.size = static_cast<size_t>(std::exp(unit(rng) * std::log(1024.0 * kKiB)));
    if (i % 3 == 0) {
      size_t size = spec.size;
      spec.patches.push_back(Patch{size / 2, rng(), 100});
      spec.patches.push_back(Patch{size > 10 ? size - 10 : 0, rng(), 4096});
      spec.patches.push_back(Patch{size + 70000, rng(), 3000});
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace

TEST_SUITE_BEGIN("integration");

TEST_CASE_FIXTURE(DataPoolCluster, "integration/objects: SIGKILL and restart every daemon") {
  INFO("cluster dir " << cluster.dir());

  auto base = patched_specs(300, 3);
  auto failures = write_objects(c, "data", base, 16);
  REQUIRE_MESSAGE(failures.empty(), summarize(failures));

  // Kill everything while writers are busy; they keep retrying through the restart.
  BackgroundWriters writers(c, WriterOptions{.threads = 8, .max_size = 128 * kKiB, .seed = 3});
  writers.start();
  REQUIRE(writers.wait_acked_since(0, 200, std::chrono::seconds(60)));
  int crashed = writers.next_phase();
  std::vector<std::string> names = cluster.daemon_names();
  auto crash_time = std::chrono::steady_clock::now();
  for (const auto& name : names) DFS_REQUIRE_OK(cluster.kill(name, SIGKILL));
  DFS_REQUIRE_OK(cluster.start(names));
  DFS_REQUIRE_OK(cluster.wait_osds_up(cluster.osd_count(), Duration(60000)));
  MESSAGE("cluster up again " << seconds_since(crash_time) << " s after the crash");
  int restarted = writers.next_phase();
  bool resumed = writers.wait_acked_since(restarted, 200, std::chrono::seconds(60));
  MESSAGE("writes resumed " << seconds_since(crash_time) << " s after the crash");
  writers.stop();
  CHECK_MESSAGE(resumed, "after the restart the cluster acknowledged only "
                             << writers.acked_since(restarted) << " writes in 60 s");
  MESSAGE("slowest acknowledged write: " << writers.slowest());
  // Failover is meant to be bounded; a stall this long is reported, not failed on.
  WARN_MESSAGE(writers.slowest_latency() < std::chrono::seconds(10),
               "a write stalled across the restart: " << writers.slowest());
  auto writer_failures = writers.failures();
  CHECK_MESSAGE(writer_failures.empty(), "writes failed: " << summarize(writer_failures));

  // Acknowledged before the crash: fully replicated then, so every replica must hold
  // it after each store's own recovery. In flight at the crash or later: readable
  // through the primary.
  std::vector<ObjectSpec> settled = base;
  std::vector<ObjectSpec> later;
  for (const auto& a : writers.acked()) {
    (a.phase_at_ack < crashed ? settled : later).push_back(a.spec);
  }
  MESSAGE(settled.size() << " objects acknowledged before the crash, " << later.size()
                         << " during or after it");

  auto fresh = cluster.client();
  DFS_REQUIRE_OK(fresh);
  auto problems = verify_objects(**fresh, "data", settled, 16);
  CHECK_MESSAGE(problems.empty(),
                "reading writes acknowledged before the crash: " << summarize(problems));
  // Writes acknowledged during or after the restart: if an OSD was slow to come back
  // and got marked down meanwhile, they were acknowledged without it; its PGs peer
  // when it returns (osd/pg/peering.cc), before they serve, so it has them.
  problems = verify_objects(**fresh, "data", later, 16);
  CHECK_MESSAGE(problems.empty(),
                "reading writes acknowledged during or after the crash: " << summarize(problems));
  auto replica_problems = verify_replicas(**fresh, "data", settled, 3, 16);
  CHECK_MESSAGE(replica_problems.empty(), "comparing replicas: " << summarize(replica_problems));
  // Writes in flight at the crash must reach every replica too: a restarted primary
  // that finds a resent request in its PG log pushes the object to replicas lacking it,
  // and peering (which the reads above waited for in every PG they touched) copies
  // what a returning OSD missed.
  auto later_replicas = verify_replicas(**fresh, "data", later, 3, 16);
  CHECK_MESSAGE(later_replicas.empty(), "acknowledged writes missing on replicas after the crash: "
                                            << summarize(later_replicas));
  DFS_CHECK_OK(cluster.check_healthy());
}

TEST_SUITE_END();

}  // namespace dfs::test
