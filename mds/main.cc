// dfs-mds: the metadata server of rank 0: alone (one [mds.X] section) or one replica
// of the rank's Raft group (several [mds.X] sections). Thin: parses flags and config,
// opens the metadata store (and the Raft log), connects to the cluster for data objects
// and runs the MdsService on one I/O thread until SIGTERM.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <thread>

#include "client-fuse/libdfs/object_client.h"
#include "common/daemon/data_dir_fsid.h"
#include "common/daemon/daemon_setup.h"
#include "common/daemon/metrics_setup.h"
#include "common/daemon/run_until_signal.h"
#include "common/raft/members_config.h"
#include "mds/ops/layout_xattr.h"
#include "mds/service/mds_service.h"

namespace {

int fail(const std::string& message) {
  spdlog::error("{}", message);
  fmt::print(stderr, "dfs-mds: {}\n", message);
  return 1;
}

dfs::Result<dfs::mds::FsSettings> fs_settings(const dfs::Config& config,
                                              const std::string& section) {
  auto fs = dfs::mds::default_fs_settings();
  auto threshold = DFS_TRY(config.get_int(section, "inline_threshold", fs.inline_threshold));
  if (threshold < 0 || threshold > (1 << 20)) {
    return dfs::make_error(dfs::ErrorCode::kInvalidArgument, "inline_threshold must be 0..1048576");
  }
  fs.inline_threshold = static_cast<uint32_t>(threshold);
  auto rank = DFS_TRY(config.get_int(section, "rank", 0));
  if (rank != 0) {
    return dfs::make_error(dfs::ErrorCode::kInvalidArgument, "only rank 0 exists in this version");
  }
  auto object_size = DFS_TRY(config.get_int(section, "object_size", 4 << 20));
  std::string layout = "object_size=" + std::to_string(object_size) +
                       " pool=" + config.get_or(section, "data_pool", "data");
  fs.default_layout = DFS_TRY(dfs::mds::parse_layout(layout, fs.default_layout));
  return fs;
}

// The replicas of `section`'s rank: every [mds.X] section with the same rank. Fewer
// than two: a single-replica rank (an empty result).
dfs::Result<std::vector<dfs::mds::RankReplica>> rank_replicas(const dfs::Config& config,
                                                              const std::string& section) {
  auto rank_of = [&](const std::string& s) { return config.get_int(s, "rank", 0); };
  auto mine = DFS_TRY(rank_of(section));
  auto replicas = DFS_TRY(dfs::raft::members_from_config(
      config, "mds", "", [&](const std::string& s) {
        auto rank = rank_of(s);
        return rank && *rank == mine;
      }));
  for (const auto& r : replicas) {
    if (r.addr.empty()) {
      return dfs::make_error(dfs::ErrorCode::kInvalidArgument,
                             "[" + r.name + "] needs an addr: the replicas of a rank reach each "
                             "other there");
    }
  }
  if (replicas.size() < 2) replicas.clear();
  return replicas;
}

// The cluster may still be starting: keep trying until a monitor answers, unless the
// monitors belong to another cluster (waiting cannot change that).
// Errors: kWrongCluster.
dfs::Result<std::unique_ptr<dfs::client::ObjectClient>> connect_cluster(
    std::vector<std::string> mons, const std::string& fsid, const std::string& name) {
  for (int attempt = 1;; ++attempt) {
    auto client =
        dfs::client::ObjectClient::connect({.mon_addrs = mons, .fsid = fsid, .name = name});
    if (client || client.error().code() == dfs::ErrorCode::kWrongCluster) return client;
    spdlog::warn("cannot reach the cluster yet (attempt {}): {}", attempt,
                 client.error().to_string());
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

std::string refused_by_monitors(const std::string& section, const std::string& fsid,
                                const dfs::Config& config, const dfs::Error& why) {
  return section + " of cluster " + fsid + " was refused by the monitors at " +
         config.get_or("global", "mon_addrs", "") + ": " + why.context();
}

}  // namespace

int main(int argc, char** argv) {
  // No tune_allocator(): the MDS runs on jemalloc (common/daemon/allocator_tuning.h).
  CLI::App app{"dfs-mds: the dfs metadata server"};
  dfs::DaemonFlags flags;
  std::string name;
  dfs::add_daemon_flags(app, dfs::DaemonType::kMds, name, flags)->required();
  CLI11_PARSE(app, argc, argv);

  auto setup = dfs::set_up_daemon(dfs::DaemonType::kMds, name, flags);
  if (!setup) return 1;
  auto& [section, config, data, fsid] = *setup;
  auto fs = fs_settings(config, section);
  if (!fs) return fail(fs.error().to_string());

  auto replicas = rank_replicas(config, section);
  if (!replicas) return fail(replicas.error().to_string());
  // A replicated rank's Raft log is the store's log: the store keeps none of its own.
  auto store = dfs::mds::open_rocks_meta_store(
      data + "/meta", flags.mkfs,
      replicas->empty() ? dfs::mds::StoreLog::kOwn : dfs::mds::StoreLog::kRaft);
  if (!store) return fail(store.error().to_string());
  std::unique_ptr<dfs::mds::RankReplication> replication;
  if (!replicas->empty()) {
    dfs::mds::ReplicationOptions r;
    r.replicas = *replicas;
    for (const auto& replica : r.replicas) {
      if (replica.name == section) r.id = replica.id;
    }
    r.raft_dir = data + "/raft";
    // The Raft log is compacted every raft_compact_every groups, keeping raft_compact_keep
    // for followers that lag; one further behind is sent a whole image of the store.
    auto every =
        config.get_int(section, "raft_compact_every", static_cast<int64_t>(r.snapshot_every));
    if (!every) return fail(every.error().to_string());
    if (*every < 1) return fail("raft_compact_every must be at least 1");
    auto keep =
        config.get_int(section, "raft_compact_keep", static_cast<int64_t>(r.snapshot_keep));
    if (!keep) return fail(keep.error().to_string());
    if (*keep < 0) return fail("raft_compact_keep must not be negative");
    r.snapshot_every = static_cast<uint64_t>(*every);
    r.snapshot_keep = static_cast<uint64_t>(*keep);
    // The Raft tick: an election timeout is 10 to 20 ticks, a heartbeat goes every tick,
    // and the leader lease of early replies lasts 8 ticks. Every replica of the rank
    // must have the same.
    auto tick = config.get_int(section, "raft_tick_ms", r.raft_tick.count());
    if (!tick) return fail(tick.error().to_string());
    if (*tick < 5 || *tick > 10000) return fail("raft_tick_ms must be between 5 and 10000");
    r.raft_tick = dfs::Duration(*tick);
    auto opened = dfs::mds::RankReplication::open(r, **store, *fs, flags.mkfs);
    if (!opened) return fail(opened.error().to_string());
    replication = std::move(*opened);
  }
  // A metadata store made for another cluster must never serve this one.
  auto ours = flags.mkfs ? dfs::record_data_dir_fsid(data, fsid)
                         : dfs::check_data_dir_fsid(data, fsid);
  if (!ours) return fail(ours.error().to_string());
  if (flags.mkfs) {
    if (replication) {
      // The file system itself is the rank's first log entry, written by its first leader.
      fmt::print("dfs-mds: created replica {} of rank 0 ({} replicas) in {}\n", section,
                 replicas->size(), data);
      return 0;
    }
    auto formatted = dfs::mds::format_meta_store(**store, *fs, dfs::mds::realtime_now());
    if (!formatted) return fail(formatted.error().to_string());
    fmt::print("dfs-mds: created an empty file system for {} in {}\n", section, data);
    return 0;
  }

  dfs::mds::MdsOptions options;
  options.name = name;
  options.fs = *fs;
  options.listen_addr =
      flags.addr.empty() ? config.get_or(section, "addr", "127.0.0.1:0") : flags.addr;
  options.mon_addrs = dfs::split_list(config.get_or("global", "mon_addrs", ""));
  if (options.mon_addrs.empty())
    return fail("no monitors: set mon_addrs in [global] of " + config.origin());
  options.cluster_fsid = fsid;
  auto grace = config.get_int(section, "reclaim_grace_ms", 30000);
  if (!grace) return fail(grace.error().to_string());
  options.reclaim_grace = dfs::Duration(*grace);
  // A mount that does not renew its session for this long is evicted and fenced.
  auto session_timeout = config.get_int(section, "session_timeout_ms", 30000);
  if (!session_timeout) return fail(session_timeout.error().to_string());
  if (*session_timeout < 1000) return fail("session_timeout_ms must be at least 1000");
  options.session_timeout = dfs::Duration(*session_timeout);
  // After a takeover: how long clients of the previous active MDS have to reconnect.
  auto reconnect_grace = config.get_int(section, "reconnect_grace_ms", 10000);
  if (!reconnect_grace) return fail(reconnect_grace.error().to_string());
  if (*reconnect_grace < 1000) return fail("reconnect_grace_ms must be at least 1000");
  options.reconnect_grace = dfs::Duration(*reconnect_grace);
  // Most directories one mount owns at a time; past it its least recently used go back.
  auto max_dirs = config.get_int(section, "max_dirs_per_client",
                                 dfs::mds::DirRights::kDefaultMaxPerSession);
  if (!max_dirs) return fail(max_dirs.error().to_string());
  if (*max_dirs < 1) return fail("max_dirs_per_client must be at least 1");
  options.max_dirs_per_client = static_cast<size_t>(*max_dirs);
  // 1 (default): reply once a mutation is applied and logged, make the log durable in
  // the background and let fsync wait for it; 0: every reply waits for the disk.
  auto early = config.get_int(section, "early_replies", 1);
  if (!early) return fail(early.error().to_string());
  options.committer.reply_after_sync = *early == 0;

  auto cluster = connect_cluster(options.mon_addrs, fsid, section);
  if (!cluster) return fail(refused_by_monitors(section, fsid, config, cluster.error()));
  boost::asio::io_context io;
  std::optional<dfs::Error> refused;
  std::function<void()> shut_down;  // set once the service exists
  options.on_wrong_cluster = [&](const dfs::Error& error) {
    refused = error;
    shut_down();
  };
  dfs::mds::MdsService service(io.get_executor(), options, std::move(*store),
                               dfs::mds::make_cluster_data_objects(**cluster),
                               std::move(replication));
  auto loaded = service.load();
  if (!loaded) return fail(loaded.error().to_string());
  auto address = service.start();
  if (!address) return fail(address.error().to_string());
  auto metrics = dfs::start_metrics(io.get_executor(), config, section, *address);
  dfs::metrics::Registry::process().add_collector(
      [&service](dfs::metrics::SampleWriter& w) { service.collect_metrics(w); });
  shut_down = [&] {
    service.stop();
    // Let the commit in flight and the background loops finish (bounded), then stop.
    dfs::spawn_checked(
        io.get_executor(),
        [](dfs::mds::MdsService* s, boost::asio::io_context* ctx) -> dfs::awaitable<void> {
          for (int i = 0; i < 500 && !s->idle(); ++i) co_await dfs::sleep_for(dfs::Duration(10));
          ctx->stop();
        }(&service, &io));
  };
  dfs::run_until_signal(io, shut_down);
  if (refused) return fail(refused_by_monitors(section, fsid, config, *refused));
  return 0;
}
