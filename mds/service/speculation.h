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
#include <optional>
#include <string>

#include "common/proto/mds.pb.h"
#include "mds/store/meta_store.h"

namespace dfs::mds {

// Adds to `batch` (a group's writes, about to be written over `store`) the group's undo
// record. Errors: the store's read errors.
Status add_undo_record(const KvReader& store, uint64_t term, uint64_t first_index,
                       WriteBatch& batch);

// The oldest undo record, if any. Errors: the store's, kCorruption.
Result<std::optional<proto::MdsUndo>> oldest_undo_record(const KvReader& store);

// A batch that undoes every speculative group (newest first) and deletes their undo
// records; `groups` is set to how many there were (the batch is empty for none).
// Errors: the store's, kCorruption.
Result<WriteBatch> roll_back_batch(const KvReader& store, size_t& groups);

// Writes roll_back_batch to `store` (synced with `sync`). Returns the number of groups
// undone. Errors: the store's, kCorruption.
Result<size_t> roll_back_store(MetaStore& store, bool sync);

// Undoes, in a full image of the store (key -> value), every speculative group the
// image holds, and removes their undo records from it. Errors: kCorruption.
Status roll_back_image(std::map<std::string, std::string>& image);

}  // namespace dfs::mds
