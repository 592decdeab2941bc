#include "osd/store/file_pool.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>

#include "osd/store/posix_io.h"

namespace dfs::osd {

FilePool::FilePool(const FileTable& files, uint64_t next_fid)
    : files_(files), next_fid_((next_fid + kBatch - 1) / kBatch * kBatch) {}

Result<std::pair<uint64_t, FileRef>> FilePool::take() {
  std::lock_guard lock(mu_);
  if (ready_.empty()) DFS_TRY_STATUS(refill());
  auto out = std::move(ready_.back());
  ready_.pop_back();
  return out;
}

Status FilePool::refill() {
  // kBatch divides 256, so the whole batch lands in one objects/<xx> directory.
  uint64_t first = next_fid_;
  std::vector<std::pair<uint64_t, FileRef>> made;
  for (uint64_t fid = first; fid < first + kBatch; ++fid) {
    std::string path = files_.path_of(fid);
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return errno_error(errno, "create " + path);
    made.emplace_back(fid, std::make_shared<OpenFile>(fd));
  }
  DFS_TRY_STATUS(fsync_dir(files_.objects_dir() + "/" + fid_dir_name(first)));
  next_fid_ = first + kBatch;
  std::reverse(made.begin(), made.end());  // hand out in increasing order
  ready_ = std::move(made);
  return ok_status();
}

}  // namespace dfs::osd
