// RaftSimulation, faults and end-of-run checks: crashes with power loss (some timed to
// hit a leader whose appends left before its own sync completed), restarts,
// partitions (random, and isolating the leader), leader transfers, membership changes;
// then log matching, leader completeness, convergence and linearizability.
#include "tests/sim/raft/sim_parts.h"

namespace dfs::raft::sim {

RaftSimulation::SimNode* RaftSimulation::leader() {
  SimNode* best = nullptr;
  for (auto& n : nodes_) {
    if (!n->up || n->raft->role() != Role::kLeader) continue;
    if (!best || n->raft->term() > best->raft->term()) best = n.get();
  }
  return best;
}

void RaftSimulation::inject_fault() {
  SimNode* lead = leader();
  SimNode& any = *nodes_[random_.uniform(0, nodes_.size())];
  size_t down = 0;
  for (auto& n : nodes_) down += !n->up;
  switch (random_.uniform(0, 10)) {
    case 0:
    case 1:
      if (any.up && down < 2) crash_node(any);
      break;
    case 2:
      if (!lead || down >= 2) break;
      // Half the time in the middle of a sync whose appends have already left, when
      // the followers may hold entries the leader is about to lose.
      if (random_.uniform(0, 2) == 0) crash_node(*lead);
      else lead->crash_before_sync_done = true;
      break;
    case 3:
      if (!any.up) start_node(any);
      break;
    case 4:
      partition_.clear();
      for (auto& n : nodes_) partition_[n->id] = static_cast<int>(random_.uniform(0, 2));
      trace(10);
      break;
    case 5:
      if (lead) {
        partition_.clear();
        partition_[lead->id] = 1;  // the leader alone on its side
        trace(11, lead->id);
      }
      break;
    case 6:
      partition_.clear();
      trace(12);
      break;
    case 7:
      if (lead) {
        const auto& voters = lead->raft->conf().voters;
        NodeId to = voters[random_.uniform(0, voters.size())];
        if (lead->raft->transfer_leadership(to).has_value()) result_.transfers += 1;
        pump(*lead);
      }
      break;
    default:
      if (lead) {
        // Keep 3 to 5 voters: add when at 3, remove when at 5, either at 4.
        const ConfState& conf = lead->raft->conf();
        bool add = conf.voters.size() <= 3 || (conf.voters.size() < 5 && random_.uniform(0, 2));
        std::vector<NodeId> candidates;
        for (auto& n : nodes_) {
          if (add ? !conf.contains(n->id) : (conf.contains(n->id) && n.get() != lead)) {
            candidates.push_back(n->id);
          }
        }
        if (candidates.empty()) break;
        NodeId target = candidates[random_.uniform(0, candidates.size())];
        ConfChange cc{add ? ConfChangeKind::kAddNode : ConfChangeKind::kRemoveNode, target};
        if (lead->raft->propose_conf_change(cc).has_value()) {
          result_.conf_changes += 1;
          trace(13, cc.node, add);
        }
        pump(*lead);
      }
      break;
  }
}

void RaftSimulation::heal_all() {
  partition_.clear();
  drop_p_ = 0;
  dup_p_ = 0;
  // Slow disks speed up too: a follower far behind catches up one round trip (and one
  // sync) per append, which at 12 ms syncs and one entry per append can outlast the
  // quiet window (seed 86994 of 100,000 did).
  max_sync_ms_ = 3;
  for (auto& n : nodes_) {
    n->crash_before_sync_done = false;
    if (!n->up) start_node(*n);
  }
  trace(14);
}

void RaftSimulation::check_leases() {
  for (auto& a : nodes_) {
    if (!a->up || !a->raft || a->raft->role() != Role::kLeader) continue;
    std::optional<uint64_t> start = a->raft->lease_start_tick();
    if (!start) continue;
    uint64_t until = 0;
    for (const auto& [tick, ms] : a->tick_fed_ms) {
      if (tick == *start) until = ms + static_cast<uint64_t>(a->raft->lease_ticks()) * kTickMs;
    }
    if (now_ >= until) continue;
    for (auto& b : nodes_) {
      if (b == a || !b->up || !b->raft || b->raft->role() != Role::kLeader) continue;
      if (b->raft->term() <= a->raft->term()) continue;
      checker_.report("node " + std::to_string(b->id) + " leads term " +
                      std::to_string(b->raft->term()) + " at " + std::to_string(now_) +
                      " ms while the lease of node " + std::to_string(a->id) + " (term " +
                      std::to_string(a->raft->term()) + ") holds until " +
                      std::to_string(until) + " ms");
    }
  }
}

void RaftSimulation::check_logs() {
  std::vector<std::pair<NodeId, const RaftLogStorage*>> logs;
  for (auto& n : nodes_) logs.emplace_back(n->id, n->storage.get());
  checker_.check_logs(logs);
}

bool RaftSimulation::converged() {
  SimNode* lead = leader();
  if (!lead) return false;
  for (NodeId v : lead->raft->conf().voters) {
    SimNode& n = *nodes_[v - 1];
    if (!n.up || n.raft->applied_index() != lead->raft->applied_index() ||
        n.kv.serialize() != lead->kv.serialize()) {
      return false;
    }
  }
  return true;
}

void RaftSimulation::final_checks() {
  check_logs();
  std::vector<std::string> problems;
  SimNode* lead = leader();
  if (!lead) {
    problems.push_back("liveness: no leader after " + std::to_string(options_.heal_ms) +
                       " ms without faults");
  } else {
    checker_.check_final_leader(*lead->raft);
    // Convergence: with the network healed, every voter catches up to the leader.
    for (NodeId v : lead->raft->conf().voters) {
      SimNode& n = *nodes_[v - 1];
      if (n.raft->applied_index() != lead->raft->applied_index() ||
          n.kv.serialize() != lead->kv.serialize()) {
        problems.push_back("convergence: voter " + std::to_string(v) + " applied " +
                           std::to_string(n.raft->applied_index()) + ", leader " +
                           std::to_string(lead->raft->applied_index()));
      }
    }
  }
  dfs::sim::LinearizabilityResult lin = dfs::sim::check_kv_linearizable(history_.history());
  if (lin.verdict == dfs::sim::LinearizabilityResult::kNotLinearizable ||
      lin.verdict == dfs::sim::LinearizabilityResult::kInvalidHistory) {
    problems.push_back("linearizability: " + lin.explanation);
  } else if (lin.verdict == dfs::sim::LinearizabilityResult::kTimedOut) {
    problems.push_back("linearizability: checker ran out of steps (history too hard)");
  }
  for (std::string& p : problems) checker_.report(std::move(p));
}

}  // namespace dfs::raft::sim
