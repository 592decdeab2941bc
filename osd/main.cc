// dfs-osd: the object storage daemon, one per data device. Thin: parses flags and
// config, opens the store, runs the OsdService on one I/O thread until SIGTERM.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "common/config/config.h"
#include "common/log/log.h"
#include "osd/service/osd_service.h"

namespace {

int fail(const std::string& message) {
  spdlog::error("{}", message);
  fmt::print(stderr, "dfs-osd: {}\n", message);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"dfs-osd: the dfs object storage daemon (one per data device)"};
  std::string conf_flag, data_flag, addr_flag, host_flag, log_flag;
  int id = -1;
  double weight_flag = -1;
  bool mkfs = false;
  app.add_option("-c,--conf", conf_flag, "config file (default $DFS_CONF, then /etc/dfs/dfs.conf)");
  app.add_option("-i,--id", id, "OSD id; its settings are in section [osd.ID]")->required();
  app.add_option("--data", data_flag, "store directory (default: [osd.ID] data)");
  app.add_option("--addr", addr_flag, "listen address host:port (default: [osd.ID] addr)");
  app.add_option("--host", host_flag, "CRUSH host name (default: [osd.ID] host, else hostname)");
  app.add_option("--weight", weight_flag, "CRUSH weight (default: [osd.ID] weight, else 1.0)");
  app.add_option("--log-file", log_flag, "log file (default: [osd.ID] log_file, else stderr)");
  app.add_flag("--mkfs", mkfs, "initialise an empty store in the data directory and exit");
  CLI11_PARSE(app, argc, argv);

  const std::string section = "osd." + std::to_string(id);
  auto config = dfs::Config::load_file(dfs::resolve_config_path(conf_flag));
  if (!config) return fail(config.error().to_string());
  std::string data = data_flag.empty() ? config->get_or(section, "data", "") : data_flag;
  if (data.empty()) return fail("no data directory: set [" + section + "] data or pass --data");
  auto logged = dfs::init_logging({section, log_flag.empty() ? config->get_or(section, "log_file", "") : log_flag,
                                   config->get_or(section, "log_level", "info")});
  if (!logged) return fail(logged.error().to_string());

  auto store = dfs::osd::open_dir_store({.path = data, .create = mkfs});
  if (!store) return fail(store.error().to_string());
  if (mkfs) {
    fmt::print("dfs-osd: created an empty store for {} in {}\n", section, data);
    return 0;
  }

  dfs::osd::OsdOptions options;
  options.id = id;
  options.listen_addr = addr_flag.empty() ? config->get_or(section, "addr", "127.0.0.1:0") : addr_flag;
  char hostname[256] = "localhost";
  gethostname(hostname, sizeof hostname - 1);
  options.host = host_flag.empty() ? config->get_or(section, "host", hostname) : host_flag;
  auto weight = config->get_double(section, "weight", 1.0);
  if (!weight) return fail(weight.error().to_string());
  options.weight = weight_flag >= 0 ? weight_flag : *weight;
  options.mon_addrs = dfs::split_list(config->get_or("global", "mon_addrs", ""));
  if (options.mon_addrs.empty()) return fail("no monitors: set mon_addrs in [global] of " + config->origin());

  boost::asio::io_context io;
  dfs::osd::OsdService service(io.get_executor(), options, std::move(*store));
  auto address = service.start();
  if (!address) return fail(address.error().to_string());
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](auto, int sig) {
    spdlog::info("signal {}: shutting down", sig);
    io.stop();
  });
  io.run();
  return 0;
}
