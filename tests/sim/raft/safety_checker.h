// The Raft safety properties the simulation asserts, fed by observations of the nodes
// as the run goes (Raft paper, Figure 3): election safety, log matching, leader
// completeness and state machine safety. Records violations instead of aborting so a
// failing seed can print all of them with its replay command.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/raft/raft_node.h"

namespace dfs::raft::sim {

class SafetyChecker {
 public:
  // After every step of `node`: at most one leader per term, across the whole run;
  // and a leader newer than every earlier one holds every entry committed so far.
  void observe(const RaftNode& node);

  // An entry handed to node `id`'s state machine: no two nodes apply different
  // entries at one index.
  void on_apply(NodeId id, const Entry& e);

  // Node `id` lost power having applied up to `applied`; `survived` is its storage as
  // the restart will see it. Every applied entry after the snapshot must still be in
  // the log, with the term it committed at: applied entries were synced.
  void on_crash(NodeId id, const RaftLogStorage& survived, Index applied);

  // A state-machine image at `index` (compaction, or a snapshot installed): images at
  // one index are identical.
  void on_image(NodeId id, Index index, const std::string& image);

  // Log matching over the given logs: equal (index, term) means equal entries and equal
  // prefixes. Also remembers every (index, term) seen so that two different entries
  // under one (index, term) are caught even when never side by side.
  void check_logs(const std::vector<std::pair<NodeId, const RaftLogStorage*>>& logs);

  // Leader completeness for the newest leader at the end of a run.
  void check_final_leader(const RaftNode& node);

  // Any other failed check (decoding, convergence, linearizability).
  void report(std::string what);

  const std::vector<std::string>& violations() const { return violations_; }
  size_t committed_count() const { return committed_.size(); }

 private:
  void check_completeness(const RaftNode& node);

  std::map<Term, NodeId> leader_of_term_;
  Term newest_leader_term_ = 0;
  std::map<Index, std::pair<Term, std::string>> committed_;  // index -> (term, data)
  std::map<Index, std::string> images_;
  std::map<std::pair<Index, Term>, std::string> seen_;
  std::vector<std::string> violations_;
};

}  // namespace dfs::raft::sim
