// RaftLogStorage in memory: every write is "durable" at once and sync() does nothing.
// Used by unit tests and, wrapped with a crash model, by the simulation. A copyable
// value so that a simulated disk can keep a synced image beside the live one.
#pragma once

#include <deque>

#include "common/raft/storage.h"

namespace dfs::raft {

class MemStorage final : public RaftLogStorage {
 public:
  // A fresh log whose snapshot at index 0 records the initial configuration (empty
  // for a node that waits to be added).
  explicit MemStorage(ConfState initial = {});

  HardState hard_state() const override { return hard_state_; }
  const Snapshot& snapshot() const override { return snapshot_; }
  Index first_index() const override { return snapshot_.meta.index + 1; }
  Index last_index() const override { return snapshot_.meta.index + log_.size(); }
  std::optional<Term> term(Index index) const override;
  std::vector<Entry> entries(Index lo, Index hi, uint64_t max_bytes) const override;
  // The bytes of the entries' data, all of them (no copy).
  uint64_t data_bytes() const;

  void set_hard_state(const HardState& hs) override { hard_state_ = hs; }
  void append(const std::vector<Entry>& entries) override;
  void apply_snapshot(const Snapshot& snap) override;
  Status sync() override { return ok_status(); }

 private:
  HardState hard_state_;
  Snapshot snapshot_;
  std::deque<Entry> log_;  // log_[i] has index snapshot_.meta.index + 1 + i
};

}  // namespace dfs::raft
