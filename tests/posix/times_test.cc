// Timestamps: which operations update mtime and ctime, and utimensat(2) semantics. Before an
// operation the times are set back (mtime) or a tick passes (ctime), so "updated" means
// strictly later. atime is not checked strictly (relatime/noatime differ between mounts).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdlib>

#include "tests/posix/posix_support.h"

namespace dfs::posix {
namespace {

constexpr int64_t kOldSec = 1000000000;  // 2001-09-09
constexpr int64_t kOldNs = kOldSec * 1000000000;
constexpr int64_t kSlackNs = 2'000'000'000;  // coarse clocks lag real time

struct Times {
  int64_t atime, mtime, ctime;
};

Times times_of(const std::string& path) {
  struct stat st = lstat_of(path);
  return {ns(st.st_atim), ns(st.st_mtim), ns(st.st_ctim)};
}

// Sets atime/mtime of each path far into the past, then lets the ctime clock move on.
template <typename... Paths>
void age(const Paths&... paths) {
  (set_times(paths, kOldSec), ...);
  tick();
}

bool near_now(int64_t t) { return std::llabs(t - now_ns()) < kSlackNs; }

}  // namespace

TEST_CASE_FIXTURE(Scratch, "posix/times: create sets all times to now and touches the parent") {
  age(dir());
  Times parent_before = times_of(dir());
  int64_t before = now_ns();
  write_file(p("f"), "");
  Times t = times_of(p("f"));
  CHECK(near_now(t.mtime));
  CHECK(near_now(t.ctime));
  CHECK(near_now(t.atime));
  CHECK_GE(t.mtime, before - kSlackNs);
  Times parent = times_of(dir());
  CHECK_GT(parent.mtime, kOldNs);
  CHECK_GT(parent.ctime, parent_before.ctime);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: write updates mtime and ctime") {
  write_file(p("f"), "abc");
  Fd fd = open_ok(p("f"), O_WRONLY);
  age(p("f"));
  Times before = times_of(p("f"));
  pwrite_all(fd.get(), "x", 1);
  fd.reset();  // write-back caches may defer the update to close
  Times after = times_of(p("f"));
  CHECK_GT(after.mtime, kOldNs);
  CHECK(near_now(after.mtime));
  CHECK_GT(after.ctime, before.ctime);
  CHECK_EQ(read_file(p("f")), "axc");
}

TEST_CASE_FIXTURE(Scratch, "posix/times: read and stat leave mtime and ctime alone") {
  write_file(p("f"), "abc");
  age(p("f"));
  Times before = times_of(p("f"));
  CHECK_EQ(read_file(p("f")), "abc");
  Times after = times_of(p("f"));
  CHECK_EQ(after.mtime, kOldNs);
  CHECK_EQ(after.ctime, before.ctime);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: truncate and ftruncate update mtime and ctime") {
  write_file(p("f"), "0123456789");
  age(p("f"));
  Times before = times_of(p("f"));
  REQUIRE_EQ(::truncate(p("f").c_str(), 5), 0);
  Times after = times_of(p("f"));
  CHECK_GT(after.mtime, kOldNs);
  CHECK_GT(after.ctime, before.ctime);

  age(p("f"));
  before = times_of(p("f"));
  Fd fd = open_ok(p("f"), O_WRONLY);
  REQUIRE_EQ(::ftruncate(fd.get(), 100), 0);
  after = times_of(p("f"));
  CHECK_GT(after.mtime, kOldNs);
  CHECK_GT(after.ctime, before.ctime);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: O_TRUNC of a non-empty file updates mtime and ctime") {
  write_file(p("f"), "0123456789");
  age(p("f"));
  Times before = times_of(p("f"));
  open_ok(p("f"), O_WRONLY | O_TRUNC);
  Times after = times_of(p("f"));
  CHECK_GT(after.mtime, kOldNs);
  CHECK_GT(after.ctime, before.ctime);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: chmod and chown update ctime only") {
  write_file(p("f"), "x");
  age(p("f"));
  Times before = times_of(p("f"));
  REQUIRE_EQ(::chmod(p("f").c_str(), 0600), 0);
  Times after = times_of(p("f"));
  CHECK_EQ(after.mtime, kOldNs);
  CHECK_GT(after.ctime, before.ctime);

  tick();
  REQUIRE_EQ(::chown(p("f").c_str(), 1000, 1000), 0);
  Times chowned = times_of(p("f"));
  CHECK_EQ(chowned.mtime, kOldNs);
  CHECK_GT(chowned.ctime, after.ctime);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: rename updates ctime of the inode and both parents") {
  REQUIRE_EQ(::mkdir(p("a").c_str(), 0755), 0);
  REQUIRE_EQ(::mkdir(p("b").c_str(), 0755), 0);
  write_file(p("a/f"), "x");
  age(p("a"), p("b"), p("a/f"));
  Times f0 = times_of(p("a/f")), a0 = times_of(p("a")), b0 = times_of(p("b"));
  REQUIRE_EQ(::rename(p("a/f").c_str(), p("b/g").c_str()), 0);
  Times f1 = times_of(p("b/g")), a1 = times_of(p("a")), b1 = times_of(p("b"));
  CHECK_EQ(f1.mtime, kOldNs);
  CHECK_GT(f1.ctime, f0.ctime);
  CHECK_GT(a1.mtime, kOldNs);
  CHECK_GT(a1.ctime, a0.ctime);
  CHECK_GT(b1.mtime, kOldNs);
  CHECK_GT(b1.ctime, b0.ctime);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: link and unlink update the parent and the inode ctime") {
  write_file(p("f"), "x");
  age(dir(), p("f"));
  Times f0 = times_of(p("f")), d0 = times_of(dir());
  REQUIRE_EQ(::link(p("f").c_str(), p("g").c_str()), 0);
  Times f1 = times_of(p("f")), d1 = times_of(dir());
  CHECK_EQ(f1.mtime, kOldNs);
  CHECK_GT(f1.ctime, f0.ctime);
  CHECK_GT(d1.mtime, kOldNs);
  CHECK_GT(d1.ctime, d0.ctime);

  age(dir());
  Times d2 = times_of(dir());
  REQUIRE_EQ(::unlink(p("g").c_str()), 0);
  Times f3 = times_of(p("f")), d3 = times_of(dir());
  CHECK_GT(f3.ctime, f1.ctime);  // nlink changed
  CHECK_EQ(f3.mtime, kOldNs);
  CHECK_GT(d3.mtime, kOldNs);
  CHECK_GT(d3.ctime, d2.ctime);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: mkdir, rmdir and symlink update the parent") {
  age(dir());
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  CHECK_GT(times_of(dir()).mtime, kOldNs);
  age(dir());
  REQUIRE_EQ(::rmdir(p("d").c_str()), 0);
  CHECK_GT(times_of(dir()).mtime, kOldNs);
  age(dir());
  REQUIRE_EQ(::symlink("x", p("l").c_str()), 0);
  CHECK_GT(times_of(dir()).mtime, kOldNs);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: writing inside a subdirectory leaves the parent alone") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  write_file(p("d/f"), "x");
  age(dir(), p("d"));
  Times d0 = times_of(p("d"));
  Fd fd = open_ok(p("d/f"), O_WRONLY);
  pwrite_all(fd.get(), "more", 1);
  fd.reset();
  CHECK_EQ(times_of(p("d")).mtime, kOldNs);
  CHECK_EQ(times_of(p("d")).ctime, d0.ctime);
  CHECK_EQ(times_of(dir()).mtime, kOldNs);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: setxattr and removexattr update ctime only") {
  write_file(p("f"), "x");
  age(p("f"));
  Times before = times_of(p("f"));
  REQUIRE_EQ(::setxattr(p("f").c_str(), "user.t", "v", 1, 0), 0);
  Times after = times_of(p("f"));
  CHECK_EQ(after.mtime, kOldNs);
  CHECK_GT(after.ctime, before.ctime);
  tick();
  REQUIRE_EQ(::removexattr(p("f").c_str(), "user.t"), 0);
  CHECK_GT(times_of(p("f")).ctime, after.ctime);
  CHECK_EQ(times_of(p("f")).mtime, kOldNs);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: utimensat stores explicit seconds and nanoseconds") {
  write_file(p("f"), "x");
  Times before = times_of(p("f"));
  tick();
  timespec ts[2] = {{1234567890, 123456789}, {1300000000, 987654321}};
  REQUIRE_EQ(::utimensat(AT_FDCWD, p("f").c_str(), ts, 0), 0);
  Times t = times_of(p("f"));
  CHECK_EQ(t.atime, 1234567890123456789);
  CHECK_EQ(t.mtime, 1300000000987654321);
  CHECK_GT(t.ctime, before.ctime);
  // The values survive closing and reopening.
  write_file(p("g"), "y");
  CHECK_EQ(times_of(p("f")).mtime, 1300000000987654321);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: UTIME_OMIT keeps a field and UTIME_NOW sets now") {
  write_file(p("f"), "x");
  set_times(p("f"), kOldSec);
  timespec omit_now[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  REQUIRE_EQ(::utimensat(AT_FDCWD, p("f").c_str(), omit_now, 0), 0);
  Times t = times_of(p("f"));
  CHECK_EQ(t.atime, kOldNs);
  CHECK(near_now(t.mtime));
  timespec now_omit[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
  set_times(p("f"), kOldSec);
  REQUIRE_EQ(::utimensat(AT_FDCWD, p("f").c_str(), now_omit, 0), 0);
  t = times_of(p("f"));
  CHECK(near_now(t.atime));
  CHECK_EQ(t.mtime, kOldNs);
  timespec both_omit[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
  REQUIRE_EQ(::utimensat(AT_FDCWD, p("f").c_str(), both_omit, 0), 0);
  CHECK_EQ(times_of(p("f")).mtime, kOldNs);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: utimensat with NULL and futimens set now") {
  write_file(p("f"), "x");
  set_times(p("f"), kOldSec);
  REQUIRE_EQ(::utimensat(AT_FDCWD, p("f").c_str(), nullptr, 0), 0);
  Times t = times_of(p("f"));
  CHECK(near_now(t.atime));
  CHECK(near_now(t.mtime));
  Fd fd = open_ok(p("f"), O_RDONLY);
  timespec ts[2] = {{5, 6}, {7, 8}};
  REQUIRE_EQ(::futimens(fd.get(), ts), 0);
  CHECK_EQ(times_of(p("f")).atime, 5000000006);
  CHECK_EQ(times_of(p("f")).mtime, 7000000008);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: invalid nanoseconds give EINVAL") {
  write_file(p("f"), "x");
  timespec ts[2] = {{1, 1000000000}, {1, 0}};
  DFS_CHECK_ERRNO(::utimensat(AT_FDCWD, p("f").c_str(), ts, 0), EINVAL);
  DFS_CHECK_ERRNO(::utimensat(AT_FDCWD, p("missing").c_str(), nullptr, 0), ENOENT);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: AT_SYMLINK_NOFOLLOW changes the link, not the target") {
  write_file(p("target"), "x");
  REQUIRE_EQ(::symlink("target", p("link").c_str()), 0);
  set_times(p("target"), kOldSec);
  timespec ts[2] = {{222222222, 0}, {333333333, 0}};
  REQUIRE_EQ(::utimensat(AT_FDCWD, p("link").c_str(), ts, AT_SYMLINK_NOFOLLOW), 0);
  CHECK_EQ(times_of(p("link")).mtime, int64_t{333333333} * 1000000000);
  CHECK_EQ(times_of(p("target")).mtime, kOldNs);
  REQUIRE_EQ(::utimensat(AT_FDCWD, p("link").c_str(), ts, 0), 0);
  CHECK_EQ(times_of(p("target")).mtime, int64_t{333333333} * 1000000000);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: times before 1970 and after 2038 survive") {
  write_file(p("f"), "x");
  timespec ts[2] = {{-86400 * 365, 5}, {4102444800, 7}};  // 1969 and 2100-01-01
  REQUIRE_EQ(::utimensat(AT_FDCWD, p("f").c_str(), ts, 0), 0);
  struct stat st = stat_of(p("f"));
  CHECK_EQ(st.st_atim.tv_sec, -86400 * 365);
  CHECK_EQ(st.st_atim.tv_nsec, 5);
  CHECK_EQ(st.st_mtim.tv_sec, 4102444800);
  CHECK_EQ(st.st_mtim.tv_nsec, 7);
}

TEST_CASE_FIXTURE(Scratch, "posix/times: non-owners may set now only with write access") {
  write_file(p("shared"), "x", 0666);
  REQUIRE_EQ(::chmod(p("shared").c_str(), 0666), 0);
  write_file(p("private"), "x", 0644);
  set_times(p("shared"), kOldSec);
  timespec explicit_ts[2] = {{1, 0}, {1, 0}};
  CHECK_EQ(user_err(kUser1,
                    [&] { return err_of(::utimensat(AT_FDCWD, p("shared").c_str(), nullptr, 0)); }),
           "OK");
  CHECK(near_now(times_of(p("shared")).mtime));
  CHECK_EQ(
      user_err(kUser1,
               [&] { return err_of(::utimensat(AT_FDCWD, p("shared").c_str(), explicit_ts, 0)); }),
      "EPERM");
  CHECK_EQ(
      user_err(kUser1,
               [&] { return err_of(::utimensat(AT_FDCWD, p("private").c_str(), nullptr, 0)); }),
      "EACCES");
  REQUIRE_EQ(::chown(p("private").c_str(), kUser1.uid, kUser1.gid), 0);
  CHECK_EQ(
      user_err(kUser1,
               [&] { return err_of(::utimensat(AT_FDCWD, p("private").c_str(), explicit_ts, 0)); }),
      "OK");
  CHECK_EQ(times_of(p("private")).mtime, 1000000000);
}

}  // namespace dfs::posix

namespace dfs::posix {

// rsync's order for a new directory: mkdir, set its times, chmod it through a
// descriptor, make a subdirectory in it, then stat it to decide whether to set its
// times again. The stat must show the subdirectory's change (on dfs the first three
// are answered by the client before the MDS has them).
TEST_CASE_FIXTURE(Scratch, "posix/times: mkdir in a directory after utimes and chmod moves its mtime") {
  for (int i = 0; i < 20; ++i) {
    std::string d = p("d" + std::to_string(i));
    REQUIRE_EQ(::mkdir(d.c_str(), 0700), 0);
    set_times(d, kOldSec);
    int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY);
    REQUIRE(fd >= 0);
    REQUIRE_EQ(::fchmod(fd, 0755), 0);
    ::close(fd);
    REQUIRE_EQ(::mkdir((d + "/e").c_str(), 0700), 0);
    Times t = times_of(d);
    CHECK(near_now(t.mtime));
    CHECK(near_now(t.ctime));
    CHECK_EQ(lstat_of(d).st_mode & 07777, 0755);
    CHECK_EQ(lstat_of(d).st_nlink, 3);
  }
}

}  // namespace dfs::posix
