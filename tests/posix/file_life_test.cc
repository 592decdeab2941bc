// Open-file lifetime (unlinked but open), mmap, fsync/fdatasync/fsyncdir/syncfs and statfs.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "tests/posix/posix_support.h"

namespace dfs::posix {

TEST_CASE_FIXTURE(Scratch, "posix/unlinked: an open file stays readable and writable") {
  std::string data = pattern(300000, 0);
  write_file(p("f"), data);
  Fd fd = open_ok(p("f"), O_RDWR);
  REQUIRE_EQ(::unlink(p("f").c_str()), 0);
  CHECK_FALSE(exists(p("f")));
  CHECK_EQ(fstat_of(fd.get()).st_nlink, 0);
  CHECK(pread_str(fd.get(), data.size(), 0) == data);
  pwrite_all(fd.get(), "more", static_cast<off_t>(data.size()));
  CHECK_EQ(fstat_of(fd.get()).st_size, static_cast<off_t>(data.size() + 4));
  CHECK_EQ(pread_str(fd.get(), 4, static_cast<off_t>(data.size())), "more");
  REQUIRE_EQ(::ftruncate(fd.get(), 10), 0);
  CHECK(pread_str(fd.get(), 100, 0) == data.substr(0, 10));
  DFS_CHECK_OK(::fsync(fd.get()));
}

// On dfs a read-only open of a small file that a directory listing brought is answered
// by the client without the MDS: the file must still read whole after an unlink, and a
// second descriptor opened for writing must see and keep the same content.
TEST_CASE_FIXTURE(Scratch, "posix/unlinked: a small file listed, opened read-only, then removed") {
  std::string small = pattern(3000, 1);
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  write_file(p("d/f"), small, 0644);
  write_file(p("d/g"), "other", 0644);
  ::sleep(3);  // past the client's linger of closed files: the listing is what it knows
  CHECK_EQ(list_dir(p("d")), std::multiset<std::string>{".", "..", "f", "g"});
  Fd fd = open_ok(p("d/f"), O_RDONLY);
  Fd rw = open_ok(p("d/g"), O_RDWR);
  REQUIRE_EQ(::unlink(p("d/f").c_str()), 0);
  CHECK(pread_str(fd.get(), small.size() + 10, 0) == small);
  CHECK_EQ(fstat_of(fd.get()).st_size, static_cast<off_t>(small.size()));
  pwrite_all(rw.get(), "O", 0);
  CHECK_EQ(read_file(p("d/g")), "Other");
}

TEST_CASE_FIXTURE(Scratch, "posix/unlinked: survives the close of one of two descriptors") {
  write_file(p("f"), "still here");
  Fd a = open_ok(p("f"), O_RDONLY);
  Fd b = open_ok(p("f"), O_RDONLY);
  REQUIRE_EQ(::unlink(p("f").c_str()), 0);
  a.reset();
  CHECK_EQ(pread_str(b.get(), 100, 0), "still here");
  // A new file of the same name is a different inode.
  write_file(p("f"), "new");
  CHECK_NE(stat_of(p("f")).st_ino, fstat_of(b.get()).st_ino);
  CHECK_EQ(pread_str(b.get(), 100, 0), "still here");
  CHECK_EQ(read_file(p("f")), "new");
}

TEST_CASE_FIXTURE(Scratch, "posix/unlinked: a file replaced by rename keeps its old content") {
  write_file(p("f"), "old content");
  write_file(p("g"), "replacement");
  Fd fd = open_ok(p("f"), O_RDONLY);
  REQUIRE_EQ(::rename(p("g").c_str(), p("f").c_str()), 0);
  CHECK_EQ(pread_str(fd.get(), 100, 0), "old content");
  CHECK_EQ(fstat_of(fd.get()).st_nlink, 0);
  CHECK_EQ(read_file(p("f")), "replacement");
}

TEST_CASE_FIXTURE(Scratch, "posix/unlinked: an open directory that was removed lists nothing") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  Fd fd = open_ok(p("d"), O_RDONLY | O_DIRECTORY);
  REQUIRE_EQ(::rmdir(p("d").c_str()), 0);
  CHECK_EQ(fstat_of(fd.get()).st_nlink, 0);
  // Linux refuses to create entries in, or read, a dead directory.
  DFS_CHECK_ERRNO(::openat(fd.get(), "x", O_CREAT | O_WRONLY, 0644), ENOENT);
  DFS_CHECK_ERRNO(::mkdirat(fd.get(), "sub", 0755), ENOENT);
  char buf[4096];
  DFS_CHECK_ERRNO(::syscall(SYS_getdents64, fd.get(), buf, sizeof(buf)), ENOENT);
}

