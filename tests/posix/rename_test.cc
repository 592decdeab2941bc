// rename(2) and renameat2(2) (RENAME_NOREPLACE, RENAME_EXCHANGE): replacement rules, type
// mismatches, directory moves ('..' and link counts), loops, and never EXDEV in one mount.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/posix/posix_support.h"

namespace dfs::posix {
namespace {

nlink_t nlink_of(const std::string& path) { return lstat_of(path).st_nlink; }
ino_t ino_of(const std::string& path) { return lstat_of(path).st_ino; }

}  // namespace

TEST_CASE_FIXTURE(Scratch, "posix/rename: moves a file to a new name") {
  write_file(p("a"), "content");
  ino_t ino = ino_of(p("a"));
  DFS_REQUIRE_OK(rename2(p("a"), p("b"), 0));
  CHECK_FALSE(exists(p("a")));
  CHECK_EQ(ino_of(p("b")), ino);
  CHECK_EQ(read_file(p("b")), "content");
  CHECK_EQ(list_dir(dir()), std::multiset<std::string>{".", "..", "b"});
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: a file replaces a file atomically") {
  write_file(p("a"), "new");
  write_file(p("b"), "old");
  REQUIRE_EQ(::link(p("b").c_str(), p("b-other-name").c_str()), 0);
  ino_t a = ino_of(p("a"));
  DFS_REQUIRE_OK(rename2(p("a"), p("b"), 0));
  CHECK_FALSE(exists(p("a")));
  CHECK_EQ(ino_of(p("b")), a);
  CHECK_EQ(read_file(p("b")), "new");
  CHECK_EQ(nlink_of(p("b-other-name")), 1);  // the replaced inode lost one link
  CHECK_EQ(read_file(p("b-other-name")), "old");
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: a dir replaces an empty dir") {
  REQUIRE_EQ(::mkdir(p("src").c_str(), 0755), 0);
  write_file(p("src/f"), "x");
  REQUIRE_EQ(::mkdir(p("dst").c_str(), 0755), 0);
  ino_t src = ino_of(p("src"));
  DFS_REQUIRE_OK(rename2(p("src"), p("dst"), 0));
  CHECK_FALSE(exists(p("src")));
  CHECK_EQ(ino_of(p("dst")), src);
  CHECK_EQ(read_file(p("dst/f")), "x");
  CHECK_EQ(nlink_of(dir()), 3);
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: a dir over a non-empty dir gives ENOTEMPTY") {
  REQUIRE_EQ(::mkdir(p("src").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("dst").c_str(), 0755), 0);
  write_file(p("dst/keep"), "x");
  DFS_CHECK_ERRNO(rename2(p("src"), p("dst"), 0), ENOTEMPTY);
  CHECK(exists(p("src")));
  CHECK(exists(p("dst/keep")));
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: a file over a dir gives EISDIR") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  DFS_CHECK_ERRNO(rename2(p("f"), p("d"), 0), EISDIR);
  CHECK(S_ISREG(lstat_of(p("f")).st_mode));
  CHECK(S_ISDIR(lstat_of(p("d")).st_mode));
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: a dir over a file gives ENOTDIR") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  DFS_CHECK_ERRNO(rename2(p("d"), p("f"), 0), ENOTDIR);
  REQUIRE_EQ(::symlink("d", p("l").c_str()), 0);
  DFS_CHECK_ERRNO(rename2(p("d"), p("l"), 0), ENOTDIR);
  CHECK(S_ISDIR(lstat_of(p("d")).st_mode));
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: to the same name is a no-op") {
  write_file(p("f"), "same");
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  ino_t ino = ino_of(p("f"));
  DFS_CHECK_OK(rename2(p("f"), p("f"), 0));
  DFS_CHECK_OK(rename2(p("d"), p("d"), 0));
  CHECK_EQ(ino_of(p("f")), ino);
  CHECK_EQ(read_file(p("f")), "same");
  CHECK(exists(p("d")));
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: between two links of one inode keeps both") {
  write_file(p("a"), "x");
  REQUIRE_EQ(::link(p("a").c_str(), p("b").c_str()), 0);
  DFS_CHECK_OK(rename2(p("a"), p("b"), 0));
  CHECK(exists(p("a")));  // POSIX: nothing happens
  CHECK(exists(p("b")));
  CHECK_EQ(nlink_of(p("a")), 2);
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: a file moves across directories") {
  REQUIRE_EQ(::mkdir(p("a").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("b").c_str(), 0755), 0);
  write_file(p("a/f"), "moving");
  DFS_REQUIRE_OK(rename2(p("a/f"), p("b/g"), 0));
  CHECK_EQ(read_file(p("b/g")), "moving");
  CHECK_EQ(list_dir(p("a")).size(), 2u);
  CHECK_EQ(nlink_of(p("a")), 2);
  CHECK_EQ(nlink_of(p("b")), 2);
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: a dir moved across dirs updates '..' and nlink") {
  REQUIRE_EQ(::mkdir(p("a").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("b").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("a/d").c_str(), 0755), 0);
  write_file(p("a/d/f"), "x");
  CHECK_EQ(nlink_of(p("a")), 3);
  CHECK_EQ(nlink_of(p("b")), 2);
  DFS_REQUIRE_OK(rename2(p("a/d"), p("b/d"), 0));
  CHECK_EQ(nlink_of(p("a")), 2);
  CHECK_EQ(nlink_of(p("b")), 3);
  CHECK_EQ(stat_of(p("b/d/..")).st_ino, ino_of(p("b")));
  CHECK_EQ(nlink_of(p("b/d")), 2);
  CHECK_EQ(read_file(p("b/d/f")), "x");
  write_file(p("b/d/../via-dotdot"), "y");
  CHECK(exists(p("b/via-dotdot")));
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: a dir replacing an empty dir elsewhere fixes nlink") {
  REQUIRE_EQ(::mkdir(p("a").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("b").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("a/d").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("b/e").c_str(), 0755), 0);
  DFS_REQUIRE_OK(rename2(p("a/d"), p("b/e"), 0));
  CHECK_EQ(nlink_of(p("a")), 2);
  CHECK_EQ(nlink_of(p("b")), 3);
  CHECK_EQ(stat_of(p("b/e/..")).st_ino, ino_of(p("b")));
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: a dir into its own subtree gives EINVAL") {
  REQUIRE_EQ(::mkdir(p("a").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("a/b").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("a/b/c").c_str(), 0755), 0);
  DFS_CHECK_ERRNO(rename2(p("a"), p("a/x"), 0), EINVAL);
  DFS_CHECK_ERRNO(rename2(p("a"), p("a/b/c/x"), 0), EINVAL);
  DFS_CHECK_ERRNO(rename2(p("a"), p("a/b/c"), 0), EINVAL);
  DFS_CHECK_ERRNO(rename2(p("a/b"), p("a/b/c/d"), 0), EINVAL);
  CHECK(exists(p("a/b/c")));
  CHECK_EQ(stat_of(p("a/b/..")).st_ino, ino_of(p("a")));
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: an ancestor over a descendant gives ENOTEMPTY") {
  REQUIRE_EQ(::mkdir(p("a").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("a/b").c_str(), 0755), 0);
  DFS_CHECK_ERRNO(rename2(p("a/b"), p("a"), 0), ENOTEMPTY);
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: '.' and '..' cannot be renamed") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  DFS_CHECK_ERRNO(rename2(p("d/."), p("x"), 0), EBUSY);
  DFS_CHECK_ERRNO(rename2(p("d/.."), p("x"), 0), EBUSY);
  DFS_CHECK_ERRNO(rename2(p("x"), p("d/."), 0), EBUSY);
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: missing source or target parent gives ENOENT") {
  write_file(p("f"), "x");
  DFS_CHECK_ERRNO(rename2(p("missing"), p("x"), 0), ENOENT);
  DFS_CHECK_ERRNO(rename2(p("f"), p("nodir/x"), 0), ENOENT);
  DFS_CHECK_ERRNO(rename2(p("f"), p("f/x"), 0), ENOTDIR);
  DFS_CHECK_ERRNO(rename2(p("f/"), p("g"), 0), ENOTDIR);
  CHECK(exists(p("f")));
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: a symlink is renamed, not its target") {
  write_file(p("target"), "x");
  REQUIRE_EQ(::symlink("target", p("l").c_str()), 0);
  DFS_REQUIRE_OK(rename2(p("l"), p("l2"), 0));
  CHECK(S_ISLNK(lstat_of(p("l2")).st_mode));
  CHECK(exists(p("target")));
  CHECK_EQ(read_file(p("l2")), "x");
  // Replacing a symlink with a file replaces the link only.
  write_file(p("f"), "file");
  DFS_REQUIRE_OK(rename2(p("f"), p("l2"), 0));
  CHECK(S_ISREG(lstat_of(p("l2")).st_mode));
  CHECK_EQ(read_file(p("target")), "x");
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: an open file keeps working after rename") {
  write_file(p("a"), "abc");
  Fd fd = open_ok(p("a"), O_RDWR);
  DFS_REQUIRE_OK(rename2(p("a"), p("b"), 0));
  pwrite_all(fd.get(), "Z", 1);
  CHECK_EQ(pread_str(fd.get(), 10, 0), "aZc");
  CHECK_EQ(read_file(p("b")), "aZc");
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: RENAME_NOREPLACE refuses an existing target") {
  write_file(p("a"), "a");
  write_file(p("b"), "b");
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  DFS_CHECK_ERRNO(rename2(p("a"), p("b"), RENAME_NOREPLACE), EEXIST);
  DFS_CHECK_ERRNO(rename2(p("a"), p("d"), RENAME_NOREPLACE), EEXIST);
  DFS_CHECK_ERRNO(rename2(p("d"), p("a"), RENAME_NOREPLACE), EEXIST);
  CHECK_EQ(read_file(p("a")), "a");
  CHECK_EQ(read_file(p("b")), "b");
  DFS_CHECK_OK(rename2(p("a"), p("c"), RENAME_NOREPLACE));
  CHECK_EQ(read_file(p("c")), "a");
  CHECK_FALSE(exists(p("a")));
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: RENAME_EXCHANGE swaps two files") {
  write_file(p("a"), "aaa");
  write_file(p("b"), "bbbbbb");
  ino_t a = ino_of(p("a")), b = ino_of(p("b"));
  DFS_REQUIRE_OK(rename2(p("a"), p("b"), RENAME_EXCHANGE));
  CHECK_EQ(read_file(p("a")), "bbbbbb");
  CHECK_EQ(read_file(p("b")), "aaa");
  CHECK_EQ(ino_of(p("a")), b);
  CHECK_EQ(ino_of(p("b")), a);
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: RENAME_EXCHANGE swaps dirs across parents") {
  REQUIRE_EQ(::mkdir(p("p1").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("p2").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("p1/x").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("p2/y").c_str(), 0755), 0);
  write_file(p("p1/x/in-x"), "");
  write_file(p("p2/y/in-y"), "");
  DFS_REQUIRE_OK(rename2(p("p1/x"), p("p2/y"), RENAME_EXCHANGE));
  CHECK(exists(p("p1/x/in-y")));
  CHECK(exists(p("p2/y/in-x")));
  CHECK_EQ(stat_of(p("p1/x/..")).st_ino, ino_of(p("p1")));
  CHECK_EQ(stat_of(p("p2/y/..")).st_ino, ino_of(p("p2")));
  CHECK_EQ(nlink_of(p("p1")), 3);
  CHECK_EQ(nlink_of(p("p2")), 3);
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: RENAME_EXCHANGE of a file and a dir fixes nlink") {
  REQUIRE_EQ(::mkdir(p("p1").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("p2").c_str(), 0755), 0);
  write_file(p("p1/f"), "file");
  REQUIRE_EQ(::mkdir(p("p2/d").c_str(), 0755), 0);
  write_file(p("p2/d/inner"), "inner");
  DFS_REQUIRE_OK(rename2(p("p1/f"), p("p2/d"), RENAME_EXCHANGE));
  CHECK(S_ISDIR(lstat_of(p("p1/f")).st_mode));
  CHECK(S_ISREG(lstat_of(p("p2/d")).st_mode));
  CHECK_EQ(read_file(p("p2/d")), "file");
  CHECK_EQ(read_file(p("p1/f/inner")), "inner");
  CHECK_EQ(nlink_of(p("p1")), 3);
  CHECK_EQ(nlink_of(p("p2")), 2);
  CHECK_EQ(stat_of(p("p1/f/..")).st_ino, ino_of(p("p1")));
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: RENAME_EXCHANGE errors") {
  write_file(p("a"), "a");
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("d/sub").c_str(), 0755), 0);
  DFS_CHECK_ERRNO(rename2(p("a"), p("missing"), RENAME_EXCHANGE), ENOENT);
  DFS_CHECK_ERRNO(rename2(p("missing"), p("a"), RENAME_EXCHANGE), ENOENT);
  DFS_CHECK_ERRNO(rename2(p("a"), p("d"), RENAME_EXCHANGE | RENAME_NOREPLACE), EINVAL);
  DFS_CHECK_ERRNO(rename2(p("d"), p("d/sub"), RENAME_EXCHANGE), EINVAL);
  DFS_CHECK_ERRNO(rename2(p("d/sub"), p("d"), RENAME_EXCHANGE), EINVAL);
  DFS_CHECK_ERRNO(rename2(p("a"), p("b"), 0x80000000u), EINVAL);
  CHECK_EQ(read_file(p("a")), "a");
  CHECK(exists(p("d/sub")));
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: RENAME_EXCHANGE of a name with itself is a no-op") {
  write_file(p("a"), "a");
  DFS_CHECK_OK(rename2(p("a"), p("a"), RENAME_EXCHANGE));
  CHECK_EQ(read_file(p("a")), "a");
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: never EXDEV between any two dirs of the mount") {
  // Deep and shallow directories, as a partitioned namespace might place them apart.
  std::vector<std::string> dirs = {"x", "y", "x/1", "x/1/2", "x/1/2/3", "y/a", "y/a/b"};
  for (const auto& d : dirs) REQUIRE_EQ(::mkdir(p(d).c_str(), 0755), 0);
  write_file(p("x/1/2/3/f"), "traveller");
  std::string cur = "x/1/2/3/f";
  int step = 0;
  for (const auto& d : dirs) {
    std::string next = d + "/f" + std::to_string(step++);
    CAPTURE(next);
    DFS_REQUIRE_OK(rename2(p(cur), p(next), 0));
    cur = next;
  }
  CHECK_EQ(read_file(p(cur)), "traveller");
  REQUIRE_EQ(::mkdir(p("x/1/2/3/movedir").c_str(), 0755), 0);
  DFS_CHECK_OK(rename2(p("x/1/2/3/movedir"), p("y/a/b/movedir"), 0));
  DFS_CHECK_OK(rename2(p("y/a"), p("x/1/a"), 0));
  CHECK(exists(p("x/1/a/b/movedir")));
}

TEST_CASE_FIXTURE(Scratch, "posix/rename: the source and target parents see the change") {
  REQUIRE_EQ(::mkdir(p("a").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("b").c_str(), 0755), 0);
  for (int i = 0; i < 50; ++i) write_file(p("a/f" + std::to_string(i)), std::to_string(i));
  for (int i = 0; i < 50; i += 2) {
    DFS_REQUIRE_OK(rename2(p("a/f" + std::to_string(i)), p("b/g" + std::to_string(i)), 0));
  }
  CHECK_EQ(list_dir(p("a")).size(), 27u);
  CHECK_EQ(list_dir(p("b")).size(), 27u);
  CHECK_EQ(read_file(p("b/g48")), "48");
  CHECK_EQ(read_file(p("a/f49")), "49");
}

}  // namespace dfs::posix
