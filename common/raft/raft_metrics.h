// A Raft group's state as Prometheus gauges, for the daemons that run one (the monitors'
// quorum, a metadata rank's replicas).
#pragma once

#include "common/metrics/registry.h"
#include "common/raft/raft_group.h"

namespace dfs::raft {

// dfs_raft_{term,commit_index,applied_index,last_index,is_leader,...}{group="<group>"}.
void write_raft_metrics(metrics::SampleWriter& w, const std::string& group,
                        const RaftGroupStatus& status);

}  // namespace dfs::raft
