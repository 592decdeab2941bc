// stat/lstat/fstat/fstatat/statx: type, mode, nlink, ownership, size, blocks, rdev, inodes.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tests/posix/posix_support.h"

namespace dfs::posix {

TEST_CASE_FIXTURE(Scratch, "posix/stat: regular file fields") {
  write_file(p("f"), "12345", 0640);
  REQUIRE_EQ(::chmod(p("f").c_str(), 0640), 0);
  struct stat st = stat_of(p("f"));
  CHECK(S_ISREG(st.st_mode));
  CHECK_EQ(st.st_mode & 07777, 0640);
  CHECK_EQ(st.st_nlink, 1);
  CHECK_EQ(st.st_uid, ::geteuid());
  CHECK_EQ(st.st_gid, ::getegid());
  CHECK_EQ(st.st_size, 5);
  CHECK_EQ(st.st_rdev, 0u);
  CHECK_GT(st.st_blksize, 0);
  CHECK_NE(st.st_ino, 0u);
}

TEST_CASE_FIXTURE(Scratch, "posix/stat: directory fields") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0750), 0);
  struct stat st = stat_of(p("d"));
  CHECK(S_ISDIR(st.st_mode));
  CHECK_EQ(st.st_mode & 07777, 0750);
  CHECK_EQ(st.st_nlink, 2);
  CHECK_EQ(st.st_uid, ::geteuid());
  CHECK_EQ(st.st_rdev, 0u);
  CHECK(S_ISDIR(stat_of(p("d/")).st_mode));
  CHECK_EQ(stat_of(p("d/.")).st_ino, st.st_ino);
  CHECK_EQ(stat_of(p("d/..")).st_ino, stat_of(dir()).st_ino);
}

TEST_CASE_FIXTURE(Scratch, "posix/stat: symlink fields via lstat; stat follows") {
  write_file(p("target"), "0123456789");
  REQUIRE_EQ(::symlink("target", p("link").c_str()), 0);
  struct stat l = lstat_of(p("link"));
  CHECK(S_ISLNK(l.st_mode));
  CHECK_EQ(l.st_mode & 07777, 0777);
  CHECK_EQ(l.st_size, 6);  // strlen("target")
  CHECK_EQ(l.st_nlink, 1);
  struct stat s = stat_of(p("link"));
  CHECK(S_ISREG(s.st_mode));
  CHECK_EQ(s.st_size, 10);
  CHECK_EQ(s.st_ino, stat_of(p("target")).st_ino);
  CHECK_NE(l.st_ino, s.st_ino);
}

TEST_CASE_FIXTURE(Scratch, "posix/stat: fstat, fstatat and AT_EMPTY_PATH agree with stat") {
  write_file(p("f"), "abc");
  REQUIRE_EQ(::symlink("f", p("l").c_str()), 0);
  struct stat a = stat_of(p("f"));
  Fd fd = open_ok(p("f"), O_RDONLY);
  struct stat b = fstat_of(fd.get());
  Fd dfd = open_ok(dir(), O_RDONLY | O_DIRECTORY);
  struct stat c {
  }, d{}, e{};
  REQUIRE_EQ(::fstatat(dfd.get(), "f", &c, 0), 0);
  REQUIRE_EQ(::fstatat(fd.get(), "", &d, AT_EMPTY_PATH), 0);
  REQUIRE_EQ(::fstatat(dfd.get(), "l", &e, AT_SYMLINK_NOFOLLOW), 0);
  for (const struct stat* s : {&b, &c, &d}) {
    CHECK_EQ(s->st_ino, a.st_ino);
    CHECK_EQ(s->st_dev, a.st_dev);
    CHECK_EQ(s->st_mode, a.st_mode);
    CHECK_EQ(s->st_size, a.st_size);
  }
  CHECK(S_ISLNK(e.st_mode));
  DFS_CHECK_ERRNO(::fstatat(dfd.get(), "", &e, 0), ENOENT);
}

TEST_CASE_FIXTURE(Scratch, "posix/stat: missing paths and bad components") {
  write_file(p("f"), "x");
  struct stat st {};
  DFS_CHECK_ERRNO(::stat(p("missing").c_str(), &st), ENOENT);
  DFS_CHECK_ERRNO(::lstat(p("missing/x").c_str(), &st), ENOENT);
  DFS_CHECK_ERRNO(::stat(p("f/x").c_str(), &st), ENOTDIR);
  DFS_CHECK_ERRNO(::stat(p("f/").c_str(), &st), ENOTDIR);
  DFS_CHECK_ERRNO(::stat("", &st), ENOENT);
}

