#include "common/raft/raft_metrics.h"

namespace dfs::raft {

void write_raft_metrics(metrics::SampleWriter& w, const std::string& group,
                        const RaftGroupStatus& s) {
  const metrics::Labels l{{"group", group}};
  w.gauge("dfs_raft_term", "current Raft term", l, static_cast<double>(s.term));
  w.gauge("dfs_raft_is_leader", "1 while this replica leads its group", l,
          s.role == Role::kLeader ? 1 : 0);
  w.gauge("dfs_raft_commit_index", "highest log index known committed", l, static_cast<double>(s.commit));
  w.gauge("dfs_raft_applied_index", "highest log index applied here", l, static_cast<double>(s.applied));
  w.gauge("dfs_raft_last_index", "last index of this replica's log", l, static_cast<double>(s.last_index));
  w.gauge("dfs_raft_snapshot_index", "index of the last snapshot (compaction point)", l,
          static_cast<double>(s.snapshot_index));
  w.gauge("dfs_raft_failed", "1 once a log sync failed and the group stopped", l, s.failed ? 1 : 0);
  w.counter("dfs_raft_syncs_total", "log syncs to disk", l, static_cast<double>(s.syncs));
  w.counter("dfs_raft_applied_entries_total", "entries applied since start", l,
            static_cast<double>(s.applied_entries));
  w.counter("dfs_raft_messages_sent_total", "Raft messages sent", l, static_cast<double>(s.messages_sent));
  w.counter("dfs_raft_messages_dropped_total", "Raft messages dropped (peer unreachable, queue full)",
            l, static_cast<double>(s.messages_dropped));
  for (const auto& [peer, p] : s.peers) {
    // Leader only: how far each follower's log is behind.
    w.gauge("dfs_raft_follower_lag_entries", "entries a follower lacks (leader only)",
            {{"group", group}, {"peer", std::to_string(peer)}},
            s.last_index >= p.match ? static_cast<double>(s.last_index - p.match) : 0);
  }
}

}  // namespace dfs::raft
