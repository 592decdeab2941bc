// The members of a Raft group as dfs.conf describes them: the [mon.X] sections (the
// monitor quorum) or the [mds.X] sections of one rank (its replicas), each with its
// address and a Raft node id that does not change as long as the sections do. Pure;
// used by the daemons' main() and by tests.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "common/raft/types.h"
#include "common/status/status.h"

namespace dfs::raft {

struct RaftMember {
  NodeId id = 0;
  std::string name;  // "mon.b", "mds.c"
  std::string addr;  // host:port
};

// Every [<type>.X] section that `include` accepts (all when empty), sorted by name. A
// member's id is the section's `id` key, else its 1-based position in that order
// (mon.a, mon.b, mon.c -> 1, 2, 3): stable while members are only appended; set `id`
// explicitly before inserting one in the middle. A section without `addr` listens on
// `default_addr`.
// Errors: kInvalidArgument (an id that is not a positive integer, or used twice).
Result<std::vector<RaftMember>> members_from_config(
    const Config& config, const std::string& type, const std::string& default_addr,
    const std::function<bool(const std::string& section)>& include = {});

}  // namespace dfs::raft
