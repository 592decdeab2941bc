// The log storage a RaftNode writes through: hard state, entries after the latest
// snapshot, and that snapshot. Writes are buffered: they are visible to reads at once
// but durable only after sync(), which the application calls when Ready::must_sync is
// set (see raft_node.h for the exact contract). A hard state that changes only the
// commit index waits for the next sync made for another reason, so a restart may find
// an older one. Single-threaded: owned by the node's executor together with the
// RaftNode.
#pragma once

#include <optional>
#include <vector>

#include "common/raft/types.h"
#include "common/status/status.h"

namespace dfs::raft {

// Reads cannot fail: an implementation that cannot read its own log (I/O error,
// corruption) must stop the process, because Raft cannot make progress or stay safe
// with a log it cannot trust. Only sync() reports errors, and after a failed sync the
// storage refuses writes until restart (sticky failure).
class RaftLogStorage {
 public:
  virtual ~RaftLogStorage() = default;

  virtual HardState hard_state() const = 0;
  virtual const Snapshot& snapshot() const = 0;  // meta.index == 0: none yet

  // first_index() == snapshot().meta.index + 1; last_index() >= snapshot().meta.index.
  virtual Index first_index() const = 0;
  virtual Index last_index() const = 0;

  // Term of entry `index` for index in [snapshot index, last_index()], else nullopt
  // (compacted away or not yet written).
  virtual std::optional<Term> term(Index index) const = 0;

  // Entries [lo, hi), stopping once max_bytes is exceeded but always returning at
  // least one entry. Requires: first_index() <= lo <= hi <= last_index() + 1.
  virtual std::vector<Entry> entries(Index lo, Index hi, uint64_t max_bytes) const = 0;

  virtual void set_hard_state(const HardState& hs) = 0;

  // Writes `entries` (consecutive) and drops every existing entry at or after
  // entries.front().index. Requires: first_index() <= front().index <= last_index() + 1.
  virtual void append(const std::vector<Entry>& entries) = 0;

  // Replaces the snapshot. If the log holds snap.meta.index at snap.meta.term the
  // entries after it are kept (log compaction); otherwise the whole log is dropped
  // (a snapshot installed from the leader). Requires: index at or above the current
  // one (at it: another image of the same state).
  virtual void apply_snapshot(const Snapshot& snap) = 0;

  // Makes every write so far durable. Errors: kIoError (sticky).
  virtual Status sync() = 0;
};

}  // namespace dfs::raft
