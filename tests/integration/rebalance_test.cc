// A fourth host's OSD joins a cluster of three. CRUSH moves PGs
// only onto it (no PG moves between the three old OSDs), backfill copies exactly the
// objects of those PGs to it, its share of the replicas matches its share of the weight
// (a quarter) within 10%, every object reads back from every member, and the cluster
// is healthy.
#include <doctest/doctest.h>

#include <algorithm>
#include <thread>

#include "tests/support/object_checks.h"
#include "tests/support/process.h"
#include "tests/support/test_cluster.h"

namespace dfs::test {

TEST_SUITE_BEGIN("integration");

TEST_CASE("integration/rebalance: a new host's OSD receives its share and only that") {
  TestCluster cluster;
  INFO("cluster dir " << cluster.dir());
  constexpr uint32_t kPgs = 64;
  auto client = cluster.boot_with_pool("data", kPgs, Duration(20000));
  DFS_REQUIRE_OK(client);
  auto& c = **client;
  std::vector<ObjectSpec> specs;
  for (size_t i = 0; i < 1200; ++i) {
    specs.push_back(ObjectSpec{"spread-" + std::to_string(i), 7000 + i, 500 + (i * 37) % 6000, {}});
  }
  auto failures = write_objects(c, "data", specs);
  REQUIRE_MESSAGE(failures.empty(), summarize(failures));
  ClusterMap before = c.map_snapshot();

  auto added = cluster.add_osd();
  DFS_REQUIRE_OK(added);
  REQUIRE(*added == 3);
  auto deadline = Clock::now() + Duration(10000);
  while (!c.map_snapshot().is_up(3) && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ClusterMap after = c.map_snapshot();
  const proto::Pool* pool = after.pool_by_name("data");
  REQUIRE(pool != nullptr);

  // Only onto the new OSD: each PG keeps its old members but at most the ones osd.3 took.
  std::vector<bool> moved(kPgs, false);
  for (uint32_t pg = 0; pg < kPgs; ++pg) {
    auto old_set = before.acting(*before.pool_by_name("data"), pg);
    auto new_set = after.acting(*pool, pg);
    CAPTURE(pg);
    REQUIRE(new_set.size() == 3);
    for (int32_t osd : new_set) {
      CHECK((osd == 3 || std::count(old_set.begin(), old_set.end(), osd) == 1));
    }
    moved[pg] = std::count(new_set.begin(), new_set.end(), 3) == 1;
  }
  size_t expected = 0;
  for (const auto& spec : specs) expected += moved[ClusterMap::pg_of(*pool, spec.name)];

  // Backfill copies exactly those objects to osd.3.
  uint64_t on_new = 0;
  deadline = Clock::now() + Duration(60000);
  while (Clock::now() < deadline) {
    auto df = c.run(c.osd_statfs(3));
    if (df) on_new = df->objects();
    if (on_new >= expected) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  CHECK(on_new == expected);
  // Its share of the replicas against its share of the weight (1 of 4).
  double share = static_cast<double>(on_new) / static_cast<double>(3 * specs.size());
  INFO("osd.3 holds " << on_new << " of " << 3 * specs.size() << " replicas (" << share * 100 << "%)");
  CHECK(share > 0.25 * 0.9);
  CHECK(share < 0.25 * 1.1);

  auto problems = verify_replicas(c, "data", specs, 3, 8);
  CHECK_MESSAGE(problems.empty(), "after the rebalance: " << summarize(problems));
  auto status = run_command({cli_binary(), "-c", cluster.conf_path(), "status"}, cluster.dir(),
                            std::chrono::milliseconds(30000));
  DFS_REQUIRE_OK(status);
  CHECK(status->out.find("health:   OK") != std::string::npos);

  // Halving osd.3's weight moves PGs off it only: a PG it was not in stays where it is.
  auto reweight = run_command({cli_binary(), "-c", cluster.conf_path(), "osd", "reweight", "3", "0.5"},
                              cluster.dir(), std::chrono::milliseconds(30000));
  DFS_REQUIRE_OK(reweight);
  INFO(reweight->describe());
  REQUIRE(reweight->exit_code == 0);
  deadline = Clock::now() + Duration(10000);
  while (c.map_snapshot().osd(3)->weight() != 0.5 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ClusterMap halved = c.map_snapshot();
  REQUIRE(halved.osd(3)->weight() == 0.5);
  size_t left_osd3 = 0;
  for (uint32_t pg = 0; pg < kPgs; ++pg) {
    auto was = after.acting(*pool, pg);
    auto now = halved.acting(*halved.pool_by_name("data"), pg);
    CAPTURE(pg);
    if (!moved[pg]) CHECK(now == was);
    CHECK(std::count(now.begin(), now.end(), 3) <= std::count(was.begin(), was.end(), 3));
    left_osd3 += moved[pg] && std::count(now.begin(), now.end(), 3) == 0;
  }
  CHECK(left_osd3 > 0);
  problems.clear();
  deadline = Clock::now() + Duration(60000);
  do {  // the PGs that left osd.3 are backfilled onto their new members
    problems = verify_replicas(c, "data", specs, 3, 8);
    if (problems.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  } while (Clock::now() < deadline);
  CHECK_MESSAGE(problems.empty(), "after the reweight: " << summarize(problems));
  DFS_CHECK_OK(cluster.check_healthy());
}

}  // namespace dfs::test
