#include "common/caps/cap_table.h"

#include <algorithm>
#include <limits>

namespace dfs::caps {
namespace {

InodeCaps new_inode(InodeKind kind) {
  InodeCaps node;
  node.kind = kind;
  return node;
}

}  // namespace

CapTable::CapTable(CapTableOptions options) : options_(options) {
  if (options_.reconnect_grace_ms == 0) {
    options_.reconnect_grace_ms = options_.session_timeout_ms;
  }
}

// ---- Sessions ----

Status CapTable::check_session(SessionId s) const {
  if (fenced(s)) return make_error(ErrorCode::kPermissionDenied, "session evicted");
  auto it = sessions_.find(s);
  if (it == sessions_.end()) return make_error(ErrorCode::kNotFound, "no such session");
  if (!it->second.reconnected) {
    return make_error(ErrorCode::kUnavailable, "session must reconnect first");
  }
  return ok_status();
}

Status CapTable::open_session(SessionId s, TimeMs now) {
  if (fenced(s)) return make_error(ErrorCode::kPermissionDenied, "session evicted");
  if (sessions_.count(s) != 0) return make_error(ErrorCode::kAlreadyExists, "session open");
  Session& session = sessions_[s];
  session.last_renew = now;
  session.last_seq = seq_base(options_.incarnation);
  return ok_status();
}

Result<TimeMs> CapTable::renew(SessionId s, TimeMs now) {
  if (Status st = check_session(s); !st) return std::move(st).error();
  sessions_[s].last_renew = now;
  return lease_for(s, now);
}

TimeMs CapTable::lease_for(SessionId s, TimeMs now) const {
  // The lease must end before this table may evict the session for an unacknowledged
  // recall, or a client still renewing would serve cached reads after being fenced.
  TimeMs lease = options_.session_timeout_ms;
  for (Ino ino : sessions_.at(s).inodes) {
    const CapRecord& cap = inodes_.at(ino).caps.at(s);
    if (cap.revoking.empty()) continue;
    lease = std::min(lease, cap.recall_first_sent + options_.session_timeout_ms - now);
  }
  return std::max<TimeMs>(lease, 0);
}

void CapTable::close_session(SessionId s, TimeMs now) {
  if (sessions_.count(s) != 0) drop_session(s, now);
}

void CapTable::evict(SessionId s, TimeMs now) {
  // The Evicted goes out before any grant that re-evaluation below produces: the owner
  // fences the session before delivering those (see the header).
  fenced_.insert(s);
  outbox_.push_back(Outgoing{s, Evicted{s}});
  drop_session(s, now);
}

void CapTable::drop_session(SessionId s, TimeMs now) {
  std::set<Ino> touched = sessions_[s].inodes;
  for (Ino ino : touched) inodes_[ino].caps.erase(s);
  for (auto& [ino, node] : inodes_) {
    auto mine = [s](const MutationWait& m) { return m.session == s; };
    for (const MutationWait& m : node.mutations) {
      if (mine(m) && !m.ready) ready_.push_back(MutationReady{m.id, true});
    }
    if (std::erase_if(node.mutations, mine) > 0) touched.insert(ino);
  }
  sessions_.erase(s);
  for (Ino ino : touched) evaluate(ino, now);
}

std::vector<SessionId> CapTable::sessions() const {
  std::vector<SessionId> out;
  for (const auto& [id, session] : sessions_) out.push_back(id);
  return out;
}

// ---- Time ----

void CapTable::tick(TimeMs now) {
  if (reconnecting_ && now >= reconnect_deadline_) end_reconnect(now);
  expire_and_resend(now);
  trim_lru(now);
}

void CapTable::expire_and_resend(TimeMs now) {
  const TimeMs timeout = options_.session_timeout_ms;
  std::vector<SessionId> doomed;
  for (auto& [s, session] : sessions_) {
    // Sessions awaiting reconnect are judged by the grace instead (end_reconnect).
    if (!session.reconnected) continue;
    bool expired = now - session.last_renew >= timeout;
    for (Ino ino : session.inodes) {
      CapRecord& cap = inodes_[ino].caps[s];
      if (cap.revoking.empty()) continue;
      if (now - cap.recall_first_sent >= timeout) {
        expired = true;
      } else if (now - cap.recall_last_sent >= options_.recall_resend_ms) {
        cap.recall_last_sent = now;
        outbox_.push_back(Outgoing{s, Revoke{ino, cap.issued, cap.seq}});
      }
    }
    if (expired) doomed.push_back(s);
  }
  for (SessionId s : doomed) evict(s, now);
}

void CapTable::trim_lru(TimeMs now) {
  for (auto& [s, session] : sessions_) {
    if (caps_issued(s) > options_.max_caps_per_session) make_room(s, 0, now);
  }
}

// Recalls the least recently used caps of `s` (never `keep`) until it has room for one
// more inode. Their wants are dropped too: the client asks again when it needs them.
void CapTable::make_room(SessionId s, Ino keep, TimeMs now) {
  const size_t limit = options_.max_caps_per_session;
  while (caps_issued(s) >= limit + (keep == 0 ? 1 : 0)) {
    Ino victim = 0;
    TimeMs oldest = std::numeric_limits<TimeMs>::max();
    for (Ino ino : sessions_[s].inodes) {
      const CapRecord& cap = inodes_[ino].caps[s];
      if (ino != keep && !cap.issued.empty() && cap.last_use < oldest) {
        oldest = cap.last_use;
        victim = ino;
      }
    }
    if (victim == 0) return;
    CapRecord& cap = inodes_[victim].caps[s];
    cap.wanted = kNoRights;
    recall(s, victim, cap, cap.issued, now);
  }
}

// ---- Rights ----

CapSeq CapTable::next_seq(SessionId s) { return ++sessions_[s].last_seq; }

CapRecord& CapTable::record(SessionId s, Ino ino, InodeCaps& node) {
  auto [it, created] = node.caps.try_emplace(s);
  if (created) {
    it->second.seq = sessions_[s].last_seq;
    sessions_[s].inodes.insert(ino);
  }
  return it->second;
}

Status CapTable::want(SessionId s, const Want& w, TimeMs now) {
  if (Status st = check_session(s); !st) return st;
  if (!valid_rights(w.kind).contains(w.wanted)) {
    return make_error(ErrorCode::kInvalidArgument, "rights not valid for the inode kind");
  }
  auto [it, created] = inodes_.try_emplace(w.ino, new_inode(w.kind));
  InodeCaps& node = it->second;
  if (node.kind != w.kind) return make_error(ErrorCode::kInvalidArgument, "wrong inode kind");
  CapRecord& cap = record(s, w.ino, node);
  cap.last_use = now;
  if (w.want_id < cap.last_want_id) return ok_status();  // overtaken by a newer Want
  // A resend (same id) is answered again but keeps its place: it recalls nothing anew.
  bool resend = w.want_id == cap.last_want_id;
  cap.last_want_id = w.want_id;
  cap.pending_want = w.want_id;
  if (!resend) {
    cap.wanted = w.wanted;
    cap.want_order = ++want_counter_;
    // During the reconnect phase the claims are incomplete: end_reconnect() recalls.
    if (!reconnecting_) recall_for(w.ino, node, s, now);
  }
  evaluate(w.ino, now);
  return ok_status();
}

void CapTable::recall_for(Ino ino, InodeCaps& node, SessionId s, TimeMs now) {
  for (auto& [other, cap] : node.caps) {
    if (other != s) recall(other, ino, cap, recall_for_want(node, s, other), now);
  }
}

void CapTable::recall(SessionId s, Ino ino, CapRecord& cap, Rights bits, TimeMs now) {
  bits &= cap.issued;
  if (bits.empty()) return;
  if (cap.revoking.empty()) cap.recall_first_sent = now;
  cap.recall_last_sent = now;
  cap.issued -= bits;
  cap.revoking |= bits;
  cap.seq = next_seq(s);
  outbox_.push_back(Outgoing{s, Revoke{ino, cap.issued, cap.seq}});
  if (options_.testing_grant_before_ack) cap.revoking = kNoRights;  // the injected bug
}

void CapTable::grant(SessionId s, Ino ino, CapRecord& cap, Rights bits, uint64_t answers,
                     TimeMs now) {
  if (cap.issued.empty() && !bits.empty()) make_room(s, ino, now);
  cap.issued |= bits;
  // A fresh seq even when nothing changes (a pure answer): the client adopts the set, and
  // a Release it sent before seeing it no longer matches and is ignored.
  cap.seq = next_seq(s);
  outbox_.push_back(Outgoing{s, Grant{ino, cap.issued, cap.seq, answers}});
}

// Grants what can be granted on `ino`, answering wants that no longer wait. Pending
// wants go first, newest first: each won the recalls it caused, and what it still
// waits for is reserved against everyone processed after it.
void CapTable::evaluate(Ino ino, TimeMs now) {
  if (reconnecting_) return;
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return;
  InodeCaps& node = it->second;
  std::vector<std::pair<SessionId, CapRecord*>> order;
  for (auto& [s, cap] : node.caps) order.emplace_back(s, &cap);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    bool pa = a.second->pending_want != 0, pb = b.second->pending_want != 0;
    if (pa != pb) return pa;
    return a.second->want_order > b.second->want_order;
  });
  std::vector<std::pair<SessionId, Rights>> reservations;
  for (auto& [s, cap] : order) {
    if (!cap->revoking.empty()) continue;  // nothing new until its own recall is settled
    for (auto& [other, theirs] : node.caps) {
      if (other != s) recall(other, ino, theirs, leftovers_blocking(node, s, other), now);
    }
    Rights reserved;
    for (const auto& [other, bits] : reservations) {
      if (other != s) reserved |= bits;
    }
    Rights bits = grantable(node, s, reserved);
    bool answer = cap->pending_want != 0 && !want_waits(node, s);
    if (!bits.empty() || answer) {
      uint64_t answers = answer ? cap->pending_want : 0;
      if (answer) cap->pending_want = 0;
      grant(s, ino, *cap, bits, answers, now);
    }
    if (cap->pending_want != 0) reservations.emplace_back(s, effective_want(node, s));
  }
  update_mutations(node);
  collect_garbage(ino);
}

