#include "tests/posix/posix_support.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

namespace dfs::posix {
namespace {

std::string g_run_root;
long g_root_magic = 0;
std::atomic<int> g_case_counter{0};

// Keeps letters and digits of a test name so that a kept scratch dir can be recognised.
std::string sanitize(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (out.size() >= 48) break;
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (keep) {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  return out;
}

std::string current_test_name() {
  const auto* opts = doctest::getContextOptions();
  if (opts == nullptr || opts->currentTest == nullptr) return "case";
  return opts->currentTest->m_name;
}

bool keep_scratch() {
  const char* keep = std::getenv("DFS_POSIX_KEEP");
  return keep != nullptr && *keep != '\0' && std::string_view(keep) != "0";
}

}  // namespace

bool init_run_root() {
  const char* base = std::getenv("DFS_POSIX_DIR");
  std::string tmpl;
  if (base != nullptr && *base != '\0') {
    struct stat st {};
    if (::stat(base, &st) != 0 || !S_ISDIR(st.st_mode)) {
      std::fprintf(stderr, "posix_test: DFS_POSIX_DIR=%s is not a directory\n", base);
      return false;
    }
    tmpl = std::string(base) + "/dfs-posix-XXXXXX";
  } else {
    tmpl = "/tmp/dfs-posix-XXXXXX";
  }
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    std::fprintf(stderr, "posix_test: mkdtemp(%s): %s\n", tmpl.c_str(), std::strerror(errno));
    return false;
  }
  g_run_root = buf.data();
  // mkdtemp makes 0700; unprivileged children must be able to traverse the root.
  if (::chmod(g_run_root.c_str(), 0755) != 0 ||
      ::chown(g_run_root.c_str(), ::geteuid(), ::getegid()) != 0) {
    std::fprintf(stderr, "posix_test: cannot set up %s: %s\n", g_run_root.c_str(),
                 std::strerror(errno));
    return false;
  }
  struct statfs sfs {};
  if (::statfs(g_run_root.c_str(), &sfs) == 0) g_root_magic = sfs.f_type;
  std::fprintf(stderr, "posix_test: run root %s (f_type 0x%lx)\n", g_run_root.c_str(),
               g_root_magic);
  return true;
}

void cleanup_run_root() {
  if (g_run_root.empty() || keep_scratch()) return;
  std::error_code ec;
  std::filesystem::remove_all(g_run_root, ec);
  if (ec)
    std::fprintf(stderr, "posix_test: cleanup of %s: %s\n", g_run_root.c_str(),
                 ec.message().c_str());
}

const std::string& run_root() { return g_run_root; }

bool root_fs_is(long magic) { return g_root_magic == magic; }

Scratch::Scratch() {
  REQUIRE_MESSAGE(!g_run_root.empty(), "run root not initialised");
  char num[16];
  std::snprintf(num, sizeof(num), "%04d", ++g_case_counter);
  dir_ = g_run_root + "/" + num + "-" + sanitize(current_test_name());
  REQUIRE_EQ(errno_name(err_of(::mkdir(dir_.c_str(), 0755))), "OK");
  // Normalise what a setgid or ACL-carrying run root could have passed on.
  REQUIRE_EQ(errno_name(err_of(::chown(dir_.c_str(), ::geteuid(), ::getegid()))), "OK");
  REQUIRE_EQ(errno_name(err_of(::chmod(dir_.c_str(), 0755))), "OK");
  ::removexattr(dir_.c_str(), "system.posix_acl_default");
  ::umask(022);
}

Scratch::~Scratch() {
  ::umask(022);
  if (keep_scratch()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
  if (ec)
    std::fprintf(stderr, "posix_test: cleanup of %s: %s\n", dir_.c_str(), ec.message().c_str());
}

std::string errno_name(int err) {
  if (err == 0) return "OK";
  const char* name = ::strerrorname_np(err);
  return name != nullptr ? name : "errno " + std::to_string(err);
}

int open_err(const std::string& path, int flags, mode_t mode) {
  int fd = ::open(path.c_str(), flags, mode);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Fd open_ok(const std::string& path, int flags, mode_t mode) {
  int fd = ::open(path.c_str(), flags, mode);
  REQUIRE_MESSAGE(fd >= 0, "open(" << path << "): " << errno_name(errno));
  return Fd(fd);
}

void write_file(const std::string& path, std::string_view data, mode_t mode) {
  Fd fd = open_ok(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
  pwrite_all(fd.get(), data, 0);
}

std::string read_file(const std::string& path) {
  Fd fd = open_ok(path, O_RDONLY);
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    REQUIRE_MESSAGE(n >= 0, "read(" << path << "): " << errno_name(errno));
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

void pwrite_all(int fd, std::string_view data, off_t off) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n =
        ::pwrite(fd, data.data() + done, data.size() - done, off + static_cast<off_t>(done));
    REQUIRE_MESSAGE(n > 0,
                    "pwrite at " << off + static_cast<off_t>(done) << ": " << errno_name(errno));
    done += static_cast<size_t>(n);
  }
}

std::string pread_str(int fd, size_t len, off_t off) {
  std::string out(len, '\0');
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd, out.data() + done, len - done, off + static_cast<off_t>(done));
    REQUIRE_MESSAGE(n >= 0,
                    "pread at " << off + static_cast<off_t>(done) << ": " << errno_name(errno));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return out;
}

std::string pattern(size_t len, uint64_t off, uint8_t seed) {
  std::string out(len, '\0');
  for (size_t i = 0; i < len; ++i) {
    uint64_t o = off + i;
    out[i] = static_cast<char>(((o * 2654435761u) >> 7) ^ (o >> 12) ^ seed ^ 0x5a);
  }
  return out;
}

struct stat stat_of(const std::string& path) {
  struct stat st {};
  REQUIRE_MESSAGE(::stat(path.c_str(), &st) == 0, "stat(" << path << "): " << errno_name(errno));
  return st;
}

struct stat lstat_of(const std::string& path) {
  struct stat st {};
  REQUIRE_MESSAGE(::lstat(path.c_str(), &st) == 0, "lstat(" << path << "): " << errno_name(errno));
  return st;
}

struct stat fstat_of(int fd) {
  struct stat st {};
  REQUIRE_MESSAGE(::fstat(fd, &st) == 0, "fstat: " << errno_name(errno));
  return st;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

void tick() { std::this_thread::sleep_for(std::chrono::milliseconds(25)); }

int64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return ns(t);
}

void set_times(const std::string& path, int64_t sec) {
  timespec ts[2] = {{sec, 0}, {sec, 0}};
  REQUIRE_MESSAGE(::utimensat(AT_FDCWD, path.c_str(), ts, AT_SYMLINK_NOFOLLOW) == 0,
                  "utimensat(" << path << "): " << errno_name(errno));
}

std::multiset<std::string> list_dir(const std::string& path) {
  DIR* d = ::opendir(path.c_str());
  REQUIRE_MESSAGE(d != nullptr, "opendir(" << path << "): " << errno_name(errno));
  std::multiset<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(d)) names.insert(e->d_name);
  int err = errno;
  ::closedir(d);
  REQUIRE_MESSAGE(err == 0, "readdir(" << path << "): " << errno_name(err));
  return names;
}

int bind_socket(const std::string& dir, const std::string& name) {
  int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (s < 0) return errno;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (name.size() >= sizeof(addr.sun_path)) return ENAMETOOLONG;
  std::memcpy(addr.sun_path, name.data(), name.size());
  int cwd = ::open(".", O_RDONLY | O_DIRECTORY);
  int rc = ::chdir(dir.c_str());
  if (rc == 0) rc = ::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  int err = rc == 0 ? 0 : errno;
  if (cwd >= 0) {
    if (::fchdir(cwd) != 0) err = errno;
    ::close(cwd);
  }
  ::close(s);
  return err;
}

int rename2(const std::string& from, const std::string& to, unsigned flags) {
  return static_cast<int>(
      ::syscall(SYS_renameat2, AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), flags));
}

