// FilePool: hands out ids of empty data files whose directory entries are already
// durable, so that creating an object costs no directory fsync on the write path.
// Files are made in batches of kBatch consecutive ids, which share one directory, and
// that directory is fsynced once per batch. Unused pool files are orphans at the next
// open and get deleted. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "common/status/status.h"
#include "osd/store/file_table.h"

namespace dfs::osd {

class FilePool {
 public:
  static constexpr uint64_t kBatch = 64;

  // `next_fid`: greater than every id in use or on disk.
  FilePool(const FileTable& files, uint64_t next_fid);

  // Errors: kNoSpace, kIoError.
  Result<std::pair<uint64_t, FileRef>> take();

 private:
  Status refill();

  const FileTable& files_;
  std::mutex mu_;
  uint64_t next_fid_;                                // guarded by mu_
  std::vector<std::pair<uint64_t, FileRef>> ready_;  // guarded by mu_; taken from the back
};

}  // namespace dfs::osd
