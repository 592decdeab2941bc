// mknod(2): regular files, fifos, sockets (via bind), character and block devices with rdev.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tests/posix/posix_support.h"

namespace dfs::posix {

TEST_CASE_FIXTURE(Scratch, "posix/mknod: S_IFREG creates an empty regular file") {
  REQUIRE_EQ(::mknod(p("f").c_str(), S_IFREG | 0640, 0), 0);
  struct stat st = lstat_of(p("f"));
  CHECK(S_ISREG(st.st_mode));
  CHECK_EQ(st.st_mode & 07777, 0640);
  CHECK_EQ(st.st_size, 0);
  CHECK_EQ(st.st_rdev, 0u);
  REQUIRE_EQ(::mknod(p("zero").c_str(), 0600, 0), 0);  // type 0 means regular
  CHECK(S_ISREG(lstat_of(p("zero")).st_mode));
}

TEST_CASE_FIXTURE(Scratch, "posix/mknod: fifo is created and carries data between opens") {
  REQUIRE_EQ(::mknod(p("fifo").c_str(), S_IFIFO | 0644, 0), 0);
  CHECK(S_ISFIFO(lstat_of(p("fifo")).st_mode));
  CHECK_EQ(lstat_of(p("fifo")).st_mode & 07777, 0644);
  Fd rd = open_ok(p("fifo"), O_RDONLY | O_NONBLOCK);
  Fd wr = open_ok(p("fifo"), O_WRONLY | O_NONBLOCK);
  CHECK_EQ(::write(wr.get(), "through the pipe", 16), 16);
  char buf[32];
  CHECK_EQ(::read(rd.get(), buf, sizeof(buf)), 16);
  CHECK_EQ(std::string(buf, 16), "through the pipe");
  CHECK_EQ(lstat_of(p("fifo")).st_size, 0);
  DFS_CHECK_ERRNO(::lseek(rd.get(), 0, SEEK_SET), ESPIPE);
}

TEST_CASE_FIXTURE(Scratch, "posix/mknod: mkfifo on an existing name gives EEXIST") {
  write_file(p("f"), "x");
  DFS_CHECK_ERRNO(::mkfifo(p("f").c_str(), 0644), EEXIST);
  DFS_CHECK_ERRNO(::mknod(p("f").c_str(), S_IFCHR | 0600, makedev(1, 3)), EEXIST);
  DFS_CHECK_ERRNO(::mknod(p("missing/x").c_str(), S_IFIFO | 0600, 0), ENOENT);
  CHECK_EQ(read_file(p("f")), "x");
}

TEST_CASE_FIXTURE(Scratch, "posix/mknod: a unix socket bound in the directory") {
  REQUIRE_EQ(errno_name(bind_socket(dir(), "sock")), "OK");
  struct stat st = lstat_of(p("sock"));
  CHECK(S_ISSOCK(st.st_mode));
  CHECK_EQ(errno_name(bind_socket(dir(), "sock")), "EADDRINUSE");
  REQUIRE_EQ(::mknod(p("sock2").c_str(), S_IFSOCK | 0600, 0), 0);
  CHECK(S_ISSOCK(lstat_of(p("sock2")).st_mode));
  CHECK_EQ(errno_name(open_err(p("sock2"), O_RDONLY)), "ENXIO");
}

TEST_CASE_FIXTURE(Scratch, "posix/mknod: character device keeps its rdev") {
  dev_t dev = makedev(1, 3);  // /dev/null
  REQUIRE_EQ(::mknod(p("null").c_str(), S_IFCHR | 0666, dev), 0);
  REQUIRE_EQ(::chmod(p("null").c_str(), 0666), 0);
  struct stat st = lstat_of(p("null"));
  CHECK(S_ISCHR(st.st_mode));
  CHECK_EQ(major(st.st_rdev), 1u);
  CHECK_EQ(minor(st.st_rdev), 3u);
  CHECK_EQ(st.st_size, 0);
  // Opening it reaches the device, not the file system (unless mounted nodev).
  int fd = ::open(p("null").c_str(), O_WRONLY);
  if (fd < 0) {
    CHECK_EQ(errno_name(errno), "EACCES");  // nodev mounts refuse device opens
    MESSAGE("device open refused (nodev mount?)");
  } else {
    CHECK_EQ(::write(fd, "discarded", 9), 9);
    ::close(fd);
  }
}

TEST_CASE_FIXTURE(Scratch, "posix/mknod: block device and large device numbers") {
  REQUIRE_EQ(::mknod(p("loop").c_str(), S_IFBLK | 0600, makedev(7, 0)), 0);
  struct stat st = lstat_of(p("loop"));
  CHECK(S_ISBLK(st.st_mode));
  CHECK_EQ(major(st.st_rdev), 7u);
  CHECK_EQ(minor(st.st_rdev), 0u);
  dev_t big = makedev(4000, 1048575);  // needs the full 32-bit encoding
  REQUIRE_EQ(::mknod(p("big").c_str(), S_IFCHR | 0600, big), 0);
  CHECK_EQ(major(lstat_of(p("big")).st_rdev), 4000u);
  CHECK_EQ(minor(lstat_of(p("big")).st_rdev), 1048575u);
}

TEST_CASE_FIXTURE(Scratch, "posix/mknod: devices need privilege; fifos do not") {
  REQUIRE_EQ(::chmod(dir().c_str(), 0777), 0);
  CHECK_EQ(
      user_err(kUser1,
               [&] { return err_of(::mknod(p("dev").c_str(), S_IFCHR | 0600, makedev(1, 3))); }),
      "EPERM");
  CHECK_EQ(user_err(kUser1, [&] { return err_of(::mknod(p("fifo").c_str(), S_IFIFO | 0600, 0)); }),
           "OK");
  CHECK_FALSE(exists(p("dev")));
  CHECK_EQ(lstat_of(p("fifo")).st_uid, kUser1.uid);
}

TEST_CASE_FIXTURE(Scratch, "posix/mknod: an invalid type gives EINVAL; a dir type gives EPERM") {
  DFS_CHECK_ERRNO(::mknod(p("bad").c_str(), 0170000 | 0600, 0), EINVAL);
  DFS_CHECK_ERRNO(::mknod(p("dir").c_str(), S_IFDIR | 0755, 0), EPERM);
  CHECK_FALSE(exists(p("bad")));
  CHECK_FALSE(exists(p("dir")));
}

TEST_CASE_FIXTURE(Scratch, "posix/mknod: special files can be renamed and removed") {
  REQUIRE_EQ(::mknod(p("c").c_str(), S_IFCHR | 0600, makedev(1, 5)), 0);
  REQUIRE_EQ(::mkfifo(p("f").c_str(), 0600), 0);
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  DFS_REQUIRE_OK(::rename(p("c").c_str(), p("d/c").c_str()));
  DFS_REQUIRE_OK(::rename(p("f").c_str(), p("d/f").c_str()));
  CHECK_EQ(lstat_of(p("d/c")).st_rdev, makedev(1, 5));
  CHECK(S_ISFIFO(lstat_of(p("d/f")).st_mode));
  DFS_CHECK_OK(::unlink(p("d/c").c_str()));
  DFS_CHECK_OK(::unlink(p("d/f").c_str()));
  CHECK_EQ(list_dir(p("d")).size(), 2u);
}

}  // namespace dfs::posix
