// Integration tests of the object tier through the real path: dfs-mon and three
// dfs-osd processes on loopback, stores on disk, libdfs's ObjectClient as the client.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "tests/support/background_writers.h"
#include "tests/support/data_pool_cluster.h"
#include "tests/support/elapsed.h"
#include "tests/support/object_checks.h"
#include "tests/support/process.h"
#include "tests/support/test_cluster.h"

namespace dfs::test {
namespace {

constexpr size_t kMiB = 1 << 20;
constexpr size_t kKiB = 1 << 10;

// Names of several shapes: plain, with slashes, with spaces and UTF-8, and long.
std::string object_name(size_t i) {
  switch (i % 10) {
    case 3:
      return "dir/sub/obj-" + std::to_string(i);
    case 6:
      return "spaces and ünïcödé " + std::to_string(i);
    case 9:
      return "long-" + std::string(200, 'x') + "-" + std::to_string(i);
    default:
      return "obj-" + std::to_string(i);
  }
}

// 0 B, 8 MiB and the sizes around store block and journal boundaries first; then most
// objects small and a few large, each range log-distributed.
std::vector<size_t> object_sizes(size_t count, uint64_t seed) {
  std::vector<size_t> sizes = {0,    8 * kMiB,      1,           4095,          4096,
                               4097, 64 * kKiB - 1, 64 * kKiB,   64 * kKiB + 1, kMiB - 1,
                               kMiB, kMiB + 1,      8 * kMiB - 1};
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto log_uniform = [&](double lo, double hi) {
    return static_cast<size_t>(std::exp(std::log(lo) + unit(rng) * (std::log(hi) - std::log(lo))));
  };
  while (sizes.size() < count) {
    double tier = unit(rng);
    if (tier < 0.85) {
      sizes.push_back(log_uniform(1, 64 * kKiB));
    } else if (tier < 0.98) {
      sizes.push_back(log_uniform(64 * kKiB, kMiB));
    } else {
      sizes.push_back(log_uniform(kMiB, 8 * kMiB));
    }
  }
  return sizes;
}

// The `count` slowest writes with their PG's OSDs in CRUSH order (the first is the
// primary while it is up), for diagnosing stalls.
std::string slowest_writes(std::vector<AckedWrite> acked, const ClusterMap& map, size_t count) {
  std::sort(acked.begin(), acked.end(),
            [](const auto& a, const auto& b) { return a.latency > b.latency; });
  const proto::Pool* pool = map.pool_by_name("data");
  std::string out;
  for (size_t i = 0; i < acked.size() && i < count && pool; ++i) {
    uint32_t pg = ClusterMap::pg_of(*pool, acked[i].spec.name);
    out += "  " + acked[i].spec.name + " " + std::to_string(acked[i].latency.count()) +
           " ms, phase " + std::to_string(acked[i].phase_at_start) + "->" +
           std::to_string(acked[i].phase_at_ack) + ", pg " + std::to_string(pg) + " on osds";
    for (int32_t osd : map.pg_osds(*pool, pg)) out += " " + std::to_string(osd);
    out += "\n";
  }
  return out;
}

}  // namespace

TEST_SUITE_BEGIN("integration");

TEST_CASE_FIXTURE(DataPoolCluster, "integration/objects: 2000 objects of 0 B to 8 MiB round-trip") {
  INFO("cluster dir " << cluster.dir());

  auto sizes = object_sizes(2000, 2000);
  std::vector<ObjectSpec> specs;
  size_t total_bytes = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    specs.push_back(ObjectSpec{object_name(i), 7919 * i + 1, sizes[i], {}});
    total_bytes += sizes[i];
  }

  auto start = std::chrono::steady_clock::now();
  auto failures = write_objects(c, "data", specs, 16);
  MESSAGE("wrote " << specs.size() << " objects, " << total_bytes / kMiB << " MiB, in "
                   << seconds_since(start) << " s");
  REQUIRE_MESSAGE(failures.empty(), summarize(failures));

