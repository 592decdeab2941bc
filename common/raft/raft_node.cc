// RaftNode: construction, the message dispatcher, the client-facing calls and the
// Ready/advance cycle. Roles, replication, snapshots and membership live in sibling
// files (raft_election.cc, raft_replication.cc, raft_snapshot.cc, raft_membership.cc).
#include "common/raft/raft_node.h"

#include <algorithm>
#include <utility>

#include "common/raft/check.h"

namespace dfs::raft {

const char* role_name(Role role) {
  switch (role) {
    case Role::kFollower: return "follower";
    case Role::kPreCandidate: return "pre-candidate";
    case Role::kCandidate: return "candidate";
    case Role::kLeader: return "leader";
  }
  return "?";
}

RaftNode::RaftNode(RaftConfig config, RaftLogStorage& storage, Random& random)
    : config_(config), storage_(storage), random_(random) {
  DFS_RAFT_CHECK(config_.id != kNoNode && config_.election_ticks > config_.heartbeat_ticks);
  HardState hs = storage_.hard_state();
  term_ = hs.term;
  vote_ = hs.vote;
  Index snap = storage_.snapshot().meta.index;
  commit_ = std::max(hs.commit, snap);
  DFS_RAFT_CHECK(commit_ <= storage_.last_index());
  applied_ = snap;
  synced_last_ = storage_.last_index();  // the storage holds what survived: all synced
  reported_hard_state_ = HardState{term_, vote_, commit_};
  refresh_conf();
  become_follower(term_, kNoNode);
}

Term RaftNode::last_term() const {
  std::optional<Term> t = storage_.term(storage_.last_index());
  DFS_RAFT_CHECK(t.has_value());
  return *t;
}

void RaftNode::send(Message m) {
  m.from = config_.id;
  if (m.term == 0) m.term = term_;
  outbox_.push_back(std::move(m));
}

// A leader's replication message: rests on nothing unsynced (see the Ready contract).
void RaftNode::send_early(Message m) {
  DFS_RAFT_CHECK(role_ == Role::kLeader);
  m.from = config_.id;
  if (m.term == 0) m.term = term_;
  early_outbox_.push_back(std::move(m));
}

// Entries from `index` on are being replaced: those below stay durable, the new ones
// are not until the next sync.
void RaftNode::forget_synced_from(Index index) { synced_last_ = std::min(synced_last_, index - 1); }

void RaftNode::step(const Message& m) {
  if (m.to != config_.id) return;
  if (m.term > term_) {
    bool vote_request = m.type == MessageType::kPreVote || m.type == MessageType::kVote;
    if (vote_request) {
      // Check-quorum lease: while we hear from a leader, a higher-term vote request
      // comes from a node that is partitioned or removed; ignoring it keeps that
      // node from deposing a healthy leader (and keeps the leader's lease).
      if (refuses_votes(m)) return;
    }
    bool pre_vote_granted = m.type == MessageType::kPreVoteResp && !m.reject;
    if (m.type != MessageType::kPreVote && !pre_vote_granted) {
      bool from_leader = m.type == MessageType::kAppend || m.type == MessageType::kHeartbeat ||
                         m.type == MessageType::kSnapshot;
      become_follower(m.term, from_leader ? m.from : kNoNode);
    }
  } else if (m.term < term_) {
    if (m.type == MessageType::kAppend || m.type == MessageType::kHeartbeat ||
        m.type == MessageType::kSnapshot) {
      // A deposed leader that missed the election (pre-vote keeps our term from
      // reaching it otherwise): our higher term makes it step down.
      send(Message{.type = MessageType::kAppendResp, .to = m.from});
    } else if (m.type == MessageType::kPreVote) {
      send(Message{.type = MessageType::kPreVoteResp, .to = m.from, .reject = true});
    }
    return;
  }

  switch (m.type) {
    case MessageType::kPreVote:
    case MessageType::kVote:
      handle_vote_request(m);
      return;
    case MessageType::kPreVoteResp:
    case MessageType::kVoteResp:
      handle_vote_response(m);
      return;
    default:
      break;
  }

  if (role_ == Role::kLeader) {
    if (m.type == MessageType::kAppendResp) handle_append_response(m);
    else if (m.type == MessageType::kHeartbeatResp) handle_heartbeat_response(m);
    else if (m.type == MessageType::kSnapshotResp) handle_snapshot_response(m);
    return;
  }
  bool from_leader = m.type == MessageType::kAppend || m.type == MessageType::kHeartbeat ||
                     m.type == MessageType::kSnapshot || m.type == MessageType::kTimeoutNow;
  if (!from_leader) return;
  if (role_ != Role::kFollower) become_follower(term_, m.from);
  leader_ = m.from;
  election_elapsed_ = 0;
  leader_heard_elapsed_ = 0;
  switch (m.type) {
    case MessageType::kAppend: handle_append(m); break;
    case MessageType::kHeartbeat: handle_heartbeat(m); break;
    case MessageType::kSnapshot: handle_snapshot_chunk(m); break;
    case MessageType::kTimeoutNow:
      if (promotable()) campaign(/*pre_vote=*/false, /*transfer=*/true);
      break;
    default: break;
  }
}

Result<Index> RaftNode::propose(std::string data) {
  if (role_ != Role::kLeader) {
    return make_error(ErrorCode::kUnavailable, "not the raft leader");
  }
  if (transferee_ != kNoNode) {
    return make_error(ErrorCode::kBusy, "raft leadership transfer in progress");
  }
  Index index = storage_.last_index() + 1;
  std::vector<Entry> entries;
  entries.push_back(Entry{term_, index, EntryType::kNormal, std::move(data)});
  append_local(std::move(entries));
  return index;
}

Status RaftNode::read_index(uint64_t context) {
  if (role_ != Role::kLeader) {
    return make_error(ErrorCode::kUnavailable, "not the raft leader");
  }
  // Until its no-op commits, a new leader's commit index may lag entries that an
  // earlier leader committed, so it does not know the index a read must wait for.
  if (commit_ < term_start_index_) {
    return make_error(ErrorCode::kUnavailable, "raft leader has not committed in its term");
  }
  if (conf_.quorum() == 1 && conf_.contains(config_.id)) {
    read_states_.push_back(ReadState{context, commit_});
    return ok_status();
  }
  pending_reads_.push_back(PendingRead{context, commit_, {config_.id}});
  bcast_heartbeat(context);
  return ok_status();
}

Status RaftNode::transfer_leadership(NodeId to) {
  if (role_ != Role::kLeader) {
    return make_error(ErrorCode::kUnavailable, "not the raft leader");
  }
  if (to == config_.id) return ok_status();
  if (!conf_.contains(to)) {
    return make_error(ErrorCode::kInvalidArgument, "transfer target is not a voter");
  }
  transferee_ = to;
  transfer_elapsed_ = 0;
  Progress& pr = progress_.at(to);
  if (pr.match == storage_.last_index()) {
    send_timeout_now(to);
  } else {
    send_append(to, /*send_if_empty=*/true);
  }
  return ok_status();
}

Status RaftNode::compact(Index index, std::string image) {
  if (index > applied_ || index <= storage_.snapshot().meta.index) {
    return make_error(ErrorCode::kInvalidArgument, "compaction index outside (snapshot, applied]");
  }
  std::optional<Term> t = storage_.term(index);
  DFS_RAFT_CHECK(t.has_value());
  storage_.apply_snapshot(Snapshot{SnapshotMeta{index, *t, conf_at(index)}, std::move(image)});
  must_sync_ = true;
  return ok_status();
}

Status RaftNode::attach_image(Index index, std::string image) {
  if (index > applied_ || index < storage_.snapshot().meta.index) {
    return make_error(ErrorCode::kInvalidArgument, "image index outside [snapshot, applied]");
  }
  std::optional<Term> t = storage_.term(index);
  DFS_RAFT_CHECK(t.has_value());
  storage_.apply_snapshot(Snapshot{SnapshotMeta{index, *t, conf_at(index)}, std::move(image)});
  must_sync_ = true;
  sendable_image_index_ = index;
  wants_image_ = false;
  for (auto& [id, pr] : progress_) {
    if (pr.state == ProgressState::kSnapshot) send_snapshot_chunk(id, pr);
  }
  return ok_status();
}

bool RaftNode::sending_snapshot() const {
  for (const auto& [id, pr] : progress_) {
    if (pr.state != ProgressState::kSnapshot) continue;
    // A whole image on its way (with images_on_demand, not a wait for one) to a follower
    // that answered a chunk within an election timeout.
    const bool image = !config_.images_on_demand || pr.snapshot_index == sendable_image_index_;
    if (image && pr.snapshot_silent_ticks < config_.election_ticks) return true;
  }
  return false;
}

bool RaftNode::has_ready() const {
  return !early_outbox_.empty() || !outbox_.empty() || must_sync_ || need_broadcast_ ||
         installed_snapshot_ || !read_states_.empty() || commit_ > applied_ ||
         HardState{term_, vote_, commit_} != reported_hard_state_;
}

Ready RaftNode::ready() {
  if (need_broadcast_) {
    need_broadcast_ = false;
    if (role_ == Role::kLeader) bcast_append(/*send_if_empty=*/false);
  }
  Ready rd;
  HardState hs{term_, vote_, commit_};
  if (hs != reported_hard_state_) {
    storage_.set_hard_state(hs);
    // Term and vote must be durable before anything that rests on them leaves. The
    // commit index need not be (etcd's MustSync): it is volatile state in the Raft
    // paper, every entry up to it is already synced (see the contract in raft_node.h),
    // and a node that restarts with an older one learns the rest again. It is written
    // anyway and becomes durable with the next sync made for another reason.
    if (hs.term != reported_hard_state_.term || hs.vote != reported_hard_state_.vote) {
      must_sync_ = true;
    }
    rd.hard_state = hs;
  }
  rd.must_sync = must_sync_;
  // Entries handed out without a sync are durable already: a follower's commit index
  // never passes entries it has not synced without must_sync_ being set, and a leader
  // counts its own copy only once synced.
  DFS_RAFT_CHECK(must_sync_ || commit_ <= synced_last_);
  rd.snapshot = std::move(installed_snapshot_);
  installed_snapshot_.reset();
  rd.early_messages = std::move(early_outbox_);
  early_outbox_.clear();
  rd.messages = std::move(outbox_);
  outbox_.clear();
  if (commit_ > applied_) {
    rd.committed_entries = storage_.entries(applied_ + 1, commit_ + 1, config_.max_apply_bytes);
  }
  rd.read_states = std::move(read_states_);
  read_states_.clear();
  return rd;
}

void RaftNode::advance(const Ready& rd) {
  if (rd.hard_state) reported_hard_state_ = *rd.hard_state;
  if (!rd.committed_entries.empty()) {
    DFS_RAFT_CHECK(rd.committed_entries.front().index == applied_ + 1);
    applied_ = rd.committed_entries.back().index;
  }
  if (!rd.must_sync) {
    DFS_RAFT_CHECK(synced_last_ == storage_.last_index());  // nothing written since
    return;
  }
  must_sync_ = false;
  // The sync covered every write before ready(), and none came after it (nothing is
  // called between ready() and advance()): the whole log is durable.
  synced_last_ = storage_.last_index();
  // The leader's own copy counts from now on, which may complete a quorum (a
  // single-voter group commits here); followers learn the new commit index at once.
  if (maybe_commit()) bcast_append(/*send_if_empty=*/true);
}

}  // namespace dfs::raft
