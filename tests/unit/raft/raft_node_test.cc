// Unit tests for the Raft core, each driving a small TestCluster by hand.
#include <doctest/doctest.h>

#include "tests/unit/raft/raft_test_cluster.h"

namespace dfs::raft {
namespace {

using testing::TestCluster;

// A storage holding entries with the given terms (indexes 1..n) and hard state term.
std::unique_ptr<MemStorage> log_with_terms(std::vector<Term> terms, Term current, int voters = 3) {
  ConfState conf;
  for (int i = 1; i <= voters; ++i) conf.voters.push_back(static_cast<NodeId>(i));
  auto s = std::make_unique<MemStorage>(conf);
  std::vector<Entry> entries;
  for (size_t i = 0; i < terms.size(); ++i) {
    entries.push_back(Entry{terms[i], i + 1, EntryType::kNormal, "e" + std::to_string(i + 1)});
  }
  s->append(entries);
  s->set_hard_state(HardState{current, kNoNode, 0});
  return s;
}

// Ticks every node of `c` through its first election timeout, in which it votes for
// nobody, cut off from the others so that nobody is elected meanwhile (a pre-vote that
// fails leaves no trace).
void pass_start_quiet(TestCluster& c) {
  for (NodeId id : c.ids()) c.isolate(id);
  c.tick_all(10);
  c.heal();
}

std::vector<Term> log_terms(const RaftNode& n) {
  std::vector<Term> out;
  for (Index i = n.storage().first_index(); i <= n.storage().last_index(); ++i) {
    out.push_back(*n.storage().term(i));
  }
  return out;
}

TEST_CASE("raft/election: one leader, others follow its term") {
  TestCluster c(3);
  NodeId l = c.elect();
  REQUIRE(l != kNoNode);
  int leaders = 0;
  for (NodeId id : c.ids()) {
    leaders += c.node(id).role() == Role::kLeader;
    CHECK(c.node(id).term() == c.node(l).term());
    CHECK(c.node(id).leader() == l);
  }
  CHECK(leaders == 1);
  // The no-op of the new term commits everywhere (followers learn it by heartbeat).
  c.tick(l);
  for (NodeId id : c.ids()) CHECK(c.node(id).commit_index() == 1);
}

TEST_CASE("raft/election: pre-vote keeps a partitioned node from disrupting the leader") {
  TestCluster c(3);
  NodeId l = c.elect();
  Term term = c.node(l).term();
  NodeId lonely = l == 3 ? 2 : 3;
  c.isolate(lonely);
  c.tick_all(100);  // many election timeouts for the isolated node
  CHECK(c.node(lonely).term() == term);  // pre-votes failed; its term never moved
  c.heal();
  c.tick_all(30);
  CHECK(c.leader() == l);
  CHECK(c.node(l).term() == term);
}

TEST_CASE("raft/election: check-quorum makes a partitioned leader step down") {
  TestCluster c(3);
  NodeId l = c.elect();
  c.isolate(l);
  c.tick(l, 2 * 10 + 1);
  CHECK(c.node(l).role() == Role::kFollower);
  CHECK(!c.node(l).propose("x").has_value());
}

TEST_CASE("raft/replication: a follower's conflicting suffix is replaced") {
  TestCluster c(3);
  c.reset_node(1, log_with_terms({1, 2, 2, 4}, 4));
  c.reset_node(2, log_with_terms({1, 2, 3, 3, 3, 3}, 3));
  c.reset_node(3, log_with_terms({1}, 1));
  pass_start_quiet(c);
  // Node 1's last term (4) beats node 2's (3): it is the only possible winner.
  c.tick(1, 25);
  REQUIRE(c.node(1).role() == Role::kLeader);
  c.tick(1, 2);
  std::vector<Term> expected{1, 2, 2, 4, c.node(1).term()};
  for (NodeId id : c.ids()) {
    CHECK(log_terms(c.node(id)) == expected);
    CHECK(c.node(id).commit_index() == 5);
  }
}

TEST_CASE("raft/replication: entries of an old term commit only behind one of the current term") {
  // Figure 8: node 1 leads term 5 with index 2 from term 2 that node 3 lacks. Once
  // node 3 holds index 2, a majority has it, yet it must not commit until the
  // term-5 no-op (index 3) is on a majority too.
  RaftConfig cfg;
  cfg.max_append_bytes = 1;  // one entry per append, so the two arrive separately
  TestCluster c(3, cfg);
  c.reset_node(1, log_with_terms({1, 2}, 4));
  c.reset_node(2, log_with_terms({1}, 4));
  c.reset_node(3, log_with_terms({1}, 4));
  pass_start_quiet(c);
  c.cut(1, 2);
  bool saw_old_entry_alone = false;
  c.observer = [&] {
    bool n3_has_old = c.node(3).last_index() >= 2;
    bool n3_has_new = c.node(3).last_index() >= 3;
    if (n3_has_old && !n3_has_new) saw_old_entry_alone = true;
    if (c.node(1).commit_index() >= 2) CHECK(n3_has_new);
  };
  for (int i = 0; i < 40 && c.node(1).role() != Role::kLeader; ++i) c.tick(1);
  REQUIRE(c.node(1).role() == Role::kLeader);
  c.tick(1, 3);
  CHECK(saw_old_entry_alone);
  CHECK(c.node(1).commit_index() == 3);
}

TEST_CASE("raft/ready: appends leave before the sync, votes and acknowledgements after it") {
  TestCluster c(3);
  NodeId l = c.elect();
  NodeId f = l == 1 ? 2 : 1;
  REQUIRE(c.node(l).propose("x").has_value());
  Ready rd = c.node(l).ready();
  CHECK(rd.must_sync);
  CHECK(rd.messages.empty());
  REQUIRE(rd.early_messages.size() == 2);
  for (const Message& m : rd.early_messages) CHECK(m.type == MessageType::kAppend);
  REQUIRE(c.peer(l).storage->sync().has_value());
  c.node(l).advance(rd);

  // The follower's acknowledgement rests on its own write: it waits for the sync.
  c.node(f).step(rd.early_messages[0].to == f ? rd.early_messages[0] : rd.early_messages[1]);
  Ready frd = c.node(f).ready();
  CHECK(frd.must_sync);
  CHECK(frd.early_messages.empty());
  REQUIRE(frd.messages.size() == 1);
  CHECK(frd.messages[0].type == MessageType::kAppendResp);
  REQUIRE(c.peer(f).storage->sync().has_value());
  c.node(f).advance(frd);

  c.tick_all(3);  // settle (the acknowledgement above was not delivered)

  // So do a candidate's vote requests: its new term and its vote for itself first.
  // TimeoutNow itself waits too (it goes with the rest of a Ready's messages).
  REQUIRE(c.node(l).transfer_leadership(f).has_value());
  Ready lrd = c.node(l).ready();
  REQUIRE(lrd.messages.size() == 1);
  CHECK(lrd.messages[0].type == MessageType::kTimeoutNow);
  c.node(l).advance(lrd);
  c.node(f).step(lrd.messages[0]);
  REQUIRE(c.node(f).role() == Role::kCandidate);
  Ready crd = c.node(f).ready();
  CHECK(crd.must_sync);
  CHECK(crd.early_messages.empty());
  REQUIRE(crd.messages.size() == 2);
  for (const Message& m : crd.messages) CHECK(m.type == MessageType::kVote);
  REQUIRE(c.peer(f).storage->sync().has_value());
  c.node(f).advance(crd);
}

TEST_CASE("raft/replication: a leader counts its own entry toward commit only once synced") {
  TestCluster c(3);
  NodeId l = c.elect();
  c.tick(l);  // the no-op commits everywhere
  RaftNode& leader = c.node(l);
  NodeId f = l == 1 ? 2 : 1;
  Index committed = leader.commit_index();
  Result<Index> i = leader.propose("x");
  REQUIRE(i.has_value());
  // A follower's acknowledgement overtakes the leader's own write of the entry (its
  // appends may leave before the sync). With the leader's unsynced copy, one ack
  // would make two of three: not a majority of durable copies.
  leader.step(Message{
      .type = MessageType::kAppendResp, .from = f, .to = l, .term = leader.term(), .index = *i});
  CHECK(leader.commit_index() == committed);
  Ready rd = leader.ready();
  CHECK(rd.committed_entries.empty());
  REQUIRE(rd.must_sync);
  REQUIRE(c.peer(l).storage->sync().has_value());
  leader.advance(rd);
  // Synced: now it counts, and the followers hear of the new commit index at once.
  CHECK(leader.commit_index() == *i);
  Ready next = leader.ready();
  REQUIRE(!next.committed_entries.empty());
  CHECK(next.committed_entries.back().index == *i);
  bool carries_commit = false;
  for (const Message& m : next.early_messages) carries_commit |= m.commit == *i;
  CHECK(carries_commit);
  leader.advance(next);
}

TEST_CASE("raft/replication: a single-voter leader commits after its sync, not at append") {
  TestCluster c(1);
  REQUIRE(c.elect() == 1);
  RaftNode& n = c.node(1);
  Index committed = n.commit_index();
  Result<Index> i = n.propose("x");
  REQUIRE(i.has_value());
  CHECK(n.commit_index() == committed);
  Ready rd = n.ready();
  REQUIRE(rd.must_sync);
  for (const Entry& e : rd.committed_entries) CHECK(e.index < *i);
  REQUIRE(c.peer(1).storage->sync().has_value());
  n.advance(rd);
  CHECK(n.commit_index() == *i);
  c.flush();
  REQUIRE(!c.peer(1).applied.empty());
  CHECK(c.peer(1).applied.back().index == *i);
  CHECK(c.peer(1).applied.back().data == "x");
}

// The commit index is volatile state (etcd's MustSync ignores it too): a Ready that
// changes nothing else hands out committed entries without a sync, on the leader that
// learns the commit from an acknowledgement and on the follower that learns it next.
TEST_CASE("raft/ready: a change of the commit index alone needs no sync") {
  TestCluster c(3);
  NodeId l = c.elect();
  c.tick(l);  // the no-op commits everywhere
  RaftNode& leader = c.node(l);
  NodeId f = l == 1 ? 2 : 1;
  Result<Index> i = leader.propose("x");
  REQUIRE(i.has_value());
  Ready rd = leader.ready();
  REQUIRE(rd.must_sync);
  REQUIRE(c.peer(l).storage->sync().has_value());
  leader.advance(rd);
  REQUIRE(rd.early_messages.size() == 2);
  const Message& append =
      rd.early_messages[0].to == f ? rd.early_messages[0] : rd.early_messages[1];

  c.node(f).step(append);
  Ready frd = c.node(f).ready();
  REQUIRE(frd.must_sync);  // the entry itself
  REQUIRE(c.peer(f).storage->sync().has_value());
  c.node(f).advance(frd);
  REQUIRE(frd.messages.size() == 1);

  leader.step(frd.messages[0]);
  Ready crd = leader.ready();
  REQUIRE(crd.hard_state.has_value());
  CHECK(crd.hard_state->commit == *i);
  CHECK_FALSE(crd.must_sync);
  REQUIRE(!crd.committed_entries.empty());
  CHECK(crd.committed_entries.back().index == *i);
  leader.advance(crd);

  const Message* tell = nullptr;
  for (const Message& m : crd.early_messages) {
    if (m.to == f && m.commit == *i) tell = &m;
  }
  REQUIRE(tell != nullptr);
  c.node(f).step(*tell);
  Ready fc = c.node(f).ready();
  CHECK_FALSE(fc.must_sync);
  REQUIRE(!fc.committed_entries.empty());
  CHECK(fc.committed_entries.back().index == *i);
  REQUIRE(fc.messages.size() == 1);  // its acknowledgement rests on synced entries only
  c.node(f).advance(fc);
  // Written all the same: the next sync made for another reason makes it durable.
  CHECK(c.peer(f).storage->hard_state().commit == *i);
}

TEST_CASE("raft/ready: a single-voter group syncs once per proposal") {
  TestCluster c(1);
  REQUIRE(c.elect() == 1);
  c.flush();
  int syncs = c.peer(1).syncs;
  for (int k = 0; k < 5; ++k) {
    Result<Index> i = c.node(1).propose("p" + std::to_string(k));
    REQUIRE(i.has_value());
    c.flush();
    REQUIRE(!c.peer(1).applied.empty());
    CHECK(c.peer(1).applied.back().index == *i);
  }
  // One sync for each entry; the commit that follows it needs none (it did until the
  // commit index stopped forcing a sync, which doubled a single voter's syncs).
  CHECK(c.peer(1).syncs - syncs == 5);
}

// A node applies committed entries whose commit index it never synced, then loses
// power. Its log still holds them (appended with a sync); it restarts with an older
// commit index, applies again what that covers, and learns the rest from the leader.
TEST_CASE("raft/restart: a follower that lost its commit index catches up from the leader") {
  TestCluster c(3);
  NodeId l = c.elect();
  NodeId f = l == 1 ? 2 : 1;
  for (int k = 0; k < 3; ++k) {
    REQUIRE(c.node(l).propose("x" + std::to_string(k)).has_value());
    c.deliver_all();
  }
  Index last = c.node(l).last_index();
  REQUIRE(c.node(f).commit_index() == last);
  REQUIRE(!c.peer(f).applied.empty());
  REQUIRE(c.peer(f).applied.back().index == last);
  std::vector<Entry> applied = c.peer(f).applied;
  CHECK(c.peer(f).synced.last_index() == last);
  CHECK(c.peer(f).synced.hard_state().commit < last);  // the case under test

  c.crash(f);
  CHECK(c.node(f).commit_index() < last);
  CHECK(c.node(f).applied_index() == 0);
  c.flush();  // applies again up to the commit index it had synced
  CHECK(c.node(f).applied_index() < last);
  c.tick(l);  // a heartbeat carries the leader's commit index
  CHECK(c.node(f).commit_index() == last);
  CHECK(c.node(f).applied_index() == last);
  REQUIRE(c.peer(f).applied.size() == applied.size());
  for (size_t k = 0; k < applied.size(); ++k) {
    CHECK(c.peer(f).applied[k].index == applied[k].index);
    CHECK(c.peer(f).applied[k].term == applied[k].term);
    CHECK(c.peer(f).applied[k].data == applied[k].data);
  }
}

// Alone in its group there is nobody to learn the commit index from: after a restart
// the node elects itself and commits its new term's no-op, and with it every synced
// entry before it, in the same places.
TEST_CASE("raft/restart: a single voter that lost its commit index commits its log again") {
  TestCluster c(1);
  REQUIRE(c.elect() == 1);
  for (const char* cmd : {"a", "b", "c"}) {
    REQUIRE(c.node(1).propose(cmd).has_value());
    c.flush();
  }
  Index last = c.node(1).last_index();
  REQUIRE(c.node(1).applied_index() == last);
  std::vector<Entry> applied = c.peer(1).applied;
  CHECK(c.peer(1).synced.hard_state().commit < last);

  c.crash(1);
  c.flush();
  CHECK(c.node(1).applied_index() < last);
  REQUIRE(c.elect() == 1);
  c.flush();
  CHECK(c.node(1).commit_index() == last + 1);  // the new term's no-op
  REQUIRE(c.peer(1).applied.size() == applied.size() + 1);
  for (size_t k = 0; k < applied.size(); ++k) {
    CHECK(c.peer(1).applied[k].index == applied[k].index);
    CHECK(c.peer(1).applied[k].data == applied[k].data);
  }
}

// Three nodes (snapshots sent in chunks of 100 bytes) whose leader applied 20 commands
// and its no-op while one follower was cut off; the test heals it.
struct LaggingCluster {
  TestCluster c;
  NodeId l;
  NodeId lagging;
  explicit LaggingCluster(RaftConfig cfg)
      : c(3, with_small_chunks(cfg)), l(c.elect()), lagging(l == 3 ? 2 : 3) {
    c.isolate(lagging);
    for (int i = 0; i < 20; ++i) REQUIRE(c.node(l).propose("cmd" + std::to_string(i)));
    c.tick(l);
    REQUIRE(c.node(l).applied_index() == 21);
  }
  static RaftConfig with_small_chunks(RaftConfig cfg) {
    cfg.snapshot_chunk_bytes = 100;
    return cfg;
  }
};

TEST_CASE("raft/snapshot: a lagging follower installs a snapshot sent in chunks") {
  LaggingCluster lc({});
  auto& c = lc.c;
  const NodeId l = lc.l;
  const NodeId lagging = lc.lagging;
  Index applied = c.node(l).applied_index();
  std::string image(1050, 'x');
  REQUIRE(c.node(l).compact(applied, image).has_value());
  CHECK(c.node(l).storage().first_index() == 22);
  c.heal();
  c.tick_all(20);
  CHECK(c.delivered_by_type[MessageType::kSnapshot] >= 11);
  auto& p = c.peer(lagging);
  REQUIRE(p.restored.has_value());
  CHECK(p.restored->meta.index == applied);
  CHECK(p.restored->data == image);
  CHECK(c.node(lagging).last_index() == c.node(l).last_index());
  CHECK(c.node(lagging).commit_index() == c.node(l).commit_index());
}

TEST_CASE("raft/snapshot: a pointer image is never sent, a whole one is made on demand") {
  RaftConfig cfg;
  cfg.images_on_demand = true;
  LaggingCluster lc(cfg);
  auto& c = lc.c;
  const NodeId l = lc.l;
  const NodeId lagging = lc.lagging;
  // Compacted below what it applied, with an image that only points at the state.
  REQUIRE(c.node(l).compact(15, "").has_value());
  CHECK(!c.node(l).wants_image());
  c.heal();
  c.tick_all(5);
  // The lagging follower needs entries up to 15: nothing is sent until an image is.
  CHECK(c.delivered_by_type[MessageType::kSnapshot] == 0);
  CHECK(c.node(l).wants_image());
  CHECK(!c.node(l).sending_snapshot());  // a wait for an image holds no compaction back
  CHECK(!c.peer(lagging).restored.has_value());
  const Index at = c.node(l).applied_index();
  std::string image(250, 'w');
  REQUIRE(c.node(l).attach_image(at, image).has_value());
  CHECK(!c.node(l).wants_image());
  CHECK(c.node(l).sending_snapshot());  // compaction waits for the transfer
  // A follower silent for an election timeout no longer holds compaction back.
  c.isolate(lagging);
  c.tick(l, cfg.election_ticks);
  CHECK(!c.node(l).sending_snapshot());
  c.heal();
  c.tick_all(10);
  CHECK(c.delivered_by_type[MessageType::kSnapshot] >= 3);
  auto& p = c.peer(lagging);
  REQUIRE(p.restored.has_value());
  CHECK(p.restored->meta.index == at);
  CHECK(p.restored->data == image);
  CHECK(!c.node(l).sending_snapshot());
  CHECK(c.node(lagging).commit_index() == c.node(l).commit_index());
  // An image below the last snapshot is refused.
  CHECK(c.node(l).attach_image(at - 1, image).error().code() == ErrorCode::kInvalidArgument);
}

TEST_CASE("raft/membership: add and remove one voter at a time") {
  TestCluster c(3, {}, /*extra=*/1);
  NodeId l = c.elect();
  REQUIRE(c.node(l).propose_conf_change({ConfChangeKind::kAddNode, 4}).has_value());
  // A second change waits for the first to commit.
  auto second = c.node(l).propose_conf_change({ConfChangeKind::kRemoveNode, 4});
  REQUIRE(!second.has_value());
  CHECK(second.error().code() == ErrorCode::kBusy);
  c.tick_all(5);
  for (NodeId id : c.ids()) CHECK(c.node(id).conf().voters == std::vector<NodeId>{1, 2, 3, 4});
  NodeId victim = l == 1 ? 2 : 1;
  REQUIRE(c.node(l).propose_conf_change({ConfChangeKind::kRemoveNode, victim}).has_value());
  c.tick_all(5);
  CHECK(!c.node(l).conf().contains(victim));
  CHECK(c.node(l).conf().voters.size() == 3);
  auto self = c.node(l).propose_conf_change({ConfChangeKind::kRemoveNode, l});
  CHECK(self.error().code() == ErrorCode::kInvalidArgument);
  // The new voter takes part in commits.
  REQUIRE(c.node(l).propose("after").has_value());
  c.tick_all(2);
  CHECK(c.node(4).commit_index() == c.node(l).last_index());
}

TEST_CASE("raft/transfer: leadership moves to the chosen voter") {
  TestCluster c(3);
  NodeId l = c.elect();
  Term term = c.node(l).term();
  NodeId target = l == 1 ? 2 : 1;
  REQUIRE(c.node(l).transfer_leadership(target).has_value());
  c.deliver_all();
  CHECK(c.node(target).role() == Role::kLeader);
  CHECK(c.node(target).term() == term + 1);
  CHECK(c.node(l).role() == Role::kFollower);
}

// Elects a leader and has both followers answer its next heartbeat round.
NodeId elect_with_lease(TestCluster& c) {
  NodeId l = c.elect();
  c.tick(l);
  return l;
}

TEST_CASE("raft/lease: a quorum's answer to a heartbeat starts it, it ends lease_ticks later") {
  TestCluster c(3);
  NodeId l = elect_with_lease(c);
  REQUIRE(c.node(l).holds_lease());
  const uint64_t start = *c.node(l).lease_start_tick();
  CHECK(start == c.node(l).ticks());
  c.isolate(l);
  const int lease = c.node(l).lease_ticks();
  REQUIRE(lease == 8);
  c.tick(l, lease - 1);
  CHECK(c.node(l).holds_lease());
  CHECK(*c.node(l).lease_start_tick() == start);  // rounds nobody answered start none
  c.tick(l);
  CHECK_FALSE(c.node(l).holds_lease());
  CHECK(c.node(l).role() == Role::kLeader);  // check-quorum has not deposed it yet
  // One follower's answer is a quorum with the leader's own.
  c.heal();
  c.cut(l, l == 1 ? 2 : 1);
  c.tick(l);
  CHECK(c.node(l).holds_lease());
}

TEST_CASE("raft/lease: no other node is elected while the leader's lease holds") {
  TestCluster c(3);
  NodeId l = elect_with_lease(c);
  REQUIRE(c.node(l).holds_lease());
  c.isolate(l);
  int held = 0;
  NodeId next = kNoNode;
  for (int i = 0; i < 200 && next == kNoNode; ++i) {
    c.tick_all();
    for (NodeId id : c.ids()) {
      if (id != l && c.node(id).role() == Role::kLeader) next = id;
    }
    if (next != kNoNode) {
      CHECK_FALSE(c.node(l).holds_lease());
    } else if (c.node(l).holds_lease()) {
      ++held;
    }
  }
  CHECK(next != kNoNode);
  CHECK(held == c.node(l).lease_ticks() - 1);
}

TEST_CASE("raft/lease: a voter that just started votes for nobody for an election timeout") {
  // It may have answered the leader's heartbeat just before it stopped.
  TestCluster c(3);
  NodeId l = elect_with_lease(c);
  NodeId restarted = l == 1 ? 2 : 1;
  NodeId candidate = 6 - l - restarted;
  c.crash(restarted);
  c.isolate(l);
  c.tick(candidate, 40);  // campaigns again and again; the restarted node ignores it
  CHECK(c.node(candidate).role() != Role::kLeader);
  c.tick(restarted, 10);  // then it votes (or, its own timeout up, campaigns itself)
  for (int i = 0; i < 40; ++i) {
    c.tick(candidate);
    c.tick(restarted);
  }
  CHECK((c.node(candidate).role() == Role::kLeader || c.node(restarted).role() == Role::kLeader));
}

TEST_CASE("raft/lease: a voter that heard from the leader votes for nobody, whatever term it "
          "learns meanwhile") {
  TestCluster c(3);
  NodeId l = elect_with_lease(c);
  NodeId v = l == 1 ? 2 : 1;
  NodeId x = 6 - l - v;
  const Term t = c.node(v).term();
  // A later term reaches v in a message that names no leader (a refused pre-vote of
  // its own, answered by a node that has moved on): v takes the term, with no leader.
  c.node(v).step(Message{.type = MessageType::kPreVoteResp, .from = x, .to = v,
                         .term = t + 1, .reject = true});
  REQUIRE(c.node(v).term() == t + 1);
  REQUIRE(c.node(v).leader() == kNoNode);
  // x asks for its vote in that term, with a log at least as long as v's.
  c.node(v).step(Message{.type = MessageType::kVote, .from = x, .to = v, .term = t + 1,
                         .index = c.node(v).last_index() + 5, .log_term = t + 1});
  Ready rd = c.node(v).ready();
  bool granted = false;
  for (const Message& m : rd.messages) {
    if (m.type == MessageType::kVoteResp && m.to == x && !m.reject) granted = true;
  }
  CHECK_FALSE(granted);
  CHECK(c.node(l).holds_lease());
}

TEST_CASE("raft/lease: a leadership transfer ends it") {
  TestCluster c(3);
  NodeId l = elect_with_lease(c);
  REQUIRE(c.node(l).holds_lease());
  NodeId target = l == 1 ? 2 : 1;
  c.isolate(target);  // the transfer cannot complete, and it keeps the lease void
  REQUIRE(c.node(l).transfer_leadership(target).has_value());
  CHECK_FALSE(c.node(l).holds_lease());
  c.tick(l);
  CHECK_FALSE(c.node(l).holds_lease());
}

TEST_CASE("raft/read_index: a read completes only after a quorum confirms the leader") {
  TestCluster c(3);
  NodeId l = c.elect();
  NodeId f = l == 1 ? 2 : 1;
  CHECK(c.node(f).read_index(7).error().code() == ErrorCode::kUnavailable);

  REQUIRE(c.node(l).read_index(42).has_value());
  c.deliver_all();
  REQUIRE(c.peer(l).reads.size() == 1);
  CHECK(c.peer(l).reads[0].context == 42);
  CHECK(c.peer(l).reads[0].index == c.node(l).commit_index());

  c.isolate(l);
  REQUIRE(c.node(l).read_index(43).has_value());
  c.tick(l, 3);
  CHECK(c.peer(l).reads.size() == 1);  // no quorum, no answer
}

}  // namespace
}  // namespace dfs::raft
