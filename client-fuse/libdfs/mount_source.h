// Where a cluster and a file system in it are: the source of a mount,
// "mon1[,mon2...][:port]:/[subdir]", as mount(8), /etc/fstab and /proc/mounts show it.
// Pure parsing, for mount.dfs and for tools that find the cluster behind a mount.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status/status.h"

namespace dfs::client {

inline constexpr uint16_t kDefaultMonPort = 6789;

struct Source {
  std::vector<std::string> mon_addrs;  // host:port; empty: take mon_addrs from the config
  std::string subdir = "/";            // normalised: "/", "/a/b"
};

// Parses "mon1[,mon2...][:port]:/[subdir]". A port on the last monitor applies to
// monitors given without one; otherwise the port is 6789. IPv6 addresses go in
// brackets. Errors: kInvalidArgument.
Result<Source> parse_source(const std::string& text);

}  // namespace dfs::client
