// Plans what one transaction does to one object of the dir store: the onode it commits,
// the file ops that produce the new content, and where those ops run (before the commit
// on bytes nobody can see yet, or after it through the journal). Pure apart from the
// block reader; see osd/store/FORMAT.md for why each mode is crash-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/status/status.h"
#include "osd/store/checksum_plan.h"
#include "osd/store/file_op.h"
#include "osd/store/object_store.h"
#include "osd/store/onode.h"

namespace dfs::osd {

enum class WriteMode : uint8_t {
  kNone,     // no file I/O (version change, or the object ends up absent)
  kFresh,    // ops run on a new empty file before the commit; the onode switches to it
  kDirect,   // ops run on the object's file before the commit, all past its committed size
  kJournal,  // ops go into a journal record in the commit and run on the file after it
};

struct ObjectPlan {
  std::optional<Onode> after;  // nullopt: the object does not exist after the txn
  WriteMode mode = WriteMode::kNone;
  bool new_file = false;       // after->fid must be taken from the file pool
  bool drop_old_file = false;  // the committed onode's file is unreferenced after commit
  uint64_t start_size = 0;     // the file's length before `ops` (apply_file_ops)
  std::vector<FileOp> ops;     // kWrite data borrows from the transaction
};

struct PlanInput {
  const std::optional<Onode>& before;           // committed onode, if any
  std::span<const Transaction::Op* const> ops;  // this object's ops, in order
  uint32_t block_bytes = 4096;
  uint32_t deferred_max_bytes = 0;
  BlockReader read_base_block;  // reads the committed file
};

// Errors: kInvalidArgument (see ObjectStore::apply), kCorruption (a committed block
// needed for a partial write fails its checksum), kIoError.
Result<ObjectPlan> plan_object(const PlanInput& input);

}  // namespace dfs::osd
