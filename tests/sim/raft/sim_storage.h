// RaftLogStorage for the simulation with a power-loss model: writes apply at once to
// a live image (what the node reads) and are queued; sync() replays the queue onto the
// synced image. crash() keeps a random prefix of the queue — some, all or none of the
// unsynced tail, hard state included — and the restarted node sees only that.
#pragma once

#include <functional>
#include <vector>

#include "common/raft/mem_storage.h"
#include "common/raft/random.h"

namespace dfs::raft::sim {

class SimStorage final : public RaftLogStorage {
 public:
  explicit SimStorage(ConfState initial) : live_(initial), synced_(initial) {}

  HardState hard_state() const override { return live_.hard_state(); }
  const Snapshot& snapshot() const override { return live_.snapshot(); }
  Index first_index() const override { return live_.first_index(); }
  Index last_index() const override { return live_.last_index(); }
  std::optional<Term> term(Index index) const override { return live_.term(index); }
  std::vector<Entry> entries(Index lo, Index hi, uint64_t max_bytes) const override {
    return live_.entries(lo, hi, max_bytes);
  }

  void set_hard_state(const HardState& hs) override;
  void append(const std::vector<Entry>& entries) override;
  void apply_snapshot(const Snapshot& snap) override;
  Status sync() override;

  // Power loss: keeps a random prefix of the unsynced writes. Returns how many were
  // lost, for the trace.
  size_t crash(Random& random);
  size_t unsynced_writes() const { return pending_.size(); }

 private:
  MemStorage live_;
  MemStorage synced_;
  std::vector<std::function<void(MemStorage&)>> pending_;
};

}  // namespace dfs::raft::sim