TEST_CASE_FIXTURE(Scratch, "posix/stat: inode numbers are distinct and stable") {
  write_file(p("a"), "a");
  write_file(p("b"), "b");
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  ino_t a = stat_of(p("a")).st_ino, b = stat_of(p("b")).st_ino, d = stat_of(p("d")).st_ino;
  CHECK_NE(a, b);
  CHECK_NE(a, d);
  CHECK_NE(b, d);
  CHECK_EQ(stat_of(p("a")).st_ino, a);
  REQUIRE_EQ(::rename(p("a").c_str(), p("d/moved").c_str()), 0);
  CHECK_EQ(stat_of(p("d/moved")).st_ino, a);
  CHECK_EQ(stat_of(p("d/moved")).st_dev, stat_of(p("b")).st_dev);
}

TEST_CASE_FIXTURE(Scratch, "posix/stat: st_blocks tracks allocated data") {
  write_file(p("empty"), "");
  CHECK_EQ(stat_of(p("empty")).st_blocks, 0);
  constexpr off_t kSize = 1 << 20;
  {
    Fd fd = open_ok(p("dense"), O_WRONLY | O_CREAT);
    pwrite_all(fd.get(), pattern(kSize, 0), 0);
    REQUIRE_EQ(::fsync(fd.get()), 0);
  }
  struct stat dense = stat_of(p("dense"));
  CHECK_GE(dense.st_blocks * 512, kSize);
  CHECK_LE(dense.st_blocks * 512, 2 * kSize);
  {
    Fd fd = open_ok(p("sparse"), O_WRONLY | O_CREAT);
    REQUIRE_EQ(::ftruncate(fd.get(), 64 * kSize), 0);
    pwrite_all(fd.get(), "x", 32 * kSize);
    REQUIRE_EQ(::fsync(fd.get()), 0);
  }
  struct stat sparse = stat_of(p("sparse"));
  CHECK_EQ(sparse.st_size, 64 * kSize);
  CHECK_LT(sparse.st_blocks * 512, 8 * kSize);
}

TEST_CASE_FIXTURE(Scratch, "posix/stat: statx reports the basic fields") {
  write_file(p("f"), "hello");
  struct statx stx {};
  REQUIRE_EQ(::statx(AT_FDCWD, p("f").c_str(), 0, STATX_BASIC_STATS, &stx), 0);
  CHECK_EQ(stx.stx_mask & STATX_BASIC_STATS, STATX_BASIC_STATS);
  struct stat st = stat_of(p("f"));
  CHECK_EQ(stx.stx_ino, st.st_ino);
  CHECK_EQ(stx.stx_size, 5u);
  CHECK_EQ(stx.stx_nlink, 1u);
  CHECK_EQ(stx.stx_mode, st.st_mode);
  CHECK_EQ(stx.stx_mtime.tv_sec, st.st_mtim.tv_sec);
  CHECK_EQ(stx.stx_mtime.tv_nsec, static_cast<uint32_t>(st.st_mtim.tv_nsec));
}

TEST_CASE_FIXTURE(Scratch, "posix/stat: new objects are owned by the caller's uid and gid") {
  REQUIRE_EQ(::mkdir(p("pub").c_str(), 0777), 0);
  REQUIRE_EQ(::chmod(p("pub").c_str(), 0777), 0);
  CHECK_EQ(user_err(kUser1,
                    [&] {
                      int fd = ::open(p("pub/f").c_str(), O_CREAT | O_WRONLY, 0644);
                      if (fd < 0) return errno;
                      ::close(fd);
                      if (::mkdir(p("pub/d").c_str(), 0755) != 0) return errno;
                      return err_of(::symlink("f", p("pub/l").c_str()));
                    }),
           "OK");
  for (const char* name : {"pub/f", "pub/d", "pub/l"}) {
    struct stat st = lstat_of(p(name));
    CHECK_EQ(st.st_uid, kUser1.uid);
    CHECK_EQ(st.st_gid, kUser1.gid);
  }
}

}  // namespace dfs::posix
