// Recovery steps run by open_dir_store before the store accepts requests: count the
// onodes, replay the journal into the data files, and delete files no onode references
// (uncommitted writes, unused pool files, unlinks lost in a crash). Single-threaded.
#pragma once

#include <rocksdb/db.h>

#include <cstdint>
#include <string>
#include <unordered_set>

#include "common/status/status.h"

namespace dfs::osd {

struct OnodeScan {
  std::unordered_set<uint64_t> live_fids;
  uint64_t object_count = 0;
  uint64_t max_fid = 0;
};

// Errors: kCorruption (undecodable onode), kIoError.
Result<OnodeScan> scan_onodes(rocksdb::DB& db);

// Applies every journal record of a live file in sequence order, syncs the files, then
// deletes all records in one synced batch. Returns the next sequence number to use.
// Errors: kCorruption (undecodable record, or a live file is missing), kIoError.
Result<uint64_t> replay_journal(rocksdb::DB& db, const std::string& objects_dir,
                                const std::unordered_set<uint64_t>& live_fids);

// Deletes the data files not in `live_fids`; returns the largest id seen on disk.
// Names that are not file ids are left alone. Errors: kIoError.
Result<uint64_t> remove_orphans(const std::string& objects_dir,
                                const std::unordered_set<uint64_t>& live_fids);

}  // namespace dfs::osd
