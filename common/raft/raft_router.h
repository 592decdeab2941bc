// RaftRouter: the one kRaftMessage handler of a daemon. Decodes each incoming envelope
// and hands the message to the group it names, so one daemon can host several groups
// (an MDS's ranks). Runs on the RpcServer's executor, which must also be the executor
// of every group it routes to (the daemon's I/O thread).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>

#include "common/raft/message.h"
#include "common/rpc/server.h"

namespace dfs::raft {

class RaftRouter {
 public:
  using Deliver = std::function<void(Message)>;

  // Registers the kRaftMessage handler on `server`. Requires: before server.listen().
  // The handler shares the routing table, so it stays safe if the router goes first.
  explicit RaftRouter(rpc::RpcServer& server);
  ~RaftRouter();

  // Routes messages for `group` to `deliver` (RaftGroup does this itself). A group id
  // registered twice replaces the first registration.
  void add(uint64_t group, Deliver deliver);
  void remove(uint64_t group);

  // Messages dropped because they were malformed or named an unknown group.
  uint64_t dropped() const;

 private:
  struct Table {
    std::map<uint64_t, Deliver> groups;
    uint64_t dropped = 0;
  };
  std::shared_ptr<Table> table_;
};

}  // namespace dfs::raft
