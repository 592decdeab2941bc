// What an OSD exports to Prometheus beyond its RPC counters: its placement groups,
// recovery and scrub counts, and its disk's use as of the last beacon. Runs on the OSD's
// I/O thread (the exporter shares its executor).
#include "osd/service/osd_service.h"

namespace dfs::osd {

void OsdService::collect_metrics(metrics::SampleWriter& w) const {
  const PrimaryPgCounts pgs = count_primary_pgs();
  w.gauge("dfs_osd_pgs", "placement groups this OSD is primary of, by state",
          {{"state", "primary"}}, pgs.primary);
  w.gauge("dfs_osd_pgs", "", {{"state", "active"}}, pgs.active);
  w.gauge("dfs_osd_pgs_held", "placement groups this OSD holds state for (any role)", {},
          static_cast<double>(pgs_.size()));
  w.counter("dfs_osd_recovered_objects_total", "objects copied or removed onto members by peering",
            {}, static_cast<double>(recovered_objects_));
  w.gauge("dfs_osd_recovery_pending_objects", "objects running peerings still have to copy or remove",
          {}, static_cast<double>(recovery_pending_objects_));
  w.counter("dfs_osd_inconsistent_objects_total", "inconsistent copies found by scrub or a bad read",
            {}, static_cast<double>(inconsistent_objects_));
  w.counter("dfs_osd_repaired_objects_total", "inconsistent copies repaired", {},
            static_cast<double>(repaired_objects_));
  if (last_usage_.total_bytes > 0) {
    w.gauge("dfs_osd_store_bytes", "the store's file system, by kind", {{"kind", "total"}},
            static_cast<double>(last_usage_.total_bytes));
    w.gauge("dfs_osd_store_bytes", "", {{"kind", "available"}},
            static_cast<double>(last_usage_.available_bytes));
    w.gauge("dfs_osd_store_bytes", "", {{"kind", "used"}}, static_cast<double>(last_usage_.used_bytes));
    w.gauge("dfs_osd_store_objects", "objects in the store", {},
            static_cast<double>(last_usage_.object_count));
  }
}

OsdService::PrimaryPgCounts OsdService::count_primary_pgs() const {
  PrimaryPgCounts counts;
  for (const PgKey& key : primary_pgs()) {
    ++counts.primary;
    auto it = pgs_.find(key);
    if (it != pgs_.end() && it->second->active_for(acting_members(*map().pool(key.first), key.second))) {
      ++counts.active;
    }
  }
  return counts;
}

}  // namespace dfs::osd