  start = std::chrono::steady_clock::now();
  auto problems = verify_objects(c, "data", specs, 16);
  MESSAGE("read back and stat'ed every object in " << seconds_since(start) << " s");
  CHECK_MESSAGE(problems.empty(), summarize(problems));

  auto listed = c.run(c.list("data"));
  DFS_REQUIRE_OK(listed);
  std::vector<std::string> expected_names;
  for (const auto& s : specs) expected_names.push_back(s.name);
  std::sort(expected_names.begin(), expected_names.end());
  std::vector<std::string> listed_names;
  std::vector<std::string> size_mismatches;
  std::map<std::string, size_t> size_of;
  for (const auto& s : specs) size_of[s.name] = s.size;
  for (const auto& e : *listed) {
    listed_names.push_back(e.name);
    auto it = size_of.find(e.name);
    if (it != size_of.end() && it->second != e.size) {
      size_mismatches.push_back(e.name + ": listed size " + std::to_string(e.size) + ", written " +
                                std::to_string(it->second));
    }
  }
  CHECK(listed_names.size() == expected_names.size());
  CHECK_MESSAGE(listed_names == expected_names, "list differs from the names written");
  CHECK_MESSAGE(size_mismatches.empty(), summarize(size_mismatches));
  DFS_CHECK_OK(cluster.check_healthy());
}

TEST_CASE_FIXTURE(DataPoolCluster,
                  "integration/objects: SIGKILL one OSD while writes are in flight") {
  INFO("cluster dir " << cluster.dir());

  constexpr int kVictim = 1;
  BackgroundWriters writers(c, WriterOptions{.threads = 8, .max_size = 256 * kKiB, .seed = 2});
  writers.start();
  REQUIRE_MESSAGE(
      writers.wait_acked_since(0, 500, std::chrono::seconds(60)),
      "the healthy cluster acknowledged only " << writers.acked_count() << " writes in 60 s");

  // Phase 1: the victim is dead but may still be up in the map.
  writers.next_phase();
  auto killed_at = std::chrono::steady_clock::now();
  DFS_REQUIRE_OK(cluster.kill(TestCluster::osd_name(kVictim)));
  DFS_REQUIRE_OK(cluster.wait_osd_down(kVictim, Duration(30000)));
  MESSAGE("osd." << kVictim << " marked down " << seconds_since(killed_at) << " s after SIGKILL");

  // Phase 2: degraded; new writes must still succeed with 2 of 3 replicas (min_size 2).
  int degraded = writers.next_phase();
  bool kept_writing = writers.wait_acked_since(degraded, 500, std::chrono::seconds(60));
  writers.stop();
  CHECK_MESSAGE(kept_writing, "degraded cluster acknowledged only " << writers.acked_since(degraded)
                                                                    << " writes in 60 s");

  MESSAGE("slowest acknowledged writes:\n" << slowest_writes(writers.acked(), c.map_snapshot(), 5));
  // Failover is meant to be bounded; a stall this long is reported, not failed on.
  WARN_MESSAGE(writers.slowest_latency() < std::chrono::seconds(10),
               "a write stalled across the OSD failure: " << writers.slowest());
  auto failures = writers.failures();
  CHECK_MESSAGE(failures.empty(), "writes failed: " << summarize(failures));
  auto acked = writers.acked();
  std::vector<ObjectSpec> specs;
  size_t degraded_acks = 0;
  for (const auto& a : acked) {
    specs.push_back(a.spec);
    if (a.phase_at_start >= degraded) {
      ++degraded_acks;
      CHECK_MESSAGE(a.copies >= 2, a.spec.name << " acknowledged with " << a.copies << " copies");
    }
  }
  MESSAGE(acked.size() << " writes acknowledged, " << degraded_acks << " of them degraded");

  auto problems = verify_objects(c, "data", specs, 16);
  CHECK_MESSAGE(problems.empty(), "reading acknowledged writes: " << summarize(problems));
  // Every acknowledged object is identical on every up replica; the victim's PGs have
  // two up OSDs left, the others three.
  auto replica_problems = verify_replicas(c, "data", specs, 2, 16);
  CHECK_MESSAGE(replica_problems.empty(), "comparing replicas: " << summarize(replica_problems));
  CHECK_FALSE(cluster.is_running(TestCluster::osd_name(kVictim)));
  DFS_CHECK_OK(cluster.check_healthy());
}

