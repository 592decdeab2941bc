// What an MDS exports to Prometheus beyond its RPC counters: its rank's Raft state and
// its commit groups.
// Runs on the MDS's I/O thread (the exporter shares its executor).
#include "common/raft/raft_metrics.h"
#include "mds/service/mds_service.h"

namespace dfs::mds {

void MdsService::collect_metrics(metrics::SampleWriter& w) const {
  const std::string group = "mds.rank" + std::to_string(options_.fs.rank);
  if (replication_) raft::write_raft_metrics(w, group, replication_->status());
  const metrics::Labels rank{{"rank", std::to_string(options_.fs.rank)}};
  const CommitterStats& commits = committer_.stats();
  // Entries per group is what batching buys: on a replicated rank each group is one
  // Raft round (log syncs and messages on every replica), whatever it holds.
  w.counter("dfs_mds_commit_groups_total", "commit groups written", rank,
            static_cast<double>(commits.groups));
  w.counter("dfs_mds_commit_entries_total", "log entries committed in those groups", rank,
            static_cast<double>(commits.entries));
  const auto* descriptor = proto::MdsLogEntry::descriptor();
  for (size_t kind = 0; kind < commits.entries_by_kind.size(); ++kind) {
    const uint64_t count = commits.entries_by_kind[kind];
    const auto* op = descriptor->FindFieldByNumber(static_cast<int>(kind));
    if (count == 0 || op == nullptr) continue;
    w.counter("dfs_mds_commit_entries_by_kind_total", "those entries by operation",
              {{"rank", std::to_string(options_.fs.rank)}, {"kind", op->name()}},
              static_cast<double>(count));
  }
  w.counter("dfs_mds_commit_groups_pipelined_total",
            "groups of a replicated rank decided while the group before was in flight", rank,
            static_cast<double>(commits.pipelined_groups));
  w.counter("dfs_mds_early_replies_total",
            "requests a replicated rank answered before their group committed", rank,
            static_cast<double>(commits.early_replies));
  w.gauge("dfs_mds_replicated", "1 when the rank is a Raft group, 0 for a single MDS",
          rank, replication_ ? 1 : 0);
}

}  // namespace dfs::mds