Status CapTable::ack(SessionId s, const Ack& a, TimeMs now) {
  if (Status st = check_session(s); !st) return st;
  auto it = inodes_.find(a.ino);
  if (it == inodes_.end()) return ok_status();
  auto cap = it->second.caps.find(s);
  if (cap == it->second.caps.end() || cap->second.seq != a.seq) return ok_status();  // stale
  cap->second.revoking = kNoRights;
  cap->second.issued &= a.now_holds;
  cap->second.last_use = now;
  evaluate(a.ino, now);
  return ok_status();
}

Status CapTable::release(SessionId s, const Release& r, TimeMs now) {
  if (Status st = check_session(s); !st) return st;
  auto it = inodes_.find(r.ino);
  if (it == inodes_.end()) return ok_status();
  auto cap = it->second.caps.find(s);
  if (cap == it->second.caps.end() || cap->second.seq != r.seq) return ok_status();  // stale
  cap->second.issued -= r.bits;
  cap->second.wanted -= r.bits;
  evaluate(r.ino, now);
  return ok_status();
}

// ---- Mutations ----

Result<MutationTicket> CapTable::prepare_mutation(SessionId s, Ino ino, InodeKind kind, Rights bits,
                                                  TimeMs now) {
  if (Status st = check_session(s); !st) return std::move(st).error();
  if (!valid_rights(kind).contains(bits)) {
    return make_error(ErrorCode::kInvalidArgument, "rights not valid for the inode kind");
  }
  auto [it, created] = inodes_.try_emplace(ino, new_inode(kind));
  InodeCaps& node = it->second;
  if (node.kind != kind) return make_error(ErrorCode::kInvalidArgument, "wrong inode kind");
  uint64_t id = next_mutation_id_++;
  node.mutations.push_back(MutationWait{.id = id, .session = s, .bits = bits});
  if (reconnecting_) return MutationTicket{id, false};  // end_reconnect() recalls
  recall_for_mutation(ino, node, node.mutations.back(), now);
  if (!held_by_others(node, s).intersects(bits)) {
    node.mutations.back().ready = true;
    return MutationTicket{id, true};
  }
  return MutationTicket{id, false};
}

