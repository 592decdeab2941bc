// RaftGroupRuntime's client operations: proposals and linearizable reads, from the
// moment they are queued to their completion or failure, and the status snapshot.
#include "common/raft/raft_group_runtime.h"

namespace dfs::raft {

Error RaftGroupRuntime::not_leader() const {
  // "leader=<id>" is what leader_hint() parses; it survives the wire in the context.
  std::string ctx = "not the raft leader; leader=" + std::to_string(node_.leader());
  if (auto it = options_.peers.find(node_.leader()); it != options_.peers.end()) {
    ctx += " at " + it->second;
  }
  return Error(ErrorCode::kUnavailable, std::move(ctx));
}

awaitable<Result<Applied>> RaftGroupRuntime::propose(std::string command,
                                                     AppendedFn appended) {
  if (failed_) co_return *failed_;
  if (stopped_) co_return make_error(ErrorCode::kCancelled, "raft group stopped");
  if (command.size() > options_.max_command_bytes) {
    co_return make_error(ErrorCode::kInvalidArgument, "raft command too large");
  }
  if (node_.role() != Role::kLeader) co_return not_leader();  // fail fast
  auto done = std::make_shared<Completion<Result<Applied>>>(executor_);
  queued_proposals_.push_back(QueuedProposal{std::move(command), done, std::move(appended)});
  kick();
  // Only `done` is touched after this point: the group may be gone when it resumes.
  co_return co_await done->wait();
}

void RaftGroupRuntime::submit_proposals() {
  std::vector<QueuedProposal> queued = std::move(queued_proposals_);
  queued_proposals_.clear();
  for (QueuedProposal& q : queued) {
    Result<Index> index = node_.propose(std::move(q.command));
    if (!index) {
      q.done->set(index.error().code() == ErrorCode::kUnavailable ? not_leader() : index.error());
      continue;
    }
    proposals_[*index] = Proposal{node_.term(), q.done};
    if (q.appended) q.appended(*index);
  }
}

// Called when the role or term changed: an entry this node appended as leader that is
// not known committed may be overwritten by the new leader, or may still commit. The
// proposer is told now rather than after an unbounded wait; it dedups on retry.
void RaftGroupRuntime::fail_lost_proposals() {
  bool leading = node_.role() == Role::kLeader;
  for (auto it = proposals_.begin(); it != proposals_.end();) {
    auto [index, p] = *it;
    bool ours_committed = index <= node_.commit_index() && storage_->term(index) == p.term;
    if (ours_committed || (leading && p.term == node_.term())) {
      ++it;  // will be applied and completed normally
      continue;
    }
    p.done->set(Error(ErrorCode::kUnavailable,
                      "leadership lost before commit; the command may still commit"));
    it = proposals_.erase(it);
  }
  if (!leading) {
    // The node dropped its pending read-index requests; they would never complete.
    for (auto& [ctx, r] : confirming_) {
      r.done->set(Error(ErrorCode::kUnavailable, "leadership lost during a read"));
    }
    confirming_.clear();
  }
}

awaitable<Status> RaftGroupRuntime::read() {
  if (failed_) co_return *failed_;
  if (stopped_) co_return make_error(ErrorCode::kCancelled, "raft group stopped");
  if (node_.role() != Role::kLeader) co_return not_leader();
  auto done = std::make_shared<Completion<Status>>(executor_);
  queued_reads_.push_back(Read{done, ticks_});
  kick();
  co_return co_await done->wait();
}

void RaftGroupRuntime::issue_read(Read read) {
  if (node_.role() != Role::kLeader) {
    read.done->set(not_leader());
    return;
  }
  uint64_t context = next_read_context_++;
  Status st = node_.read_index(context);
  if (!st) {
    // A new leader whose no-op has not committed yet: retry on the next round, until
    // the read times out.
    queued_reads_.push_back(std::move(read));
    return;
  }
  confirming_.emplace(context, std::move(read));
}

void RaftGroupRuntime::on_read_state(const ReadState& rs) {
  auto it = confirming_.find(rs.context);
  if (it == confirming_.end()) return;
  read_waiting_.emplace(rs.index, std::move(it->second));
  confirming_.erase(it);
}

void RaftGroupRuntime::complete_reads() {
  Index applied = node_.applied_index();
  while (!read_waiting_.empty() && read_waiting_.begin()->first <= applied) {
    read_waiting_.begin()->second.done->set(ok_status());
    read_waiting_.erase(read_waiting_.begin());
  }
}

void RaftGroupRuntime::expire_reads() {
  auto expired = [&](const Read& r) {
    if (ticks_ - r.issued_tick < static_cast<uint64_t>(options_.read_timeout_ticks)) return false;
    r.done->set(Error(ErrorCode::kTimeout, "raft read not confirmed by a quorum in time"));
    return true;
  };
  std::erase_if(confirming_, [&](auto& kv) { return expired(kv.second); });
  std::erase_if(queued_reads_, expired);
}

void RaftGroupRuntime::fail_all(const Error& error) {
  for (auto& q : queued_proposals_) q.done->set(error);
  queued_proposals_.clear();
  for (auto& [index, p] : proposals_) p.done->set(error);
  proposals_.clear();
  for (auto& r : queued_reads_) r.done->set(error);
  queued_reads_.clear();
  for (auto& [ctx, r] : confirming_) r.done->set(error);
  confirming_.clear();
  for (auto& [index, r] : read_waiting_) r.done->set(error);
  read_waiting_.clear();
}

void RaftGroupRuntime::receive(Message m) {
  if (stopped_ || failed_) return;
  inbox_.push_back(std::move(m));
  kick();
}

RaftGroupStatus RaftGroupRuntime::status() const {
  RaftGroupStatus s = counters_;
  s.id = options_.raft.id;
  s.role = node_.role();
  s.term = node_.term();
  s.leader = node_.leader();
  s.commit = node_.commit_index();
  s.applied = node_.applied_index();
  s.last_index = node_.last_index();
  s.snapshot_index = storage_->snapshot().meta.index;
  for (const auto& [id, pr] : node_.progress()) {
    s.peers[id] = PeerStatus{pr.match, pr.next, pr.state};
  }
  s.failed = failed_.has_value();
  return s;
}

}  // namespace dfs::raft
