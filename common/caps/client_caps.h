// ClientCaps: the client side of the capability protocol, for one session. It answers
// "may this client do X with this inode now?" (one place for the fast path to ask), keeps
// per-inode rights ordered by seq, turns recalls into acks once the owner has flushed,
// tracks the session lease, and rebuilds a new MDS instance's table on failover.
// A pure state machine owned by one thread (the client's inode-table strand; the
// simulator in tests): time is passed in, messages go to take_outbox().
//
// The owner's part: send the outbox in order; feed every Grant and Revoke for this
// session to on_grant()/on_revoke() (duplicates and reordering are harmless); after a
// revoke, flush what it did under revoking(ino) and call flushed(ino); renew well within
// the lease; on Evicted, or a renew answered kPermissionDenied or kNotFound, drop this
// object with everything cached or buffered under it and open a new session.
#pragma once

#include <map>
#include <vector>

#include "common/caps/messages.h"

namespace dfs::caps {

struct ClientCapsOptions {
  TimeMs want_resend_ms = 1'000;  // resend a Want that got no answer this long
  // A deliberate protocol bug for the simulation's self-test: apply every Grant and
  // Revoke whatever its seq, so a delayed old Grant re-adds revoked rights.
  bool testing_ignore_seq = false;
};

class ClientCaps {
 public:
  // `lease_until`: from the answer that opened the session (its send time + lease).
  ClientCaps(SessionId session, ClientCapsOptions options, TimeMs lease_until);
  SessionId session() const { return session_; }

  // ---- What the client may do ----

  // True when every bit of `rights` is issued (not being revoked) and the lease holds:
  // the test before starting a new use (caching, buffering, writing).
  bool can_use(Ino ino, Rights rights, TimeMs now) const;
  // Everything the client may still touch (issued and being revoked, for the flush),
  // or nothing once the lease has ended.
  Rights usable(Ino ino, TimeMs now) const;
  Rights held(Ino ino) const;      // issued | revoking, whatever the lease
  Rights revoking(Ino ino) const;  // to flush before flushed(ino)
  Rights wanted(Ino ino) const;
  bool want_pending(Ino ino) const;  // a Want not answered yet
  std::vector<Ino> inodes() const;
  std::vector<Ino> needs_flush() const;  // inodes with bits being revoked

  // ---- Requests ----

  // Asks for `wanted` on `ino` (replacing the previous want) and gives back, at once,
  // issued bits not in it. Emits Want (and Release). Resent by tick() until answered.
  // Requires: nothing done under the issued bits not in `wanted` is left unflushed.
  void want(Ino ino, InodeKind kind, Rights wanted, TimeMs now);
  // Gives back `bits` (and stops wanting them). Emits Release.
  // Requires: nothing done under `bits` is left unflushed.
  void release(Ino ino, Rights bits);
  // The owner flushed everything done under revoking(ino): emits Ack{seq, now holds}.
  void flushed(Ino ino);
  // Records a use, for lru_beyond().
  void touch(Ino ino, TimeMs now);
  // Inodes beyond the `max_inodes` most recently used, oldest first: the owner flushes
  // and releases them to keep its (and the MDS's) table small.
  std::vector<Ino> lru_beyond(size_t max_inodes) const;
  // Resends unanswered Wants.
  void tick(TimeMs now);

  // ---- From the MDS ----

  // Adopts the message's issued set if its seq is newer than the inode's; bits it drops
  // become revoking (owner flushes, then flushed()). A Revoke of nothing in use is acked
  // at once; a repeated Revoke already acked is acked again (the Ack may have been
  // lost). A Grant for an inode the client no longer tracks is released back.
  void on_grant(const Grant& g, TimeMs now);
  void on_revoke(const Revoke& r, TimeMs now);

  // ---- Lease ----

  // Emits Renew{sent_at = now}.
  void renew(TimeMs now);
  // An answer to the Renew (or Reconnect) sent at `sent_at`: the lease runs until
  // sent_at + lease_ms, never backwards.
  void on_lease(TimeMs sent_at, TimeMs lease_ms);
  bool lease_valid(TimeMs now) const { return now < lease_until_; }
  TimeMs lease_until() const { return lease_until_; }

  // ---- Failover ----

  // A new MDS instance (`incarnation`) is active: emits Reconnect with everything held
  // and wanted, and from now on orders messages from older instances before any of its
  // own (their seqs are lower). Unanswered Wants are resent by the next tick(). Calling
  // it again for the same instance (the Reconnect was lost) resends the same claims.
  void begin_reconnect(uint32_t incarnation, TimeMs now);

  std::vector<ClientMessage> take_outbox();

 private:
  struct Entry {
    InodeKind kind = InodeKind::kFile;
    Rights issued;
    Rights revoking;
    Rights wanted;
    CapSeq seq = 0;
    TimeMs last_use = 0;
    uint64_t want_id = 0;  // unanswered Want, 0 if none
    TimeMs want_sent = 0;
  };

  const Entry* find(Ino ino) const;
  void adopt(Ino ino, Entry& e, Rights issued, CapSeq seq);
  void forget_if_idle(Ino ino);

  SessionId session_;
  ClientCapsOptions options_;
  TimeMs lease_until_;
  std::map<Ino, Entry> entries_;
  // The highest seq seen on any inode: a new entry starts there, so a Grant sent before
  // the client last dropped this inode (seqs are per session) cannot revive it.
  CapSeq max_seen_ = 0;
  uint64_t last_want_id_ = 0;
  std::vector<ClientMessage> outbox_;
};

}  // namespace dfs::caps
