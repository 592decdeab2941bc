// chmod/chown: exact mode bits, ownership rules, setuid/setgid clearing on write, truncate and
// chown, setgid directory inheritance and umask.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/posix/posix_support.h"

namespace dfs::posix {
namespace {

mode_t mode_of(const std::string& path) { return lstat_of(path).st_mode & 07777; }

// Writes one byte at offset 0 as `cred`; returns errno.
int write_as(const Cred& cred, const std::string& path) {
  return as_user(cred, [&] {
    int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0) return errno;
    int rc = err_of(::write(fd, "w", 1));
    ::close(fd);
    return rc;
  });
}

}  // namespace

TEST_CASE_FIXTURE(Scratch, "posix/chmod: sets exactly the requested bits") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  for (mode_t m : {0000, 0001, 0070, 0700, 0644, 0777, 04755, 02755, 01777, 07777, 06000}) {
    CAPTURE(m);
    REQUIRE_EQ(::chmod(p("f").c_str(), m), 0);
    CHECK_EQ(mode_of(p("f")), m);
    REQUIRE_EQ(::chmod(p("d").c_str(), m), 0);
    CHECK_EQ(mode_of(p("d")), m);
  }
  CHECK(S_ISREG(stat_of(p("f")).st_mode));
  CHECK(S_ISDIR(stat_of(p("d")).st_mode));
}

TEST_CASE_FIXTURE(Scratch, "posix/chmod: fchmod, fchmodat and chmod through a symlink") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::symlink("f", p("l").c_str()), 0);
  Fd fd = open_ok(p("f"), O_RDONLY);
  REQUIRE_EQ(::fchmod(fd.get(), 0600), 0);
  CHECK_EQ(mode_of(p("f")), 0600);
  REQUIRE_EQ(::fchmodat(AT_FDCWD, p("f").c_str(), 0640, 0), 0);
  CHECK_EQ(mode_of(p("f")), 0640);
  REQUIRE_EQ(::chmod(p("l").c_str(), 0604), 0);
  CHECK_EQ(mode_of(p("f")), 0604);
  CHECK_EQ(mode_of(p("l")), 0777);
  DFS_CHECK_ERRNO(::chmod(p("missing").c_str(), 0644), ENOENT);
}

TEST_CASE_FIXTURE(Scratch, "posix/chmod: only the owner (or root) may chmod") {
  write_file(p("f"), "x", 0666);
  REQUIRE_EQ(::chmod(p("f").c_str(), 0666), 0);
  CHECK_EQ(user_err(kUser1, [&] { return err_of(::chmod(p("f").c_str(), 0777)); }), "EPERM");
  CHECK_EQ(mode_of(p("f")), 0666);
  REQUIRE_EQ(::chown(p("f").c_str(), kUser1.uid, kUser1.gid), 0);
  CHECK_EQ(user_err(kUser1, [&] { return err_of(::chmod(p("f").c_str(), 0600)); }), "OK");
  CHECK_EQ(mode_of(p("f")), 0600);
}

TEST_CASE_FIXTURE(Scratch, "posix/chown: root changes owner and group; -1 keeps a field") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::chown(p("f").c_str(), 1000, 2000), 0);
  CHECK_EQ(stat_of(p("f")).st_uid, 1000u);
  CHECK_EQ(stat_of(p("f")).st_gid, 2000u);
  REQUIRE_EQ(::chown(p("f").c_str(), static_cast<uid_t>(-1), 3000), 0);
  CHECK_EQ(stat_of(p("f")).st_uid, 1000u);
  CHECK_EQ(stat_of(p("f")).st_gid, 3000u);
  REQUIRE_EQ(::chown(p("f").c_str(), 4000, static_cast<gid_t>(-1)), 0);
  CHECK_EQ(stat_of(p("f")).st_uid, 4000u);
  CHECK_EQ(stat_of(p("f")).st_gid, 3000u);
  Fd fd = open_ok(p("f"), O_RDONLY);
  REQUIRE_EQ(::fchown(fd.get(), 0, 0), 0);
  CHECK_EQ(stat_of(p("f")).st_uid, 0u);
  DFS_CHECK_ERRNO(::chown(p("missing").c_str(), 0, 0), ENOENT);
}

