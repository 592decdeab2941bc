// CapTable: the MDS side of the capability protocol. It grants per-inode rights to
// client sessions, recalls them when another session's request conflicts, evicts
// sessions that stop renewing or do not give rights back in time, and rebuilds itself
// from the clients' word after a failover. A pure, single-threaded state machine: the
// owner (the MDS's session strand; the simulator in tests) calls every method, passes
// the time in, and drains take_outbox() after each call, in order.
//
// Rules the owner keeps:
//   - Send the outbox in order. An Evicted must take effect as a fence (the OSDs refuse
//     the session) before anything after it in the outbox is delivered: the grants that
//     follow may conflict with what the evicted session still believes it holds.
//   - A lease granted by renew()/reconnect() runs from the client's send time, so it ends
//     no later than the moment this table could evict the session (see renew()). Clocks
//     may differ in origin, not in rate; a deployment with drift shortens the lease.
//   - Messages from a session are applied in any order and any number of times: seqs
//     and want ids make stale and duplicate ones harmless.
// Errors (as values): kNotFound (unknown session: open a new one), kPermissionDenied
// (fenced: evicted; the client must drop everything and open a new session),
// kUnavailable (reconnect phase: this session must reconnect first), kInvalidArgument.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "common/caps/inode_caps.h"
#include "common/caps/messages.h"
#include "common/status/status.h"

namespace dfs::caps {

struct CapTableOptions {
  TimeMs session_timeout_ms = 30'000;    // no renew, or a recall unacknowledged, this long
  TimeMs recall_resend_ms = 1'000;       // resend an unacknowledged Revoke this often
  size_t max_caps_per_session = 16'384;  // inodes with rights; beyond, the LRU is recalled
  TimeMs reconnect_grace_ms = 0;         // 0: session_timeout_ms
  // Strictly greater for every new instance (the MDS map epoch that made it active):
  // seqs start at seq_base(incarnation), so the clients order this instance's messages
  // after every delayed message of an earlier one.
  uint32_t incarnation = 1;
  // A deliberate protocol bug for the simulation's self-test: a recall counts as
  // acknowledged as soon as it is sent. Never set outside tests.
  bool testing_grant_before_ack = false;
};

struct MutationTicket {
  uint64_t id = 0;
  bool ready = false;  // no other session holds the bits: apply now
};

struct MutationReady {
  uint64_t id = 0;
  bool cancelled = false;  // the mutating session was evicted or closed first
};

// One (session, inode) record, for checkers and status pages.
struct CapView {
  SessionId session = 0;
  Ino ino = 0;
  InodeKind kind = InodeKind::kFile;
  const CapRecord* cap = nullptr;
};

class CapTable {
 public:
  explicit CapTable(CapTableOptions options);

  // ---- Sessions ----

  // Opens a session holding nothing. Errors: kAlreadyExists, kPermissionDenied (fenced).
  Status open_session(SessionId s, TimeMs now);

  // Keeps `s` alive. Returns the lease in ms, counted by the client from the Renew's
  // send time: session_timeout, shortened so that it ends by the deadline of the
  // session's oldest unacknowledged recall (0 once that has passed). A client past its
  // lease uses nothing: when this table evicts it, it has stopped using what it had.
  // Errors: kNotFound, kPermissionDenied, kUnavailable.
  Result<TimeMs> renew(SessionId s, TimeMs now);

  // The session leaves cleanly: its rights are dropped at once (no fence), waiters and
  // wants of others are re-evaluated. Requires: the client flushed and uses nothing.
  void close_session(SessionId s, TimeMs now);

  // Time passes. Ends the reconnect phase when its grace is over (evicting sessions that
  // did not reconnect); evicts sessions not renewed for session_timeout and sessions with
  // a recall unacknowledged session_timeout after it was first sent; resends Revokes
  // unacknowledged for recall_resend; recalls the least recently used caps of sessions
  // with more than max_caps_per_session. Eviction: the session is fenced (fenced() is
  // true from then on), an Evicted goes to the outbox, its rights are dropped and what
  // waited on them is re-evaluated. Call it at least every recall_resend.
  void tick(TimeMs now);

  // ---- Rights ----

  // Records that `s` wants `w.wanted` on `w.ino` (replacing its previous want), recalls
  // from the other sessions what conflicts with it (newest request wins: they fall back
  // to what does not conflict, and get the rest again only by asking again or once the
  // conflict is gone), and grants what it can. Emits Revokes to the holders and, when
  // the want needs nothing back, its answer: a Grant{want_id} with the full issued set.
  // Otherwise the answer is pushed once the recalls are acknowledged or their holders
  // evicted; bits that still conflict then are refused (absent from the answer).
  // Exclusive rights (Ax, Fb, Dx) go only to a session alone in wanting anything on the
  // inode, so a client alone gets everything it wants at once. Rights a session holds
  // without wanting them (its Release was lost) are recalled whenever they block a want.
  // A late Want (id below the last seen) is ignored; a repeated one is answered again.
  // Errors: kNotFound, kPermissionDenied, kUnavailable, kInvalidArgument (rights not
  // valid for the kind, or a kind other than the one the inode is known as).
  Status want(SessionId s, const Want& w, TimeMs now);

