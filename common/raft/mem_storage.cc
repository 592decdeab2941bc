#include "common/raft/mem_storage.h"

#include "common/raft/check.h"

namespace dfs::raft {

MemStorage::MemStorage(ConfState initial) { snapshot_.meta.conf = std::move(initial); }

std::optional<Term> MemStorage::term(Index index) const {
  if (index == snapshot_.meta.index) return snapshot_.meta.term;
  if (index < first_index() || index > last_index()) return std::nullopt;
  return log_[index - first_index()].term;
}

std::vector<Entry> MemStorage::entries(Index lo, Index hi, uint64_t max_bytes) const {
  DFS_RAFT_CHECK(first_index() <= lo && lo <= hi && hi <= last_index() + 1);
  std::vector<Entry> out;
  uint64_t bytes = 0;
  for (Index i = lo; i < hi; ++i) {
    const Entry& e = log_[i - first_index()];
    bytes += entry_bytes(e);
    if (!out.empty() && bytes > max_bytes) break;
    out.push_back(e);
  }
  return out;
}

uint64_t MemStorage::data_bytes() const {
  uint64_t bytes = 0;
  for (const Entry& e : log_) bytes += e.data.size();
  return bytes;
}

void MemStorage::append(const std::vector<Entry>& entries) {
  if (entries.empty()) return;
  Index from = entries.front().index;
  DFS_RAFT_CHECK(first_index() <= from && from <= last_index() + 1);
  log_.resize(from - first_index());
  for (const Entry& e : entries) {
    DFS_RAFT_CHECK(e.index == last_index() + 1);
    log_.push_back(e);
  }
}

void MemStorage::apply_snapshot(const Snapshot& snap) {
  DFS_RAFT_CHECK(snap.meta.index >= snapshot_.meta.index);
  std::optional<Term> t = term(snap.meta.index);
  if (t && *t == snap.meta.term) {
    log_.erase(log_.begin(), log_.begin() + (snap.meta.index - snapshot_.meta.index));
  } else {
    log_.clear();
  }
  snapshot_ = snap;
}

}  // namespace dfs::raft
