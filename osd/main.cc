// dfs-osd: the object storage daemon, one per data device. Thin: parses flags and
// config, opens the store, runs the OsdService on one I/O thread until SIGTERM.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <optional>

#include "common/daemon/data_dir_fsid.h"
#include "common/daemon/daemon_setup.h"
#include "common/daemon/metrics_setup.h"
#include "common/daemon/run_until_signal.h"
#include "osd/prepare/loop_file.h"
#include "osd/service/osd_service.h"
#include "common/daemon/allocator_tuning.h"

namespace {

int fail(const std::string& message) {
  spdlog::error("{}", message);
  fmt::print(stderr, "dfs-osd: {}\n", message);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  dfs::tune_allocator(argv);  // may re-exec: first, before any thread starts
  CLI::App app{"dfs-osd: the dfs object storage daemon (one per data device)"};
  dfs::DaemonFlags flags;
  int id = -1;
  std::string host_flag;
  double weight_flag = -1;
  dfs::add_daemon_flags(app, dfs::DaemonType::kOsd, id, flags)->required();
  app.add_option("--host", host_flag, "CRUSH host name (default: [osd.ID] host, else hostname)");
  app.add_option("--weight", weight_flag, "CRUSH weight (default: [osd.ID] weight, else 1.0)");
  std::string backend = "dir";
  app.add_option("--backend", backend, "store kind: dir (objects in files under --data)")
      ->check(CLI::IsMember({"dir"}))
      ->capture_default_str();
  app.add_option("--path", flags.data, "the same as --data");
  std::string loop_file, loop_size;
  auto* loop_option = app.add_option(
      "--loop-file", loop_file,
      "with --mkfs on a host without a spare disk: make FILE an ext4 image of --size bytes "
      "and mount it on the store directory through a loop device (root)");
  app.add_option("--size", loop_size, "size of the --loop-file image: 20G, 512M, ...")
      ->needs(loop_option);
  loop_option->needs("--mkfs");
  CLI11_PARSE(app, argc, argv);
  if (!loop_file.empty() && loop_size.empty()) return fail("--loop-file needs --size");

  auto setup = dfs::set_up_daemon(dfs::DaemonType::kOsd, std::to_string(id), flags);
  if (!setup) return 1;
  auto& [section, config, data, fsid] = *setup;

  if (!loop_file.empty()) {
    auto size = dfs::osd::parse_size(loop_size);
    if (!size) return fail(size.error().to_string());
    auto made = dfs::osd::make_loop_store(loop_file, *size, data);
    if (!made) return fail(made.error().to_string());
    fmt::print("dfs-osd: {} is an ext4 image of {} mounted on {}. To mount it at boot, add to "
               "/etc/fstab:\n  {}\n",
               loop_file, loop_size, data, dfs::osd::loop_fstab_line(loop_file, data));
  }
  dfs::osd::DirStoreOptions store_options{.path = data, .create = flags.mkfs};
  auto prefill = config.get_int(section, "osd_wal_prefill_bytes",
                                static_cast<int64_t>(store_options.wal_prefill_bytes));
  if (!prefill) return fail(prefill.error().to_string());
  if (*prefill < 0) return fail("osd_wal_prefill_bytes must be >= 0");
  // --mkfs opens the new store only to close it: no WAL worth prefilling.
  store_options.wal_prefill_bytes = flags.mkfs ? 0 : static_cast<uint64_t>(*prefill);
  auto store = dfs::osd::open_dir_store(store_options);
  if (!store) return fail(store.error().to_string());
  // A disk made for another cluster must never serve this one.
  auto ours = flags.mkfs ? dfs::record_data_dir_fsid(data, fsid)
                         : dfs::check_data_dir_fsid(data, fsid);
  if (!ours) return fail(ours.error().to_string());
  if (flags.mkfs) {
    fmt::print("dfs-osd: created an empty store for {} of cluster {} in {}\n", section, fsid,
               data);
    return 0;
  }

  dfs::osd::OsdOptions options;
  options.id = id;
  options.listen_addr =
      flags.addr.empty() ? config.get_or(section, "addr", "127.0.0.1:0") : flags.addr;
  char hostname[256] = "localhost";
  gethostname(hostname, sizeof hostname - 1);
  options.host = host_flag.empty() ? config.get_or(section, "host", hostname) : host_flag;
  auto weight = config.get_double(section, "weight", 1.0);
  if (!weight) return fail(weight.error().to_string());
  options.weight = weight_flag >= 0 ? weight_flag : *weight;
  // Seconds between scheduled scrubs of each PG (0: never); see osd/pg/scrub.cc.
  for (auto [key, interval] : {std::pair{"osd_scrub_interval", &options.scrub_interval},
                               std::pair{"osd_deep_scrub_interval", &options.deep_scrub_interval}}) {
    auto seconds = config.get_double(section, key, interval->count() / 1000.0);
    if (!seconds) return fail(seconds.error().to_string());
    if (*seconds < 0) return fail(std::string(key) + " must be >= 0 seconds (0: never)");
    *interval = dfs::Duration(static_cast<int64_t>(*seconds * 1000));
  }
  options.mon_addrs = dfs::split_list(config.get_or("global", "mon_addrs", ""));
  if (options.mon_addrs.empty())
    return fail("no monitors: set mon_addrs in [global] of " + config.origin());
  options.cluster_fsid = fsid;

  boost::asio::io_context io;
  std::optional<dfs::Error> refused;
  options.on_wrong_cluster = [&](const dfs::Error& error) {
    refused = error;
    io.stop();
  };
  dfs::osd::OsdService service(io.get_executor(), options, std::move(*store));
  auto address = service.start();
  if (!address) return fail(address.error().to_string());
  auto metrics = dfs::start_metrics(io.get_executor(), config, section, *address);
  dfs::metrics::Registry::process().add_collector(
      [&service](dfs::metrics::SampleWriter& w) { service.collect_metrics(w); });
  dfs::run_until_signal(io, [&] { io.stop(); });
  if (refused) {
    return fail(section + " of cluster " + fsid + " was refused by the monitors at " +
                config.get_or("global", "mon_addrs", "") + ": " + refused->context());
  }
  return 0;
}
