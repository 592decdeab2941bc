#include "osd/store/file_op.h"

#include <fcntl.h>

#include "osd/store/posix_io.h"

namespace dfs::osd {

Status apply_file_ops(int fd, uint64_t start_size, std::span<const FileOp> ops) {
  uint64_t length = DFS_TRY(fd_size(fd));
  if (length != start_size) DFS_TRY_STATUS(truncate_fd(fd, start_size));
  for (const FileOp& op : ops) {
    if (op.kind == FileOp::Kind::kTruncate) {
      DFS_TRY_STATUS(truncate_fd(fd, op.offset));
    } else {
      DFS_TRY_STATUS(pwrite_full(fd, op.data, op.offset));
    }
  }
  return ok_status();
}

uint64_t write_bytes(std::span<const FileOp> ops) {
  uint64_t total = 0;
  for (const FileOp& op : ops) {
    if (op.kind == FileOp::Kind::kWrite) total += op.data.size();
  }
  return total;
}

Status drop_cached_pages(int fd, std::span<const FileOp> ops) {
  for (const FileOp& op : ops) {
    if (op.kind != FileOp::Kind::kWrite || op.data.empty()) continue;
    int rc = ::posix_fadvise(fd, static_cast<off_t>(op.offset), static_cast<off_t>(op.data.size()),
                             POSIX_FADV_DONTNEED);
    if (rc != 0) return make_error(ErrorCode::kIoError, "posix_fadvise failed");
  }
  return ok_status();
}

}  // namespace dfs::osd
