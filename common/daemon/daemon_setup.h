// Start-up shared by the daemons (dfs-mon, dfs-osd, dfs-mds): the flags they all take,
// then the config file, the data directory and logging, in that order. One place, so
// that the daemons take the same flags, say the same in --help and fail alike. Each
// daemon's main() calls it on the main thread before it opens its store or starts any
// I/O.
#pragma once

#include <optional>
#include <string>

#include "common/config/config.h"

// CLI11's types, declared only: the daemons include CLI11 themselves.
namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace dfs {

// Daemon `kOsd` is the program dfs-osd, and daemon osd.<id> in the config file.
enum class DaemonType { kMon, kOsd, kMds };

// The flags every daemon takes. An empty string means "from the config file".
struct DaemonFlags {
  std::string conf;      // -c/--conf
  std::string data;      // --data
  std::string addr;      // --addr
  std::string log_file;  // --log-file
  bool mkfs = false;     // --mkfs
};

// Adds -c/--conf, -i/--id (into `id`), --data, --addr, --log-file and --mkfs to `app`,
// in that order, worded for `type`. Returns the -i option so that the daemon can make it
// required or show its default.
CLI::Option* add_daemon_flags(CLI::App& app, DaemonType type, std::string& id, DaemonFlags& flags);
CLI::Option* add_daemon_flags(CLI::App& app, DaemonType type, int& id, DaemonFlags& flags);

struct DaemonSetup {
  std::string section;  // the daemon's config section: "osd.3"
  Config config;
  std::string data;  // the data directory
  std::string fsid;  // the cluster it belongs to: [global] fsid
};

// Sets up daemon `id` of `type`: loads the config file (resolve_config_path(flags.conf)),
// requires the cluster's fsid in its [global] section (a daemon proves its cluster in
// every connection's handshake; common/rpc/cluster_identity.h),
// takes the data directory from --data, else [section] data, and starts logging to
// --log-file, else [section] log_file, else stderr, at [section] log_level (default info).
// On failure prints one "dfs-<type>: <why>" line on stderr and returns nullopt; the
// daemon then exits with status 1. Logging has not started by then, so stderr is the
// only place the line goes.
std::optional<DaemonSetup> set_up_daemon(DaemonType type, const std::string& id,
                                         const DaemonFlags& flags);

}  // namespace dfs
