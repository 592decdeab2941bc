// RaftNode membership: single-server changes that take effect as soon as the entry is
// in the log (appended, not committed), per the Raft thesis section 4.1.
#include <algorithm>

#include "common/raft/check.h"
#include "common/raft/raft_node.h"

namespace dfs::raft {

Result<Index> RaftNode::propose_conf_change(ConfChange change) {
  if (role_ != Role::kLeader) {
    return make_error(ErrorCode::kUnavailable, "not the raft leader");
  }
  if (transferee_ != kNoNode) {
    return make_error(ErrorCode::kBusy, "raft leadership transfer in progress");
  }
  // Until an entry of this term commits, a change appended by an earlier leader may
  // still be pending unseen; two overlapping single-server changes could then form
  // disjoint majorities (the bug noted on raft-dev, 2015).
  if (commit_ < term_start_index_) {
    return make_error(ErrorCode::kUnavailable, "raft leader has not committed in its term");
  }
  if (conf_index_ > commit_) {
    return make_error(ErrorCode::kBusy, "a raft configuration change is pending");
  }
  if (change.kind == ConfChangeKind::kRemoveNode && change.node == config_.id) {
    return make_error(ErrorCode::kInvalidArgument, "transfer leadership before removing the leader");
  }
  std::optional<ConfState> next = apply_conf_change(conf_, change);
  if (!next || next->voters.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "raft configuration change is a no-op");
  }
  Index index = storage_.last_index() + 1;
  std::vector<Entry> entries;
  entries.push_back(Entry{term_, index, EntryType::kConfChange, encode_conf_state(*next)});
  append_local(std::move(entries));
  return index;
}

void RaftNode::note_appended_conf(const std::vector<Entry>& entries) {
  for (const Entry& e : entries) {
    if (e.type != EntryType::kConfChange) continue;
    std::optional<ConfState> conf = decode_conf_state(e.data);
    DFS_RAFT_CHECK(conf.has_value());
    conf_index_ = e.index;
    set_conf(std::move(*conf));
  }
}

// The configuration in force is the last one in the log, else the snapshot's.
void RaftNode::refresh_conf() {
  const Snapshot& snap = storage_.snapshot();
  conf_index_ = 0;
  ConfState conf = snap.meta.conf;
  Index last = storage_.last_index();
  for (Index i = storage_.first_index(); i <= last;) {
    std::vector<Entry> batch = storage_.entries(i, last + 1, 1 << 20);
    for (const Entry& e : batch) {
      if (e.type != EntryType::kConfChange) continue;
      std::optional<ConfState> c = decode_conf_state(e.data);
      DFS_RAFT_CHECK(c.has_value());
      conf = std::move(*c);
      conf_index_ = e.index;
    }
    i += batch.size();
  }
  set_conf(std::move(conf));
}

ConfState RaftNode::conf_at(Index index) const {
  ConfState conf = storage_.snapshot().meta.conf;
  for (Index i = storage_.first_index(); i <= index;) {
    std::vector<Entry> batch = storage_.entries(i, index + 1, 1 << 20);
    for (const Entry& e : batch) {
      if (e.type == EntryType::kConfChange) conf = *decode_conf_state(e.data);
    }
    i += batch.size();
  }
  return conf;
}

void RaftNode::set_conf(ConfState conf) {
  conf_ = std::move(conf);
  if (role_ != Role::kLeader) return;
  // Track exactly the voters other than this node.
  std::erase_if(progress_, [&](const auto& kv) { return !conf_.contains(kv.first); });
  for (NodeId peer : conf_.voters) {
    if (peer == config_.id || progress_.count(peer)) continue;
    Progress pr;
    pr.next = storage_.last_index() + 1;
    pr.recent_active = true;
    progress_[peer] = pr;
  }
  if (transferee_ != kNoNode && !conf_.contains(transferee_)) abort_transfer();
  // A smaller quorum may already cover entries that were waiting.
  maybe_commit();
}

}  // namespace dfs::raft
