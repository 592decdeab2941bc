// dfs-mon: the cluster monitor daemon. Thin: parses flags and config (the quorum is
// every [mon.X] section), opens the map store, runs the Monitor on one I/O thread until
// SIGTERM/SIGINT.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "common/daemon/daemon_setup.h"
#include "common/daemon/metrics_setup.h"
#include "common/daemon/run_until_signal.h"
#include "mon/service/monitor.h"
#include "common/raft/members_config.h"
#include "common/daemon/allocator_tuning.h"

int main(int argc, char** argv) {
  dfs::tune_allocator(argv);  // may re-exec: first, before any thread starts
  CLI::App app{"dfs-mon: the dfs cluster monitor (serves the cluster map)"};
  dfs::DaemonFlags flags;
  std::string id = "a";
  dfs::add_daemon_flags(app, dfs::DaemonType::kMon, id, flags)->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  auto setup = dfs::set_up_daemon(dfs::DaemonType::kMon, id, flags);
  if (!setup) return 1;
  auto& [section, config, data, fsid] = *setup;
  if (flags.mkfs) {
    auto created = dfs::mon::MapStore::create(data, fsid);
    if (!created) {
      fmt::print(stderr, "dfs-mon: {}\n", created.error().to_string());
      return 1;
    }
    fmt::print("dfs-mon: created monitor store for cluster {} in {}\n", fsid, data);
    return 0;
  }

  dfs::mon::MonitorOptions options;
  options.entity = section;
  options.cluster_fsid = fsid;
  options.listen_addr =
      flags.addr.empty() ? config.get_or(section, "addr", "127.0.0.1:6789") : flags.addr;
  auto grace = config.get_double(section, "osd_heartbeat_grace", 20);
  auto reporters = config.get_int(section, "mon_osd_min_down_reporters", 2);
  if (!grace || !reporters) {
    fmt::print(stderr, "dfs-mon: {}\n", (!grace ? grace.error() : reporters.error()).to_string());
    return 1;
  }
  options.failure.grace = dfs::mon::Millis(static_cast<int64_t>(*grace * 1000));
  options.failure.min_reporters = static_cast<int>(*reporters);
  auto down_out = config.get_double(section, "mon_osd_down_out_interval", 600);
  auto min_in = config.get_double(section, "mon_osd_min_in_ratio", 0.75);
  if (!down_out || !min_in || *down_out < 0 || *min_in < 0 || *min_in > 1) {
    fmt::print(stderr, "dfs-mon: {}\n",
               !down_out ? down_out.error().to_string()
               : !min_in ? min_in.error().to_string()
                         : std::string("mon_osd_down_out_interval must be >= 0 seconds and "
                                       "mon_osd_min_in_ratio within 0..1"));
    return 1;
  }
  options.failure.down_out_interval = dfs::mon::Millis(static_cast<int64_t>(*down_out * 1000));
  options.failure.min_in_ratio = *min_in;
  auto full = config.get_double(section, "mon_osd_full_ratio", options.full_ratio);
  auto nearfull = config.get_double(section, "mon_osd_nearfull_ratio", options.nearfull_ratio);
  if (!full || !nearfull || *nearfull <= 0 || *nearfull > *full || *full > 1) {
    fmt::print(stderr, "dfs-mon: {}\n",
               !full       ? full.error().to_string()
               : !nearfull ? nearfull.error().to_string()
                           : std::string("need 0 < mon_osd_nearfull_ratio <= mon_osd_full_ratio <= 1"));
    return 1;
  }
  auto flap_downs = config.get_int(section, "mon_osd_flap_max_downs", options.flap.max_downs);
  auto flap_period = config.get_double(section, "mon_osd_flap_period", 600);
  auto flap_hold = config.get_double(section, "mon_osd_flap_hold", 60);
  if (!flap_downs || !flap_period || !flap_hold || *flap_downs < 0 || *flap_period <= 0 ||
      *flap_hold <= 0) {
    fmt::print(stderr, "dfs-mon: {}\n",
               !flap_downs    ? flap_downs.error().to_string()
               : !flap_period ? flap_period.error().to_string()
               : !flap_hold   ? flap_hold.error().to_string()
                              : std::string("mon_osd_flap_max_downs must be >= 0 (0: no damping), "
                                            "mon_osd_flap_period and mon_osd_flap_hold > 0 seconds"));
    return 1;
  }
  options.flap.max_downs = static_cast<int>(*flap_downs);
  options.flap.period = std::chrono::milliseconds(static_cast<int64_t>(*flap_period * 1000));
  options.flap.hold = std::chrono::milliseconds(static_cast<int64_t>(*flap_hold * 1000));
  options.flap.max_hold = std::max(options.flap.hold, options.flap.period);
  options.full_ratio = *full;
  options.nearfull_ratio = *nearfull;
  auto snapshot_every = config.get_int(section, "mon_snapshot_every", 1000);
  if (!snapshot_every || *snapshot_every < 1) {
    fmt::print(stderr, "dfs-mon: {}\n",
               snapshot_every ? "mon_snapshot_every must be at least 1"
                              : snapshot_every.error().to_string());
    return 1;
  }
  options.snapshot_every = static_cast<uint64_t>(*snapshot_every);
  auto members = dfs::raft::members_from_config(config, "mon", "127.0.0.1:6789");
  if (!members) {
    fmt::print(stderr, "dfs-mon: {}\n", members.error().to_string());
    return 1;
  }
  options.members = std::move(*members);
  options.id = 0;
  for (auto& m : options.members) {
    if (m.name == section) {
      options.id = m.id;
      m.addr = options.listen_addr;  // --addr wins for this monitor
    }
  }
  if (options.id == 0) {
    // No [mon.X] section for this monitor: it runs alone.
    options.id = 1;
    options.members = {{1, section, options.listen_addr}};
  }

  auto store = dfs::mon::MapStore::open(data);
  if (!store) {
    spdlog::error("{}", store.error().to_string());
    fmt::print(stderr, "dfs-mon: {}\n", store.error().to_string());
    return 1;
  }
  // The map's fsid is the cluster's own: a store made for another cluster never serves
  // this one.
  if (const std::string& made_for = (*store)->genesis().fsid(); made_for != fsid) {
    std::string why = "the monitor store in " + data + " was made for cluster " + made_for +
                      ", but dfs.conf names cluster " + fsid;
    spdlog::error("{}", why);
    fmt::print(stderr, "dfs-mon: {}\n", why);
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
  auto metrics = dfs::start_metrics(io.get_executor(), config, section, *address);
  dfs::metrics::Registry::process().add_collector(
      [&monitor](dfs::metrics::SampleWriter& w) { monitor.collect_metrics(w); });
  dfs::run_until_signal(io, [&] { io.stop(); });
  return 0;  // ~Monitor waits for a log sync in flight before the store closes
}
