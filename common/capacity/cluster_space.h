// The cluster's raw capacity from its OSDs' statfs answers, each disk counted once.
// OSDs whose stores share a file system (a development machine, OSDs in containers or
// network namespaces of one host, two stores on one disk) each report that file
// system's whole size and use; summing them would multiply the disk. Pure: `dfs df`,
// `dfs status` and a mount's statfs gather the answers, this adds them up.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/proto/osd.pb.h"

namespace dfs::capacity {

// One OSD's answer.
struct OsdSpace {
  int32_t osd = 0;
  uint64_t total_bytes = 0, used_bytes = 0, available_bytes = 0;
  uint64_t objects = 0;  // in this OSD's own store
  // Equal ids: one file system (osd/store/store_device.h). Empty: unknown, so a disk
  // of its own.
  std::string device_id;
  std::string device_name;  // for people: "/dev/nvme0n1p2"
};

OsdSpace space_of(int32_t osd, const proto::StatFsReply& reply);

// One file system and the OSDs whose stores are on it.
struct DeviceSpace {
  std::string name;
  std::vector<int32_t> osds;
  uint64_t total_bytes = 0, used_bytes = 0, available_bytes = 0;
};

struct ClusterSpace {
  // Each device once. Sums saturate: an in-memory store reports an unbounded size.
  uint64_t total_bytes = 0, used_bytes = 0, available_bytes = 0;
  uint64_t objects = 0;              // every OSD's, since each store holds its own
  size_t osds = 0;                   // OSDs that answered
  std::vector<DeviceSpace> devices;  // in the order of the OSDs first on them

  // "3 OSDs on 1 device", "5 OSDs on 3 devices"; empty when no device is shared, as
  // then every figure is plainly per OSD.
  std::string sharing() const;
  // 1-based number of the device `osd` is on (for a DEVICE column); 0: not among them.
  size_t device_number_of(int32_t osd) const;
};

// The OSDs of one device sampled its statvfs at slightly different moments: the device
// counts with the fullest of their views (the largest size and use, the least free).
ClusterSpace sum_space(const std::vector<OsdSpace>& osds);

}  // namespace dfs::capacity
