// RaftNode roles and elections: timeouts, pre-vote, votes, check-quorum.
#include <algorithm>

#include "common/raft/check.h"
#include "common/raft/raft_node.h"

namespace dfs::raft {

void RaftNode::reset_election_timer() {
  election_elapsed_ = 0;
  heartbeat_elapsed_ = 0;
  randomized_timeout_ = static_cast<int>(
      random_.uniform(config_.election_ticks, 2 * static_cast<uint64_t>(config_.election_ticks)));
}

// A node outside the configuration (removed, or waiting to be added) never campaigns.
bool RaftNode::promotable() const { return conf_.contains(config_.id); }

bool RaftNode::log_up_to_date(Index index, Term term) const {
  Term mine = last_term();
  return term > mine || (term == mine && index >= storage_.last_index());
}

void RaftNode::become_follower(Term term, NodeId leader) {
  if (term != term_) {
    term_ = term;
    vote_ = kNoNode;
  }
  role_ = Role::kFollower;
  leader_ = leader;
  votes_.clear();
  progress_.clear();
  wants_image_ = false;
  pending_reads_.clear();
  abort_transfer();
  need_broadcast_ = false;
  reset_election_timer();
}

void RaftNode::become_pre_candidate() {
  // Term and vote stay as they are: a pre-vote that fails leaves no trace, which is
  // what keeps a partitioned node from inflating its term and disrupting the group.
  role_ = Role::kPreCandidate;
  leader_ = kNoNode;
  votes_.clear();
  reset_election_timer();
}

void RaftNode::become_candidate() {
  term_ += 1;
  vote_ = config_.id;
  role_ = Role::kCandidate;
  leader_ = kNoNode;
  votes_.clear();
  reset_election_timer();
}

void RaftNode::become_leader() {
  role_ = Role::kLeader;
  leader_ = config_.id;
  votes_.clear();
  pending_reads_.clear();
  abort_transfer();
  reset_election_timer();
  progress_.clear();
  round_ticks_.clear();
  sent_timeout_now_ = false;
  for (NodeId peer : conf_.voters) {
    if (peer == config_.id) continue;
    Progress pr;
    pr.next = storage_.last_index() + 1;
    pr.recent_active = true;
    progress_[peer] = pr;
  }
  // Commit rule: a leader commits only entries of its own term by counting replicas,
  // so it appends one at once; reads and membership changes wait for it to commit.
  term_start_index_ = storage_.last_index() + 1;
  std::vector<Entry> noop;
  noop.push_back(Entry{term_, term_start_index_, EntryType::kNoop, {}});
  append_local(std::move(noop));
  // A heartbeat round at once: the lease starts one round trip after taking office.
  bcast_heartbeat(0);
}

void RaftNode::campaign(bool pre_vote, bool transfer) {
  if (!promotable()) return;
  if (pre_vote) become_pre_candidate();
  else become_candidate();
  Term vote_term = pre_vote ? term_ + 1 : term_;
  votes_[config_.id] = true;
  if (conf_.quorum() == 1) {
    if (pre_vote) campaign(false, transfer);
    else become_leader();
    return;
  }
  for (NodeId peer : conf_.voters) {
    if (peer == config_.id) continue;
    send(Message{.type = pre_vote ? MessageType::kPreVote : MessageType::kVote,
                 .to = peer,
                 .term = vote_term,
                 .index = storage_.last_index(),
                 .log_term = last_term(),
                 .transfer = transfer});
  }
}

bool RaftNode::refuses_votes(const Message& m) const {
  // Whatever term this node has learnt since (a later term can reach it in a message
  // that names no leader), and also when it just started: it may have answered a
  // heartbeat before it stopped. A transfer is the leader's own wish.
  return !m.transfer && leader_heard_elapsed_ < config_.election_ticks;
}

void RaftNode::handle_vote_request(const Message& m) {
  bool pre = m.type == MessageType::kPreVote;
  MessageType resp = pre ? MessageType::kPreVoteResp : MessageType::kVoteResp;
  if (refuses_votes(m)) {
    send(Message{.type = resp, .to = m.from, .term = term_, .reject = true});
    return;
  }
  // A pre-vote for a later term is judged on the log alone: granting it binds nothing.
  bool can_vote = vote_ == m.from || (vote_ == kNoNode && leader_ == kNoNode) ||
                  (pre && m.term > term_);
  if (can_vote && log_up_to_date(m.index, m.log_term)) {
    send(Message{.type = resp, .to = m.from, .term = m.term});
    if (!pre) {
      vote_ = m.from;  // persisted through the next Ready before the response leaves
      election_elapsed_ = 0;
    }
  } else {
    send(Message{.type = resp, .to = m.from, .term = term_, .reject = true});
  }
}

void RaftNode::handle_vote_response(const Message& m) {
  bool pre = m.type == MessageType::kPreVoteResp;
  if ((pre && role_ != Role::kPreCandidate) || (!pre && role_ != Role::kCandidate)) return;
  if (!conf_.contains(m.from)) return;
  if (pre && !m.reject && m.term != term_ + 1) return;  // grant from an older round
  votes_.emplace(m.from, !m.reject);
  size_t granted = 0;
  size_t rejected = 0;
  for (const auto& [id, yes] : votes_) (yes ? granted : rejected) += 1;
  if (granted >= conf_.quorum()) {
    if (pre) campaign(/*pre_vote=*/false, /*transfer=*/false);
    else become_leader();
  } else if (rejected >= conf_.quorum()) {
    become_follower(term_, kNoNode);
  }
}

void RaftNode::tick() {
  ++ticks_;
  ++leader_heard_elapsed_;
  if (role_ == Role::kLeader) {
    tick_leader();
    return;
  }
  election_elapsed_ += 1;
  if (promotable() && election_elapsed_ >= randomized_timeout_) {
    campaign(/*pre_vote=*/true, /*transfer=*/false);
  }
}

// Check-quorum: a leader that has not heard from a majority within an election
// timeout steps down, so a partitioned leader stops serving reads and proposals.
bool RaftNode::quorum_active() {
  size_t active = conf_.contains(config_.id) ? 1 : 0;
  for (auto& [id, pr] : progress_) {
    if (pr.recent_active) active += 1;
    pr.recent_active = false;
  }
  return active >= conf_.quorum();
}

void RaftNode::tick_leader() {
  leader_heard_elapsed_ = 0;  // a leader hears itself
  election_elapsed_ += 1;
  heartbeat_elapsed_ += 1;
  if (transferee_ != kNoNode && ++transfer_elapsed_ >= config_.election_ticks) {
    abort_transfer();
  }
  if (election_elapsed_ >= config_.election_ticks) {
    election_elapsed_ = 0;
    if (!quorum_active()) {
      become_follower(term_, kNoNode);
      return;
    }
  }
  for (auto& [id, pr] : progress_) {
    if (pr.state != ProgressState::kSnapshot) continue;
    ++pr.snapshot_silent_ticks;
    if (++pr.snapshot_idle_ticks >= config_.snapshot_resend_ticks) send_snapshot_chunk(id, pr);
  }
  if (heartbeat_elapsed_ >= config_.heartbeat_ticks) {
    heartbeat_elapsed_ = 0;
    bcast_heartbeat(pending_reads_.empty() ? 0 : pending_reads_.back().context);
  }
}

}  // namespace dfs::raft
