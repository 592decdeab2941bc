#include "client-fuse/vfs/attr.h"

#include <doctest/doctest.h>
#include <sys/sysmacros.h>

namespace dfs::vfs {

TEST_CASE("client/attr: inode to struct stat") {
  proto::Inode inode;
  inode.set_ino(0x10000000123ull);
  inode.set_mode(S_IFREG | 04755);
  inode.set_uid(1000);
  inode.set_gid(100);
  inode.set_size(5ull << 30);
  inode.set_nlink(2);
  inode.set_blocks(16);
  inode.mutable_mtime()->set_sec(1700000000);
  inode.mutable_mtime()->set_nsec(123456789);
  inode.mutable_ctime()->set_sec(1700000001);
  inode.mutable_atime()->set_sec(1600000000);
  struct stat st = to_stat(inode, 42);
  CHECK(st.st_ino == 42);
  CHECK(st.st_mode == (S_IFREG | 04755));
  CHECK(st.st_uid == 1000);
  CHECK(st.st_gid == 100);
  CHECK(static_cast<uint64_t>(st.st_size) == 5ull << 30);
  CHECK(st.st_nlink == 2);
  CHECK(st.st_blocks == 16);
  CHECK(st.st_mtim.tv_sec == 1700000000);
  CHECK(st.st_mtim.tv_nsec == 123456789);
  CHECK(st.st_ctim.tv_sec == 1700000001);
  CHECK(st.st_atim.tv_sec == 1600000000);
}

TEST_CASE("client/attr: devices carry rdev, symlinks their target length") {
  proto::Inode dev;
  dev.set_mode(S_IFCHR | 0600);
  dev.set_rdev(makedev(1, 3));
  CHECK(to_stat(dev, 7).st_rdev == makedev(1, 3));
  proto::Inode link;
  link.set_mode(S_IFLNK | 0777);
  link.set_symlink("../target");
  CHECK(to_stat(link, 8).st_size == 9);
}

}  // namespace dfs::vfs
