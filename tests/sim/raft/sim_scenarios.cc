// RaftSimulation, targeted schedules (SimScenario): interleavings that random faults
// reach too rarely to find in a default run. Each is a small state machine advanced
// once per virtual ms; it partitions, pauses and drops messages (any message may be
// lost on a real network, so a drop rule may look at anything), watches the nodes, and
// gives up after a deadline per phase. When it ends the network heals and the seed
// goes on with random faults, so every check still runs over the whole history.
#include "tests/sim/raft/sim_parts.h"

namespace dfs::raft::sim {

using dfs::sim::KvOpKind;

namespace {

// A phase that has not reached its goal by then gives up (the seed carries on).
constexpr uint64_t kPhaseDeadlineMs = 1200;
// Figure 8: how long C holds A's old-term entry before A is cut off, so that a leader
// that commits it by counting has time to apply it.
constexpr uint64_t kF8HoldMs = 120;
// Stale read: how long after the resumed leader handled the get the schedule lasts.
constexpr uint64_t kSrAfterMs = 150;

bool from_leader(MessageType t) {
  return t == MessageType::kAppend || t == MessageType::kHeartbeat ||
         t == MessageType::kSnapshot || t == MessageType::kTimeoutNow;
}

}  // namespace

const char* scenario_name(SimScenario scenario) {
  switch (scenario) {
    case SimScenario::kAuto: return "auto";
    case SimScenario::kRandom: return "random";
    case SimScenario::kFigure8: return "figure8";
    case SimScenario::kStaleRead: return "stale-read";
  }
  return "?";
}

void RaftSimulation::pick_scenario() {
  SimScenario s = options_.scenario;
  if (s == SimScenario::kAuto) {
    // A stream of its own, so that the random seeds run exactly as before.
    SplitMixRandom pick(options_.seed * 0xd1b54a32d192ed03ULL + 0x5ce7a110);
    uint64_t roll = pick.uniform(0, 100);
    s = roll < 15 ? SimScenario::kFigure8
                  : roll < 30 ? SimScenario::kStaleRead : SimScenario::kRandom;
  }
  result_.scenario = s;
  if (s == SimScenario::kRandom) return;
  script_ = std::make_unique<Script>();
  script_->scenario = s;
  // Heavy loss only makes the schedule miss its window; duplicates and delays stay.
  drop_p_ = std::min(drop_p_, 0.02);
  if (s == SimScenario::kFigure8) {
    script_->phase = Script::kF8Stable;
    append_bytes_ = 1;  // one entry per append: C can hold ia without the next entry
  } else {
    script_->phase = Script::kSrStable;
  }
}

void RaftSimulation::end_script() {
  partition_.clear();
  for (auto& n : nodes_) {
    if (!n->stalled) continue;
    n->stalled = false;
    drain(*n);
  }
  trace(17, script_->phase);
  script_.reset();
}

bool RaftSimulation::script_drops(const SimNode& to, const Message& m) const {
  const Script& s = *script_;
  switch (s.phase) {
    case Script::kF8Elect:
      // Whoever wins among B and C must not replicate its first entry: lose everything
      // it sends as leader.
      return m.from != s.a && from_leader(m.type);
    case Script::kF8Commit:
      if (m.from == s.b) return true;  // still in flight from before the cut
      // C takes A's log up to ia but nothing after: the entries of A's new term (its
      // no-op first) are lost on the way, so only the old-term entry reaches a majority.
      // Appends that C would reject (it lacks ia) still get through, so that A learns
      // where C's log ends.
      if (m.from == s.a && to.id == s.c && m.type == MessageType::kAppend &&
          !m.entries.empty() && m.entries.back().index > s.ia &&
          to.storage->last_index() >= s.ia) {
        return true;
      }
      return false;
    case Script::kF8Overwrite:
      return m.from == s.a;  // still in flight from before the cut
    default:
      return false;
  }
}

void RaftSimulation::step_script() {
  Script& s = *script_;
  auto node = [&](NodeId id) -> SimNode& { return *nodes_[id - 1]; };
  // A leader that has committed an entry of its term (so it serves reads and its
  // followers have caught up with the no-op), with the initial three voters.
  auto settled_leader = [&]() -> SimNode* {
    SimNode* l = leader();
    if (!l || l->syncing || now_ < 150) return nullptr;
    const RaftNode& r = *l->raft;
    if (r.conf().voters.size() != 3) return nullptr;
    if (r.storage().term(r.commit_index()) != r.term()) return nullptr;
    return l;
  };
  // A leader other than `not_id` of a term above `above`.
  auto newer_leader = [&](NodeId not_id, Term above) -> SimNode* {
    for (auto& n : nodes_) {
      if (n->id == not_id || !n->up || n->raft->role() != Role::kLeader) continue;
      if (n->raft->term() > above) return n.get();
    }
    return nullptr;
  };
  auto enter = [&](Script::Phase p) {
    s.phase = p;
    s.phase_start = now_;
    trace(15, p, s.a * 256 + s.b * 16 + s.c, s.ia);
  };
  bool waiting = s.phase == Script::kF8Stable || s.phase == Script::kSrStable;
  if (now_ + kQuietMs >= options_.fault_ms ||
      (!waiting && now_ > s.phase_start + kPhaseDeadlineMs)) {
    end_script();
    return;
  }

  switch (s.phase) {
    case Script::kF8Stable: {
      if (now_ > 1500) return end_script();
      SimNode* l = settled_leader();
      if (!l) return;
      s.a = l->id;
      for (NodeId v : l->raft->conf().voters) {
        if (v != s.a) (s.b == kNoNode ? s.b : s.c) = v;  // B or C: fixed once one leads
      }
      // Cut A off, then give it a command nobody else will get. The key is one that
      // clients never use, so it leaves their history alone.
      partition_.clear();
      partition_[s.a] = 1;
      KvCommand cmd{static_cast<uint32_t>(options_.clients + 100), ++s.script_seq,
                    KvCommandKind::kPut, "fig8", "a", ""};
      Result<Index> index = l->raft->propose(encode_command(cmd));
      if (!index.has_value()) return end_script();
      s.ia = *index;
      s.ta = l->raft->term();
      pump(*l);
      enter(Script::kF8Elect);
      return;
    }
    case Script::kF8Elect: {
      SimNode* nb = newer_leader(s.a, s.ta);
      if (!nb) return;
      // It has appended an entry of its term at or below ia (its log was no longer
      // than A's), which nobody else has. Cut it off; A and C meet again.
      if (nb->id != s.b) std::swap(s.b, s.c);
      partition_.clear();
      partition_[s.b] = 1;
      enter(Script::kF8Commit);
      return;
    }
    case Script::kF8Commit: {
      SimNode& a = node(s.a);
      SimNode& c = node(s.c);
      if (s.c_has_ia_since == 0 && c.storage->last_index() >= s.ia &&
          c.storage->term(s.ia) == s.ta && a.raft->role() == Role::kLeader) {
        s.c_has_ia_since = now_;
      }
      if (s.c_has_ia_since == 0) return;
      // Move on once A has applied ia (it committed the old-term entry: only a buggy
      // leader does) or after a while.
      if (a.raft->applied_index() < s.ia && now_ < s.c_has_ia_since + kF8HoldMs) return;
      result_.figure8_runs += 1;
      partition_.clear();
      partition_[s.a] = 1;
      enter(Script::kF8Overwrite);
      return;
    }
    case Script::kF8Overwrite: {
      // B's log ends in a later term than C's, so B can win C's vote and overwrite ia
      // on C. Done once it leads; the entry was never committed, so nothing is lost.
      SimNode* nb = newer_leader(s.a, node(s.a).raft->term());
      if (!nb || nb->raft->storage().term(nb->raft->commit_index()) != nb->raft->term()) return;
      return end_script();
    }

    case Script::kSrStable: {
      if (now_ > 1500) return end_script();
      SimNode* l = settled_leader();
      if (!l) return;
      s.a = l->id;
      partition_.clear();
      partition_[s.a] = 1;
      l->stalled = true;
      enter(Script::kSrStalled);
      return;
    }
    case Script::kSrStalled: {
      // A write invoked since L was paused and acknowledged: committed by a newer
      // leader, and certainly not applied by L.
      const std::vector<dfs::sim::KvOperation>& ops = history_.history();
      const dfs::sim::KvOperation* done = nullptr;
      for (auto it = ops.rbegin(); it != ops.rend() && !done; ++it) {
        if (it->invoke < s.phase_start) break;  // ops are recorded in invoke order
        bool changes = it->kind == KvOpKind::kPut || it->kind == KvOpKind::kAppend ||
                       (it->kind == KvOpKind::kCas && it->cas_ok);
        if (!it->unknown_outcome && changes) done = &*it;
      }
      if (!done) return;
      SimClient& probe = *clients_.back();
      probe.request = ClientRequest{};
      probe.request.client = probe.id;
      probe.request.seq = ++probe.seq;
      probe.request.kind = KvOpKind::kGet;
      probe.request.key = done->key;
      probe.op = history_.begin_get(probe.id, done->key, now_);
      probe.busy = true;
      probe.target = s.a;
      result_.client_ops += 1;
      // Twice, as a client retrying at once would: one loss must not void the seed.
      send_request(probe);
      send_request(probe);
      enter(Script::kSrProbe);
      return;
    }
    case Script::kSrProbe: {
      // Resume L once the get has reached it, so that it handles the get before any
      // tick: a paused process wakes up to its queued input.
      if (now_ < s.phase_start + max_delay_ms_ + 2) return;
      SimNode& l = node(s.a);
      if (l.raft->role() == Role::kLeader) result_.stale_read_runs += 1;
      l.stalled = false;
      drain(l);
      enter(Script::kSrResumed);
      return;
    }
    case Script::kSrResumed:
      if (now_ >= s.phase_start + kSrAfterMs) end_script();
      return;
    case Script::kDone:
      return end_script();
  }
}

}  // namespace dfs::raft::sim