TEST_CASE_FIXTURE(Scratch, "posix/chown: lchown changes the symlink, chown the target") {
  write_file(p("target"), "x");
  REQUIRE_EQ(::symlink("target", p("link").c_str()), 0);
  REQUIRE_EQ(::lchown(p("link").c_str(), 1000, 1001), 0);
  CHECK_EQ(lstat_of(p("link")).st_uid, 1000u);
  CHECK_EQ(lstat_of(p("link")).st_gid, 1001u);
  CHECK_EQ(stat_of(p("target")).st_uid, ::geteuid());
  REQUIRE_EQ(::chown(p("link").c_str(), 2000, 2001), 0);
  CHECK_EQ(stat_of(p("target")).st_uid, 2000u);
  CHECK_EQ(lstat_of(p("link")).st_uid, 1000u);
}

TEST_CASE_FIXTURE(Scratch, "posix/chown: non-root may only chgrp own files to its groups") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::chown(p("f").c_str(), kUser1.uid, kUser1.gid), 0);
  write_file(p("other"), "x");
  Cred member{kUser1.uid, kUser1.gid, {5000}};
  CHECK_EQ(user_err(member, [&] { return err_of(::chown(p("f").c_str(), kUser2.uid, -1)); }),
           "EPERM");
  CHECK_EQ(user_err(member, [&] { return err_of(::chown(p("f").c_str(), -1, 6000)); }), "EPERM");
  CHECK_EQ(user_err(member, [&] { return err_of(::chown(p("f").c_str(), -1, 5000)); }), "OK");
  CHECK_EQ(stat_of(p("f")).st_gid, 5000u);
  CHECK_EQ(user_err(member, [&] { return err_of(::chown(p("other").c_str(), -1, 5000)); }),
           "EPERM");
  CHECK_EQ(stat_of(p("other")).st_gid, ::getegid());
}

TEST_CASE_FIXTURE(Scratch, "posix/setuid: a non-root write clears setuid and setgid") {
  write_file(p("f"), "data");
  REQUIRE_EQ(::chown(p("f").c_str(), kUser1.uid, kUser1.gid), 0);
  REQUIRE_EQ(::chmod(p("f").c_str(), 06775), 0);
  CHECK_EQ(errno_name(write_as(kUser1, p("f"))), "OK");
  CHECK_EQ(mode_of(p("f")), 0775);
  CHECK_EQ(read_file(p("f")), "wata");
}

// The clear comes with the write, not at close, and follows the writer, not the opener:
// here root opened the file and a non-root process writes through the inherited fd.
TEST_CASE_FIXTURE(Scratch, "posix/setuid: a non-root write through root's fd clears at once") {
  write_file(p("f"), "data");
  REQUIRE_EQ(::chown(p("f").c_str(), kUser1.uid, kUser1.gid), 0);
  REQUIRE_EQ(::chmod(p("f").c_str(), 06775), 0);
  Fd fd = open_ok(p("f"), O_WRONLY);
  CHECK_EQ(user_err(kUser1, [&] { return ::pwrite(fd.get(), "w", 1, 0) == 1 ? 0 : errno; }),
           "OK");
  CHECK_EQ(fstat_of(fd.get()).st_mode & 07777, 0775u);
  fd.reset();
  CHECK_EQ(mode_of(p("f")), 0775);
  CHECK_EQ(read_file(p("f")), "wata");
}

TEST_CASE_FIXTURE(Scratch, "posix/setuid: setgid without group-exec survives a write") {
  write_file(p("f"), "data");
  REQUIRE_EQ(::chown(p("f").c_str(), kUser1.uid, kUser1.gid), 0);
  REQUIRE_EQ(::chmod(p("f").c_str(), 02664), 0);
  CHECK_EQ(errno_name(write_as(kUser1, p("f"))), "OK");
  CHECK_EQ(mode_of(p("f")), 02664);
}

TEST_CASE_FIXTURE(Scratch, "posix/setuid: a write by root keeps setuid and setgid") {
  write_file(p("f"), "data");
  REQUIRE_EQ(::chmod(p("f").c_str(), 06755), 0);
  Fd fd = open_ok(p("f"), O_WRONLY);
  pwrite_all(fd.get(), "root", 0);
  fd.reset();
  CHECK_EQ(mode_of(p("f")), 06755);
}

