// An OSD whose disk fills up. Each OSD's store lives on its own
// tmpfs, osd.2's small (256 MiB, of which RocksDB's preallocated WAL takes ~75 MiB at
// once); written until the cluster refuses: the refusal is kNoSpace
// (ENOSPC through the file system), `dfs status` says which OSD is full, every object
// acknowledged before reads back intact on every replica, and deleting objects clears
// the state so that writes succeed again.
#include <doctest/doctest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "tests/support/process.h"
#include "tests/support/test_cluster.h"
#include "tests/support/test_data.h"

namespace dfs::test {
namespace {

constexpr size_t kObjectBytes = 256 * 1024;

std::string object_name(size_t i) { return "filler-" + std::to_string(i); }
std::string content_of(size_t i) { return object_bytes(5000 + i, kObjectBytes); }

// A tmpfs of `mib` MiB at `path` for the life of this object (a small disk).
class TmpfsMount {
 public:
  TmpfsMount(std::string path, size_t mib) : path_(std::move(path)) {
    std::filesystem::create_directories(path_);
    std::string data = "size=" + std::to_string(mib) + "m";
    mounted_ = ::mount("tmpfs", path_.c_str(), "tmpfs", 0, data.c_str()) == 0;
  }
  ~TmpfsMount() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);  // the OSD may still hold it
  }
  TmpfsMount(const TmpfsMount&) = delete;
  TmpfsMount& operator=(const TmpfsMount&) = delete;
  bool mounted() const { return mounted_; }

 private:
  std::string path_;
  bool mounted_ = false;
};

proto::OsdSpace space_of(client::ObjectClient& c, int32_t osd) {
  ClusterMap map = c.map_snapshot();
  const auto* info = map.osd(osd);
  return info ? info->space() : proto::SPACE_OK;
}

std::string status_text(const TestCluster& cluster) {
  auto status = run_command({cli_binary(), "-c", cluster.conf_path(), "status"}, cluster.dir(),
                            std::chrono::milliseconds(30000));
  DFS_REQUIRE_OK(status);
  return status->out;
}

}  // namespace

TEST_SUITE_BEGIN("integration");

TEST_CASE("integration/space: a full OSD refuses writes with ENOSPC until space is freed") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: mounting the OSDs' small tmpfs disks needs root");
    return;
  }
  ClusterOptions options;
  // Full at 60% of osd.2's 256 MiB: the beacons' second of lag stays far from the
  // store's own last-16-MiB reserve. No 64 MiB WAL prefill on such small disks.
  options.extra_conf = {"mon_osd_full_ratio = 0.6", "mon_osd_nearfull_ratio = 0.45",
                        "osd_wal_prefill_bytes = 0"};
  TestCluster cluster(options);
  INFO("cluster dir " << cluster.dir());
  TmpfsMount disk0(cluster.dir() + "/osd.0", 1024), disk1(cluster.dir() + "/osd.1", 1024),
      disk2(cluster.dir() + "/osd.2", 256);
  REQUIRE((disk0.mounted() && disk1.mounted() && disk2.mounted()));
  auto client = cluster.boot_with_pool("data", 8, Duration(20000));
  DFS_REQUIRE_OK(client);
  auto& c = **client;

  size_t written = 0;
  std::optional<Error> refusal;
  for (; written < 1000; ++written) {
    // At most ~25 MB/s: the monitors judge fullness from once-a-second beacons, and a
    // disk this small could otherwise go from the full ratio to the store's reserve
    // between two of them.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    auto w = c.run(c.write_full("data", object_name(written), content_of(written)));
    if (!w) {
      refusal = w.error();
      break;
    }
  }
  REQUIRE_MESSAGE(refusal, "1000 writes of 256 KiB fit on a 256 MiB OSD");
  INFO("refused after " << written << " objects: " << refusal->to_string());
  MESSAGE("refused after " << written << " objects of 256 KiB: " << refusal->to_string());
  CHECK(refusal->code() == ErrorCode::kNoSpace);
  CHECK(refusal->to_string().find("osd.2 is full") != std::string::npos);
  CHECK(written > 100);  // about (154 - 75) MiB / 256 KiB = 316 fit before the full ratio
  CHECK(space_of(c, 2) == proto::SPACE_FULL);
  CHECK(space_of(c, 0) == proto::SPACE_OK);
  std::string status = status_text(cluster);
  INFO(status);
  CHECK(status.find("health:   ERR") != std::string::npos);
  CHECK(status.find("osd.2 on host2 is full") != std::string::npos);
  CHECK(status.find("ENOSPC") != std::string::npos);

  // Everything acknowledged is intact, on every member.
  for (size_t i = 0; i < written; ++i) {
    for (int32_t osd = 0; osd < 3; ++osd) {
      auto copy = c.run(c.read_from_osd("data", object_name(i), osd));
      DFS_REQUIRE_OK(copy);
      REQUIRE_MESSAGE(*copy == content_of(i), object_name(i) << " differs on osd." << osd);
    }
  }

  // Deleting makes room: the state clears with the next beacons, and writes succeed.
  for (size_t i = 0; i < written; i += 2) DFS_REQUIRE_OK(c.run(c.remove("data", object_name(i))));
  auto deadline = Clock::now() + Duration(20000);
  while (space_of(c, 2) == proto::SPACE_FULL && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(space_of(c, 2) != proto::SPACE_FULL);
  DFS_CHECK_OK(c.run(c.write_full("data", object_name(1000), content_of(1000))));
  CHECK(status_text(cluster).find("is full") == std::string::npos);
  DFS_CHECK_OK(cluster.check_healthy());
}

}  // namespace dfs::test
