// The messages of the capability protocol, as plain values. CapTable (MDS) and
// ClientCaps (client) produce them into outboxes that their owners drain and send; the
// owners also decode what arrives and call the matching method. Nothing here knows a
// wire format: the RPC layer maps these to protobuf, the simulation passes them as is.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "common/caps/rights.h"
#include "common/caps/types.h"

namespace dfs::caps {

// ---- MDS to client ----

// The session's complete set of rights on `ino` as of `seq` (never a delta, so a lost
// Grant is repaired by any later one). `want_id` is the Want it answers, 0 when pushed.
// A Grant that answers a Want without granting all of it refuses the rest for now.
struct Grant {
  Ino ino = 0;
  Rights issued;
  CapSeq seq = 0;
  uint64_t want_id = 0;
};

// Recall: the session may keep only `issued_after` on `ino`. It flushes what it did
// under the other bits, then acknowledges with Ack{ino, seq}. Resent until acked.
struct Revoke {
  Ino ino = 0;
  Rights issued_after;
  CapSeq seq = 0;
};

// The session was evicted: all its rights are void and the OSDs will refuse it. Sent to
// the session (best effort) and published by the MDS to the monitors (the fence).
struct Evicted {
  SessionId session = 0;
};

using MdsMessage = std::variant<Grant, Revoke, Evicted>;

struct Outgoing {
  SessionId to = 0;
  MdsMessage message;
};

// ---- client to MDS (the session is the connection's) ----

// Replaces what the session wants on `ino`. `want_id` starts at 1 and grows per session;
// a resend of an unanswered Want carries the same id.
struct Want {
  Ino ino = 0;
  InodeKind kind = InodeKind::kFile;
  Rights wanted;
  uint64_t want_id = 0;
};

// The session has seen Revoke/Grant `seq`, flushed, and now holds `now_holds`.
struct Ack {
  Ino ino = 0;
  CapSeq seq = 0;
  Rights now_holds;
};

// Voluntary drop of `bits`, as of the last seq the session saw on `ino`.
struct Release {
  Ino ino = 0;
  CapSeq seq = 0;
  Rights bits;
};

// Keeps the session (and its lease) alive. `sent_at` is the client's clock when sent;
// the answer echoes it, and the lease runs from it.
struct Renew {
  TimeMs sent_at = 0;
};

// One inode in a Reconnect: everything the client may still use (issued and being
// revoked) and what it wants.
struct HeldCap {
  Ino ino = 0;
  InodeKind kind = InodeKind::kFile;
  Rights held;
  Rights wanted;
};

// Re-asserts, to the new MDS instance `incarnation`, what the session holds. The client
// orders that instance's seqs from seq_base(incarnation): another instance must refuse it.
struct Reconnect {
  uint32_t incarnation = 0;
  TimeMs sent_at = 0;
  std::vector<HeldCap> caps;
};

using ClientMessage = std::variant<Want, Ack, Release, Renew, Reconnect>;

// One line for traces and logs, e.g. "Revoke ino=3 after=As Fr seq=4294967301".
std::string describe(const MdsMessage& message);
std::string describe(const ClientMessage& message);

}  // namespace dfs::caps