TEST_CASE_FIXTURE(Scratch, "posix/setuid: a non-root truncate clears setuid and setgid") {
  write_file(p("f"), "data");
  REQUIRE_EQ(::chown(p("f").c_str(), kUser1.uid, kUser1.gid), 0);
  REQUIRE_EQ(::chmod(p("f").c_str(), 06770), 0);
  CHECK_EQ(user_err(kUser1, [&] { return err_of(::truncate(p("f").c_str(), 1)); }), "OK");
  CHECK_EQ(mode_of(p("f")), 0770);
  CHECK_EQ(stat_of(p("f")).st_size, 1);
}

TEST_CASE_FIXTURE(Scratch, "posix/setuid: chown by root clears setuid and setgid on files") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::chmod(p("f").c_str(), 06755), 0);
  REQUIRE_EQ(::chown(p("f").c_str(), 1000, 1000), 0);
  CHECK_EQ(mode_of(p("f")), 0755);
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  REQUIRE_EQ(::chmod(p("d").c_str(), 02755), 0);
  REQUIRE_EQ(::chown(p("d").c_str(), 1000, 1000), 0);
  CHECK_EQ(mode_of(p("d")), 02755);  // directories keep setgid
}

TEST_CASE_FIXTURE(Scratch, "posix/setuid: chown to the same owner and group clears them too") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::chown(p("f").c_str(), kUser1.uid, kUser1.gid), 0);
  REQUIRE_EQ(::chmod(p("f").c_str(), 06755), 0);
  CHECK_EQ(user_err(kUser1, [&] { return err_of(::chown(p("f").c_str(), -1, -1)); }), "OK");
  CHECK_EQ(mode_of(p("f")), 0755);
  REQUIRE_EQ(::chmod(p("f").c_str(), 06745), 0);  // setgid without group-execute stays
  REQUIRE_EQ(::chown(p("f").c_str(), -1, -1), 0);
  CHECK_EQ(mode_of(p("f")), 02745);
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  REQUIRE_EQ(::chmod(p("d").c_str(), 02755), 0);
  REQUIRE_EQ(::chown(p("d").c_str(), -1, -1), 0);
  CHECK_EQ(mode_of(p("d")), 02755);  // directories keep setgid
}

TEST_CASE_FIXTURE(Scratch, "posix/setuid: chgrp by a non-root owner clears setuid and setgid") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::chown(p("f").c_str(), kUser1.uid, kUser1.gid), 0);
  REQUIRE_EQ(::chmod(p("f").c_str(), 06750), 0);
  Cred member{kUser1.uid, kUser1.gid, {5000}};
  CHECK_EQ(user_err(member, [&] { return err_of(::chown(p("f").c_str(), -1, 5000)); }), "OK");
  CHECK_EQ(mode_of(p("f")), 0750);
}

TEST_CASE_FIXTURE(Scratch, "posix/setgid: chmod g+s by a non-member owner drops setgid") {
  write_file(p("f"), "x");
  REQUIRE_EQ(::chown(p("f").c_str(), kUser1.uid, 7000), 0);
  CHECK_EQ(user_err(kUser1, [&] { return err_of(::chmod(p("f").c_str(), 02755)); }), "OK");
  CHECK_EQ(mode_of(p("f")), 0755);
  Cred member{kUser1.uid, kUser1.gid, {7000}};
  CHECK_EQ(user_err(member, [&] { return err_of(::chmod(p("f").c_str(), 02755)); }), "OK");
  CHECK_EQ(mode_of(p("f")), 02755);
}

TEST_CASE_FIXTURE(Scratch, "posix/setgid: a setgid dir passes its group to files and subdirs") {
  REQUIRE_EQ(::mkdir(p("sg").c_str(), 0777), 0);
  REQUIRE_EQ(::chown(p("sg").c_str(), 0, 4321), 0);
  REQUIRE_EQ(::chmod(p("sg").c_str(), 02777), 0);
  write_file(p("sg/f"), "x");
  REQUIRE_EQ(::mkdir(p("sg/sub").c_str(), 0755), 0);
  REQUIRE_EQ(::mknod(p("sg/fifo").c_str(), S_IFIFO | 0644, 0), 0);
  CHECK_EQ(stat_of(p("sg/f")).st_gid, 4321u);
  CHECK_EQ(mode_of(p("sg/f")), 0644);
  CHECK_EQ(stat_of(p("sg/sub")).st_gid, 4321u);
  CHECK_EQ(mode_of(p("sg/sub")), 02755);
  CHECK_EQ(stat_of(p("sg/fifo")).st_gid, 4321u);
  // Grandchildren inherit through the subdir, also for non-root creators.
  REQUIRE_EQ(::chmod(p("sg/sub").c_str(), 02777), 0);
  CHECK_EQ(user_err(kUser1,
                    [&] {
                      if (::mkdir(p("sg/sub/deeper").c_str(), 0755) != 0) return errno;
                      int fd = ::open(p("sg/sub/file").c_str(), O_CREAT | O_WRONLY, 0644);
                      if (fd < 0) return errno;
                      ::close(fd);
                      return 0;
                    }),
           "OK");
  CHECK_EQ(stat_of(p("sg/sub/deeper")).st_gid, 4321u);
  CHECK_EQ(mode_of(p("sg/sub/deeper")), 02755);
  CHECK_EQ(stat_of(p("sg/sub/file")).st_gid, 4321u);
  CHECK_EQ(stat_of(p("sg/sub/file")).st_uid, kUser1.uid);
}

