// What `dfs health` and `dfs df` say must be what is true. A dead OSD makes the cluster
// WARN while its placement groups run on fewer copies, and stops doing so once it is out
// and recovery has put every PG back on its full number of copies: then it is a note
// and health is OK. And OSDs whose stores share one disk (all of a test cluster's do)
// count that disk's size and use once, as df(1) shows them, not once per OSD.
#include <doctest/doctest.h>

#include <cmath>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/support/object_checks.h"
#include "tests/support/process.h"
#include "tests/support/test_cluster.h"

namespace dfs::test {
namespace {

using std::chrono::milliseconds;

CommandResult dfs_cli(const TestCluster& cluster, std::vector<std::string> args) {
  args.insert(args.begin(), {cli_binary(), "-c", cluster.conf_path()});
  auto result = run_command(args, cluster.dir(), milliseconds(60000));
  DFS_REQUIRE_OK(result);
  return *result;
}

// A number from `dfs status --format json`: `field` inside the object `section`
// ("pgs", "capacity"). -1 when absent.
int64_t status_number(const std::string& json, const std::string& section, const std::string& field) {
  std::smatch m;
  const std::regex object("\"" + section + "\": \\{([^}]*)\\}");
  if (!std::regex_search(json, m, object)) return -1;
  const std::string inner = m[1];
  const std::regex number("\"" + field + "\": ([0-9]+)");
  if (!std::regex_search(inner, m, number)) return -1;
  return std::stoll(m[1]);
}

struct PgCounts {
  int64_t total = -1, active = -1, degraded = -1;
  std::string status;  // the JSON they came from, for failure messages
  bool whole() const { return total > 0 && active == total && degraded == 0; }
};

PgCounts pg_counts(const TestCluster& cluster) {
  auto r = dfs_cli(cluster, {"status", "--format", "json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  return {status_number(r.out, "pgs", "total"), status_number(r.out, "pgs", "active"),
          status_number(r.out, "pgs", "degraded"), r.out};
}

// Polls `dfs status` until `done` holds for its PG counts, for at most `timeout`.
template <class Done>
PgCounts wait_pgs(const TestCluster& cluster, Done done, milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  PgCounts pgs = pg_counts(cluster);
  while (!done(pgs) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(300));
    pgs = pg_counts(cluster);
  }
  return pgs;
}

}  // namespace

TEST_SUITE_BEGIN("integration");

TEST_CASE("integration/health: a dead OSD warns until it is out and its PGs are whole again") {
  TestCluster cluster(ClusterOptions{.osds = 4});
  INFO("cluster dir " << cluster.dir());
  auto client = cluster.boot_with_pool("data", 32, Duration(20000));
  DFS_REQUIRE_OK(client);
  std::vector<ObjectSpec> specs;
  for (size_t i = 0; i < 300; ++i) specs.push_back(ObjectSpec{"obj-" + std::to_string(i), 100 + i, 3000, {}});
  auto failures = write_objects(**client, "data", specs);
  REQUIRE_MESSAGE(failures.empty(), summarize(failures));
  PgCounts pgs = wait_pgs(cluster, [](const PgCounts& p) { return p.whole(); }, milliseconds(30000));
  REQUIRE_MESSAGE(pgs.whole(), pgs.status);
  auto healthy = dfs_cli(cluster, {"health"});
  CHECK_MESSAGE((healthy.exit_code == 0 && healthy.out == "OK\n"), healthy.describe());

  // osd.3 dies; the operator who knows says so at once rather than waiting for the grace.
  DFS_REQUIRE_OK(cluster.kill("osd.3"));
  auto down = dfs_cli(cluster, {"osd", "down", "3"});
  REQUIRE_MESSAGE(down.exit_code == 0, down.describe());
  pgs = wait_pgs(cluster, [](const PgCounts& p) { return p.degraded > 0; }, milliseconds(10000));
  REQUIRE_MESSAGE(pgs.degraded > 0, pgs.status);
  auto degraded = dfs_cli(cluster, {"health"});
  CHECK_MESSAGE(degraded.exit_code == 1, degraded.describe());
  CHECK_MESSAGE(degraded.out.rfind("WARN: ", 0) == 0, degraded.describe());
  auto degraded_detail = dfs_cli(cluster, {"health", "detail"});
  CHECK_MESSAGE(degraded_detail.out.find("osd.3 on host3 is down") != std::string::npos,
                degraded_detail.describe());
  CHECK_MESSAGE(degraded_detail.out.find("its placement groups run on fewer copies") != std::string::npos,
                degraded_detail.describe());

  // Out: CRUSH gives its PGs to the other three OSDs and peering fills them.
  auto out = dfs_cli(cluster, {"osd", "out", "3"});
  REQUIRE_MESSAGE(out.exit_code == 0, out.describe());
  pgs = wait_pgs(cluster, [](const PgCounts& p) { return p.whole(); }, milliseconds(90000));
  REQUIRE_MESSAGE(pgs.whole(), pgs.status);
  // The note below claims the data was re-replicated: check that it was.
  auto problems = verify_replicas(**client, "data", specs, 3);
  REQUIRE_MESSAGE(problems.empty(), summarize(problems));

  auto recovered = dfs_cli(cluster, {"health"});
  CHECK_MESSAGE(recovered.exit_code == 0, recovered.describe());
  CHECK_MESSAGE(recovered.out == "OK: 1 note (dfs health detail)\n", recovered.describe());
  auto detail = dfs_cli(cluster, {"health", "detail"});
  CHECK_MESSAGE(detail.exit_code == 0, detail.describe());
  CHECK_MESSAGE(detail.out.find("[note] osd.3 on host3 is down and out") != std::string::npos,
                detail.describe());
  CHECK_MESSAGE(detail.out.find("re-replicated") != std::string::npos, detail.describe());
  CHECK_MESSAGE(detail.out.find("fewer copies") == std::string::npos, detail.describe());
  CHECK_MESSAGE(detail.out.find("[WARN]") == std::string::npos, detail.describe());
  auto status = dfs_cli(cluster, {"status"});
  CHECK_MESSAGE(status.out.find("health:   OK") != std::string::npos, status.describe());
  CHECK_MESSAGE(status.out.find("fewer copies") == std::string::npos, status.describe());
  DFS_CHECK_OK(cluster.check_healthy());
}

TEST_CASE("integration/df: OSDs on one disk count its size and use once") {
  TestCluster cluster;  // three OSDs, their stores side by side under one directory
  INFO("cluster dir " << cluster.dir());
  DFS_REQUIRE_OK(cluster.boot());
  // What df(1) says of the file system holding the stores, before and after the CLI
  // asks: the machine goes on writing (builds, other tests) meanwhile.
  auto df_of_dir = [&] {
    auto r = run_command({"df", "-B1", "--output=size,used", cluster.dir()}, cluster.dir(),
                         milliseconds(10000));
    DFS_REQUIRE_OK(r);
    REQUIRE_MESSAGE(r->exit_code == 0, r->describe());
    std::istringstream in(r->out);
    std::string size_title, used_title;
    uint64_t size = 0, used = 0;
    in >> size_title >> used_title >> size >> used;
    REQUIRE_MESSAGE(size > 0, r->describe());
    return std::pair{size, used};
  };
  const auto [disk_size, used_before] = df_of_dir();
  auto json = dfs_cli(cluster, {"status", "--format", "json"});
  auto text = dfs_cli(cluster, {"df"});
  const auto [disk_size_after, used_after] = df_of_dir();
  REQUIRE_MESSAGE(json.exit_code == 0, json.describe());
  REQUIRE_MESSAGE(text.exit_code == 0, text.describe());
  REQUIRE(disk_size_after == disk_size);

  const int64_t total = status_number(json.out, "capacity", "total_bytes");
  const int64_t used = status_number(json.out, "capacity", "used_bytes");
  INFO("df -B1: " << disk_size << " bytes, " << used_before << ".." << used_after
                  << " used; dfs status: " << total << " raw, " << used << " used");
  CHECK(status_number(json.out, "capacity", "osds") == 3);
  CHECK(status_number(json.out, "capacity", "devices") == 1);
  // The size is the disk's, exactly (three times it before).
  CHECK(total == static_cast<int64_t>(disk_size));
  // The use, within what the machine wrote while we looked, and never near three times.
  const int64_t low = std::min(used_before, used_after), high = std::max(used_before, used_after);
  const int64_t slack = std::min<int64_t>(int64_t{256} << 20, low / 4);
  CHECK(used >= low - slack);
  CHECK(used <= high + slack);

  // The text says so too: each OSD on device #1, the raw line the disk's size once.
  CHECK_MESSAGE(text.out.find("3 OSDs on 1 device") != std::string::npos, text.describe());
  std::istringstream lines(text.out);
  int on_device_one = 0;
  double raw_gib = -1;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("osd.", 0) == 0 && line.find(" #1 ") != std::string::npos) ++on_device_one;
    if (line.rfind("raw, up OSDs", 0) == 0) raw_gib = std::stod(line.substr(std::string("raw, up OSDs").size()));
  }
  CHECK_MESSAGE(on_device_one == 3, text.describe());
  CHECK_MESSAGE(std::abs(raw_gib - disk_size / double(1ull << 30)) < 0.06, text.describe());
}

TEST_SUITE_END();

}  // namespace dfs::test
