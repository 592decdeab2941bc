// What a monitor exports to Prometheus beyond its RPC counters: its Raft state, the map
// it serves and its RocksDB store. Runs on the monitor's I/O thread (the exporter
// shares its executor).
#include "common/metrics/rocksdb_metrics.h"
#include "common/raft/raft_metrics.h"
#include "mon/service/monitor.h"

namespace dfs::mon {

void Monitor::collect_metrics(metrics::SampleWriter& w) const {
  if (group_) raft::write_raft_metrics(w, "mon", group_->status());
  const auto& map = sm_.map().proto();
  w.gauge("dfs_mon_map_epoch", "epoch of the cluster map this monitor has applied", {},
          static_cast<double>(map.epoch()));
  int up = 0, in = 0;
  for (const auto& osd : map.osds()) {
    up += osd.up();
    in += osd.in();
  }
  w.gauge("dfs_mon_osds", "OSDs in the map, by state", {{"state", "total"}}, map.osds_size());
  w.gauge("dfs_mon_osds", "", {{"state", "up"}}, up);
  w.gauge("dfs_mon_osds", "", {{"state", "in"}}, in);
  w.gauge("dfs_mon_pools", "pools in the map", {}, map.pools_size());
  w.gauge("dfs_mon_subscribers", "map subscriptions held open by this monitor", {},
          static_cast<double>(subscribers_.size()));
  if (store_) metrics::write_rocksdb_metrics(w, "mon", *store_->db());
  w.gauge("dfs_mon_leader_ready", "1 while this monitor leads and has caught up (it judges failures)",
          {}, leader_ready_ ? 1 : 0);
}

}  // namespace dfs::mon
