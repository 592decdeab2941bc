// What an MDS exports to Prometheus beyond its RPC counters: its rank's Raft state.
// Runs on the MDS's I/O thread (the exporter shares its executor).
#include "common/raft/raft_metrics.h"
#include "mds/service/mds_service.h"

namespace dfs::mds {

void MdsService::collect_metrics(metrics::SampleWriter& w) const {
  const std::string group = "mds.rank" + std::to_string(options_.fs.rank);
  if (replication_) raft::write_raft_metrics(w, group, replication_->status());
  w.gauge("dfs_mds_replicated", "1 when the rank is a Raft group, 0 for a single MDS",
          {{"rank", std::to_string(options_.fs.rank)}}, replication_ ? 1 : 0);
}

}  // namespace dfs::mds
