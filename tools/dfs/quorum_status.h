// The monitor quorum as `dfs status` shows it: every monitor asked directly for its
// Raft state, so a dead or lagging one shows as such. Runs on the client's I/O thread.
#pragma once

#include <string>
#include <vector>

#include "client-fuse/libdfs/object_client.h"

namespace dfs::cli {

struct MonRow {
  std::string name;
  std::string addr;
  uint64_t id = 0;
  bool reachable = false;
  std::string error;  // why not, when unreachable
  proto::MonRaftStatus raft;
  uint64_t epoch = 0;
  uint64_t lag = 0;  // entries this monitor has yet to apply of the leader's commit
};

struct QuorumView {
  std::vector<MonRow> mons;
  std::string leader;  // its name; empty when none is agreed on
  uint64_t leader_id = 0;
  uint64_t term = 0;
  int in_quorum = 0;  // reachable monitors that follow (or are) the leader of `term`
};

// Asks every monitor of `first.members()` (or only the answering one, for a monitor
// that predates the quorum) for its status, each bounded by `timeout`.
awaitable<QuorumView> gather_quorum(client::ObjectClient& client, proto::StatusReply first,
                                    Duration timeout);

}  // namespace dfs::cli
