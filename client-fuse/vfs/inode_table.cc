#include "client-fuse/vfs/inode_table.h"

namespace dfs::vfs {

uint64_t InodeTable::to_dfs(uint64_t fuse_ino) const {
  if (fuse_ino == kFuseRootIno) return root_;
  if (fuse_ino == root_) return kFuseRootIno;  // the swapped partner of the root
  return fuse_ino;
}

uint64_t InodeTable::to_fuse(uint64_t dfs_ino) const {
  if (dfs_ino == root_) return kFuseRootIno;
  if (dfs_ino == kFuseRootIno) return root_;
  return dfs_ino;
}

void InodeTable::add_lookup(uint64_t fuse_ino, uint64_t n) {
  if (fuse_ino == kFuseRootIno || n == 0) return;  // the root is never forgotten
  counts_[fuse_ino] += n;
}

bool InodeTable::forget(uint64_t fuse_ino, uint64_t n) {
  if (fuse_ino == kFuseRootIno) return false;
  auto it = counts_.find(fuse_ino);
  if (it == counts_.end() || it->second < n) {
    ++bad_forgets_;
    if (it != counts_.end()) counts_.erase(it);
    return true;
  }
  it->second -= n;
  if (it->second > 0) return false;
  counts_.erase(it);
  return true;
}

uint64_t InodeTable::lookups(uint64_t fuse_ino) const {
  auto it = counts_.find(fuse_ino);
  return it == counts_.end() ? 0 : it->second;
}

}  // namespace dfs::vfs
