#include "common/caps/client_caps.h"

#include <algorithm>
#include <utility>

namespace dfs::caps {

ClientCaps::ClientCaps(SessionId session, ClientCapsOptions options, TimeMs lease_until)
    : session_(session), options_(options), lease_until_(lease_until) {}

// ---- What the client may do ----

const ClientCaps::Entry* ClientCaps::find(Ino ino) const {
  auto it = entries_.find(ino);
  return it == entries_.end() ? nullptr : &it->second;
}

bool ClientCaps::can_use(Ino ino, Rights rights, TimeMs now) const {
  const Entry* e = find(ino);
  return e && lease_valid(now) && e->issued.contains(rights);
}

Rights ClientCaps::usable(Ino ino, TimeMs now) const {
  return lease_valid(now) ? held(ino) : kNoRights;
}

Rights ClientCaps::held(Ino ino) const {
  const Entry* e = find(ino);
  return e ? e->issued | e->revoking : kNoRights;
}

Rights ClientCaps::revoking(Ino ino) const {
  const Entry* e = find(ino);
  return e ? e->revoking : kNoRights;
}

Rights ClientCaps::wanted(Ino ino) const {
  const Entry* e = find(ino);
  return e ? e->wanted : kNoRights;
}

bool ClientCaps::want_pending(Ino ino) const {
  const Entry* e = find(ino);
  return e && e->want_id != 0;
}

std::vector<Ino> ClientCaps::inodes() const {
  std::vector<Ino> out;
  for (const auto& [ino, e] : entries_) out.push_back(ino);
  return out;
}

std::vector<Ino> ClientCaps::needs_flush() const {
  std::vector<Ino> out;
  for (const auto& [ino, e] : entries_) {
    if (!e.revoking.empty()) out.push_back(ino);
  }
  return out;
}

// ---- Requests ----

void ClientCaps::want(Ino ino, InodeKind kind, Rights wanted, TimeMs now) {
  auto [it, created] = entries_.try_emplace(ino);
  Entry& e = it->second;
  if (created) {
    e.kind = kind;
    e.seq = max_seen_;
  }
  e.wanted = wanted;
  e.want_id = ++last_want_id_;
  e.want_sent = now;
  e.last_use = now;
  outbox_.push_back(Want{ino, kind, wanted, e.want_id});
  if (Rights unwanted = e.issued - wanted; !unwanted.empty()) release(ino, unwanted);
}

void ClientCaps::release(Ino ino, Rights bits) {
  auto it = entries_.find(ino);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  bits &= e.issued;
  e.wanted -= bits;
  if (!bits.empty()) {
    e.issued -= bits;
    outbox_.push_back(Release{ino, e.seq, bits});
  }
  forget_if_idle(ino);
}

void ClientCaps::flushed(Ino ino) {
  auto it = entries_.find(ino);
  if (it == entries_.end()) return;
  it->second.revoking = kNoRights;
  outbox_.push_back(Ack{ino, it->second.seq, it->second.issued});
  forget_if_idle(ino);
}

void ClientCaps::forget_if_idle(Ino ino) {
  const Entry& e = entries_.at(ino);
  if (e.issued.empty() && e.revoking.empty() && e.wanted.empty() && e.want_id == 0) {
    entries_.erase(ino);
  }
}

void ClientCaps::touch(Ino ino, TimeMs now) {
  if (auto it = entries_.find(ino); it != entries_.end()) it->second.last_use = now;
}

std::vector<Ino> ClientCaps::lru_beyond(size_t max_inodes) const {
  if (entries_.size() <= max_inodes) return {};
  std::vector<std::pair<TimeMs, Ino>> by_use;
  for (const auto& [ino, e] : entries_) by_use.emplace_back(e.last_use, ino);
  std::sort(by_use.begin(), by_use.end());
  std::vector<Ino> out;
  for (size_t i = 0; i < entries_.size() - max_inodes; ++i) out.push_back(by_use[i].second);
  return out;
}

void ClientCaps::tick(TimeMs now) {
  for (auto& [ino, e] : entries_) {
    if (e.want_id != 0 && now - e.want_sent >= options_.want_resend_ms) {
      e.want_sent = now;
      outbox_.push_back(Want{ino, e.kind, e.wanted, e.want_id});
    }
  }
}

// ---- From the MDS ----

// Takes the MDS's word for `issued` as of `seq`. What it no longer includes is being
// revoked until the owner flushed; what the client stopped wanting meanwhile goes back.
void ClientCaps::adopt(Ino ino, Entry& e, Rights issued, CapSeq seq) {
  Rights dropped = e.issued - issued;
  e.issued = issued;
  e.revoking = (e.revoking | dropped) - issued;
  e.seq = seq;
  if (Rights unwanted = e.issued - e.wanted; !unwanted.empty()) {
    e.issued -= unwanted;
    outbox_.push_back(Release{ino, e.seq, unwanted});
  }
}

void ClientCaps::on_grant(const Grant& g, TimeMs /*now*/) {
  max_seen_ = std::max(max_seen_, g.seq);
  auto it = entries_.find(g.ino);
  if (it == entries_.end()) {
    if (!g.issued.empty()) outbox_.push_back(Release{g.ino, g.seq, g.issued});
    return;
  }
  Entry& e = it->second;
  if (g.seq <= e.seq && !options_.testing_ignore_seq) return;  // old or repeated
  adopt(g.ino, e, g.issued, g.seq);
  if (g.want_id != 0 && g.want_id == e.want_id) e.want_id = 0;
  forget_if_idle(g.ino);
}

void ClientCaps::on_revoke(const Revoke& r, TimeMs /*now*/) {
  max_seen_ = std::max(max_seen_, r.seq);
  auto it = entries_.find(r.ino);
  if (it == entries_.end()) {
    outbox_.push_back(Ack{r.ino, r.seq, kNoRights});
    return;
  }
  Entry& e = it->second;
  if (!options_.testing_ignore_seq) {
    if (r.seq < e.seq) return;  // older than what the client has seen
    if (r.seq == e.seq) {
      // A resend: the MDS did not get our Ack (or it is still flushing).
      if (e.revoking.empty()) outbox_.push_back(Ack{r.ino, e.seq, e.issued});
      return;
    }
  }
  adopt(r.ino, e, r.issued_after, r.seq);
  if (e.revoking.empty()) flushed(r.ino);  // nothing in use to flush
}

// ---- Lease ----

void ClientCaps::renew(TimeMs now) { outbox_.push_back(Renew{now}); }

void ClientCaps::on_lease(TimeMs sent_at, TimeMs lease_ms) {
  lease_until_ = std::max(lease_until_, sent_at + lease_ms);
}

// ---- Failover ----

void ClientCaps::begin_reconnect(uint32_t incarnation, TimeMs now) {
  CapSeq base = seq_base(incarnation);
  max_seen_ = std::max(max_seen_, base);
  Reconnect r;
  r.incarnation = incarnation;
  r.sent_at = now;
  for (auto& [ino, e] : entries_) {
    // The new instance starts every record at `base`; Releases and Acks from now on
    // name it. Being-revoked bits are claimed as held: the flush in progress ends with
    // an Ack at `base` that gives them back.
    e.seq = std::max(e.seq, base);
    if (e.want_id != 0) e.want_sent = now - options_.want_resend_ms;
    r.caps.push_back(HeldCap{ino, e.kind, e.issued | e.revoking, e.wanted});
  }
  outbox_.push_back(std::move(r));
}

std::vector<ClientMessage> ClientCaps::take_outbox() { return std::exchange(outbox_, {}); }

}  // namespace dfs::caps