void CapTable::recall_for_mutation(Ino ino, InodeCaps& node, const MutationWait& m, TimeMs now) {
  for (auto& [other, cap] : node.caps) {
    if (other != m.session) recall(other, ino, cap, cap.issued & m.bits, now);
  }
}

void CapTable::update_mutations(InodeCaps& node) {
  if (reconnecting_) return;
  for (MutationWait& m : node.mutations) {
    if (!m.ready && !held_by_others(node, m.session).intersects(m.bits)) {
      m.ready = true;
      ready_.push_back(MutationReady{m.id, false});
    }
  }
}

void CapTable::finish_mutation(uint64_t id, TimeMs now) {
  for (auto& [ino, node] : inodes_) {
    if (std::erase_if(node.mutations, [id](const MutationWait& m) { return m.id == id; })) {
      evaluate(ino, now);
      return;
    }
  }
}

std::vector<MutationReady> CapTable::take_ready() { return std::exchange(ready_, {}); }

void CapTable::collect_garbage(Ino ino) {
  InodeCaps& node = inodes_[ino];
  for (auto it = node.caps.begin(); it != node.caps.end();) {
    if (it->second.idle()) {
      sessions_[it->first].inodes.erase(ino);
      it = node.caps.erase(it);
    } else {
      ++it;
    }
  }
  if (node.idle()) inodes_.erase(ino);
}

