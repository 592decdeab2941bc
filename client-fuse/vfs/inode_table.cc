#include "client-fuse/vfs/inode_table.h"

#include <algorithm>

namespace dfs::vfs {

uint64_t InodeTable::to_dfs(uint64_t fuse_ino) const {
  fuse_ino &= kNumberMask;
  if (fuse_ino == kFuseRootIno) return root_;
  if (fuse_ino == root_) return kFuseRootIno;  // the swapped partner of the root
  return fuse_ino;
}

uint64_t InodeTable::to_fuse(uint64_t dfs_ino) const {
  if (dfs_ino == root_) return kFuseRootIno;
  uint64_t number = dfs_ino == kFuseRootIno ? root_ : dfs_ino;
  auto it = incarnations_.find(number);
  return it == incarnations_.end() ? number : number | (uint64_t(it->second) << kIncarnationShift);
}

void InodeTable::new_incarnation(uint64_t dfs_ino) {
  if (dfs_ino == root_) return;
  uint64_t number = dfs_ino == kFuseRootIno ? root_ : dfs_ino;
  ++incarnations_[number];  // wraps after 255: by then the first is long forgotten
}

void InodeTable::add_lookup(uint64_t fuse_ino, uint64_t n) {
  if (fuse_ino == kFuseRootIno || n == 0) return;  // the root is never forgotten
  counts_[fuse_ino] += n;
  file_refs_[fuse_ino & kNumberMask] += n;
}

bool InodeTable::forget(uint64_t fuse_ino, uint64_t n) {
  if (fuse_ino == kFuseRootIno) return false;
  const uint64_t number = fuse_ino & kNumberMask;
  auto it = counts_.find(fuse_ino);
  if (it == counts_.end() || it->second < n) {
    ++bad_forgets_;
    n = it == counts_.end() ? 0 : it->second;
  }
  if (it != counts_.end()) {
    it->second -= n;
    if (it->second == 0) counts_.erase(it);
  }
  auto refs = file_refs_.find(number);
  if (refs == file_refs_.end()) return true;
  refs->second -= std::min(refs->second, n);
  if (refs->second > 0) return false;
  file_refs_.erase(refs);
  incarnations_.erase(number);
  return true;
}

std::vector<uint64_t> InodeTable::incarnations_held(uint64_t dfs_ino) const {
  std::vector<uint64_t> held;
  if (!this->held(dfs_ino)) return held;
  const uint64_t number = to_fuse(dfs_ino) & kNumberMask;
  for (uint64_t incarnation = 0; incarnation < 256; ++incarnation) {
    const uint64_t fuse_ino = number | (incarnation << kIncarnationShift);
    if (counts_.count(fuse_ino) > 0) held.push_back(fuse_ino);
  }
  return held;
}

bool InodeTable::held(uint64_t dfs_ino) const {
  if (dfs_ino == root_) return true;
  uint64_t number = dfs_ino == kFuseRootIno ? root_ : dfs_ino;
  return file_refs_.count(number) > 0;
}

uint64_t InodeTable::lookups(uint64_t fuse_ino) const {
  auto it = counts_.find(fuse_ino);
  return it == counts_.end() ? 0 : it->second;
}

std::vector<uint64_t> InodeTable::all() const {
  std::vector<uint64_t> inodes;
  inodes.reserve(counts_.size());
  for (const auto& [ino, count] : counts_) inodes.push_back(ino);
  return inodes;
}

}  // namespace dfs::vfs
