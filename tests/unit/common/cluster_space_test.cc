// The cluster's capacity counts each disk once: OSDs that report one device (the same
// file system) add its size and use once, OSDs with a disk each add theirs.
#include <doctest/doctest.h>

#include <limits>

#include "common/capacity/cluster_space.h"

namespace dfs::capacity {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

OsdSpace osd_on(int32_t id, std::string device, uint64_t total, uint64_t used, uint64_t objects = 10) {
  return OsdSpace{id, total, used, total - used, objects, device, device.empty() ? "" : "/dev/" + device};
}

TEST_CASE("capacity: three OSDs on one disk count its size and use once") {
  // The figures from the report that found this: a 252 GiB disk, 20.2 GiB used, seen
  // by three OSDs a moment apart.
  const uint64_t total = 252 * kGiB, used = 20 * kGiB;
  ClusterSpace cap = sum_space({osd_on(0, "boot/259:2", total, used),
                                osd_on(1, "boot/259:2", total, used + 4096),
                                osd_on(2, "boot/259:2", total, used)});
  CHECK(cap.total_bytes == total);
  CHECK(cap.used_bytes == used + 4096);  // the fullest view
  CHECK(cap.available_bytes == total - used - 4096);
  CHECK(cap.objects == 30);  // each store's objects are its own
  CHECK(cap.osds == 3);
  REQUIRE(cap.devices.size() == 1);
  CHECK(cap.devices[0].osds == std::vector<int32_t>{0, 1, 2});
  CHECK(cap.devices[0].name == "/dev/boot/259:2");
  CHECK(cap.sharing() == "3 OSDs on 1 device");
  CHECK(cap.device_number_of(2) == 1);
  CHECK(cap.device_number_of(7) == 0);
}

TEST_CASE("capacity: OSDs with a disk each add up, and say nothing about sharing") {
  ClusterSpace cap = sum_space({osd_on(0, "a/8:1", 100 * kGiB, 10 * kGiB),
                                osd_on(1, "b/8:1", 200 * kGiB, 30 * kGiB)});
  CHECK(cap.total_bytes == 300 * kGiB);
  CHECK(cap.used_bytes == 40 * kGiB);
  CHECK(cap.devices.size() == 2);
  CHECK(cap.sharing().empty());
  CHECK(cap.device_number_of(1) == 2);
}

TEST_CASE("capacity: two hosts with two OSDs on one disk each") {
  ClusterSpace cap = sum_space({osd_on(0, "host1/8:1", 100 * kGiB, 10 * kGiB),
                                osd_on(1, "host2/8:1", 100 * kGiB, 20 * kGiB),
                                osd_on(2, "host1/8:1", 100 * kGiB, 10 * kGiB),
                                osd_on(3, "host2/8:1", 100 * kGiB, 20 * kGiB),
                                osd_on(4, "host2/8:17", 50 * kGiB, 1 * kGiB)});
  CHECK(cap.total_bytes == 250 * kGiB);
  CHECK(cap.used_bytes == 31 * kGiB);
  CHECK(cap.sharing() == "5 OSDs on 3 devices");
  CHECK(cap.device_number_of(2) == 1);
  CHECK(cap.device_number_of(3) == 2);
  CHECK(cap.device_number_of(4) == 3);
}

TEST_CASE("capacity: an OSD that cannot name its device counts as a disk of its own") {
  ClusterSpace cap = sum_space({osd_on(0, "", 100 * kGiB, 10 * kGiB),
                                osd_on(1, "", 100 * kGiB, 10 * kGiB)});
  CHECK(cap.total_bytes == 200 * kGiB);
  CHECK(cap.devices.size() == 2);
  CHECK(cap.sharing().empty());
}

TEST_CASE("capacity: unbounded in-memory stores saturate instead of wrapping") {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  ClusterSpace cap = sum_space({osd_on(0, "", kMax, 5), osd_on(1, "", kMax, 7)});
  CHECK(cap.total_bytes == kMax);
  CHECK(cap.used_bytes == 12);
}

TEST_CASE("capacity: a statfs answer's figures and device carry over") {
  proto::StatFsReply reply;
  reply.set_total_bytes(1000);
  reply.set_used_bytes(300);
  reply.set_available_bytes(600);
  reply.set_objects(4);
  reply.set_device_id("boot/8:1");
  reply.set_device_name("/dev/sda1");
  OsdSpace s = space_of(5, reply);
  CHECK(s.osd == 5);
  CHECK(s.total_bytes == 1000);
  CHECK(s.used_bytes == 300);
  CHECK(s.available_bytes == 600);
  CHECK(s.objects == 4);
  CHECK(s.device_id == "boot/8:1");
  CHECK(s.device_name == "/dev/sda1");
}

}  // namespace
}  // namespace dfs::capacity
