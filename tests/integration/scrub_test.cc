// Silent corruption. Bytes flipped in one replica's data file on
// disk, behind the OSD's back: reads stay correct, a deep scrub reports the object and
// repairs it, and a second deep scrub is clean; a read that meets a bad checksum in the
// primary's copy repairs it; the schedule finds and repairs corruption nobody asked about.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/support/process.h"
#include "tests/support/test_cluster.h"
#include "tests/support/test_data.h"

namespace dfs::test {
namespace {

// Above the store's 64 KiB deferred-write limit, so each object's data goes straight to
// a file of its own when written (osd/store/FORMAT.md, "Write modes").
constexpr size_t kObjectBytes = 200 * 1024;
constexpr size_t kObjects = 24;

std::string object_name(size_t i) { return "scrubbed-" + std::to_string(i); }
std::string content_of(size_t i) { return object_bytes(900 + i, kObjectBytes); }

// The data file on osd `id`'s disk whose first 4 KiB are the object's: the store names
// files by number, not by object.
std::string data_file_of(const TestCluster& cluster, int id, const std::string& content) {
  namespace fs = std::filesystem;
  const std::string head = content.substr(0, 4096);
  for (const auto& entry :
       fs::recursive_directory_iterator(cluster.dir() + "/" + TestCluster::osd_name(id) + "/objects")) {
    if (!entry.is_regular_file() || entry.file_size() < content.size()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string start(head.size(), '\0');
    in.read(start.data(), static_cast<std::streamsize>(start.size()));
    if (start == head) return entry.path().string();
  }
  return "";
}

// Inverts 16 bytes at `offset` of `path`, as a failing disk might.
void flip_bytes(const std::string& path, uint64_t offset) {
  INFO("corrupting " << path);
  int fd = ::open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  char buf[16];
  REQUIRE(::pread(fd, buf, sizeof buf, static_cast<off_t>(offset)) == static_cast<ssize_t>(sizeof buf));
  for (char& b : buf) b = static_cast<char>(~b);
  REQUIRE(::pwrite(fd, buf, sizeof buf, static_cast<off_t>(offset)) == static_cast<ssize_t>(sizeof buf));
  ::close(fd);
}

struct Placement {
  uint32_t pg = 0;
  std::vector<int32_t> osds;  // acting set, primary first
};

Placement placement_of(client::ObjectClient& c, const std::string& name) {
  ClusterMap map = c.map_snapshot();
  const proto::Pool* pool = map.pool_by_name("data");
  REQUIRE(pool != nullptr);
  Placement p;
  p.pg = ClusterMap::pg_of(*pool, name);
  p.osds = map.acting(*pool, p.pg);
  REQUIRE(p.osds.size() == 3);
  return p;
}

// Boots the cluster with pool "data" (8 PGs) and writes the kObjects objects.
std::unique_ptr<client::ObjectClient> boot_and_fill(TestCluster& cluster) {
  auto client = cluster.boot_with_pool("data", 8, Duration(20000));
  DFS_REQUIRE_OK(client);
  auto& c = **client;
  for (size_t i = 0; i < kObjects; ++i) DFS_REQUIRE_OK(c.run(c.write_full("data", object_name(i), content_of(i))));
  return std::move(*client);
}

// Corrupts object `i`'s copy on `osd` and checks that this copy no longer reads back.
void corrupt_copy(const TestCluster& cluster, client::ObjectClient& c, size_t i, int32_t osd) {
  std::string file = data_file_of(cluster, osd, content_of(i));
  REQUIRE_MESSAGE(!file.empty(), "no data file of " << object_name(i) << " on osd." << osd);
  flip_bytes(file, 100000);
  auto copy = c.run(c.read_from_osd("data", object_name(i), osd));
  REQUIRE_MESSAGE(!copy, "osd." << osd << " served its corrupted copy");
  CHECK(copy.error().code() == ErrorCode::kCorruption);
}

// Waits until osd's copy of object i reads back right.
bool wait_repaired(client::ObjectClient& c, size_t i, int32_t osd, Duration timeout) {
  auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    auto copy = c.run(c.read_from_osd("data", object_name(i), osd));
    if (copy && *copy == content_of(i)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace

TEST_SUITE_BEGIN("integration");

TEST_CASE("integration/scrub: deep scrub finds a corrupted replica and repairs it") {
  TestCluster cluster;
  INFO("cluster dir " << cluster.dir());
  auto client = boot_and_fill(cluster);
  auto& c = *client;
  const size_t victim = 3;
  Placement where = placement_of(c, object_name(victim));
  const int32_t replica = where.osds[1];
  corrupt_copy(cluster, c, victim, replica);

  // Reads go to the primary, whose copy is good.
  auto read = c.run(c.read("data", object_name(victim), 0, 0));
  DFS_REQUIRE_OK(read);
  CHECK(*read == content_of(victim));

  // A scrub compares versions and sizes only: the same on every member.
  auto shallow = c.run(c.scrub_pg("data", where.pg, false));
  DFS_REQUIRE_OK(shallow);
  CHECK(shallow->inconsistent() == 0);

  auto deep = c.run(c.scrub_pg("data", where.pg, true));
  DFS_REQUIRE_OK(deep);
  CHECK(deep->inconsistent() == 1);
  CHECK(deep->repaired() == 1);
  REQUIRE(deep->findings_size() == 1);
  const std::string& finding = deep->findings(0);
  INFO("finding: " << finding);
  CHECK(finding.find(object_name(victim) + " on osd." + std::to_string(replica)) != std::string::npos);
  CHECK(finding.find("checksum") != std::string::npos);
  CHECK(finding.find("repaired from osd.") != std::string::npos);
  auto repaired = c.run(c.read_from_osd("data", object_name(victim), replica));
  DFS_REQUIRE_OK(repaired);
  CHECK(*repaired == content_of(victim));

  auto again = c.run(c.scrub_pg("data", where.pg, true));
  DFS_REQUIRE_OK(again);
  CHECK(again->inconsistent() == 0);
  CHECK(again->objects() == deep->objects());
  auto df = c.run(c.osd_statfs(where.osds[0]));
  DFS_REQUIRE_OK(df);
  CHECK(df->inconsistent_objects() == 1);
  CHECK(df->repaired_objects() == 1);

  // The same through the CLI, over every PG of the pool: clean, exit status 0.
  auto cli = run_command({cli_binary(), "-c", cluster.conf_path(), "pg", "deep-scrub", "data"},
                         cluster.dir(), std::chrono::milliseconds(60000));
  DFS_REQUIRE_OK(cli);
  INFO(cli->describe());
  CHECK(cli->exit_code == 0);
  CHECK(cli->out.find("8 PGs deep-scrubbed, " + std::to_string(kObjects) +
                      " objects: 0 inconsistent, 0 repaired") != std::string::npos);
  DFS_CHECK_OK(cluster.check_healthy());
}

TEST_CASE("integration/scrub: a read that meets a bad checksum on the primary repairs it") {
  TestCluster cluster;
  INFO("cluster dir " << cluster.dir());
  auto client = boot_and_fill(cluster);
  auto& c = *client;
  const size_t victim = 5;
  Placement where = placement_of(c, object_name(victim));
  corrupt_copy(cluster, c, victim, where.osds[0]);

  auto read = c.run(c.read("data", object_name(victim), 0, 0));
  DFS_REQUIRE_OK(read);
  CHECK(*read == content_of(victim));  // served from a replica
  CHECK(wait_repaired(c, victim, where.osds[0], Duration(10000)));
  auto df = c.run(c.osd_statfs(where.osds[0]));
  DFS_REQUIRE_OK(df);
  CHECK(df->repaired_objects() == 1);
  auto deep = c.run(c.scrub_pg("data", where.pg, true));
  DFS_REQUIRE_OK(deep);
  CHECK(deep->inconsistent() == 0);
  DFS_CHECK_OK(cluster.check_healthy());
}

TEST_CASE("integration/scrub: the scheduled deep scrub repairs a copy nobody reads") {
  ClusterOptions options;
  options.osd_deep_scrub_interval_s = 1;
  TestCluster cluster(options);
  INFO("cluster dir " << cluster.dir());
  auto client = boot_and_fill(cluster);
  auto& c = *client;
  const size_t victim = 7;
  Placement where = placement_of(c, object_name(victim));
  corrupt_copy(cluster, c, victim, where.osds[2]);
  CHECK(wait_repaired(c, victim, where.osds[2], Duration(30000)));
  DFS_CHECK_OK(cluster.check_healthy());
}

}  // namespace dfs::test
