#include "client-fuse/vfs/attr.h"

#include <cstring>

#include "client-fuse/vfs/inode_table.h"

namespace dfs::vfs {
namespace {

struct timespec to_timespec(const proto::Timespec& t) {
  struct timespec out {};
  out.tv_sec = t.sec();
  out.tv_nsec = t.nsec();
  return out;
}

}  // namespace

struct stat to_stat(const proto::Inode& inode, uint64_t fuse_ino) {
  struct stat st;
  std::memset(&st, 0, sizeof st);
  st.st_ino = InodeTable::shown_ino(fuse_ino);
  st.st_mode = inode.mode();
  st.st_nlink = inode.nlink();
  st.st_uid = inode.uid();
  st.st_gid = inode.gid();
  st.st_rdev = inode.rdev();
  st.st_size = static_cast<off_t>(
      S_ISLNK(inode.mode()) && inode.size() == 0 ? inode.symlink().size() : inode.size());
  st.st_blksize = kPreferredIoBytes;
  st.st_blocks = static_cast<blkcnt_t>(inode.blocks());
  st.st_atim = to_timespec(inode.atime());
  st.st_mtim = to_timespec(inode.mtime());
  st.st_ctim = to_timespec(inode.ctime());
  return st;
}

}  // namespace dfs::vfs