  // The session saw Revoke (or Grant) `a.seq`, flushed, and now holds `a.now_holds`.
  // Clears what was being revoked and re-evaluates the inode's wants and mutations.
  // An ack for another seq than the record's last is stale and ignored.
  // Errors: kNotFound, kPermissionDenied.
  Status ack(SessionId s, const Ack& a, TimeMs now);

  // Voluntary drop of `r.bits` (and of the want for them). Applied only when `r.seq` is
  // the record's last seq (else the session has not seen a later Grant or Revoke, and
  // its Ack or a later Release settles it). A session left alone on the inode is
  // granted again the exclusive rights it wants (a pushed Grant).
  // Errors: kNotFound, kPermissionDenied.
  Status release(SessionId s, const Release& r, TimeMs now);

  // A synchronous change by `s` (a create in a directory others cache, a setattr): no
  // other session may hold `bits` while it is applied. Recalls them from the holders.
  // Ready at once when nobody else holds them; else take_ready() reports the ticket
  // once every holder acknowledged or was evicted. Until finish_mutation(), no other
  // session is granted `bits` (so nothing is cached across the change).
  // Errors: kNotFound, kPermissionDenied, kUnavailable, kInvalidArgument.
  Result<MutationTicket> prepare_mutation(SessionId s, Ino ino, InodeKind kind, Rights bits,
                                          TimeMs now);
  // The change is applied (or abandoned): the bits may be granted again.
  void finish_mutation(uint64_t id, TimeMs now);
  // Tickets that became ready (or were cancelled) since the last call, in order.
  std::vector<MutationReady> take_ready();

  // ---- Failover: this table is volatile; a new instance rebuilds from the clients ----

  // Enters the reconnect phase: `known` are the sessions the previous instance had open
  // (from the persisted session map; fenced ones excluded). Nothing is granted and no
  // mutation becomes ready until every known session reconnected or reconnect_grace
  // passed; then the ones missing are evicted. Call on a fresh table, before anything.
  void begin_reconnect(const std::vector<SessionId>& known, TimeMs now);

  // `s` re-asserts what it holds and wants. Returns the lease as renew() does. A claim
  // that conflicts with another session's claim can only come from a client that kept
  // rights it lost: the session is evicted (kPermissionDenied). Claims beyond
  // max_caps_per_session are recalled at once (least recently used first). A repeated
  // Reconnect only renews. Errors: kNotFound (not known), kPermissionDenied, kStaleEpoch
  // (meant for another instance: the client reconnects to this one, incarnation()).
  Result<TimeMs> reconnect(SessionId s, const Reconnect& r, TimeMs now);
  bool reconnecting() const { return reconnecting_; }

  // ---- Output and queries ----

  std::vector<Outgoing> take_outbox();
  bool fenced(SessionId s) const { return fenced_.count(s) != 0; }
  bool has_session(SessionId s) const { return sessions_.count(s) != 0; }
  // Known from the previous instance and not reconnected yet: its rights are unknown.
  bool awaiting_reconnect(SessionId s) const {
    auto it = sessions_.find(s);
    return it != sessions_.end() && !it->second.reconnected;
  }
  std::vector<SessionId> sessions() const;  // open (or awaiting reconnect)
  Rights held(SessionId s, Ino ino) const;  // issued | revoking
  size_t caps_issued(SessionId s) const;    // inodes where `s` has issued rights
  void for_each_cap(const std::function<void(const CapView&)>& fn) const;
  uint32_t incarnation() const { return options_.incarnation; }
  const CapTableOptions& options() const { return options_; }

 private:
  struct Session {
    TimeMs last_renew = 0;
    CapSeq last_seq = 0;   // every Grant and Revoke to the session takes the next one
    std::set<Ino> inodes;  // records this session has
    bool reconnected = true;
  };

  Status check_session(SessionId s) const;
  CapSeq next_seq(SessionId s);
  CapRecord& record(SessionId s, Ino ino, InodeCaps& node);
  void recall(SessionId s, Ino ino, CapRecord& cap, Rights bits, TimeMs now);
  void recall_for(Ino ino, InodeCaps& node, SessionId s, TimeMs now);
  void evaluate(Ino ino, TimeMs now);
  void grant(SessionId s, Ino ino, CapRecord& cap, Rights bits, uint64_t answers, TimeMs now);
  void recall_for_mutation(Ino ino, InodeCaps& node, const MutationWait& m, TimeMs now);
  void update_mutations(InodeCaps& node);
  void make_room(SessionId s, Ino keep, TimeMs now);  // keep == 0: none
  void evict(SessionId s, TimeMs now);
  void drop_session(SessionId s, TimeMs now);
  void collect_garbage(Ino ino);
  void end_reconnect(TimeMs now);
  TimeMs lease_for(SessionId s, TimeMs now) const;
  void expire_and_resend(TimeMs now);
  void trim_lru(TimeMs now);

  CapTableOptions options_;
  std::map<SessionId, Session> sessions_;
  std::map<Ino, InodeCaps> inodes_;
  std::set<SessionId> fenced_;
  std::vector<Outgoing> outbox_;
  std::vector<MutationReady> ready_;
  uint64_t next_mutation_id_ = 1;
  uint64_t want_counter_ = 0;
  bool reconnecting_ = false;
  TimeMs reconnect_deadline_ = 0;
};

}  // namespace dfs::caps
