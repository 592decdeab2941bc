#include "tests/sim/raft/sim_storage.h"

namespace dfs::raft::sim {

void SimStorage::set_hard_state(const HardState& hs) {
  live_.set_hard_state(hs);
  pending_.push_back([hs](MemStorage& s) { s.set_hard_state(hs); });
}

void SimStorage::append(const std::vector<Entry>& entries) {
  live_.append(entries);
  pending_.push_back([entries](MemStorage& s) { s.append(entries); });
}

void SimStorage::apply_snapshot(const Snapshot& snap) {
  live_.apply_snapshot(snap);
  pending_.push_back([snap](MemStorage& s) { s.apply_snapshot(snap); });
}

Status SimStorage::sync() {
  for (auto& write : pending_) write(synced_);
  pending_.clear();
  return ok_status();
}

size_t SimStorage::crash(Random& random) {
  // Half the crashes lose the whole tail; the rest keep a random prefix of it.
  size_t keep = 0;
  if (!pending_.empty() && random.uniform(0, 2) == 1) keep = random.uniform(0, pending_.size() + 1);
  for (size_t i = 0; i < keep; ++i) pending_[i](synced_);
  size_t lost = pending_.size() - keep;
  pending_.clear();
  live_ = synced_;
  return lost;
}

}  // namespace dfs::raft::sim