TEST_CASE_FIXTURE(Scratch, "posix/mmap: MAP_SHARED read sees the file contents") {
  std::string data = pattern(3 * 4096 + 100, 0);
  write_file(p("f"), data);
  Fd fd = open_ok(p("f"), O_RDONLY);
  void* m = ::mmap(nullptr, data.size(), PROT_READ, MAP_SHARED, fd.get(), 0);
  REQUIRE_MESSAGE(m != MAP_FAILED, errno_name(errno));
  CHECK(std::memcmp(m, data.data(), data.size()) == 0);
  // The tail of the last page past EOF reads as zeros.
  const char* tail = static_cast<const char*>(m) + data.size();
  CHECK(std::all_of(tail, tail + (4096 - 100), [](char c) { return c == 0; }));
  REQUIRE_EQ(::munmap(m, data.size()), 0);
}

TEST_CASE_FIXTURE(Scratch, "posix/mmap: MAP_SHARED write plus msync is visible to read") {
  std::string data = pattern(8192, 0);
  write_file(p("f"), data);
  Fd fd = open_ok(p("f"), O_RDWR);
  auto* m =
      static_cast<char*>(::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0));
  REQUIRE_MESSAGE(m != MAP_FAILED, errno_name(errno));
  std::memcpy(m + 4090, "MAPPED", 6);
  REQUIRE_EQ(::msync(m, 8192, MS_SYNC), 0);
  data.replace(4090, 6, "MAPPED");
  Fd other = open_ok(p("f"), O_RDONLY);
  CHECK(pread_str(other.get(), 8192, 0) == data);
  REQUIRE_EQ(::munmap(m, 8192), 0);
  fd.reset();
  other.reset();
  CHECK(read_file(p("f")) == data);
  CHECK_EQ(stat_of(p("f")).st_size, 8192);
}

TEST_CASE_FIXTURE(Scratch, "posix/mmap: a write through the fd is visible in a shared map") {
  write_file(p("f"), std::string(4096, 'a'));
  Fd fd = open_ok(p("f"), O_RDWR);
  auto* m = static_cast<char*>(::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd.get(), 0));
  REQUIRE(m != MAP_FAILED);
  pwrite_all(fd.get(), "zz", 100);
  CHECK_EQ(std::string(m + 99, 4), "azza");
  REQUIRE_EQ(::munmap(m, 4096), 0);
}

TEST_CASE_FIXTURE(Scratch, "posix/mmap: MAP_PRIVATE writes do not reach the file") {
  write_file(p("f"), std::string(4096, 'a'));
  Fd fd = open_ok(p("f"), O_RDWR);
  auto* m =
      static_cast<char*>(::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd.get(), 0));
  REQUIRE(m != MAP_FAILED);
  m[0] = 'Q';
  REQUIRE_EQ(::munmap(m, 4096), 0);
  CHECK_EQ(read_file(p("f")), std::string(4096, 'a'));
}

