// FileOp: one mutation of an object's data file (write bytes at an offset, or set the
// length), in the order a transaction applies them. The same list drives the checksum
// plan, direct writes before a commit, and journal records after it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "common/status/status.h"

namespace dfs::osd {

struct FileOp {
  enum class Kind : uint8_t { kTruncate = 1, kWrite = 2 };
  Kind kind = Kind::kWrite;
  uint64_t offset = 0;    // kWrite: where; kTruncate: the new length
  std::string_view data;  // kWrite: the bytes (borrowed from the transaction or record)
};

// Sets the file's length to `start_size` (unless it already is), then applies `ops` in
// order. Idempotent: running it again over any prefix of its own effects gives the same
// file. Errors: kNoSpace, kIoError.
Status apply_file_ops(int fd, uint64_t start_size, std::span<const FileOp> ops);

// Tells the kernel the written ranges need not stay cached (after they were synced).
// Errors: kIoError (advisory; callers may ignore it).
Status drop_cached_pages(int fd, std::span<const FileOp> ops);

// Sum of the kWrite payloads.
uint64_t write_bytes(std::span<const FileOp> ops);

}  // namespace dfs::osd