std::string get_xattr(const std::string& path, const std::string& name) {
  ssize_t n = ::lgetxattr(path.c_str(), name.c_str(), nullptr, 0);
  REQUIRE_MESSAGE(n >= 0, "lgetxattr(" << path << ", " << name << "): " << errno_name(errno));
  std::string out(static_cast<size_t>(n), '\0');
  n = ::lgetxattr(path.c_str(), name.c_str(), out.data(), out.size());
  REQUIRE_MESSAGE(n >= 0, "lgetxattr(" << path << ", " << name << "): " << errno_name(errno));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::set<std::string> list_xattrs(const std::string& path) {
  ssize_t n = ::llistxattr(path.c_str(), nullptr, 0);
  REQUIRE_MESSAGE(n >= 0, "llistxattr(" << path << "): " << errno_name(errno));
  std::string buf(static_cast<size_t>(n), '\0');
  n = ::llistxattr(path.c_str(), buf.data(), buf.size());
  REQUIRE_MESSAGE(n >= 0, "llistxattr(" << path << "): " << errno_name(errno));
  std::set<std::string> names;
  size_t pos = 0;
  while (pos < static_cast<size_t>(n)) {
    size_t end = buf.find('\0', pos);
    if (end == std::string::npos) end = static_cast<size_t>(n);
    names.insert(buf.substr(pos, end - pos));
    pos = end + 1;
  }
  return names;
}

int as_user(const Cred& cred, const std::function<int()>& fn) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  REQUIRE_MESSAGE(pid >= 0, "fork: " << errno_name(errno));
  if (pid == 0) {
    if (::setgroups(cred.groups.size(), cred.groups.data()) != 0 ||
        ::setresgid(cred.gid, cred.gid, cred.gid) != 0 ||
        ::setresuid(cred.uid, cred.uid, cred.uid) != 0) {
      ::_exit(255);
    }
    int rc = fn();
    ::_exit(rc < 0 || rc > 254 ? 254 : rc);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    REQUIRE_MESSAGE(errno == EINTR, "waitpid: " << errno_name(errno));
  }
  if (WIFSIGNALED(status)) return 256 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace dfs::posix
