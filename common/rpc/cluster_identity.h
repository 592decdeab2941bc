// Which cluster the other end of a connection belongs to. Every daemon and client names
// its cluster by the fsid in [global] of its dfs.conf, and the connection handshake
// carries it both ways (Hello, HelloReply): a daemon of one cluster must never join
// another that happens to listen where its config points (two dev clusters given the
// same ports, a stale mon_addrs), or that cluster's data lands on a stranger's disk.
// Pure functions, called by Connection during the handshake.
#pragma once

#include <string>
#include <string_view>

#include "common/status/status.h"

namespace dfs::rpc {

// One end of a connection as the other end sees it.
struct PeerIdentity {
  std::string entity;   // "osd.3", "client.admin.<nonce>"
  std::string address;  // host:port
  std::string fsid;     // the cluster it names; empty: none
};

// True for the entity names of daemons ("mon.", "osd.", "mds."): a daemon always has a
// dfs.conf, so it must always name its cluster.
bool is_daemon_entity(std::string_view entity);

// Server side, on a Hello: whether `peer` may talk to this end, a member of cluster
// `ours`. With `ours` empty (a tool or test with no config) everyone is accepted. A peer
// naming another cluster is refused, and so is a daemon naming none (an older version,
// or a dfs.conf without an fsid); a client naming none is accepted: it was pointed at
// these addresses by hand and had no config to take an fsid from.
// Errors: kWrongCluster, whose context completes "refused <entity> at <address>: ",
// e.g. "it belongs to cluster B, this is cluster A".
Status admit_peer(std::string_view ours, const PeerIdentity& peer);

// Client side, on a HelloReply: whether `server` belongs to cluster `ours`. With `ours`
// empty any server is accepted; otherwise a server naming another cluster, or none, is
// refused. Errors: kWrongCluster naming the server, its address and both clusters.
Status check_server(std::string_view ours, const PeerIdentity& server);

// The one line a server logs when it refuses `peer` for `why` (from admit_peer):
// "refused osd.3 at 127.0.0.1:20010: it belongs to cluster B, this is cluster A".
std::string refusal_line(const PeerIdentity& peer, const Error& why);

}  // namespace dfs::rpc
