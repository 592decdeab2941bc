// open(2) and creat(2): creation flags, access modes, O_APPEND, O_DIRECTORY, O_NOFOLLOW.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "tests/posix/posix_support.h"

namespace dfs::posix {

TEST_CASE_FIXTURE(Scratch, "posix/open: O_CREAT creates an empty file with mode & ~umask") {
  ::umask(027);
  Fd fd = open_ok(p("f"), O_WRONLY | O_CREAT, 0666);
  struct stat st = fstat_of(fd.get());
  CHECK(S_ISREG(st.st_mode));
  CHECK_EQ(st.st_mode & 07777, 0640);
  CHECK_EQ(st.st_size, 0);
  CHECK_EQ(st.st_nlink, 1);
  CHECK_EQ(st.st_uid, ::geteuid());
  CHECK_EQ(st.st_gid, ::getegid());
}

TEST_CASE_FIXTURE(Scratch, "posix/open: O_CREAT on an existing file keeps mode and data") {
  write_file(p("f"), "hello", 0600);
  Fd fd = open_ok(p("f"), O_RDWR | O_CREAT, 0777);
  CHECK_EQ(fstat_of(fd.get()).st_mode & 07777, 0600);
  CHECK_EQ(pread_str(fd.get(), 100, 0), "hello");
}

TEST_CASE_FIXTURE(Scratch, "posix/open: O_CREAT|O_EXCL on an existing file gives EEXIST") {
  write_file(p("f"), "x");
  CHECK_EQ(errno_name(open_err(p("f"), O_WRONLY | O_CREAT | O_EXCL)), "EEXIST");
  CHECK_EQ(read_file(p("f")), "x");
}

TEST_CASE_FIXTURE(Scratch, "posix/open: O_CREAT|O_EXCL on a directory or symlink gives EEXIST") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  write_file(p("target"), "t");
  REQUIRE_EQ(::symlink("target", p("link").c_str()), 0);
  REQUIRE_EQ(::symlink("missing", p("dangling").c_str()), 0);
  CHECK_EQ(errno_name(open_err(p("d"), O_WRONLY | O_CREAT | O_EXCL)), "EEXIST");
  CHECK_EQ(errno_name(open_err(p("link"), O_WRONLY | O_CREAT | O_EXCL)), "EEXIST");
  CHECK_EQ(errno_name(open_err(p("dangling"), O_WRONLY | O_CREAT | O_EXCL)), "EEXIST");
  CHECK_FALSE(exists(p("missing")));
}

TEST_CASE_FIXTURE(Scratch, "posix/open: O_CREAT|O_EXCL from many processes has one winner") {
  constexpr int kProcs = 8;
  pid_t pids[kProcs];
  for (int i = 0; i < kProcs; ++i) {
    pids[i] = ::fork();
    REQUIRE(pids[i] >= 0);
    if (pids[i] == 0) {
      int fd = ::open(p("race").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
      if (fd < 0) ::_exit(errno == EEXIST ? 1 : 2);
      ::_exit(0);
    }
  }
  int winners = 0, losers = 0;
  for (pid_t pid : pids) {
    int status = 0;
    REQUIRE_EQ(::waitpid(pid, &status, 0), pid);
    REQUIRE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 0) ++winners;
    if (WEXITSTATUS(status) == 1) ++losers;
  }
  CHECK_EQ(winners, 1);
  CHECK_EQ(losers, kProcs - 1);
}

TEST_CASE_FIXTURE(Scratch, "posix/open: O_TRUNC empties an existing file") {
  write_file(p("f"), std::string(10000, 'a'));
  Fd fd = open_ok(p("f"), O_RDWR | O_TRUNC);
  CHECK_EQ(fstat_of(fd.get()).st_size, 0);
  CHECK_EQ(pread_str(fd.get(), 10, 0), "");
  pwrite_all(fd.get(), "b", 0);
  CHECK_EQ(read_file(p("f")), "b");
}

TEST_CASE_FIXTURE(Scratch, "posix/open: creat() creates or truncates for writing only") {
  write_file(p("f"), "old contents");
  Fd fd(::creat(p("f").c_str(), 0600));
  REQUIRE(fd);
  CHECK_EQ(fstat_of(fd.get()).st_size, 0);
  CHECK_EQ(fstat_of(fd.get()).st_mode & 07777, 0644);  // existing file keeps its mode
  char c;
  DFS_CHECK_ERRNO(::read(fd.get(), &c, 1), EBADF);
  Fd fresh(::creat(p("g").c_str(), 0600));
  REQUIRE(fresh);
  CHECK_EQ(fstat_of(fresh.get()).st_mode & 07777, 0600);
  CHECK_EQ(fcntl(fresh.get(), F_GETFL) & O_ACCMODE, O_WRONLY);
}

TEST_CASE_FIXTURE(Scratch, "posix/open: missing file without O_CREAT gives ENOENT") {
  CHECK_EQ(errno_name(open_err(p("nope"), O_RDONLY)), "ENOENT");
  CHECK_EQ(errno_name(open_err(p("nope/x"), O_RDONLY | O_CREAT)), "ENOENT");
  CHECK_EQ(errno_name(open_err(p("a/b/c"), O_RDWR | O_CREAT)), "ENOENT");
  CHECK_FALSE(exists(p("nope")));
}

