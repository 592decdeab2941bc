// Which file system holds an OSD's store, named so that OSDs sharing one disk can be
// told apart from OSDs with a disk each: the cluster's capacity (`dfs df`, `dfs status`,
// a mount's statfs) counts a shared disk's size and use once, not once per OSD
// (common/capacity/cluster_space.h).
#pragma once

#include <string>
#include <string_view>

#include "common/status/status.h"

namespace dfs::osd {

struct StoreDevice {
  // Equal ids: one file system. "<boot id>/<major>:<minor>": the kernel's boot id and the
  // store directory's st_dev. A device number names a file system only within one running
  // kernel (two hosts both have an 8:1), and the boot id tells kernels apart; OSDs in
  // network namespaces or containers of one machine share the kernel, and its disk.
  // Empty: unknown, so the store counts as a device of its own.
  std::string id;
  // For people: the mount source ("/dev/nvme0n1p2", "tmpfs"), with a loop device's
  // backing file ("/dev/loop3 on /var/lib/dfs-osd.0.img"); "major:minor" when unknown.
  std::string name;
};

// Errors: kIoError or kNotFound (`dir` cannot be stat'ed, the boot id cannot be read).
Result<StoreDevice> store_device_of(const std::string& dir);

// The mount source of the file system whose device number is major:minor, from the text
// of /proc/self/mountinfo ("36 35 8:1 / /srv rw - ext4 /dev/sda1 rw"); empty if no line
// has it. Pure, for the tests.
std::string mount_source_of(std::string_view mountinfo, unsigned major, unsigned minor);

}  // namespace dfs::osd
