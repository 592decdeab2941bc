// How a client program (the `dfs` CLI, objbench) finds the cluster: the config file
// from -c, $DFS_CONF or /etc/dfs/dfs.conf, and the monitors in its [global] section.
// One place for it, so every tool says the same thing when the cluster cannot be found.
// Blocking (reads the file); call it from any thread before connecting.
#pragma once

#include <string>

#include "client-fuse/libdfs/object_client.h"

namespace dfs::client {

// Loads the config named by `conf_flag` (resolve_config_path: the flag, else
// $DFS_CONF, else /etc/dfs/dfs.conf) and returns ClientOptions with mon_addrs and fsid
// (the cluster every daemon reached must belong to) from its [global] section; the other
// fields keep their defaults for the caller to set.
// Errors: those of Config::load_file, with a hint to use -c or DFS_CONF;
// kInvalidArgument (no mon_addrs in [global]).
Result<ClientOptions> client_options_from_config(const std::string& conf_flag);

}  // namespace dfs::client