// An OSD that comes back after missing writes must not serve its PGs (as primary, for
// some) before peering has given it what it missed (osd/pg/peering.cc).
TEST_CASE("integration/objects: an OSD that restarts after missing writes serves them") {
  TestCluster cluster;
  INFO("cluster dir " << cluster.dir());
  auto client = cluster.boot_with_pool("data", 16, Duration(20000));
  DFS_REQUIRE_OK(client);
  auto& c = **client;
  DFS_REQUIRE_OK(cluster.kill("osd.1"));
  DFS_REQUIRE_OK(cluster.wait_osd_down(1));
  std::vector<ObjectSpec> specs;
  for (size_t i = 0; i < 64; ++i) {
    specs.push_back(ObjectSpec{"missed-" + std::to_string(i), i, 1000 + i, {}});
    DFS_REQUIRE_OK(write_spec(c, "data", specs.back()));
  }
  DFS_REQUIRE_OK(cluster.start("osd.1"));
  DFS_REQUIRE_OK(cluster.wait_osds_up(3));
  auto problems = verify_objects(c, "data", specs, 8);
  CHECK_MESSAGE(problems.empty(),
                "reading writes made while osd.1 was down: " << summarize(problems));
  auto replica_problems = verify_replicas(c, "data", specs, 3, 8);
  CHECK_MESSAGE(replica_problems.empty(), "comparing replicas: " << summarize(replica_problems));
  DFS_CHECK_OK(cluster.check_healthy());
}

// `count` objects named PREFIX-i, of sizes first_size + i * size_step.
std::vector<ObjectSpec> numbered_specs(const std::string& prefix, size_t count, uint64_t first_seed,
                                       size_t first_size, size_t size_step) {
  std::vector<ObjectSpec> specs;
  for (size_t i = 0; i < count; ++i) {
    specs.push_back(ObjectSpec{prefix + "-" + std::to_string(i), first_seed + i,
                               first_size + size_step * i, {}});
  }
  return specs;
}

uint64_t recovered_objects(client::ObjectClient& c, int osds) {
  uint64_t total = 0;
  for (int id = 0; id < osds; ++id) {
    auto df = c.run(c.osd_statfs(id));
    if (df) total += df->recovered_objects();
  }
  return total;
}