TEST_CASE_FIXTURE(Scratch, "posix/open: a file used as a directory gives ENOTDIR") {
  write_file(p("f"), "x");
  CHECK_EQ(errno_name(open_err(p("f/x"), O_RDONLY)), "ENOTDIR");
  CHECK_EQ(errno_name(open_err(p("f/x"), O_WRONLY | O_CREAT)), "ENOTDIR");
  CHECK_EQ(errno_name(open_err(p("f/"), O_RDONLY)), "ENOTDIR");
}

TEST_CASE_FIXTURE(Scratch, "posix/open: directories open read-only; writes give EISDIR") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  CHECK_EQ(errno_name(open_err(p("d"), O_RDONLY)), "OK");
  CHECK_EQ(errno_name(open_err(p("d"), O_WRONLY)), "EISDIR");
  CHECK_EQ(errno_name(open_err(p("d"), O_RDWR)), "EISDIR");
  CHECK_EQ(errno_name(open_err(p("d"), O_RDWR | O_CREAT)), "EISDIR");
  CHECK_EQ(errno_name(open_err(p("d"), O_RDONLY | O_TRUNC)), "EISDIR");
}

TEST_CASE_FIXTURE(Scratch, "posix/open: O_DIRECTORY accepts dirs and rejects files") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  write_file(p("f"), "x");
  REQUIRE_EQ(::symlink("d", p("dl").c_str()), 0);
  CHECK_EQ(errno_name(open_err(p("d"), O_RDONLY | O_DIRECTORY)), "OK");
  CHECK_EQ(errno_name(open_err(p("dl"), O_RDONLY | O_DIRECTORY)), "OK");
  CHECK_EQ(errno_name(open_err(p("f"), O_RDONLY | O_DIRECTORY)), "ENOTDIR");
  CHECK_EQ(errno_name(open_err(p("missing"), O_RDONLY | O_DIRECTORY)), "ENOENT");
}

TEST_CASE_FIXTURE(Scratch, "posix/open: O_NOFOLLOW on a symlink gives ELOOP") {
  write_file(p("target"), "t");
  REQUIRE_EQ(::symlink("target", p("link").c_str()), 0);
  REQUIRE_EQ(::symlink("missing", p("dangling").c_str()), 0);
  CHECK_EQ(errno_name(open_err(p("link"), O_RDONLY | O_NOFOLLOW)), "ELOOP");
  CHECK_EQ(errno_name(open_err(p("dangling"), O_RDONLY | O_NOFOLLOW)), "ELOOP");
  CHECK_EQ(errno_name(open_err(p("dangling"), O_WRONLY | O_CREAT | O_NOFOLLOW)), "ELOOP");
  CHECK_EQ(errno_name(open_err(p("target"), O_RDONLY | O_NOFOLLOW)), "OK");
  CHECK_FALSE(exists(p("missing")));
}

TEST_CASE_FIXTURE(Scratch, "posix/open: O_NOFOLLOW only applies to the last component") {
  REQUIRE_EQ(::mkdir(p("d").c_str(), 0755), 0);
  write_file(p("d/f"), "inside");
  REQUIRE_EQ(::symlink("d", p("dl").c_str()), 0);
  Fd fd = open_ok(p("dl/f"), O_RDONLY | O_NOFOLLOW);
  CHECK_EQ(pread_str(fd.get(), 100, 0), "inside");
}

TEST_CASE_FIXTURE(Scratch, "posix/open: O_CREAT through a dangling symlink creates the target") {
  REQUIRE_EQ(::symlink("target", p("link").c_str()), 0);
  {
    Fd fd = open_ok(p("link"), O_WRONLY | O_CREAT, 0644);
    pwrite_all(fd.get(), "via link", 0);
  }
  CHECK(S_ISREG(lstat_of(p("target")).st_mode));
  CHECK(S_ISLNK(lstat_of(p("link")).st_mode));
  CHECK_EQ(read_file(p("target")), "via link");
}

TEST_CASE_FIXTURE(Scratch, "posix/open: access modes are enforced on the descriptor") {
  write_file(p("f"), "abc");
  char c = 'x';
  Fd ro = open_ok(p("f"), O_RDONLY);
  DFS_CHECK_ERRNO(::write(ro.get(), &c, 1), EBADF);
  Fd wo = open_ok(p("f"), O_WRONLY);
  DFS_CHECK_ERRNO(::read(wo.get(), &c, 1), EBADF);
  Fd rw = open_ok(p("f"), O_RDWR);
  CHECK_EQ(::read(rw.get(), &c, 1), 1);
  CHECK_EQ(c, 'a');
  CHECK_EQ(::write(rw.get(), "Z", 1), 1);
  CHECK_EQ(read_file(p("f")), "aZc");
}

