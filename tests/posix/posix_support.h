// Shared fixture and helpers for the POSIX conformance suite (tests/posix). Every case runs
// in a fresh scratch directory under the run root (env DFS_POSIX_DIR, default a temp dir on
// local disk), as root; cases that need an unprivileged caller fork a child with as_user().
// Single-threaded except where a case starts its own threads and joins them.
#pragma once

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cerrno>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace dfs::posix {

// The run root: a directory created for this process under DFS_POSIX_DIR (or /tmp) with mode
// 0755. init_run_root() returns false and prints why when the root is unusable.
bool init_run_root();
void cleanup_run_root();
const std::string& run_root();
// True when the run root is on the local disk the suite defaults to (ext4, tmpfs, ...), as
// opposed to a FUSE mount. Only used to tolerate documented local-fs limits.
bool root_fs_is(long magic);

// A fresh, empty scratch directory (0755, owned by the caller's uid/gid, no setgid bit) for
// one test case; removed with its contents afterwards unless DFS_POSIX_KEEP is set.
class Scratch {
 public:
  Scratch();
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  const std::string& dir() const { return dir_; }
  // Absolute path of `rel` inside the scratch directory.
  std::string p(std::string_view rel) const { return dir_ + "/" + std::string(rel); }

 private:
  std::string dir_;
};

// ---- errno checks -------------------------------------------------------------------------

// "EACCES" for EACCES, "OK" for 0; doctest prints these on mismatch.
std::string errno_name(int err);
// errno of a failed call (rc == -1), 0 for success. Read errno before anything else runs.
inline int err_of(long rc) { return rc == -1 ? errno : 0; }

// Checks that `expr` fails with exactly `err` (or succeeds when err is 0).
#define DFS_CHECK_ERRNO(expr, err) \
  CHECK_EQ(::dfs::posix::errno_name(::dfs::posix::err_of(expr)), ::dfs::posix::errno_name(err))
#define DFS_REQUIRE_ERRNO(expr, err) \
  REQUIRE_EQ(::dfs::posix::errno_name(::dfs::posix::err_of(expr)), ::dfs::posix::errno_name(err))
#define DFS_CHECK_OK(expr) DFS_CHECK_ERRNO(expr, 0)
#define DFS_REQUIRE_OK(expr) DFS_REQUIRE_ERRNO(expr, 0)

// open() that closes the descriptor again; returns errno or 0.
int open_err(const std::string& path, int flags, mode_t mode = 0644);

// ---- file descriptors and data ------------------------------------------------------------

// Owns one file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.release();
    }
    return *this;
  }
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// open() that REQUIREs success.
Fd open_ok(const std::string& path, int flags, mode_t mode = 0644);

// Creates or truncates `path` and writes `data`; REQUIREs success.
void write_file(const std::string& path, std::string_view data, mode_t mode = 0644);
// Whole contents of `path`; REQUIREs success.
std::string read_file(const std::string& path);
// Writes all of `data` at `off` (pwrite loop); REQUIREs success.
void pwrite_all(int fd, std::string_view data, off_t off);
// Reads up to `len` bytes at `off`, stopping early only at EOF; REQUIREs no error.
std::string pread_str(int fd, size_t len, off_t off);
// Deterministic bytes that depend on the absolute file offset, for placement checks.
std::string pattern(size_t len, uint64_t off, uint8_t seed = 0);

struct stat stat_of(const std::string& path);   // stat(), REQUIREs success
struct stat lstat_of(const std::string& path);  // lstat(), REQUIREs success
struct stat fstat_of(int fd);                   // fstat(), REQUIREs success
bool exists(const std::string& path);           // lstat() succeeds
inline int64_t ns(const timespec& t) { return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec; }
// Sleeps long enough that the file system's clock visibly advances (coarse timestamps).
void tick();
// Current CLOCK_REALTIME in ns.
int64_t now_ns();
// Sets atime and mtime of `path` (not following symlinks) to `sec` seconds, 0 ns.
void set_times(const std::string& path, int64_t sec);

// Directory entries by name, "." and ".." included; REQUIREs that opendir works.
std::multiset<std::string> list_dir(const std::string& path);

// Creates a unix socket node `name` in `dir` by bind(2) (relative to `dir`, so long paths
// do not hit the sun_path limit); returns errno or 0.
int bind_socket(const std::string& dir, const std::string& name);

// renameat2(2) through the raw syscall, so old glibc wrappers do not matter.
int rename2(const std::string& from, const std::string& to, unsigned flags);

// Value of xattr `name` on `path` (not following symlinks); REQUIREs success.
std::string get_xattr(const std::string& path, const std::string& name);
// All xattr names on `path` (not following symlinks); REQUIREs success.
std::set<std::string> list_xattrs(const std::string& path);

// ---- unprivileged callers -----------------------------------------------------------------

struct Cred {
  uid_t uid;
  gid_t gid;
  std::vector<gid_t> groups;  // supplementary groups; none by default
};
inline const Cred kUser1{1000, 1000, {}};
inline const Cred kUser2{1001, 1001, {}};
inline const Cred kNobody{65534, 65534, {}};

// Runs `fn` in a forked child with the given credentials (setgroups, setgid, setuid) and
// returns its result, which must fit an exit status (0..255): cases return an errno. Returns
// 255 when the child could not drop privileges and 256 + signal when it was killed.
// Requires: the caller is root. `fn` must not use doctest assertions.
int as_user(const Cred& cred, const std::function<int()>& fn);
// errno_name(as_user(cred, fn)): for CHECK_EQ(user_err(kUser1, [&] { ... }), "EACCES").
inline std::string user_err(const Cred& cred, const std::function<int()>& fn) {
  return errno_name(as_user(cred, fn));
}

}  // namespace dfs::posix
