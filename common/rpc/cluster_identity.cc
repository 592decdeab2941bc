#include "common/rpc/cluster_identity.h"

namespace dfs::rpc {

bool is_daemon_entity(std::string_view entity) {
  for (std::string_view prefix : {"mon.", "osd.", "mds."}) {
    if (entity.starts_with(prefix)) return true;
  }
  return false;
}

Status admit_peer(std::string_view ours, const PeerIdentity& peer) {
  if (ours.empty() || peer.fsid == ours) return ok_status();
  if (peer.fsid.empty()) {
    if (!is_daemon_entity(peer.entity)) return ok_status();
    return make_error(ErrorCode::kWrongCluster,
                      "it names no cluster fsid (an older version, or no fsid in [global] of "
                      "its dfs.conf), this is cluster " + std::string(ours));
  }
  return make_error(ErrorCode::kWrongCluster, "it belongs to cluster " + peer.fsid +
                                                  ", this is cluster " + std::string(ours));
}

Status check_server(std::string_view ours, const PeerIdentity& server) {
  if (ours.empty() || server.fsid == ours) return ok_status();
  const std::string who = server.entity + " at " + server.address;
  if (server.fsid.empty()) {
    return make_error(ErrorCode::kWrongCluster,
                      who + " names no cluster fsid (an older version?); we belong to cluster " +
                          std::string(ours));
  }
  return make_error(ErrorCode::kWrongCluster, who + " belongs to cluster " + server.fsid +
                                                  ", we belong to cluster " + std::string(ours));
}

std::string refusal_line(const PeerIdentity& peer, const Error& why) {
  return "refused " + peer.entity + " at " + peer.address + ": " + why.context();
}

}  // namespace dfs::rpc