TEST_CASE_FIXTURE(Scratch, "posix/open: O_APPEND writes at the end regardless of the offset") {
  write_file(p("f"), "start");
  Fd fd = open_ok(p("f"), O_WRONLY | O_APPEND);
  REQUIRE_EQ(::lseek(fd.get(), 0, SEEK_SET), 0);
  CHECK_EQ(::write(fd.get(), "-one", 4), 4);
  CHECK_EQ(::lseek(fd.get(), 0, SEEK_CUR), 9);
  REQUIRE_EQ(::lseek(fd.get(), 2, SEEK_SET), 2);
  CHECK_EQ(::write(fd.get(), "-two", 4), 4);
  CHECK_EQ(read_file(p("f")), "start-one-two");
}

TEST_CASE_FIXTURE(Scratch, "posix/open: pwrite on an O_APPEND descriptor appends (Linux)") {
  write_file(p("f"), "0123456789");
  Fd fd = open_ok(p("f"), O_WRONLY | O_APPEND);
  CHECK_EQ(::pwrite(fd.get(), "AB", 2, 0), 2);
  CHECK_EQ(read_file(p("f")), "0123456789AB");
}

TEST_CASE_FIXTURE(Scratch, "posix/open: O_APPEND through two descriptors interleaves whole") {
  write_file(p("f"), "");
  Fd a = open_ok(p("f"), O_WRONLY | O_APPEND);
  Fd b = open_ok(p("f"), O_WRONLY | O_APPEND);
  CHECK_EQ(::write(a.get(), "a1", 2), 2);
  CHECK_EQ(::write(b.get(), "b1", 2), 2);
  CHECK_EQ(::write(a.get(), "a2", 2), 2);
  CHECK_EQ(::write(b.get(), "b2", 2), 2);
  CHECK_EQ(read_file(p("f")), "a1b1a2b2");
}

TEST_CASE_FIXTURE(Scratch, "posix/open: concurrent O_APPEND writers lose no record") {
  constexpr int kWriters = 4;
  constexpr int kRecords = 500;
  constexpr size_t kRecordBytes = 64;
  write_file(p("log"), "");
  auto writer = [&](int id) {
    int fd = ::open(p("log").c_str(), O_WRONLY | O_APPEND);
    if (fd < 0) return;
    for (int i = 0; i < kRecords; ++i) {
      std::string rec(kRecordBytes, static_cast<char>('A' + id));
      rec.replace(1, 6, std::to_string(100000 + i));
      rec.back() = '\n';
      if (::write(fd, rec.data(), rec.size()) != static_cast<ssize_t>(rec.size())) break;
    }
    ::close(fd);
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) threads.emplace_back(writer, i);
  for (auto& t : threads) t.join();
  std::string data = read_file(p("log"));
  REQUIRE_EQ(data.size(), kWriters * kRecords * kRecordBytes);
  std::vector<int> next(kWriters, 0);
  bool intact = true;
  for (size_t off = 0; off < data.size(); off += kRecordBytes) {
    std::string rec = data.substr(off, kRecordBytes);
    int id = rec[0] - 'A';
    if (id < 0 || id >= kWriters || rec.back() != '\n' ||
        rec.substr(1, 6) != std::to_string(100000 + next[id]) ||
        rec.find_first_not_of(rec[0], 7) != kRecordBytes - 1) {
      intact = false;
      break;
    }
    ++next[id];  // each writer's records appear in its own order
  }
  CHECK(intact);
  for (int i = 0; i < kWriters; ++i) CHECK_EQ(next[i], kRecords);
}

TEST_CASE_FIXTURE(Scratch, "posix/open: F_SETFL toggles O_APPEND on an open descriptor") {
  write_file(p("f"), "abc");
  Fd fd = open_ok(p("f"), O_WRONLY);
  CHECK_EQ(::write(fd.get(), "X", 1), 1);
  REQUIRE_EQ(::fcntl(fd.get(), F_SETFL, O_APPEND), 0);
  CHECK((::fcntl(fd.get(), F_GETFL) & O_APPEND) != 0);
  CHECK_EQ(::write(fd.get(), "Y", 1), 1);
  CHECK_EQ(read_file(p("f")), "XbcY");
}

TEST_CASE_FIXTURE(Scratch, "posix/open: O_TMPFILE file can be linked into the namespace") {
  int fd = ::open(dir().c_str(), O_TMPFILE | O_RDWR, 0600);
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
    MESSAGE("O_TMPFILE not supported here: " << errno_name(errno) << " (allowed)");
    return;
  }
  REQUIRE_MESSAGE(fd >= 0, errno_name(errno));
  Fd tmp(fd);
  pwrite_all(tmp.get(), "anonymous", 0);
  CHECK_EQ(fstat_of(tmp.get()).st_nlink, 0);
  CHECK_EQ(list_dir(dir()).size(), 2u);
  std::string proc = "/proc/self/fd/" + std::to_string(tmp.get());
  DFS_REQUIRE_OK(::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, p("named").c_str(), AT_SYMLINK_FOLLOW));
  CHECK_EQ(fstat_of(tmp.get()).st_nlink, 1);
  CHECK_EQ(read_file(p("named")), "anonymous");
}

}  // namespace dfs::posix
