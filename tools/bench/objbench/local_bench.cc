#include "tools/bench/objbench/local_bench.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

namespace dfs::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

ErrorCode code_of(int err) {
  switch (err) {
    case ENOENT:
      return ErrorCode::kNotFound;
    case EACCES:
    case EPERM:
    case EROFS:
      return ErrorCode::kPermissionDenied;
    case ENOSPC:
      return ErrorCode::kNoSpace;
    default:
      return ErrorCode::kIoError;
  }
}

Unexpected posix_error(const std::string& what, const std::string& path) {
  int err = errno;
  return make_error(code_of(err), fmt::format("{} {}: {}", what, path, std::strerror(err)));
}

// Closes a file descriptor on every path out of a scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

Status write_all(int fd, const char* data, size_t size, off_t offset, const std::string& path) {
  while (size > 0) {
    ssize_t n = ::pwrite(fd, data, size, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return posix_error("writing", path);
    data += n;
    size -= static_cast<size_t>(n);
    offset += n;
  }
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<LocalBench>> LocalBench::create(const BenchOptions& options,
                                                       std::string payload) {
  std::string dir = fmt::format("{}/objbench.{}", options.local_dir, ::getpid());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return posix_error("creating the local directory", dir);
  }
  return std::unique_ptr<LocalBench>(new LocalBench(dir, options.depth, std::move(payload)));
}

std::string LocalBench::large_path(int index) const {
  return fmt::format("{}/large.{}", dir_, index);
}
std::string LocalBench::small_path(int small) const {
  return fmt::format("{}/small.{}", dir_, small);
}

Status LocalBench::write_file(const std::string& path) const {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (fd.get() < 0) return posix_error("creating", path);
  DFS_TRY_STATUS(write_all(fd.get(), payload_.data(), kLargeBytes, 0, path));
  if (::fsync(fd.get()) != 0) return posix_error("fsync of", path);
  return ok_status();
}

Status LocalBench::read_file(const std::string& path) const {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return posix_error("opening", path);
  // One block of slack so that a file longer than it should be is noticed.
  std::string buffer(kLargeBytes + 4096, '\0');
  uint64_t total = 0;
  while (total < buffer.size()) {
    ssize_t n =
        ::pread(fd.get(), buffer.data() + total, buffer.size() - total, static_cast<off_t>(total));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return posix_error("reading", path);
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
  }
  if (total != kLargeBytes) {
    return make_error(ErrorCode::kCorruption, fmt::format("file {} read back {} bytes, wrote {}",
                                                          path, total, kLargeBytes));
  }
  return ok_status();
}

Result<Throughput> LocalBench::run_parallel(int first, int count, bool write) {
  if (write) large_written_ = std::max(large_written_, first + count);
  std::atomic<int> next{first};
  std::atomic<bool> stop{false};
  // Each thread keeps only its own first error; no state is shared but the counters.
  std::vector<Status> errors(static_cast<size_t>(depth_));
  auto work = [&](size_t slot) {
    for (int i = next++; i < first + count && !stop; i = next++) {
      auto done = write ? write_file(large_path(i)) : read_file(large_path(i));
      if (!done) {
        errors[slot] = std::move(done);
        stop = true;
      }
    }
  };
  auto start = SteadyClock::now();
  std::vector<std::thread> threads;
  for (size_t t = 0; t < errors.size(); ++t) threads.emplace_back(work, t);
  for (auto& t : threads) t.join();
  auto elapsed = SteadyClock::now() - start;
  for (auto& e : errors) {
    if (!e) return unexpected(std::move(e).error());
  }
  return Throughput{uint64_t(count) * kLargeBytes, elapsed};
}

Result<Throughput> LocalBench::write_large(int first, int count) {
  return run_parallel(first, count, true);
}
Result<Throughput> LocalBench::read_large(int first, int count) {
  return run_parallel(first, count, false);
}

Result<std::vector<double>> LocalBench::write_small(int small, int count) {
  small_written_ = std::max(small_written_, small + 1);
  std::string path = small_path(small);
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (fd.get() < 0) return posix_error("creating", path);
  std::vector<double> latencies_us;
  latencies_us.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    auto start = SteadyClock::now();
    DFS_TRY_STATUS(
        write_all(fd.get(), payload_.data(), kSmallBytes, off_t(i) * off_t(kSmallBytes), path));
    if (::fdatasync(fd.get()) != 0) return posix_error("fdatasync of", path);
    latencies_us.push_back(
        std::chrono::duration<double, std::micro>(SteadyClock::now() - start).count());
  }
  return latencies_us;
}

Status LocalBench::cleanup() {
  Status result = ok_status();
  auto remove = [&](const std::string& path) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT && result)
      result = posix_error("removing", path);
  };
  for (int i = 0; i < large_written_; ++i) remove(large_path(i));
  for (int i = 0; i < small_written_; ++i) remove(small_path(i));
  if (::rmdir(dir_.c_str()) != 0 && result) result = posix_error("removing", dir_);
  return result;
}

}  // namespace dfs::bench
