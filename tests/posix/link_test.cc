// link(2)/linkat(2): hard links share the inode and data; link counts; error cases.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/posix/posix_support.h"

namespace dfs::posix {

TEST_CASE_FIXTURE(Scratch, "posix/link: a hard link shares inode, data and attributes") {
  write_file(p("a"), "shared");
  REQUIRE_EQ(::link(p("a").c_str(), p("b").c_str()), 0);
  struct stat a = stat_of(p("a")), b = stat_of(p("b"));
  CHECK_EQ(a.st_ino, b.st_ino);
  CHECK_EQ(a.st_nlink, 2);
  CHECK_EQ(b.st_nlink, 2);
  CHECK_EQ(read_file(p("b")), "shared");
  {
    Fd fd = open_ok(p("b"), O_WRONLY | O_APPEND);
    pwrite_all(fd.get(), "+more", 0);
  }
  CHECK_EQ(read_file(p("a")), "shared+more");
  REQUIRE_EQ(::chmod(p("a").c_str(), 0600), 0);
  CHECK_EQ(stat_of(p("b")).st_mode & 07777, 0600);
}

TEST_CASE_FIXTURE(Scratch, "posix/link: nlink counts up and down") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  for (int i = 0; i < 20; ++i) {
    REQUIRE_EQ(::link(p("f").c_str(), p("d/l" + std::to_string(i)).c_str()), 0);
  }
  CHECK_EQ(stat_of(p("f")).st_nlink, 21);
  for (int i = 0; i < 20; i += 2) REQUIRE_EQ(::unlink(p("d/l" + std::to_string(i)).c_str()), 0);
  CHECK_EQ(stat_of(p("f")).st_nlink, 11);
  CHECK_EQ(stat_of(p("d")).st_nlink, 2);  // file links do not count for the dir
}

TEST_CASE_FIXTURE(Scratch, "posix/link: data survives unlinking the original name") {
  write_file(p("orig"), "payload");
  REQUIRE_EQ(::link(p("orig").c_str(), p("copy").c_str()), 0);
  REQUIRE_EQ(::unlink(p("orig").c_str()), 0);
  CHECK_EQ(stat_of(p("copy")).st_nlink, 1);
  CHECK_EQ(read_file(p("copy")), "payload");
  CHECK_FALSE(exists(p("orig")));
}

TEST_CASE_FIXTURE(Scratch, "posix/link: an existing new name gives EEXIST") {
  write_file(p("a"), "a");
  write_file(p("b"), "b");
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  REQUIRE_EQ(::symlink("nowhere", p("dangling").c_str()), 0);
  DFS_CHECK_ERRNO(::link(p("a").c_str(), p("b").c_str()), EEXIST);
  DFS_CHECK_ERRNO(::link(p("a").c_str(), p("d").c_str()), EEXIST);
  DFS_CHECK_ERRNO(::link(p("a").c_str(), p("dangling").c_str()), EEXIST);
  DFS_CHECK_ERRNO(::link(p("a").c_str(), p("a").c_str()), EEXIST);
  CHECK_EQ(read_file(p("b")), "b");
  CHECK_EQ(stat_of(p("a")).st_nlink, 1);
}

TEST_CASE_FIXTURE(Scratch, "posix/link: directories cannot be hard linked (EPERM)") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  DFS_CHECK_ERRNO(::link(p("d").c_str(), p("d2").c_str()), EPERM);
  CHECK_FALSE(exists(p("d2")));
  CHECK_EQ(stat_of(p("d")).st_nlink, 2);
}

TEST_CASE_FIXTURE(Scratch, "posix/link: missing source or target dir gives ENOENT") {
  write_file(p("f"), "x");
  DFS_CHECK_ERRNO(::link(p("missing").c_str(), p("x").c_str()), ENOENT);
  DFS_CHECK_ERRNO(::link(p("f").c_str(), p("nodir/x").c_str()), ENOENT);
  DFS_CHECK_ERRNO(::link(p("f").c_str(), p("f/x").c_str()), ENOTDIR);
  DFS_CHECK_ERRNO(::link(p("f/x").c_str(), p("y").c_str()), ENOTDIR);
}

TEST_CASE_FIXTURE(Scratch, "posix/link: link() does not follow symlinks; AT_SYMLINK_FOLLOW does") {
  write_file(p("target"), "x");
  REQUIRE_EQ(::symlink("target", p("sym").c_str()), 0);
  REQUIRE_EQ(::link(p("sym").c_str(), p("hard-to-link").c_str()), 0);
  CHECK(S_ISLNK(lstat_of(p("hard-to-link")).st_mode));
  CHECK_EQ(lstat_of(p("hard-to-link")).st_ino, lstat_of(p("sym")).st_ino);
  CHECK_EQ(lstat_of(p("sym")).st_nlink, 2);
  REQUIRE_EQ(::linkat(AT_FDCWD, p("sym").c_str(), AT_FDCWD, p("hard-to-target").c_str(),
                      AT_SYMLINK_FOLLOW),
             0);
  CHECK(S_ISREG(lstat_of(p("hard-to-target")).st_mode));
  CHECK_EQ(stat_of(p("target")).st_nlink, 2);
}

TEST_CASE_FIXTURE(Scratch, "posix/link: links across directories and of special files") {
  REQUIRE_EQ(::mkdir(p("a").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("b").c_str(), 0755), 0);
  write_file(p("a/f"), "across");
  REQUIRE_EQ(::mkfifo(p("a/fifo").c_str(), 0644), 0);
  REQUIRE_EQ(::link(p("a/f").c_str(), p("b/f").c_str()), 0);
  REQUIRE_EQ(::link(p("a/fifo").c_str(), p("b/fifo").c_str()), 0);
  CHECK_EQ(read_file(p("b/f")), "across");
  CHECK(S_ISFIFO(lstat_of(p("b/fifo")).st_mode));
  CHECK_EQ(lstat_of(p("a/fifo")).st_nlink, 2);
  DFS_CHECK_ERRNO(::rmdir(p("a").c_str()), ENOTEMPTY);
}

TEST_CASE_FIXTURE(Scratch, "posix/link: linking an open unlinked file gives ENOENT") {
  write_file(p("f"), "x");
  Fd fd = open_ok(p("f"), O_RDONLY);
  REQUIRE_EQ(::unlink(p("f").c_str()), 0);
  std::string proc = "/proc/self/fd/" + std::to_string(fd.get());
  DFS_CHECK_ERRNO(::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, p("back").c_str(), AT_SYMLINK_FOLLOW),
                  ENOENT);
  CHECK_FALSE(exists(p("back")));
}

TEST_CASE_FIXTURE(Scratch, "posix/link: renaming one link leaves the others") {
  write_file(p("a"), "x");
  REQUIRE_EQ(::link(p("a").c_str(), p("b").c_str()), 0);
  REQUIRE_EQ(::rename(p("a").c_str(), p("c").c_str()), 0);
  CHECK_FALSE(exists(p("a")));
  CHECK_EQ(stat_of(p("b")).st_ino, stat_of(p("c")).st_ino);
  CHECK_EQ(stat_of(p("c")).st_nlink, 2);
}

}  // namespace dfs::posix
