// mkdir/rmdir/unlink: creation, link counts, and the error cases.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "tests/posix/posix_support.h"

namespace dfs::posix {

TEST_CASE_FIXTURE(Scratch, "posix/mkdir: creates an empty directory") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  CHECK(S_ISDIR(stat_of(p("d")).st_mode));
  CHECK_EQ(list_dir(p("d")), std::multiset<std::string>{".", ".."});
  CHECK_EQ(stat_of(p("d")).st_nlink, 2);
}

TEST_CASE_FIXTURE(Scratch, "posix/mkdir: an existing name gives EEXIST") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  write_file(p("f"), "x");
  REQUIRE_EQ(::symlink("nowhere", p("dangling").c_str()), 0);
  DFS_CHECK_ERRNO(::mkdir(p("d").c_str(), 0755), EEXIST);
  DFS_CHECK_ERRNO(::mkdir(p("f").c_str(), 0755), EEXIST);
  DFS_CHECK_ERRNO(::mkdir(p("dangling").c_str(), 0755), EEXIST);
  DFS_CHECK_ERRNO(::mkdir(dir().c_str(), 0755), EEXIST);
  CHECK_FALSE(exists(p("nowhere")));
}

// A directory's mode change makes the kernel look its name up again: a just-made
// directory must be found (on dfs its mkdir may still be on its way to the MDS).
TEST_CASE_FIXTURE(Scratch, "posix/mkdir: a new directory whose mode changed is found again") {
  for (int i = 0; i < 20; ++i) {
    std::string d = p("d" + std::to_string(i));
    REQUIRE_EQ(::mkdir(d.c_str(), 0700), 0);
    REQUIRE_EQ(::chmod(d.c_str(), 0755), 0);
    CHECK_EQ(lstat_of(d).st_mode & 07777, 0755);
    REQUIRE_EQ(::mkdir((d + "/e").c_str(), 0700), 0);
    REQUIRE_EQ(::symlink("e", (d + "/l").c_str()), 0);
    write_file(d + "/e/f", "x");
  }
  CHECK_EQ(list_dir(p("d7")), std::multiset<std::string>{".", "..", "e", "l"});
}

TEST_CASE_FIXTURE(Scratch, "posix/mkdir: a missing or non-directory parent fails") {
  write_file(p("f"), "x");
  DFS_CHECK_ERRNO(::mkdir(p("missing/d").c_str(), 0755), ENOENT);
  DFS_CHECK_ERRNO(::mkdir(p("f/d").c_str(), 0755), ENOTDIR);
}

TEST_CASE_FIXTURE(Scratch, "posix/mkdir: a trailing slash is accepted") {
  REQUIRE_EQ(::mkdir(p("d/").c_str(), 0755), 0);
  CHECK(S_ISDIR(stat_of(p("d")).st_mode));
  REQUIRE_EQ(::rmdir(p("d/").c_str()), 0);
  CHECK_FALSE(exists(p("d")));
}

TEST_CASE_FIXTURE(Scratch, "posix/mkdir: parent nlink is 2 plus the number of subdirs") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  for (int i = 0; i < 5; ++i) REQUIRE_EQ(::mkdir(p("d/s" + std::to_string(i)).c_str(), 0755), 0);
  for (int i = 0; i < 3; ++i) write_file(p("d/f" + std::to_string(i)), "x");
  REQUIRE_EQ(::symlink("s0", p("d/l").c_str()), 0);
  CHECK_EQ(stat_of(p("d")).st_nlink, 7);  // files and symlinks do not count
  REQUIRE_EQ(::rmdir(p("d/s4").c_str()), 0);
  CHECK_EQ(stat_of(p("d")).st_nlink, 6);
  REQUIRE_EQ(::unlink(p("d/f0").c_str()), 0);
  CHECK_EQ(stat_of(p("d")).st_nlink, 6);
}