// ---- Failover ----

void CapTable::begin_reconnect(const std::vector<SessionId>& known, TimeMs now) {
  reconnecting_ = true;
  reconnect_deadline_ = now + options_.reconnect_grace_ms;
  for (SessionId s : known) {
    Session& session = sessions_[s];
    session = Session{};
    session.last_renew = now;
    session.last_seq = seq_base(options_.incarnation);
    session.reconnected = false;
  }
  if (known.empty()) end_reconnect(now);
}

Result<TimeMs> CapTable::reconnect(SessionId s, const Reconnect& r, TimeMs now) {
  if (fenced(s)) return make_error(ErrorCode::kPermissionDenied, "session evicted");
  auto found = sessions_.find(s);
  if (found == sessions_.end()) return make_error(ErrorCode::kNotFound, "not a known session");
  if (r.incarnation != options_.incarnation) {
    return make_error(ErrorCode::kStaleEpoch, "reconnect meant for another MDS instance");
  }
  if (found->second.reconnected) return renew(s, now);  // a duplicate: claims are stale
  found->second.reconnected = true;
  found->second.last_renew = now;
  for (const HeldCap& c : r.caps) {
    auto [it, created] = inodes_.try_emplace(c.ino, new_inode(c.kind));
    InodeCaps& node = it->second;
    if (node.kind != c.kind) continue;
    Rights held = c.held & valid_rights(c.kind);
    if (conflicting_with(held_by_others(node, s)).intersects(held)) {
      evict(s, now);
      return make_error(ErrorCode::kPermissionDenied, "claims rights another session holds");
    }
    CapRecord& cap = record(s, c.ino, node);
    cap.issued = held;
    cap.wanted = c.wanted & valid_rights(c.kind);
    cap.last_use = now;
    cap.want_order = ++want_counter_;
  }
  // Claims may exceed the limit (an LRU recall was in flight when the old instance
  // died): recall the excess now, as the old instance was doing.
  if (caps_issued(s) > options_.max_caps_per_session) make_room(s, 0, now);
  TimeMs lease = lease_for(s, now);
  bool all = std::all_of(sessions_.begin(), sessions_.end(),
                         [](const auto& kv) { return kv.second.reconnected; });
  if (reconnecting_ && all) end_reconnect(now);
  return lease;
}

void CapTable::end_reconnect(TimeMs now) {
  std::vector<SessionId> missing;
  for (const auto& [s, session] : sessions_) {
    if (!session.reconnected) missing.push_back(s);
  }
  for (SessionId s : missing) evict(s, now);
  reconnecting_ = false;
  // Wants that arrived during the phase recall now, oldest first so the newest wins.
  std::vector<Ino> inos;
  for (const auto& [ino, node] : inodes_) inos.push_back(ino);
  for (Ino ino : inos) {
    InodeCaps& node = inodes_[ino];
    std::vector<std::pair<uint64_t, SessionId>> pending;
    for (const auto& [s, cap] : node.caps) {
      if (cap.pending_want != 0) pending.emplace_back(cap.want_order, s);
    }
    std::sort(pending.begin(), pending.end());
    for (const auto& [order, s] : pending) recall_for(ino, node, s, now);
    for (const MutationWait& m : node.mutations) recall_for_mutation(ino, node, m, now);
    evaluate(ino, now);
  }
}

// ---- Output and queries ----

std::vector<Outgoing> CapTable::take_outbox() { return std::exchange(outbox_, {}); }

Rights CapTable::held(SessionId s, Ino ino) const {
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return kNoRights;
  auto cap = it->second.caps.find(s);
  return cap == it->second.caps.end() ? kNoRights : cap->second.held();
}

size_t CapTable::caps_issued(SessionId s) const {
  auto it = sessions_.find(s);
  if (it == sessions_.end()) return 0;
  size_t n = 0;
  for (Ino ino : it->second.inodes) n += !inodes_.at(ino).caps.at(s).issued.empty();
  return n;
}

void CapTable::for_each_cap(const std::function<void(const CapView&)>& fn) const {
  for (const auto& [ino, node] : inodes_) {
    for (const auto& [s, cap] : node.caps) fn(CapView{s, ino, node.kind, &cap});
  }
}

}  // namespace dfs::caps
