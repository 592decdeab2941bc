// The MDS's capability state for one inode, and the grant policy as pure functions over
// it: which bits a session may be granted now, which bits a new want recalls from the
// others, and whether an unanswered want must still wait. CapTable owns these records
// and calls the policy; nothing here sends, times or evicts.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "common/caps/rights.h"
#include "common/caps/types.h"

namespace dfs::caps {

// One session's rights on one inode.
struct CapRecord {
  Rights issued;        // what the session was last told it may use
  Rights revoking;      // taken out of issued, not yet acknowledged: still counted as held
  Rights wanted;        // what the session last asked for (Want, Reconnect)
  CapSeq seq = 0;       // of the last Grant or Revoke sent for this record
  TimeMs last_use = 0;  // last request touching it (LRU recall picks the oldest)
  // While revoking is non-empty: when the recall was first sent (its deadline runs from
  // there, however often it is resent) and last sent.
  TimeMs recall_first_sent = 0;
  TimeMs recall_last_sent = 0;
  uint64_t pending_want = 0;  // id of a Want not answered yet, 0 if none
  uint64_t last_want_id = 0;  // older Wants arriving late are ignored
  uint64_t want_order = 0;    // table-wide counter at the last Want: newest wins

  Rights held() const { return issued | revoking; }
  bool idle() const { return held().empty() && wanted.empty() && pending_want == 0; }
};

// A synchronous change waiting for (or holding off) other sessions' rights.
struct MutationWait {
  uint64_t id = 0;
  SessionId session = 0;
  Rights bits;         // no session other than `session` may hold these meanwhile
  bool ready = false;  // every other holder acknowledged or was evicted
};

struct InodeCaps {
  InodeKind kind = InodeKind::kFile;
  std::map<SessionId, CapRecord> caps;
  std::vector<MutationWait> mutations;  // prepared and not finished

  bool idle() const { return caps.empty() && mutations.empty(); }
};

// What sessions other than `s` hold (issued and being revoked) on the inode.
Rights held_by_others(const InodeCaps& node, SessionId s);
// Whether a session other than `s` wants anything: then `s` gets no exclusive rights.
bool others_want(const InodeCaps& node, SessionId s);
// Bits that mutations prepared by sessions other than `s` keep from everyone else.
Rights mutation_bits_of_others(const InodeCaps& node, SessionId s);

// The part of what `s` wants that the policy could ever give it while the others keep
// their wants: everything, minus the exclusive rights when anyone else wants anything.
Rights effective_want(const InodeCaps& node, SessionId s);

// The bits `other` must give back because `s` asked for its wants: those that conflict
// with the effective want of `s`, and any exclusive right (s now wants something too).
Rights recall_for_want(const InodeCaps& node, SessionId s, SessionId other);

// Bits `other` holds without wanting them that block what `s` still wants: a Release
// that was lost, or a claim made at reconnect. Recalled at once (a recall is resent and
// has a deadline, a Release is neither), so a lost Release costs one round trip.
Rights leftovers_blocking(const InodeCaps& node, SessionId s, SessionId other);

// The wanted bits of `s` that may be granted at once: not held, not conflicting with
// anything another session holds or `reserved` keeps for the newer wants of others, not
// kept by another's mutation, and exclusive ones only if nobody else wants anything.
Rights grantable(const InodeCaps& node, SessionId s, Rights reserved);

// True while the pending want of `s` must wait before it is answered: another session is
// still giving back bits that conflict with it, or another's mutation keeps bits it
// wants. Whatever still conflicts after that is refused in the answer.
bool want_waits(const InodeCaps& node, SessionId s);

}  // namespace dfs::caps