TEST_CASE_FIXTURE(Scratch, "posix/mkdir: deep trees resolve") {
  std::string path = dir();
  for (int i = 0; i < 64; ++i) {
    path += "/level" + std::to_string(i);
    REQUIRE_EQ(::mkdir(path.c_str(), 0755), 0);
  }
  write_file(path + "/leaf", "deep");
  CHECK_EQ(read_file(path + "/leaf"), "deep");
  CHECK_EQ(stat_of(p("level0")).st_nlink, 3);
}

TEST_CASE_FIXTURE(Scratch, "posix/rmdir: removes an empty directory") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  REQUIRE_EQ(::rmdir(p("d").c_str()), 0);
  CHECK_FALSE(exists(p("d")));
  CHECK_EQ(list_dir(dir()), std::multiset<std::string>{".", ".."});
  CHECK_EQ(stat_of(dir()).st_nlink, 2);
}

TEST_CASE_FIXTURE(Scratch, "posix/rmdir: a non-empty directory gives ENOTEMPTY") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  write_file(p("d/f"), "x");
  DFS_CHECK_ERRNO(::rmdir(p("d").c_str()), ENOTEMPTY);
  REQUIRE_EQ(::unlink(p("d/f").c_str()), 0);
  REQUIRE_EQ(::mkdir(p("d/sub").c_str(), 0755), 0);
  DFS_CHECK_ERRNO(::rmdir(p("d").c_str()), ENOTEMPTY);
  REQUIRE_EQ(::rmdir(p("d/sub").c_str()), 0);
  REQUIRE_EQ(::symlink("x", p("d/l").c_str()), 0);
  DFS_CHECK_ERRNO(::rmdir(p("d").c_str()), ENOTEMPTY);
  CHECK(exists(p("d/l")));
}

TEST_CASE_FIXTURE(Scratch, "posix/rmdir: files, symlinks and missing paths are refused") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  REQUIRE_EQ(::symlink("d", p("dl").c_str()), 0);
  DFS_CHECK_ERRNO(::rmdir(p("f").c_str()), ENOTDIR);
  DFS_CHECK_ERRNO(::rmdir(p("dl").c_str()), ENOTDIR);
  DFS_CHECK_ERRNO(::rmdir(p("missing").c_str()), ENOENT);
  DFS_CHECK_ERRNO(::rmdir(p("f/x").c_str()), ENOTDIR);
  CHECK(exists(p("d")));
}

TEST_CASE_FIXTURE(Scratch, "posix/rmdir: '.' gives EINVAL and '..' gives ENOTEMPTY") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  DFS_CHECK_ERRNO(::rmdir(p("d/.").c_str()), EINVAL);
  DFS_CHECK_ERRNO(::rmdir(p("d/..").c_str()), ENOTEMPTY);
  CHECK(exists(p("d")));
}

TEST_CASE_FIXTURE(Scratch, "posix/unlink: removes a file name") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::unlink(p("f").c_str()), 0);
  CHECK_FALSE(exists(p("f")));
  CHECK_EQ(list_dir(dir()).size(), 2u);
  DFS_CHECK_ERRNO(::unlink(p("f").c_str()), ENOENT);
}

TEST_CASE_FIXTURE(Scratch, "posix/unlink: a directory gives EISDIR") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  DFS_CHECK_ERRNO(::unlink(p("d").c_str()), EISDIR);
  DFS_CHECK_ERRNO(::unlinkat(AT_FDCWD, p("d").c_str(), 0), EISDIR);
  CHECK(exists(p("d")));
  DFS_CHECK_OK(::unlinkat(AT_FDCWD, p("d").c_str(), AT_REMOVEDIR));
  CHECK_FALSE(exists(p("d")));
}

