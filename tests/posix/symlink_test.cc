// symlink(2)/readlink(2): targets stored verbatim, relative and absolute resolution,
// dangling links, long targets, ELOOP on loops and long chains.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/posix/posix_support.h"

namespace dfs::posix {
namespace {

// readlink() of `path` with a buffer of `buf_size` bytes; REQUIREs success.
std::string read_link(const std::string& path, size_t buf_size = 8192) {
  std::string buf(buf_size, '\0');
  ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
  REQUIRE_MESSAGE(n >= 0, "readlink(" << path << "): " << errno_name(errno));
  buf.resize(static_cast<size_t>(n));
  return buf;
}

}  // namespace

TEST_CASE_FIXTURE(Scratch, "posix/symlink: readlink returns the target verbatim") {
  for (const char* target : {"plain", "../up/and/down", "/absolute/path", "with space", "trailing/",
                             "./dot", "a//b", "\xc3\xa9t\xc3\xa9"}) {
    CAPTURE(target);
    REQUIRE_EQ(::symlink(target, p("l").c_str()), 0);
    CHECK_EQ(read_link(p("l")), target);
    CHECK_EQ(lstat_of(p("l")).st_size, static_cast<off_t>(std::string(target).size()));
    REQUIRE_EQ(::unlink(p("l").c_str()), 0);
  }
}

TEST_CASE_FIXTURE(Scratch, "posix/symlink: a dangling link lstat()s but stat() gives ENOENT") {
  REQUIRE_EQ(::symlink("missing", p("l").c_str()), 0);
  CHECK(S_ISLNK(lstat_of(p("l")).st_mode));
  struct stat st {};
  DFS_CHECK_ERRNO(::stat(p("l").c_str(), &st), ENOENT);
  CHECK_EQ(errno_name(open_err(p("l"), O_RDONLY)), "ENOENT");
  // Creating the target brings the link to life.
  write_file(p("missing"), "alive");
  CHECK_EQ(read_file(p("l")), "alive");
}

TEST_CASE_FIXTURE(Scratch, "posix/symlink: relative targets resolve from the link's directory") {
  REQUIRE_EQ(::mkdir(p("a").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("a/b").c_str(), 0755), 0);
  write_file(p("top"), "top");
  write_file(p("a/b/leaf"), "leaf");
  REQUIRE_EQ(::symlink("../../top", p("a/b/up").c_str()), 0);
  REQUIRE_EQ(::symlink("b/leaf", p("a/down").c_str()), 0);
  REQUIRE_EQ(::symlink("a/b", p("dirlink").c_str()), 0);
  CHECK_EQ(read_file(p("a/b/up")), "top");
  CHECK_EQ(read_file(p("a/down")), "leaf");
  CHECK_EQ(read_file(p("dirlink/leaf")), "leaf");
  CHECK_EQ(read_file(p("dirlink/up")), "top");  // resolved from a/b, not from the link
  // Moving a relative link changes what it points at.
  REQUIRE_EQ(::rename(p("a/down").c_str(), p("down").c_str()), 0);
  CHECK_EQ(errno_name(open_err(p("down"), O_RDONLY)), "ENOENT");
}

TEST_CASE_FIXTURE(Scratch, "posix/symlink: absolute targets and '..' after a symlinked dir") {
  REQUIRE_EQ(::mkdir(p("real").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("real/sub").c_str(), 0755), 0);
  write_file(p("real/f"), "in real");
  REQUIRE_EQ(::symlink(p("real/sub").c_str(), p("abs").c_str()), 0);
  // The kernel resolves ".." physically: abs/.. is real, not the scratch dir.
  CHECK_EQ(read_file(p("abs/../f")), "in real");
  CHECK_EQ(stat_of(p("abs")).st_ino, stat_of(p("real/sub")).st_ino);
}

TEST_CASE_FIXTURE(Scratch, "posix/symlink: targets up to 4095 bytes; 4096 gives ENAMETOOLONG") {
  std::string target;
  while (target.size() < 4095) target += "component/";
  target.resize(4095);
  REQUIRE_EQ(::symlink(target.c_str(), p("long").c_str()), 0);
  CHECK_EQ(read_link(p("long")), target);
  CHECK_EQ(lstat_of(p("long")).st_size, 4095);
  std::string too_long = target + "x";
  DFS_CHECK_ERRNO(::symlink(too_long.c_str(), p("toolong").c_str()), ENAMETOOLONG);
  CHECK_FALSE(exists(p("toolong")));
}

TEST_CASE_FIXTURE(Scratch, "posix/symlink: readlink truncates to a small buffer") {
  REQUIRE_EQ(::symlink("abcdefghij", p("l").c_str()), 0);
  char buf[4];
  CHECK_EQ(::readlink(p("l").c_str(), buf, sizeof(buf)), 4);
  CHECK_EQ(std::string(buf, 4), "abcd");
  CHECK_EQ(read_link(p("l"), 10), "abcdefghij");
}

TEST_CASE_FIXTURE(Scratch, "posix/symlink: readlink errors") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  char buf[64];
  DFS_CHECK_ERRNO(::readlink(p("f").c_str(), buf, sizeof(buf)), EINVAL);
  DFS_CHECK_ERRNO(::readlink(p("d").c_str(), buf, sizeof(buf)), EINVAL);
  DFS_CHECK_ERRNO(::readlink(p("missing").c_str(), buf, sizeof(buf)), ENOENT);
  REQUIRE_EQ(::symlink("f", p("l").c_str()), 0);
  DFS_CHECK_ERRNO(::readlink(p("l").c_str(), buf, 0), EINVAL);
}