// Stop an OSD, overwrite, remove and create objects, restart it:
// peering copies exactly the changed objects to it and nothing stale is served.
TEST_CASE("integration/objects: a restarted OSD receives exactly the objects it missed") {
  TestCluster cluster;
  INFO("cluster dir " << cluster.dir());
  auto client = cluster.boot_with_pool("data", 16, Duration(20000));
  DFS_REQUIRE_OK(client);
  auto& c = **client;
  std::vector<ObjectSpec> specs = numbered_specs("kept", 200, 0, 3000, 7);
  auto failures = write_objects(c, "data", specs);
  REQUIRE_MESSAGE(failures.empty(), summarize(failures));
  DFS_REQUIRE_OK(cluster.kill("osd.1"));
  DFS_REQUIRE_OK(cluster.wait_osd_down(1));
  uint64_t before = recovered_objects(c, 3);
  {  // Every PG lost a member: `dfs status` says so.
    auto status = run_command({cli_binary(), "-c", cluster.conf_path(), "status"}, cluster.dir(),
                              std::chrono::milliseconds(30000));
    DFS_REQUIRE_OK(status);
    INFO(status->out);
    CHECK(status->out.find("16 of 16 placement groups (100%) are degraded") != std::string::npos);
    CHECK(status->out.find("pgs:      16 total, ") != std::string::npos);
    CHECK(status->out.find(" active, 16 degraded") != std::string::npos);
  }

  // While osd.1 is down: 20 overwritten, 10 removed, 5 created.
  for (size_t i = 0; i < 20; ++i) {
    specs[i].seed = 10000 + i;
    specs[i].size = 5000 + i;
    DFS_REQUIRE_OK(write_spec(c, "data", specs[i]));
  }
  std::vector<std::string> removed;
  for (size_t i = 20; i < 30; ++i) {
    removed.push_back(specs[i].name);
    DFS_REQUIRE_OK(c.run(c.remove("data", specs[i].name)));
  }
  specs.erase(specs.begin() + 20, specs.begin() + 30);
  auto created = numbered_specs("new", 5, 500, 4000, 1);
  failures = write_objects(c, "data", created);
  REQUIRE_MESSAGE(failures.empty(), summarize(failures));
  specs.insert(specs.end(), created.begin(), created.end());

  DFS_REQUIRE_OK(cluster.start("osd.1"));
  DFS_REQUIRE_OK(cluster.wait_osds_up(3));
  // Through the primaries: each PG peers before it serves, so nothing stale is read.
  auto problems = verify_objects(c, "data", specs, 8);
  CHECK_MESSAGE(problems.empty(), "reading after osd.1 returned: " << summarize(problems));
  for (const auto& name : removed) {
    auto gone = c.run(c.read("data", name, 0, 0));
    CHECK_MESSAGE(!gone, name << " was removed but reads back");
    auto on_osd1 = c.run(c.read_from_osd("data", name, 1));
    CHECK_MESSAGE(!on_osd1, name << " was removed but osd.1 still holds it");
  }
  auto replica_problems = verify_replicas(c, "data", specs, 3, 8);
  CHECK_MESSAGE(replica_problems.empty(), "comparing replicas: " << summarize(replica_problems));
  // Exactly the 35 changed objects were copied (or removed), none of the 180 others.
  CHECK(recovered_objects(c, 3) - before == 35);
  DFS_CHECK_OK(cluster.check_healthy());
}

