// An OSD names the file system its store is on, so that the cluster counts a disk
// shared by several OSDs once: stores on one file system get one id, stores on
// different ones different ids, and the name is the mount source people know.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "osd/store/store_device.h"
#include "tests/unit/osd_store/store_fixtures.h"

namespace dfs::osd::testing {
namespace {

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  in >> id;
  return id;
}

TEST_CASE("osd/store: mount_source_of reads /proc/self/mountinfo lines") {
  const std::string mountinfo =
      "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n"
      "23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
      "24 22 0:30 / /tmp rw,nosuid,nodev shared:14 master:3 - tmpfs tmpfs rw,size=8G\n"
      "25 22 7:3 / /var/lib/dfs/osd.0 rw,relatime - ext4 /dev/loop3 rw\n"
      "26 22 259:2 /srv/osd /var/lib/dfs/osd.1 rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n";
  CHECK(mount_source_of(mountinfo, 259, 2) == "/dev/nvme0n1p2");
  CHECK(mount_source_of(mountinfo, 0, 30) == "tmpfs");  // after optional fields
  CHECK(mount_source_of(mountinfo, 7, 3) == "/dev/loop3");
  CHECK(mount_source_of(mountinfo, 259, 20).empty());  // 259:2 is not a prefix match
  CHECK(mount_source_of(mountinfo, 8, 1).empty());
  CHECK(mount_source_of("", 8, 1).empty());
}

TEST_CASE("osd/store: two stores in one file system name one device, another file system another") {
  TempDir dir;
  const std::string a = dir.path() + "/osd.0", b = dir.path() + "/osd.1";
  std::filesystem::create_directories(a);
  std::filesystem::create_directories(b);
  auto da = store_device_of(a), db = store_device_of(b), proc = store_device_of("/proc");
  REQUIRE_MESSAGE(da.has_value(), why(da));
  REQUIRE_MESSAGE(db.has_value(), why(db));
  REQUIRE_MESSAGE(proc.has_value(), why(proc));
  CHECK(da->id == db->id);
  CHECK(da->id.rfind(boot_id() + "/", 0) == 0);
  CHECK_FALSE(da->name.empty());
  CHECK(proc->id != da->id);
  CHECK(proc->name == "proc");
}

TEST_CASE("osd/store: a store directory that is not there has no device") {
  TempDir dir;
  auto missing = store_device_of(dir.path() + "/never-made");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code() == ErrorCode::kNotFound);
}

TEST_CASE("osd/store: a dir store reports its device with its usage, a memory store none") {
  DirBackend dir_store;
  auto usage = dir_store.store->usage();
  REQUIRE_MESSAGE(usage.has_value(), why(usage));
  auto expected = store_device_of(dir_store.dir.path());
  REQUIRE(expected.has_value());
  CHECK(usage->device.id == expected->id);
  CHECK(usage->device.name == expected->name);

  MemoryBackend memory;
  CHECK(memory.store->usage()->device.id.empty());
}

}  // namespace
}  // namespace dfs::osd::testing
