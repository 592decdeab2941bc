#include "tests/sim/caps/sim_client.h"

namespace dfs::caps::sim {
namespace {

constexpr TimeMs kMutationResendMs = 1000;
constexpr TimeMs kReconnectResendMs = 500;
constexpr size_t kMaxInodes = 4;  // the client's own LRU limit
constexpr double kActionChance = 0.08;

bool chance(std::mt19937_64& rng, double p) {
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}

template <class T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

// What a client asks for: the usual profiles, and now and then any subset.
Rights random_want(std::mt19937_64& rng, InodeKind kind) {
  static const std::vector<Rights> kFileProfiles = {
      kAttrShared | kDataRead | kDataCache,  // a reader
      kAttrShared | kDataRead | kDataWrite,  // a synchronous writer
      kFileRights,                           // alone: everything
      kAttrShared,                           // stat
      kAttrShared | kAttrExcl,               // chmod, utimes
  };
  static const std::vector<Rights> kDirProfiles = {
      kAttrShared | kDirShared,
      kDirRights,
      kDirShared,
  };
  Rights valid = valid_rights(kind);
  if (chance(rng, 0.2)) {
    return Rights::from_bits(std::uniform_int_distribution<uint32_t>(0, 255)(rng)) & valid;
  }
  return pick(rng, kind == InodeKind::kFile ? kFileProfiles : kDirProfiles);
}

Domain random_domain(std::mt19937_64& rng, InodeKind kind) {
  if (chance(rng, 0.3)) return Domain::kAttr;
  return kind == InodeKind::kFile ? Domain::kData : Domain::kDir;
}

}  // namespace

bool SimClient::buffers(Ino ino, Domain d) const {
  auto it = local_.find(ino);
  return running() && it != local_.end() && it->second.dirty[static_cast<int>(d)] > 0;
}

bool SimClient::settled() const {
  if (!running()) return true;
  for (Ino ino : caps_->inodes()) {
    if (caps_->want_pending(ino) || !caps_->revoking(ino).empty()) return false;
  }
  return mutations_.empty() && inbox_.empty() && reconnect_answered_;
}

void SimClient::start(SessionId s, TimeMs lease_until) {
  session_ = s;
  caps_ = std::make_unique<ClientCaps>(s, options_, lease_until);
  local_.clear();
  mutations_.clear();
  inbox_.clear();
  next_renew_ = 0;
  reconnected_to_ = 0;
  reconnect_answered_ = true;
  needs_new_session_ = false;
}

void SimClient::crash() {
  caps_.reset();
  local_.clear();
  mutations_.clear();
  inbox_.clear();
  paused_until_ = 0;
  needs_new_session_ = false;
}

// ---- Input ----

void SimClient::deliver(ClientContext& cx, const Delivery& d) {
  if (!running() || d.session != session_) return;  // for a session this client left
  if (paused(cx.now)) {
    inbox_.push_back(d);
    return;
  }
  handle(cx, d.down);
  if (std::holds_alternative<LeaseReply>(d.down)) {
    on_lease_reply(cx, std::get<LeaseReply>(d.down), d.incarnation);
  }
  send_outbox(cx);
}

void SimClient::handle(ClientContext& cx, const ToClient& m) {
  if (const auto* mds = std::get_if<MdsMessage>(&m)) {
    if (const auto* g = std::get_if<Grant>(mds)) caps_->on_grant(*g, cx.now);
    if (const auto* r = std::get_if<Revoke>(mds)) caps_->on_revoke(*r, cx.now);
    if (std::holds_alternative<Evicted>(*mds)) needs_new_session_ = true;
    settle_recalls(cx, false);
  } else if (const auto* done = std::get_if<MutateDone>(&m)) {
    auto it = mutations_.find(done->req_id);
    if (it == mutations_.end()) return;
    // Refetch rather than trust the reply: it may arrive after a later change.
    local_[it->second.ino].cache[static_cast<int>(it->second.domain)].reset();
    mutations_.erase(it);
  }
}

void SimClient::on_lease_reply(ClientContext& cx, const LeaseReply& r, uint32_t incarnation) {
  switch (r.code) {
    case ErrorCode::kOk:
      caps_->on_lease(r.sent_at, r.lease_ms);
      if (incarnation == reconnected_to_) reconnect_answered_ = true;
      break;
    case ErrorCode::kUnavailable:  // a new MDS instance waits for our reconnect
    case ErrorCode::kStaleEpoch:   // ...and our Reconnect was meant for an earlier one
      if (incarnation > reconnected_to_) {
        reconnected_to_ = incarnation;
        reconnect_answered_ = false;
        reconnect_sent_ = cx.now;
        caps_->begin_reconnect(incarnation, cx.now);
        cx.log("client " + std::to_string(index_) + " reconnects to mds." +
               std::to_string(incarnation));
      }
      break;
    default:  // evicted, or unknown to the MDS: start over
      needs_new_session_ = true;
      break;
  }
}

// ---- Steps ----

void SimClient::step(ClientContext& cx) {
  if (!running() || paused(cx.now) || needs_new_session_) return;
  while (!inbox_.empty() && !needs_new_session_) {
    Delivery d = inbox_.front();
    inbox_.pop_front();
    deliver(cx, d);
  }
  if (needs_new_session_) return;
  timers(cx);
  settle_recalls(cx, cx.quiet);
  if (!cx.quiet && chance(*cx.rng, kActionChance)) act(cx);
  for (Ino ino : caps_->lru_beyond(kMaxInodes)) give_back(cx, ino, caps_->held(ino));
  send_outbox(cx);
}

void SimClient::timers(ClientContext& cx) {
  if (cx.now >= next_renew_) {
    caps_->renew(cx.now);
    next_renew_ = cx.now + session_timeout_ms_ / 4;
  }
  caps_->tick(cx.now);
  if (!reconnect_answered_ && cx.now - reconnect_sent_ >= kReconnectResendMs) {
    reconnect_sent_ = cx.now;
    caps_->begin_reconnect(reconnected_to_, cx.now);
  }
  for (auto& [id, m] : mutations_) {
    if (cx.now - m.sent_at >= kMutationResendMs) {
      m.sent_at = cx.now;
      send(cx, MutateRequest{id, m.ino, m.kind, m.domain});
    }
  }
}

// Recalled rights are given back after a flush, at once or (to keep recalls in flight
// while other things happen) a few steps later.
void SimClient::settle_recalls(ClientContext& cx, bool all) {
  for (Ino ino : caps_->needs_flush()) {
    if (!all && chance(*cx.rng, 0.5)) continue;
    flush(cx, ino, caps_->revoking(ino));
    caps_->flushed(ino);
  }
}

void SimClient::act(ClientContext& cx) {
  const InodeInfo& inode = pick(*cx.rng, *cx.inodes);
  switch (std::uniform_int_distribution<int>(0, 9)(*cx.rng)) {
    case 0:
    case 1:
      ask(cx, inode);
      break;
    case 2:
    case 3:
    case 4:
      read(cx, inode, random_domain(*cx.rng, inode.kind));
      break;
    case 5:
    case 6:
    case 7:
      write(cx, inode, random_domain(*cx.rng, inode.kind));
      break;
    case 8:
      give_back(cx, inode.ino, caps_->held(inode.ino) - caps_->revoking(inode.ino));
      break;
    default:
      flush(cx, inode.ino, kNoRights);
      break;  // write-behind, keeping the rights
  }
  caps_->touch(inode.ino, cx.now);
}

void SimClient::ask(ClientContext& cx, const InodeInfo& inode) {
  Rights wanted = random_want(*cx.rng, inode.kind);
  Rights dropped = (caps_->held(inode.ino) - caps_->revoking(inode.ino)) - wanted;
  flush(cx, inode.ino, dropped);  // ClientCaps::want gives these back at once
  caps_->want(inode.ino, inode.kind, wanted, cx.now);
}

// ---- Using rights ----

void SimClient::read(ClientContext& cx, const InodeInfo& inode, Domain d) {
  const DomainRights r = rights_of(d);
  const int i = static_cast<int>(d);
  for (const auto& [id, m] : mutations_) {
    if (m.ino == inode.ino && m.domain == d) return;  // the reply brings the change
  }
  auto hidden_elsewhere = [&] {
    for (const SimClient& other : *cx.clients) {
      if (other.index_ != index_ && !cx.storage->fenced(other.session_) &&
          other.buffers(inode.ino, d)) {
        cx.violation("client " + std::to_string(index_) + " reads " + domain_name(d) + " of ino " +
                     std::to_string(inode.ino) + " while client " + std::to_string(other.index_) +
                     " buffers a change to it");
      }
    }
  };
  Local& l = local_[inode.ino];
  if (caps_->can_use(inode.ino, r.cache, cx.now)) {
    if (l.dirty[i] > 0) return;  // reads its own buffered change
    uint64_t truth = cx.storage->read(inode.ino, d);
    if (l.cache[i] && *l.cache[i] != truth) {
      cx.violation("client " + std::to_string(index_) + " (session " + std::to_string(session_) +
                   ") serves a stale cached " + domain_name(d) + " of ino " +
                   std::to_string(inode.ino) + ": version " + std::to_string(*l.cache[i]) +
                   ", storage has " + std::to_string(truth));
    }
    l.cache[i] = truth;
    ++cx.stats->cached_reads;
    hidden_elsewhere();
  } else if (!r.read.empty() && caps_->can_use(inode.ino, r.read, cx.now)) {
    hidden_elsewhere();
  }
}

void SimClient::write(ClientContext& cx, const InodeInfo& inode, Domain d) {
  const DomainRights r = rights_of(d);
  const int i = static_cast<int>(d);
  Local& l = local_[inode.ino];
  if (caps_->can_use(inode.ino, r.excl, cx.now)) {
    ++l.dirty[i];
    ++cx.stats->buffered_writes;
  } else if (!r.write.empty() && caps_->can_use(inode.ino, r.write, cx.now)) {
    ++cx.stats->sync_writes;
    l.cache[i].reset();
    if (!cx.storage->write(session_, inode.ino, d)) ++cx.stats->refused_writes;
  } else if (r.write.empty()) {
    for (const auto& [id, m] : mutations_) {
      if (m.ino == inode.ino && m.domain == d) return;
    }
    uint64_t id = next_mutation_++;
    mutations_[id] = Mutation{inode.ino, inode.kind, d, cx.now};
    l.cache[i].reset();
    send(cx, MutateRequest{id, inode.ino, inode.kind, d});
  }
}

// Flushes buffered changes (all of them) and drops the caches of `bits`.
void SimClient::flush(ClientContext& cx, Ino ino, Rights bits) {
  auto it = local_.find(ino);
  if (it == local_.end()) return;
  for (int i = 0; i < kDomains; ++i) {
    const DomainRights r = rights_of(static_cast<Domain>(i));
    if (it->second.dirty[i] > 0) {
      // A fenced session's flush is refused: its buffered changes are lost, and the
      // storage shows nothing of them.
      if (!cx.storage->write(session_, ino, static_cast<Domain>(i))) {
        ++cx.stats->refused_writes;
      }
      it->second.dirty[i] = 0;
      it->second.cache[i].reset();
    }
    if (bits.intersects(r.cache)) it->second.cache[i].reset();
  }
}

void SimClient::give_back(ClientContext& cx, Ino ino, Rights bits) {
  flush(cx, ino, bits);
  caps_->release(ino, bits);
}

// ---- Output ----

void SimClient::send(ClientContext& cx, ToMds m) {
  Delivery d;
  d.to_mds = true;
  d.session = session_;
  d.incarnation = cx.mds_incarnation;
  d.up = std::move(m);
  cx.net->send(cx.now, std::move(d));
}

void SimClient::send_outbox(ClientContext& cx) {
  if (!running()) return;
  for (ClientMessage& m : caps_->take_outbox()) send(cx, ToMds{std::move(m)});
}

}  // namespace dfs::caps::sim
