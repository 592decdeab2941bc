// The monitor quorum as dfs.conf describes it: every [mon.X] section with its address
// and a Raft node id that does not change as long as the sections do. Pure; used by
// dfs-mon's main() and by tests.
#pragma once

#include <string>
#include <vector>

#include "common/config/config.h"
#include "common/raft/types.h"
#include "common/status/status.h"

namespace dfs::mon {

struct MonMember {
  raft::NodeId id = 0;
  std::string name;  // "mon.b"
  std::string addr;  // host:port
};

// Every [mon.X] section, sorted by name. A member's id is the section's `id` key, else
// its 1-based position in that order (mon.a, mon.b, mon.c -> 1, 2, 3): stable while
// monitors are only appended; set `id` explicitly before inserting one in the middle.
// A section without `addr` listens on `default_addr`.
// Errors: kInvalidArgument (an id that is not a positive integer, or used twice).
Result<std::vector<MonMember>> quorum_from_config(const Config& config,
                                                  const std::string& default_addr);

}  // namespace dfs::mon
