// Speculative groups: a replicated rank's leader writes each commit group to its store
// as soon as it has decided it, before Raft commits it, so it can reply at once and
// later requests see the group (early replies, as a single-replica rank answers before
// its log sync). Each such write carries an undo record ('U' first_index, MdsUndo) with
// what the written keys held before; these functions write, find and apply them. The
// rules for when (mds/store/FORMAT.md, "Speculative groups"): a committed group of our
// own drops its record; a lost leadership, a committed entry not our own, and a process
// start undo every record, newest first. Pure store functions, any thread.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/proto/mds.pb.h"
#include "mds/store/meta_store.h"

namespace dfs::mds {

// Which speculative groups the store holds (first index -> leader term), in memory, so
// that the state machine need not look for undo records on every apply: they are
// deleted as fast as they are written, and a RocksDB scan of their prefix walks every
// deletion (tombstone) not yet compacted away, which grew each apply by milliseconds.
// Thread-safe (a new leader's load() runs on a pool thread).
class UndoLedger {
 public:
  // Reads which undo records the store holds (at start). Errors: the store's.
  Status load(const KvReader& store);
  void add(uint64_t first_index, uint64_t term);
  // The oldest group: (first index, term).
  std::optional<std::pair<uint64_t, uint64_t>> oldest() const;
  // Forgets the groups whose first index is at most `last`; returns their first indexes.
  std::vector<uint64_t> take_through(uint64_t last);
  // Every group's first index, oldest first.
  std::vector<uint64_t> all() const;
  void clear();

 private:
  mutable std::mutex mu_;
  std::map<uint64_t, uint64_t> groups_;  // guarded by mu_
};

// Adds to `batch` (a group's writes, about to be written over `store`) the group's undo
// record. Errors: the store's read errors.
Status add_undo_record(const KvReader& store, uint64_t term, uint64_t first_index,
                       WriteBatch& batch);

// A batch that undoes every speculative group `ledger` names (newest first) and deletes
// their undo records; empty when there are none. Errors: the store's, kCorruption.
Result<WriteBatch> roll_back_batch(const KvReader& store, const UndoLedger& ledger);

// Writes roll_back_batch to `store` (synced with `sync`) and clears the ledger. Returns
// the number of groups undone. Errors: the store's, kCorruption.
Result<size_t> roll_back_store(MetaStore& store, UndoLedger& ledger, bool sync);

// Undoes, in a full image of the store (key -> value), every speculative group the
// image holds, and removes their undo records from it. Errors: kCorruption.
Status roll_back_image(std::map<std::string, std::string>& image);

}  // namespace dfs::mds
