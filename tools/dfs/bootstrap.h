// `dfs bootstrap`: the configuration and keys of a new cluster, made on one machine and
// copied to every host. This part decides what the files say; bootstrap_cmd.cc writes
// them and prints what to run on each host.
#pragma once

#include <string>
#include <vector>

#include "common/status/status.h"

namespace dfs::cli {

// One host of the new cluster: it runs a monitor, an MDS replica of rank 0 and
// `osds_per_host` OSDs. `addr` is what the daemons listen on and the others dial: the
// name itself unless the operator gave NAME=ADDRESS.
struct BootstrapHost {
  std::string name;
  std::string addr;
};

struct BootstrapPlan {
  std::vector<BootstrapHost> hosts;
  std::string fsid;                   // a fresh UUID
  std::string fs_name = "dfs";        // the file system's name, mount -o fs=
  std::string client = "admin";       // the client whose key goes to CLIENT.secret
  int port = 6789;                    // monitors; MDS port+1; OSD j of a host port+11+j
  int osds_per_host = 1;
  std::string data_dir = "/var/lib/dfs";  // each daemon's data is DATA_DIR/<type>.<id>
  std::string log_dir = "/var/log/dfs";
};

// Parses "dfs1,dfs2,dfs3" or "dfs1=10.0.0.1,dfs2=10.0.0.2,...". Errors: kInvalidArgument
// (empty, a repeated name, a name that is not a host name, an even count or more than 7:
// a monitor quorum needs a majority, and an even count adds a host that can fail without
// adding a failure the quorum survives).
Result<std::vector<BootstrapHost>> parse_bootstrap_hosts(const std::string& list);

// Errors: kInvalidArgument for a port or OSD count out of range, a relative directory,
// an fs or client name with characters a path or config line cannot hold.
Status check_bootstrap_plan(const BootstrapPlan& plan);

// dfs.conf: [global] with fsid, fs_name and mon_addrs, then per host [mon.H], [mds.H]
// (rank 0) and its [osd.N] sections, numbered host by host.
std::string render_config(const BootstrapPlan& plan);

// The OSD ids of host number `host_index` (0-based), in order.
std::vector<int> osd_ids_of_host(const BootstrapPlan& plan, size_t host_index);

// A keyring: one [entity] section with "key = <base64 of 32 random bytes>" per daemon and
// for client.CLIENT. `random_key` makes each key (a parameter so that tests can see the
// layout without randomness).
std::string render_keyring(const BootstrapPlan& plan, std::string (*random_key)());

// 32 bytes from OpenSSL's CSPRNG, base64.
std::string make_random_key();

// The key of `entity` in a keyring's text, or kNotFound.
Result<std::string> keyring_key(const std::string& keyring, const std::string& entity);

}  // namespace dfs::cli
