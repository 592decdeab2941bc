// PendingJournal: the journal records whose file writes have been done but not yet
// synced, per data file. A record may be deleted once its file is fdatasynced (trim), or
// in the same batch as a transaction that syncs or drops the file itself. Bookkeeping
// only; thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dfs::osd {

class PendingJournal {
 public:
  struct Record {
    uint64_t seq;
    uint64_t bytes;
  };
  using Snapshot = std::vector<std::pair<uint64_t /*fid*/, std::vector<Record>>>;

  void add(uint64_t fid, uint64_t seq, uint64_t bytes);
  // The records of one file, oldest first.
  std::vector<uint64_t> seqs_of(uint64_t fid) const;
  // Drops the records of `fid` up to and including `last_seq`.
  void forget(uint64_t fid, uint64_t last_seq);
  Snapshot snapshot() const;
  void forget(const Snapshot& snapshot);

  uint64_t record_count() const;
  uint64_t byte_count() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::vector<Record>> by_fid_;  // guarded by mu_
  uint64_t records_ = 0;                                      // guarded by mu_
  uint64_t bytes_ = 0;                                        // guarded by mu_
};

}  // namespace dfs::osd
