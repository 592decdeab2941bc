// MirroredStorage: the part of a durable RaftLogStorage that keeps the whole log in
// memory (a MemStorage mirror, as etcd keeps its MemoryStorage) and serves every read
// from it; the storage beneath (RocksStorage, FileStorage) writes to the mirror and to
// its medium, and makes the medium durable in sync(). Reads never touch the disk, so
// they cannot fail.
#pragma once

#include "common/raft/mem_storage.h"
#include "common/raft/storage.h"

namespace dfs::raft {

class MirroredStorage : public RaftLogStorage {
 public:
  HardState hard_state() const override { return mem_.hard_state(); }
  const Snapshot& snapshot() const override { return mem_.snapshot(); }
  Index first_index() const override { return mem_.first_index(); }
  Index last_index() const override { return mem_.last_index(); }
  std::optional<Term> term(Index index) const override { return mem_.term(index); }
  std::vector<Entry> entries(Index lo, Index hi, uint64_t max_bytes) const override {
    return mem_.entries(lo, hi, max_bytes);
  }

 protected:
  explicit MirroredStorage(ConfState initial = {}) : mem_(std::move(initial)) {}

  MemStorage mem_;  // everything written, synced or not
};

}  // namespace dfs::raft
