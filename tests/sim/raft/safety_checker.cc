#include "tests/sim/raft/safety_checker.h"

#include <algorithm>

namespace dfs::raft::sim {

void SafetyChecker::report(std::string what) {
  if (violations_.size() < 20) violations_.push_back(std::move(what));
}

void SafetyChecker::observe(const RaftNode& node) {
  if (node.role() != Role::kLeader) return;
  auto [it, inserted] = leader_of_term_.emplace(node.term(), node.id());
  if (!inserted && it->second != node.id()) {
    report("election safety: nodes " + std::to_string(it->second) + " and " +
         std::to_string(node.id()) + " both led term " + std::to_string(node.term()));
  }
  if (inserted && node.term() > newest_leader_term_) {
    // Every entry applied so far was committed by a leader of an older term.
    newest_leader_term_ = node.term();
    check_completeness(node);
  }
}

void SafetyChecker::check_final_leader(const RaftNode& node) {
  if (node.role() == Role::kLeader && node.term() == newest_leader_term_) check_completeness(node);
}

void SafetyChecker::check_completeness(const RaftNode& node) {
  const RaftLogStorage& log = node.storage();
  for (const auto& [index, entry] : committed_) {
    if (index <= log.snapshot().meta.index) continue;  // covered by its snapshot
    std::optional<Term> t = log.term(index);
    if (!t || *t != entry.first) {
      report("leader completeness: leader " + std::to_string(node.id()) + " of term " +
           std::to_string(node.term()) + " lacks committed entry " + std::to_string(index) +
           " (term " + std::to_string(entry.first) + ")");
      return;
    }
  }
}

void SafetyChecker::on_apply(NodeId id, const Entry& e) {
  auto [it, inserted] = committed_.emplace(e.index, std::make_pair(e.term, e.data));
  if (!inserted && (it->second.first != e.term || it->second.second != e.data)) {
    report("state machine safety: node " + std::to_string(id) + " applied term " +
         std::to_string(e.term) + " at index " + std::to_string(e.index) +
         " where another applied term " + std::to_string(it->second.first));
  }
}

void SafetyChecker::on_crash(NodeId id, const RaftLogStorage& survived, Index applied) {
  for (Index i = survived.first_index(); i <= applied; ++i) {
    auto it = committed_.find(i);
    std::optional<Term> t = survived.term(i);
    if (it == committed_.end() || t != it->second.first) {
      report("durability: node " + std::to_string(id) + " applied entry " + std::to_string(i) +
             " but lost it from its log in a crash");
      return;
    }
  }
}

void SafetyChecker::on_image(NodeId id, Index index, const std::string& image) {
  auto [it, inserted] = images_.emplace(index, image);
  if (!inserted && it->second != image) {
    report("state machine safety: node " + std::to_string(id) + " has a different image at " +
         std::to_string(index));
  }
}

void SafetyChecker::check_logs(const std::vector<std::pair<NodeId, const RaftLogStorage*>>& logs) {
  for (const auto& [id, log] : logs) {
    if (log->last_index() < log->first_index()) continue;
    for (const Entry& e : log->entries(log->first_index(), log->last_index() + 1, UINT64_MAX)) {
      auto [it, inserted] = seen_.emplace(std::make_pair(e.index, e.term), e.data);
      if (!inserted && it->second != e.data) {
        report("log matching: node " + std::to_string(id) + " holds a different entry at (" +
             std::to_string(e.index) + ", term " + std::to_string(e.term) + ")");
      }
    }
  }
  for (size_t a = 0; a < logs.size(); ++a) {
    for (size_t b = a + 1; b < logs.size(); ++b) {
      const RaftLogStorage& x = *logs[a].second;
      const RaftLogStorage& y = *logs[b].second;
      Index lo = std::max(x.first_index(), y.first_index());
      Index hi = std::min(x.last_index(), y.last_index());
      bool matched = false;  // scanning down: once terms match, all below must too
      for (Index i = hi; i >= lo && i > 0; --i) {
        bool same = x.term(i) == y.term(i);
        if (same) matched = true;
        if (matched && !same) {
          report("log matching: nodes " + std::to_string(logs[a].first) + " and " +
               std::to_string(logs[b].first) + " agree at a later index but differ at " +
               std::to_string(i));
          break;
        }
      }
    }
  }
}

}  // namespace dfs::raft::sim
