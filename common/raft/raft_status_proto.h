// A RaftGroup's status as the wire message `dfs status` reads from monitors and MDS
// replicas alike (proto::MonRaftStatus, named for its first user).
#pragma once

#include "common/proto/mon.pb.h"
#include "common/raft/raft_group.h"

namespace dfs::raft {

proto::MonRaftStatus to_proto(const RaftGroupStatus& status);

}  // namespace dfs::raft
