// dfs-mon: the cluster monitor daemon. Thin: parses flags and config, opens the map
// store, runs the Monitor on one I/O thread until SIGTERM/SIGINT.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "common/config/config.h"
#include "common/log/log.h"
#include "mon/service/monitor.h"

int main(int argc, char** argv) {
  CLI::App app{"dfs-mon: the dfs cluster monitor (serves the cluster map)"};
  std::string conf_flag, id = "a", data_flag, addr_flag, log_flag;
  bool mkfs = false;
  app.add_option("-c,--conf", conf_flag, "config file (default $DFS_CONF, then /etc/dfs/dfs.conf)");
  app.add_option("-i,--id", id, "monitor id; its settings are in section [mon.ID]")->capture_default_str();
  app.add_option("--data", data_flag, "data directory (default: [mon.ID] data)");
  app.add_option("--addr", addr_flag, "listen address host:port (default: [mon.ID] addr)");
  app.add_option("--log-file", log_flag, "log file (default: [mon.ID] log_file, else stderr)");
  app.add_flag("--mkfs", mkfs, "create an empty monitor store and exit");
  CLI11_PARSE(app, argc, argv);

  const std::string section = "mon." + id;
  auto config = dfs::Config::load_file(dfs::resolve_config_path(conf_flag));
  if (!config) {
    fmt::print(stderr, "dfs-mon: {}\n", config.error().to_string());
    return 1;
  }
  std::string data = data_flag.empty() ? config->get_or(section, "data", "") : data_flag;
  if (data.empty()) {
    fmt::print(stderr, "dfs-mon: no data directory: set [{}] data or pass --data\n", section);
    return 1;
  }
  auto logged = dfs::init_logging({section, log_flag.empty() ? config->get_or(section, "log_file", "") : log_flag,
                                   config->get_or(section, "log_level", "info")});
  if (!logged) {
    fmt::print(stderr, "dfs-mon: {}\n", logged.error().to_string());
    return 1;
  }
  if (mkfs) {
    auto created = dfs::mon::MapStore::create(data, config->get_or("global", "fsid", "dfs"));
    if (!created) {
      fmt::print(stderr, "dfs-mon: {}\n", created.error().to_string());
      return 1;
    }
    fmt::print("dfs-mon: created monitor store in {}\n", data);
    return 0;
  }

  dfs::mon::MonitorOptions options;
  options.entity = section;
  options.listen_addr = addr_flag.empty() ? config->get_or(section, "addr", "127.0.0.1:6789") : addr_flag;
  auto grace = config->get_double(section, "osd_heartbeat_grace", 20);
  auto reporters = config->get_int(section, "mon_osd_min_down_reporters", 2);
  if (!grace || !reporters) {
    fmt::print(stderr, "dfs-mon: {}\n", (!grace ? grace.error() : reporters.error()).to_string());
    return 1;
  }
  options.failure.grace = dfs::mon::Millis(static_cast<int64_t>(*grace * 1000));
  options.failure.min_reporters = static_cast<int>(*reporters);

  auto store = dfs::mon::MapStore::open(data);
  if (!store) {
    spdlog::error("{}", store.error().to_string());
    fmt::print(stderr, "dfs-mon: {}\n", store.error().to_string());
    return 1;
  }
  boost::asio::io_context io;
  dfs::mon::Monitor monitor(io.get_executor(), options, std::move(*store));
  auto address = monitor.start();
  if (!address) {
    spdlog::error("{}", address.error().to_string());
    fmt::print(stderr, "dfs-mon: {}\n", address.error().to_string());
    return 1;
  }
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](auto, int sig) {
    spdlog::info("signal {}: shutting down", sig);
    io.stop();
  });
  io.run();
  return 0;
}