// Among 20,000 objects, an OSD killed for good is marked down, then out after
// mon_osd_down_out_interval; CRUSH gives its PGs another OSD, which peering fills
// (backfill), so every object is on three OSDs (three hosts) again, and writes made
// meanwhile succeed.
TEST_CASE("integration/objects: an OSD lost for good among 20000 objects is replaced by backfill") {
  ClusterOptions options;
  options.osds = 4;  // each its own host
  options.mon_osd_down_out_interval_s = 2;
  TestCluster cluster(options);
  INFO("cluster dir " << cluster.dir());
  auto client = cluster.boot_with_pool("data", 64, Duration(30000));
  DFS_REQUIRE_OK(client);
  auto& c = **client;
  std::vector<ObjectSpec> specs = numbered_specs("lost", 20000, 0, 1000, 0);
  auto failures = write_objects(c, "data", specs);
  REQUIRE_MESSAGE(failures.empty(), summarize(failures));
  DFS_REQUIRE_OK(cluster.kill("osd.3"));
  DFS_REQUIRE_OK(cluster.wait_osd_down(3));
  // Writes while it is down and while its data moves all succeed.
  auto during = numbered_specs("during", 50, 900, 3000, 1);
  failures = write_objects(c, "data", during);
  REQUIRE_MESSAGE(failures.empty(), "writes while osd.3 is down: " << summarize(failures));
  specs.insert(specs.end(), during.begin(), during.end());
  auto out_by = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    ClusterMap map = c.map_snapshot();
    const auto* osd3 = map.osd(3);
    if (osd3 && !osd3->in()) break;
    REQUIRE_MESSAGE(std::chrono::steady_clock::now() < out_by,
                    "osd.3 not marked out 30 s after it went down (map epoch " << map.epoch() << ")");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  // Backfill runs in the background, a PG at a time: wait until every acting set of
  // three holds every object.
  std::vector<std::string> replica_problems;
  auto recovered_by = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  do {
    auto problems = verify_objects(c, "data", specs, 8);  // through the primaries
    CHECK_MESSAGE(problems.empty(), "reading while osd.3 is out: " << summarize(problems));
    replica_problems = verify_replicas(c, "data", specs, 3, 8);
    if (replica_problems.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  } while (std::chrono::steady_clock::now() < recovered_by);
  CHECK_MESSAGE(replica_problems.empty(), "three copies after backfill: " << summarize(replica_problems));
  ClusterMap map = c.map_snapshot();
  const proto::Pool* pool = map.pool_by_name("data");
  REQUIRE(pool);
  for (uint32_t pg = 0; pg < pool->pg_num(); ++pg) {
    auto acting = map.acting(*pool, pg);
    CHECK_MESSAGE(acting.size() == 3, "pg " << pg << " has " << acting.size() << " OSDs");
    std::set<std::string> hosts;
    for (int32_t osd : acting) hosts.insert(map.osd(osd)->host());
    CHECK_MESSAGE(hosts.size() == acting.size(), "pg " << pg << " has two copies on one host");
  }
  CHECK(recovered_objects(c, 4) > 0);

  // The operator removes the dead OSD for good; a live one cannot be removed.
  auto purge = [&](int id) {
    return run_command({cli_binary(), "-c", cluster.conf_path(), "osd", "purge", std::to_string(id)},
                       cluster.dir(), std::chrono::milliseconds(30000));
  };
  auto refused = purge(0);
  DFS_REQUIRE_OK(refused);
  CHECK(refused->exit_code != 0);
  CHECK(refused->err.find("osd.0 is up") != std::string::npos);
  auto purged = purge(3);
  DFS_REQUIRE_OK(purged);
  INFO(purged->describe());
  CHECK(purged->exit_code == 0);
  auto gone_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (c.map_snapshot().osd(3) && std::chrono::steady_clock::now() < gone_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(c.map_snapshot().osd(3) == nullptr);
}

// A flapping OSD is damped: once the monitors marked it down twice (the limit set
// here), its next boot is held back for mon_osd_flap_hold, and it says why.
TEST_CASE("integration/objects: an OSD that keeps failing is held down for a while") {
  ClusterOptions options;
  options.extra_conf = {"mon_osd_flap_max_downs = 2", "mon_osd_flap_hold = 6"};
  TestCluster cluster(options);
  INFO("cluster dir " << cluster.dir());
  auto client = cluster.boot_with_pool("data", 8, Duration(20000));
  DFS_REQUIRE_OK(client);
  auto& c = **client;
  for (int round = 0; round < 2; ++round) {
    DFS_REQUIRE_OK(cluster.kill("osd.2"));
    DFS_REQUIRE_OK(cluster.wait_osd_down(2));
    if (round == 0) {
      DFS_REQUIRE_OK(cluster.start("osd.2"));
      DFS_REQUIRE_OK(cluster.wait_osds_up(3));
    }
  }
  auto restarted = std::chrono::steady_clock::now();
  DFS_REQUIRE_OK(cluster.start("osd.2"));
  DFS_REQUIRE_OK(cluster.wait_osds_up(3, Duration(30000)));
  auto held = std::chrono::steady_clock::now() - restarted;
  CHECK(held > std::chrono::seconds(4));
  CHECK(cluster.log_of("osd.2").find("is flapping: marked down 2 times") != std::string::npos);
  DFS_CHECK_OK(c.run(c.write_full("data", "after-flapping", "still here")));
  DFS_CHECK_OK(cluster.check_healthy());
}

TEST_SUITE_END();

}  // namespace dfs::test