TEST_CASE_FIXTURE(Scratch, "posix/unlink: error paths") {
  write_file(p("f"), "x");
  DFS_CHECK_ERRNO(::unlink(p("missing").c_str()), ENOENT);
  DFS_CHECK_ERRNO(::unlink(p("missing/x").c_str()), ENOENT);
  DFS_CHECK_ERRNO(::unlink(p("f/x").c_str()), ENOTDIR);
  DFS_CHECK_ERRNO(::unlink(p("f/").c_str()), ENOTDIR);
  DFS_CHECK_ERRNO(::unlinkat(AT_FDCWD, p("f").c_str(), AT_REMOVEDIR), ENOTDIR);
  CHECK(exists(p("f")));
}

TEST_CASE_FIXTURE(Scratch, "posix/unlink: a symlink is removed, not its target") {
  write_file(p("target"), "x");
  REQUIRE_EQ(::symlink("target", p("link").c_str()), 0);
  REQUIRE_EQ(::symlink("missing", p("dangling").c_str()), 0);
  REQUIRE_EQ(::unlink(p("link").c_str()), 0);
  REQUIRE_EQ(::unlink(p("dangling").c_str()), 0);
  CHECK_FALSE(exists(p("link")));
  CHECK_FALSE(exists(p("dangling")));
  CHECK_EQ(read_file(p("target")), "x");
}

TEST_CASE_FIXTURE(Scratch, "posix/unlink: names can be reused after removal") {
  for (int round = 0; round < 3; ++round) {
    write_file(p("f"), "file" + std::to_string(round));
    CHECK_EQ(read_file(p("f")), "file" + std::to_string(round));
    REQUIRE_EQ(::unlink(p("f").c_str()), 0);
    REQUIRE_EQ(::mkdir(p("f").c_str(), 0755), 0);
    CHECK(S_ISDIR(stat_of(p("f")).st_mode));
    REQUIRE_EQ(::rmdir(p("f").c_str()), 0);
    REQUIRE_EQ(::symlink("somewhere", p("f").c_str()), 0);
    CHECK(S_ISLNK(lstat_of(p("f")).st_mode));
    REQUIRE_EQ(::unlink(p("f").c_str()), 0);
  }
  CHECK_EQ(list_dir(dir()).size(), 2u);
}

TEST_CASE_FIXTURE(Scratch, "posix/dir: '..' of the scratch dir and of subdirs is right") {
  REQUIRE_EQ(::mkdir(p("a").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("a/b").c_str(), 0755), 0);
  CHECK_EQ(stat_of(p("a/b/..")).st_ino, stat_of(p("a")).st_ino);
  CHECK_EQ(stat_of(p("a/b/../..")).st_ino, stat_of(dir()).st_ino);
  write_file(p("a/b/../f"), "x");
  CHECK(exists(p("a/f")));
}

TEST_CASE_FIXTURE(Scratch, "posix/dir: chdir and relative *at calls use the right directory") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  Fd dfd = open_ok(p("d"), O_RDONLY | O_DIRECTORY);
  Fd f(::openat(dfd.get(), "rel", O_CREAT | O_WRONLY, 0644));
  REQUIRE(f);
  REQUIRE_EQ(::mkdirat(dfd.get(), "sub", 0755), 0);
  CHECK(exists(p("d/rel")));
  CHECK(exists(p("d/sub")));
  char cwd[4096];
  REQUIRE(::getcwd(cwd, sizeof(cwd)) != nullptr);
  REQUIRE_EQ(::chdir(p("d/sub").c_str()), 0);
  write_file("../via-cwd", "x");
  char here[4096];
  bool got = ::getcwd(here, sizeof(here)) != nullptr;
  REQUIRE_EQ(::chdir(cwd), 0);
  CHECK(got);
  char* real = ::realpath(p("d/sub").c_str(), nullptr);  // the run root may sit under a symlink
  REQUIRE(real != nullptr);
  CHECK_EQ(std::string(here), std::string(real));
  ::free(real);
  CHECK(exists(p("d/via-cwd")));
}

}  // namespace dfs::posix