TEST_CASE_FIXTURE(Scratch, "posix/symlink: readlinkat with an O_PATH descriptor") {
  REQUIRE_EQ(::symlink("the-target", p("l").c_str()), 0);
  Fd fd = open_ok(p("l"), O_PATH | O_NOFOLLOW);
  char buf[64];
  ssize_t n = ::readlinkat(fd.get(), "", buf, sizeof(buf));
  REQUIRE(n >= 0);
  CHECK_EQ(std::string(buf, static_cast<size_t>(n)), "the-target");
  struct stat st {};
  REQUIRE_EQ(::fstatat(fd.get(), "", &st, AT_EMPTY_PATH), 0);
  CHECK(S_ISLNK(st.st_mode));
}

TEST_CASE_FIXTURE(Scratch, "posix/symlink: an existing name gives EEXIST") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  REQUIRE_EQ(::symlink("a", p("l").c_str()), 0);
  DFS_CHECK_ERRNO(::symlink("x", p("f").c_str()), EEXIST);
  DFS_CHECK_ERRNO(::symlink("x", p("d").c_str()), EEXIST);
  DFS_CHECK_ERRNO(::symlink("x", p("l").c_str()), EEXIST);
  CHECK_EQ(read_link(p("l")), "a");
  DFS_CHECK_ERRNO(::symlink("x", p("missing/l").c_str()), ENOENT);
  DFS_CHECK_ERRNO(::symlink("", p("empty").c_str()), ENOENT);
}

TEST_CASE_FIXTURE(Scratch, "posix/symlink: loops give ELOOP") {
  REQUIRE_EQ(::symlink("self", p("self").c_str()), 0);
  REQUIRE_EQ(::symlink("b", p("a").c_str()), 0);
  REQUIRE_EQ(::symlink("a", p("b").c_str()), 0);
  REQUIRE_EQ(::symlink("loopdir/x", p("loopdir").c_str()), 0);
  struct stat st {};
  DFS_CHECK_ERRNO(::stat(p("self").c_str(), &st), ELOOP);
  DFS_CHECK_ERRNO(::stat(p("a").c_str(), &st), ELOOP);
  CHECK_EQ(errno_name(open_err(p("b"), O_RDONLY)), "ELOOP");
  CHECK_EQ(errno_name(open_err(p("a"), O_WRONLY | O_CREAT)), "ELOOP");
  DFS_CHECK_ERRNO(::stat(p("a/inside").c_str(), &st), ELOOP);  // loop in a middle component
  DFS_CHECK_ERRNO(::stat(p("loopdir").c_str(), &st), ELOOP);
  DFS_CHECK_ERRNO(::mkdir(p("a/sub").c_str(), 0755), ELOOP);
  CHECK(S_ISLNK(lstat_of(p("a")).st_mode));  // lstat does not follow
}

TEST_CASE_FIXTURE(Scratch, "posix/symlink: chains of 30 resolve and 50 give ELOOP") {
  write_file(p("end"), "end of chain");
  std::string prev = "end";
  for (int i = 0; i < 50; ++i) {
    std::string name = "c" + std::to_string(i);
    REQUIRE_EQ(::symlink(prev.c_str(), p(name).c_str()), 0);
    prev = name;
  }
  CHECK_EQ(read_file(p("c29")), "end of chain");  // 30 links deep
  struct stat st {};
  DFS_CHECK_ERRNO(::stat(p("c49").c_str(), &st), ELOOP);  // 50 links deep (limit is 40)
}

TEST_CASE_FIXTURE(Scratch, "posix/symlink: symlinks to directories are traversed") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  REQUIRE_EQ(::symlink("d", p("dl").c_str()), 0);
  write_file(p("dl/created-through-link"), "x");
  CHECK(exists(p("d/created-through-link")));
  CHECK_EQ(list_dir(p("dl")), list_dir(p("d")));
  // With a trailing slash the name still denotes the link, which is not a directory.
  DFS_CHECK_ERRNO(::unlink(p("dl/").c_str()), ENOTDIR);
  DFS_CHECK_ERRNO(::rmdir(p("dl/").c_str()), ENOTDIR);
  DFS_CHECK_OK(::unlink(p("dl").c_str()));
  CHECK(exists(p("d/created-through-link")));
}

TEST_CASE_FIXTURE(Scratch, "posix/symlink: permissions of the link itself are ignored") {
  write_file(p("f"), "readable", 0644);
  REQUIRE_EQ(::symlink("f", p("l").c_str()), 0);
  CHECK_EQ(lstat_of(p("l")).st_mode & 07777, 0777);
  CHECK_EQ(user_err(kUser1, [&] { return open_err(p("l"), O_RDONLY); }), "OK");
  CHECK_EQ(user_err(kUser1, [&] { return open_err(p("l"), O_WRONLY); }), "EACCES");
}

}  // namespace dfs::posix
