// Journal records of the dir store: the file ops of one object of one transaction,
// committed in the transaction's RocksDB batch under store_keys::journal_key(seq) and
// applied to the data file after the commit (and again by replay after a crash).
// Encoding only; see osd/store/FORMAT.md.
#pragma once

#include <rocksdb/write_batch.h>

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "common/status/status.h"
#include "osd/store/file_op.h"

namespace dfs::osd {

struct JournalRecord {
  uint64_t fid = 0;
  uint64_t start_size = 0;  // the file's length before `ops` (see apply_file_ops)
  std::vector<FileOp> ops;  // kWrite data points into the decoded value
};

// Adds the record to `batch` (the payloads are copied once, into the batch).
// Errors: kInternal (batch size limit).
Status put_journal_record(rocksdb::WriteBatch& batch, uint64_t seq, uint64_t fid,
                          uint64_t start_size, std::span<const FileOp> ops);

// Errors: kCorruption.
Result<JournalRecord> decode_journal_record(std::string_view value);

}  // namespace dfs::osd
