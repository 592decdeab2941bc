#include "common/daemon/daemon_setup.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "common/daemon/allocator_tuning.h"
#include "common/log/log.h"

namespace dfs {
namespace {

// How each daemon is named, and what its --help says of the shared flags.
struct DaemonWords {
  const char* type;     // "osd": the program dfs-osd, config sections [osd.<id>]
  const char* id;       // what -i names
  const char* section;  // its config section as --help spells it
  const char* data;     // what --data holds
  const char* mkfs;     // what --mkfs does
};

DaemonWords words_of(DaemonType type) {
  switch (type) {
    case DaemonType::kMon:
      return {"mon", "monitor id", "[mon.ID]", "data directory",
              "create an empty monitor store and exit"};
    case DaemonType::kOsd:
      return {"osd", "OSD id", "[osd.ID]", "store directory",
              "initialise an empty store in the data directory and exit"};
    case DaemonType::kMds:
      return {"mds", "MDS name", "[mds.NAME]", "metadata directory",
              "create an empty file system in the data directory and exit"};
  }
  std::abort();  // not a DaemonType: memory corruption
}

// One template for both overloads: -i is a name for dfs-mon and dfs-mds, a number for
// dfs-osd, and CLI11 checks the number.
template <typename Id>
CLI::Option* add_flags(CLI::App& app, DaemonType type, Id& id, DaemonFlags& flags) {
  const DaemonWords words = words_of(type);
  const std::string section = words.section;
  app.add_option("-c,--conf", flags.conf,
                 "config file (default $DFS_CONF, then /etc/dfs/dfs.conf)");
  CLI::Option* id_option = app.add_option(
      "-i,--id", id, std::string(words.id) + "; its settings are in section " + section);
  app.add_option("--data", flags.data, words.data + (" (default: " + section + " data)"));
  app.add_option("--addr", flags.addr, "listen address host:port (default: " + section + " addr)");
  app.add_option("--log-file", flags.log_file,
                 "log file (default: " + section + " log_file, else stderr)");
  app.add_flag("--mkfs", flags.mkfs, words.mkfs);
  return id_option;
}

}  // namespace

CLI::Option* add_daemon_flags(CLI::App& app, DaemonType type, std::string& id, DaemonFlags& flags) {
  return add_flags(app, type, id, flags);
}

CLI::Option* add_daemon_flags(CLI::App& app, DaemonType type, int& id, DaemonFlags& flags) {
  return add_flags(app, type, id, flags);
}

std::optional<DaemonSetup> set_up_daemon(DaemonType type, const std::string& id,
                                         const DaemonFlags& flags) {
  const std::string type_name = words_of(type).type;
  auto fail = [&](const std::string& why) -> std::optional<DaemonSetup> {
    fmt::print(stderr, "dfs-{}: {}\n", type_name, why);
    return std::nullopt;
  };
  const std::string section = type_name + "." + id;
  auto config = Config::load_file(resolve_config_path(flags.conf));
  if (!config) return fail(config.error().to_string());
  std::string fsid = config->get_or("global", "fsid", "");
  if (fsid.empty()) {
    return fail("no fsid in [global] of " + config->origin() +
                ": a daemon must name the cluster it belongs to (dfs bootstrap and "
                "tools/dfs-dev write one)");
  }
  std::string data = flags.data.empty() ? config->get_or(section, "data", "") : flags.data;
  if (data.empty()) return fail("no data directory: set [" + section + "] data or pass --data");
  std::string log_file =
      flags.log_file.empty() ? config->get_or(section, "log_file", "") : flags.log_file;
  auto logged = init_logging({section, log_file, config->get_or(section, "log_level", "info")});
  if (!logged) return fail(logged.error().to_string());
  spdlog::info("{}", allocator_tuning_summary());
  return DaemonSetup{section, std::move(*config), std::move(data), std::move(fsid)};
}

}  // namespace dfs
