#include "common/raft/raft_status_proto.h"

namespace dfs::raft {

proto::MonRaftStatus to_proto(const RaftGroupStatus& rs) {
  proto::MonRaftStatus out;
  out.set_id(rs.id);
  out.set_role(role_name(rs.role));
  out.set_term(rs.term);
  out.set_leader(rs.leader);
  out.set_commit(rs.commit);
  out.set_applied(rs.applied);
  out.set_last_index(rs.last_index);
  for (const auto& [id, peer] : rs.peers) {
    auto* p = out.add_peers();
    p->set_id(id);
    p->set_match(peer.match);
  }
  return out;
}

}  // namespace dfs::raft
