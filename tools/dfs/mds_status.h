// The MDS replicas as `dfs status` shows them: each one in the map asked directly for
// its Raft state (kMdsRaftStatus), so a dead or lagging replica shows as such. A
// single-replica rank has no Raft state: its row says so. Runs on the client's I/O
// thread.
#pragma once

#include <string>
#include <vector>

#include "client-fuse/libdfs/object_client.h"

namespace dfs::cli {

struct MdsRow {
  std::string name;
  std::string addr;
  uint32_t rank = 0;
  bool up = false;      // as the map says
  bool active = false;  // the replica clients use (the map's choice for its rank)
  uint64_t leader_term = 0;
  bool replicated = false;  // it answered with a Raft state
  std::string error;        // why it did not, when it is replicated but unreachable
  proto::MonRaftStatus raft;
  uint64_t lag = 0;  // entries it has yet to apply of its rank leader's commit
};

// Every MDS of the map, each asked for at most `timeout`.
awaitable<std::vector<MdsRow>> gather_mds(client::ObjectClient& client, const ClusterMap& map,
                                         Duration timeout);

}  // namespace dfs::cli
