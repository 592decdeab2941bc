#include "osd/store/posix_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dfs::osd {

Error errno_error(int err, std::string_view what) {
  ErrorCode code = ErrorCode::kIoError;
  if (err == ENOSPC || err == EDQUOT) code = ErrorCode::kNoSpace;
  if (err == ENOENT) code = ErrorCode::kNotFound;
  return Error(code, std::string(what) + ": " + std::strerror(err));
}

Result<size_t> pread_full(int fd, char* buf, size_t len, uint64_t offset) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::pread(fd, buf + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_error(errno, "pread");
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

Status pwrite_full(int fd, std::string_view data, uint64_t offset) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n =
        ::pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_error(errno, "pwrite");
    done += static_cast<size_t>(n);
  }
  return ok_status();
}

Status truncate_fd(int fd, uint64_t size) {
  while (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    if (errno != EINTR) return errno_error(errno, "ftruncate");
  }
  return ok_status();
}

// lseek, not fstat: a stat marks the file's ctime as queried, which makes the kernel
// (multigrain timestamps, Linux 6.13+) give its next write a fine-grained timestamp
// and raise the floor for every file's timestamps. The next WAL append then changes
// the WAL's mtime, and its sync must write the inode too, which is what the WAL
// prefill (wal_prefill.h) exists to avoid. The file offset it moves is unused: data
// files are only read and written with pread/pwrite.
Result<uint64_t> fd_size(int fd) {
  off_t end = ::lseek(fd, 0, SEEK_END);
  if (end < 0) return errno_error(errno, "lseek");
  return static_cast<uint64_t>(end);
}

Status fdatasync_fd(int fd) {
  if (::fdatasync(fd) != 0) return errno_error(errno, "fdatasync");
  return ok_status();
}

Status fsync_dir(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_error(errno, "open " + path);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return errno_error(err, "fsync " + path);
  return ok_status();
}

Status write_file_atomic(const std::string& dir, const std::string& name,
                         std::string_view contents) {
  std::string tmp = dir + "/" + name + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno_error(errno, "create " + tmp);
  Status st = pwrite_full(fd, contents, 0);
  if (st && ::fsync(fd) != 0) st = errno_error(errno, "fsync " + tmp);
  ::close(fd);
  if (!st) return st;
  std::string path = dir + "/" + name;
  if (::rename(tmp.c_str(), path.c_str()) != 0) return errno_error(errno, "rename " + path);
  return fsync_dir(dir);
}

Result<std::string> read_small_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_error(errno, "open " + path);
  std::string out(4096, '\0');
  Result<size_t> n = pread_full(fd, out.data(), out.size(), 0);
  ::close(fd);
  if (!n) return std::move(n).error();
  out.resize(*n);
  return out;
}

}  // namespace dfs::osd
