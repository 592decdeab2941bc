// RaftNode log replication: appending, AppendEntries in both directions, heartbeats,
// the commit rule and read-index confirmation.
#include <algorithm>
#include <functional>

#include "common/raft/check.h"
#include "common/raft/raft_node.h"

namespace dfs::raft {

void RaftNode::append_local(std::vector<Entry> entries) {
  note_appended_conf(entries);
  storage_.append(entries);
  must_sync_ = true;
  // Sent from ready(), so that proposals made between two Readys share one message.
  // No commit yet, even alone in the group: this copy counts once synced (advance()).
  need_broadcast_ = true;
}

void RaftNode::bcast_append(bool send_if_empty) {
  for (auto& [id, pr] : progress_) send_append(id, send_if_empty);
}

// Sends what `to` is missing, from pr.next. Returns whether a message was sent.
bool RaftNode::send_append(NodeId to, bool send_if_empty) {
  Progress& pr = progress_.at(to);
  if (pr.state == ProgressState::kSnapshot || pr.paused(config_.max_inflight)) return false;
  Index prev = pr.next - 1;
  std::optional<Term> prev_term = storage_.term(prev);
  if (!prev_term) {
    // The entries it needs were compacted away: ship the snapshot instead.
    pr.become_snapshot(storage_.snapshot().meta.index);
    send_snapshot_chunk(to, pr);
    return true;
  }
  std::vector<Entry> entries;
  if (pr.next <= storage_.last_index()) {
    entries = storage_.entries(pr.next, storage_.last_index() + 1, config_.max_append_bytes);
  }
  if (entries.empty() && !send_if_empty) return false;
  if (pr.state == ProgressState::kReplicate && !entries.empty()) {
    // Pipelining: assume it will be accepted and move on.
    pr.next = entries.back().index + 1;
    pr.inflight.push_back(entries.back().index);
  } else if (pr.state == ProgressState::kProbe) {
    pr.probe_sent = true;
  }
  send_early(Message{.type = MessageType::kAppend,
                     .to = to,
                     .index = prev,
                     .log_term = *prev_term,
                     .entries = std::move(entries),
                     .commit = commit_});
  return true;
}

void RaftNode::bcast_heartbeat(uint64_t context) {
  ++heartbeat_round_;
  round_ticks_.emplace_back(heartbeat_round_, ticks_);
  // Rounds older than a lease are of no use.
  while (!round_ticks_.empty() &&
         round_ticks_.front().second + static_cast<uint64_t>(config_.election_ticks) < ticks_) {
    round_ticks_.pop_front();
  }
  for (auto& [id, pr] : progress_) {
    // Never tell a follower to commit past what it is known to hold.
    send_early(Message{.type = MessageType::kHeartbeat,
                       .to = id,
                       .commit = std::min(pr.match, commit_),
                       .context = context,
                       .lease_round = heartbeat_round_});
  }
}

std::optional<uint64_t> RaftNode::lease_start_tick() const {
  if (role_ != Role::kLeader || transferee_ != kNoNode || sent_timeout_now_ ||
      !conf_.contains(config_.id)) {
    return std::nullopt;
  }
  // The newest round a quorum answered: this node answers each as it sends it.
  std::vector<uint64_t> answered{heartbeat_round_};
  for (const auto& [id, pr] : progress_) {
    if (conf_.contains(id)) answered.push_back(pr.lease_round);
  }
  const size_t quorum = conf_.quorum();
  if (answered.size() < quorum) return std::nullopt;
  std::nth_element(answered.begin(), answered.begin() + (quorum - 1), answered.end(),
                   std::greater<>());
  const uint64_t round = answered[quorum - 1];
  if (round == 0) return std::nullopt;
  for (const auto& [r, tick] : round_ticks_) {
    if (r == round) return tick;
  }
  return std::nullopt;  // older than a lease
}

void RaftNode::send_timeout_now(NodeId to) {
  // Voters grant the campaign it starts past their check-quorum lease, and it may arrive
  // after the transfer was given up: no lease for the rest of this term.
  sent_timeout_now_ = true;
  send(Message{.type = MessageType::kTimeoutNow, .to = to});
}

bool RaftNode::holds_lease() const {
  std::optional<uint64_t> start = lease_start_tick();
  return start && ticks_ < *start + static_cast<uint64_t>(std::max(lease_ticks(), 0));
}

bool RaftNode::maybe_commit() {
  if (role_ != Role::kLeader) return false;
  std::vector<Index> matches;
  for (NodeId voter : conf_.voters) {
    // Its own copy counts only once durable (thesis 10.2.1): its appends may reach the
    // followers before its own write does (Ready::early_messages).
    if (voter == config_.id) matches.push_back(synced_last_);
    else if (auto it = progress_.find(voter); it != progress_.end()) matches.push_back(it->second.match);
    else matches.push_back(0);
  }
  if (matches.empty()) return false;
  std::sort(matches.begin(), matches.end(), std::greater<>());
  Index candidate = matches[conf_.quorum() - 1];
  if (candidate <= commit_) return false;
  // Figure 8: an entry of an older term is committed only indirectly, by committing an
  // entry of the current term after it; counting its replicas is not enough.
  if (storage_.term(candidate) != term_) return false;
  commit_ = candidate;
  return true;
}

// Largest index <= `index` whose term is <= `term`. Stops at the snapshot, whose
// term is the last one known; a result below first_index() means "needs snapshot".
Index RaftNode::find_conflict_by_term(Index index, Term term) const {
  index = std::min(index, storage_.last_index());
  while (index > 0) {
    std::optional<Term> t = storage_.term(index);
    if (!t) return index;
    if (*t <= term) return index;
    index -= 1;
  }
  return 0;
}

void RaftNode::handle_append(const Message& m) {
  Message resp{.type = MessageType::kAppendResp, .to = m.from};
  if (m.index < commit_) {
    // Everything up to commit_ already matches the leader; say so.
    resp.index = commit_;
    send(std::move(resp));
    return;
  }
  std::optional<Term> prev_term = storage_.term(m.index);
  if (!prev_term || *prev_term != m.log_term) {
    Index hint = find_conflict_by_term(m.index, m.log_term);
    resp.index = m.index;
    resp.reject = true;
    resp.reject_hint = hint;
    resp.log_term = storage_.term(hint).value_or(0);
    send(std::move(resp));
    return;
  }
  Index last_new = m.index + m.entries.size();
  for (size_t i = 0; i < m.entries.size(); ++i) {
    const Entry& e = m.entries[i];
    if (storage_.term(e.index) == e.term) continue;
    // First entry that is new or conflicts: everything from here is replaced.
    DFS_RAFT_CHECK(e.index > commit_);
    std::vector<Entry> rest(m.entries.begin() + static_cast<ptrdiff_t>(i), m.entries.end());
    bool truncates = e.index <= storage_.last_index();
    forget_synced_from(e.index);
    storage_.append(rest);
    must_sync_ = true;
    if (truncates && e.index <= conf_index_) refresh_conf();
    note_appended_conf(rest);
    break;
  }
  commit_ = std::max(commit_, std::min(m.commit, last_new));
  resp.index = last_new;
  send(std::move(resp));
}

void RaftNode::handle_append_response(const Message& m) {
  auto it = progress_.find(m.from);
  if (it == progress_.end()) return;
  Progress& pr = it->second;
  pr.recent_active = true;
  if (m.reject) {
    if (pr.state == ProgressState::kSnapshot || m.index <= pr.match) return;  // stale
    if (pr.state == ProgressState::kProbe && m.index != pr.next - 1) return;  // stale
    Index retry = m.reject_hint;
    if (m.log_term > 0) retry = find_conflict_by_term(m.reject_hint, m.log_term);
    pr.become_probe();
    pr.next = std::max(pr.match + 1, std::min(m.index, retry + 1));
    send_append(m.from, /*send_if_empty=*/true);
    return;
  }
  bool was_paused = pr.paused(config_.max_inflight);
  if (!pr.ack(m.index)) {
    if (was_paused && !pr.paused(config_.max_inflight)) send_append(m.from, false);
    return;
  }
  if (pr.state == ProgressState::kSnapshot && pr.match >= pr.snapshot_index) pr.become_probe();
  if (pr.state == ProgressState::kProbe) pr.become_replicate();
  if (maybe_commit()) {
    bcast_append(/*send_if_empty=*/true);  // carries the new commit index
  }
  while (send_append(m.from, /*send_if_empty=*/false)) {
  }
  if (m.from == transferee_ && pr.match == storage_.last_index()) {
    send_timeout_now(m.from);
  }
}

void RaftNode::handle_heartbeat(const Message& m) {
  // m.commit never exceeds what this node is known to hold, so this is safe even
  // though the heartbeat names no log position.
  commit_ = std::max(commit_, std::min(m.commit, storage_.last_index()));
  send(Message{.type = MessageType::kHeartbeatResp,
               .to = m.from,
               .context = m.context,
               .lease_round = m.lease_round});
}

void RaftNode::handle_heartbeat_response(const Message& m) {
  auto it = progress_.find(m.from);
  if (it == progress_.end()) return;
  Progress& pr = it->second;
  pr.recent_active = true;
  pr.lease_round = std::max(pr.lease_round, m.lease_round);
  pr.probe_sent = false;
  // All appends in the window may have been lost: free one slot so a probe gets out.
  if (pr.state == ProgressState::kReplicate && pr.paused(config_.max_inflight)) {
    pr.inflight.pop_front();
  }
  if (pr.match < storage_.last_index()) send_append(m.from, /*send_if_empty=*/true);

  if (m.context == 0 || pending_reads_.empty()) return;
  auto req = std::find_if(pending_reads_.begin(), pending_reads_.end(),
                          [&](const PendingRead& r) { return r.context == m.context; });
  if (req == pending_reads_.end()) return;
  req->acks.insert(m.from);
  if (req->acks.size() < conf_.quorum()) return;
  // A quorum acknowledged this heartbeat, so this node was leader when every earlier
  // request was queued too: release them all, in order.
  auto end = std::next(req);
  for (auto r = pending_reads_.begin(); r != end; ++r) {
    read_states_.push_back(ReadState{r->context, r->index});
  }
  pending_reads_.erase(pending_reads_.begin(), end);
}

}  // namespace dfs::raft