TEST_CASE_FIXTURE(Scratch, "posix/mmap: access mode and length errors") {
  write_file(p("f"), std::string(4096, 'a'));
  Fd ro = open_ok(p("f"), O_RDONLY);
  Fd wo = open_ok(p("f"), O_WRONLY);
  auto map_err = [](int fd, int prot, int flags, size_t len) {
    void* m = ::mmap(nullptr, len, prot, flags, fd, 0);
    if (m == MAP_FAILED) return errno;
    ::munmap(m, len);
    return 0;
  };
  CHECK_EQ(errno_name(map_err(ro.get(), PROT_READ | PROT_WRITE, MAP_SHARED, 4096)), "EACCES");
  CHECK_EQ(errno_name(map_err(wo.get(), PROT_READ, MAP_SHARED, 4096)), "EACCES");
  CHECK_EQ(errno_name(map_err(ro.get(), PROT_READ, MAP_SHARED, 0)), "EINVAL");
  CHECK_EQ(errno_name(map_err(ro.get(), PROT_READ | PROT_WRITE, MAP_PRIVATE, 4096)), "OK");
}

TEST_CASE_FIXTURE(Scratch, "posix/sync: fsync, fdatasync and syncfs succeed on files") {
  Fd fd = open_ok(p("f"), O_RDWR | O_CREAT);
  pwrite_all(fd.get(), pattern(1 << 20, 0), 0);
  DFS_CHECK_OK(::fsync(fd.get()));
  pwrite_all(fd.get(), "x", 5);
  DFS_CHECK_OK(::fdatasync(fd.get()));
  DFS_CHECK_OK(::syncfs(fd.get()));
  DFS_CHECK_OK(::sync_file_range(fd.get(), 0, 0, SYNC_FILE_RANGE_WRITE));
  Fd ro = open_ok(p("f"), O_RDONLY);
  DFS_CHECK_OK(::fsync(ro.get()));
  DFS_CHECK_OK(::fdatasync(ro.get()));
}

TEST_CASE_FIXTURE(Scratch, "posix/sync: fsync on a directory descriptor succeeds") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  write_file(p("d/f"), "x");
  Fd dfd = open_ok(p("d"), O_RDONLY | O_DIRECTORY);
  DFS_CHECK_OK(::fsync(dfd.get()));
  DFS_CHECK_OK(::fdatasync(dfd.get()));
  Fd root = open_ok(dir(), O_RDONLY | O_DIRECTORY);
  DFS_CHECK_OK(::fsync(root.get()));
}

TEST_CASE_FIXTURE(Scratch, "posix/statfs: sizes are sane and consistent with statvfs") {
  struct statfs sfs {};
  REQUIRE_EQ(::statfs(dir().c_str(), &sfs), 0);
  CHECK_GT(sfs.f_bsize, 0);
  CHECK_GT(sfs.f_blocks, 0u);
  CHECK_GE(sfs.f_blocks, sfs.f_bfree);
  CHECK_GE(sfs.f_bfree, sfs.f_bavail);
  CHECK_GE(sfs.f_files, sfs.f_ffree);
  CHECK_GE(sfs.f_namelen, 255);
  struct statvfs vfs {};
  REQUIRE_EQ(::statvfs(dir().c_str(), &vfs), 0);
  CHECK_EQ(vfs.f_blocks, sfs.f_blocks);
  CHECK_GT(vfs.f_frsize, 0u);
  CHECK_EQ(vfs.f_namemax, static_cast<unsigned long>(sfs.f_namelen));
}

TEST_CASE_FIXTURE(Scratch, "posix/statfs: same file system for files, dirs and fds") {
  write_file(p("f"), "x");
  struct statfs a {
  }, b{}, c{};
  REQUIRE_EQ(::statfs(dir().c_str(), &a), 0);
  REQUIRE_EQ(::statfs(p("f").c_str(), &b), 0);
  Fd fd = open_ok(p("f"), O_RDONLY);
  REQUIRE_EQ(::fstatfs(fd.get(), &c), 0);
  CHECK_EQ(a.f_type, b.f_type);
  CHECK_EQ(a.f_type, c.f_type);
  CHECK_EQ(a.f_blocks, c.f_blocks);
  CHECK_EQ(a.f_bsize, b.f_bsize);
  DFS_CHECK_ERRNO(::statfs(p("missing").c_str(), &a), ENOENT);
}

}  // namespace dfs::posix
