// Thin wrappers over POSIX file calls for the dir store: full-length pread/pwrite loops,
// errno mapped to ErrorCode (ENOSPC and EDQUOT -> kNoSpace, ENOENT -> kNotFound, the
// rest -> kIoError) with the call and path as context. Blocking; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status/status.h"

namespace dfs::osd {

Error errno_error(int err, std::string_view what);

// Reads up to `len` bytes at `offset`; returns fewer only at end of file.
Result<size_t> pread_full(int fd, char* buf, size_t len, uint64_t offset);
Status pwrite_full(int fd, std::string_view data, uint64_t offset);
Status truncate_fd(int fd, uint64_t size);
// The file's length. Moves the file offset (pread/pwrite users only).
Result<uint64_t> fd_size(int fd);
Status fdatasync_fd(int fd);
// Makes the directory's entries durable.
Status fsync_dir(const std::string& path);
// Writes `contents` to `path` durably and atomically (temp file, fsync, rename, fsync dir).
Status write_file_atomic(const std::string& dir, const std::string& name,
                         std::string_view contents);
// Reads a whole small file. Errors: kNotFound, kIoError.
Result<std::string> read_small_file(const std::string& path);

}  // namespace dfs::osd