TEST_CASE_FIXTURE(Scratch, "posix/setgid: a non-member cannot create a setgid file there") {
  REQUIRE_EQ(::mkdir(p("sg").c_str(), 0777), 0);
  REQUIRE_EQ(::chown(p("sg").c_str(), 0, 4321), 0);
  REQUIRE_EQ(::chmod(p("sg").c_str(), 02777), 0);
  CHECK_EQ(user_err(kUser1,
                    [&] {
                      ::umask(0);
                      int fd = ::open(p("sg/f").c_str(), O_CREAT | O_WRONLY, 02775);
                      if (fd < 0) return errno;
                      ::close(fd);
                      return 0;
                    }),
           "OK");
  CHECK_EQ(stat_of(p("sg/f")).st_gid, 4321u);
  CHECK_EQ(mode_of(p("sg/f")), 0775);
}

TEST_CASE_FIXTURE(Scratch, "posix/setgid: a member by a supplementary group creates setgid files") {
  REQUIRE_EQ(::mkdir(p("sg").c_str(), 0777), 0);
  REQUIRE_EQ(::chown(p("sg").c_str(), 0, 4321), 0);
  REQUIRE_EQ(::chmod(p("sg").c_str(), 02777), 0);
  Cred member{kUser1.uid, kUser1.gid, {4321}};
  CHECK_EQ(user_err(member,
                    [&] {
                      ::umask(0);
                      int fd = ::open(p("sg/f").c_str(), O_CREAT | O_WRONLY, 02775);
                      if (fd < 0) return errno;
                      ::close(fd);
                      return ::mknod(p("sg/n").c_str(), S_IFREG | 02770, 0) == 0 ? 0 : errno;
                    }),
           "OK");
  CHECK_EQ(mode_of(p("sg/f")), 02775);
  CHECK_EQ(mode_of(p("sg/n")), 02770);
}

TEST_CASE_FIXTURE(Scratch, "posix/setgid: without setgid the creator's group is used") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0777), 0);
  REQUIRE_EQ(::chown(p("d").c_str(), 0, 4321), 0);
  REQUIRE_EQ(::chmod(p("d").c_str(), 0777), 0);
  CHECK_EQ(user_err(kUser1, [&] { return err_of(::mkdir(p("d/sub").c_str(), 0755)); }), "OK");
  CHECK_EQ(stat_of(p("d/sub")).st_gid, kUser1.gid);
  CHECK_EQ(mode_of(p("d/sub")), 0755);
}

TEST_CASE_FIXTURE(Scratch, "posix/umask: applies to open, mkdir, mknod and not to chmod") {
  ::umask(077);
  Fd fd = open_ok(p("f"), O_CREAT | O_WRONLY, 0666);
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0777), 0);
  REQUIRE_EQ(::mknod(p("p").c_str(), S_IFIFO | 0666, 0), 0);
  CHECK_EQ(mode_of(p("f")), 0600);
  CHECK_EQ(mode_of(p("d")), 0700);
  CHECK_EQ(mode_of(p("p")), 0600);
  REQUIRE_EQ(::chmod(p("f").c_str(), 0666), 0);
  CHECK_EQ(mode_of(p("f")), 0666);
  ::umask(0);
  REQUIRE_EQ(::mkdir(p("e").c_str(), 01777), 0);
  CHECK_EQ(mode_of(p("e")), 01777);
}

}  // namespace dfs::posix
