#include "osd/store/wal_prefill.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "osd/store/posix_io.h"

namespace dfs::osd {

namespace {

constexpr size_t kChunkBytes = 1 << 20;
constexpr size_t kPageBytes = 4096;

// Puts the calling thread in the idle I/O scheduling class. (<linux/ioprio.h> is not
// valid C++: it names a parameter `class`.)
Status set_idle_io_priority() {
  constexpr int kWhoProcess = 1;  // IOPRIO_WHO_PROCESS; with id 0, the calling thread
  constexpr int kIdleClass = 3;   // IOPRIO_CLASS_IDLE
  constexpr int kClassShift = 13;
  if (::syscall(SYS_ioprio_set, kWhoProcess, 0, kIdleClass << kClassShift) != 0) {
    return errno_error(errno, "ioprio_set");
  }
  return ok_status();
}

// RocksDB names a WAL "<number>.log" (LogFileName); its info log is "LOG".
bool is_wal_name(std::string_view name) {
  constexpr std::string_view kSuffix = ".log";
  if (name.size() <= kSuffix.size() || !name.ends_with(kSuffix)) return false;
  name.remove_suffix(kSuffix.size());
  return std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A WAL handed out over a prefilled file. RocksDB's records do not end on page
// boundaries, so a write into a page that is not in the page cache would first read
// that block from disk, synchronously. The filler's zeros are not cached (O_DIRECT),
// and cached pages may be dropped at any time (memory reclaim; objbench drops the
// whole page cache between phases), so before each append this file asks the kernel
// to read the 64 KiB chunk being written and the next one in the background. Pages
// already cached cost a lookup and no I/O, so the reads come one chunk at a time.
class PrefilledWal final : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  static constexpr uint64_t kChunkAheadBytes = 64 << 10;

  PrefilledWal(std::unique_ptr<rocksdb::FSWritableFile> file, int read_fd, uint64_t prefilled)
      : rocksdb::FSWritableFileOwnerWrapper(std::move(file)),
        read_fd_(read_fd),
        prefilled_(prefilled) {
    look_ahead(0);
  }
  ~PrefilledWal() override {
    if (read_fd_ >= 0) ::close(read_fd_);
  }

  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* dbg) override {
    look_ahead(data.size());
    return target()->Append(data, options, dbg);
  }
  rocksdb::IOStatus Append(const rocksdb::Slice& data, const rocksdb::IOOptions& options,
                           const rocksdb::DataVerificationInfo& info,
                           rocksdb::IODebugContext* dbg) override {
    look_ahead(data.size());
    return target()->Append(data, options, info, dbg);
  }

 private:
  // Called before each append of `bytes` (RocksDB appends from one thread at a time).
  void look_ahead(uint64_t bytes) {
    uint64_t from = written_ / kChunkAheadBytes * kChunkAheadBytes;
    written_ += bytes;
    uint64_t to = std::min(from + 2 * kChunkAheadBytes, prefilled_);
    if (read_fd_ < 0 || to <= from) return;
    // Advisory: without it a write may only wait for the read.
    (void)::posix_fadvise(read_fd_, static_cast<off_t>(from), static_cast<off_t>(to - from),
                          POSIX_FADV_WILLNEED);
  }

  const int read_fd_;  // -1: no prefetching
  const uint64_t prefilled_;
  uint64_t written_ = 0;
};

}  // namespace

WalPrefillFs::WalPrefillFs(std::string db_dir, uint64_t prefill_bytes)
    : rocksdb::FileSystemWrapper(rocksdb::FileSystem::Default()),
      db_dir_(std::move(db_dir)),
      spare_path_(db_dir_ + "/wal-spare.dfs"),
      prefill_bytes_(prefill_bytes) {}

WalPrefillFs::~WalPrefillFs() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (filler_.joinable()) filler_.join();
}

Status WalPrefillFs::prepare() {
  if (prefill_bytes_ == 0) return ok_status();
  DFS_TRY_STATUS(fill_spare());
  std::lock_guard lock(mu_);
  spare_ready_ = true;
  return ok_status();
}

void WalPrefillFs::start() {
  if (prefill_bytes_ == 0 || filler_.joinable()) return;
  filler_ = std::thread([this] { fill_loop(); });
}

bool WalPrefillFs::is_wal(const std::string& fname) const {
  auto slash = fname.rfind('/');
  return is_wal_name(slash == std::string::npos ? std::string_view(fname)
                                                : std::string_view(fname).substr(slash + 1));
}

rocksdb::IOStatus WalPrefillFs::NewWritableFile(const std::string& fname,
                                                const rocksdb::FileOptions& options,
                                                std::unique_ptr<rocksdb::FSWritableFile>* result,
                                                rocksdb::IODebugContext* dbg) {
  if (prefill_bytes_ == 0 || !is_wal(fname)) {
    return target()->NewWritableFile(fname, options, result, dbg);
  }
  std::unique_lock lock(mu_);
  bool had_spare = std::exchange(spare_ready_, false);
  want_spare_ = true;
  cv_.notify_one();
  if (had_spare) {
    // Opens the spare without truncating it and renames it into place; RocksDB writes
    // it from offset 0. It truncates the unused zeros when it closes the log; after a
    // crash they stay, and its log reader skips zero blocks (they read as kZeroType).
    std::unique_ptr<rocksdb::FSWritableFile> file;
    rocksdb::IOStatus s = target()->ReuseWritableFile(fname, spare_path_, options, &file, dbg);
    // RocksDB also fsyncs the directory before the first synced write to a new WAL;
    // this does not depend on it. Once per WAL, so cheap.
    if (s.ok()) {
      auto slash = fname.rfind('/');
      Status synced = fsync_dir(slash == std::string::npos ? "." : fname.substr(0, slash));
      if (!synced) return rocksdb::IOStatus::IOError(synced.error().to_string());
    }
    if (s.ok()) {
      ++prefilled_;
      int read_fd = ::open(fname.c_str(), O_RDONLY | O_CLOEXEC);
      *result = std::make_unique<PrefilledWal>(std::move(file), read_fd, prefill_bytes_);
      return s;
    }
  }
  ++plain_;
  lock.unlock();
  return target()->NewWritableFile(fname, options, result, dbg);
}

uint64_t WalPrefillFs::prefilled_wals() const {
  std::lock_guard lock(mu_);
  return prefilled_;
}

uint64_t WalPrefillFs::plain_wals() const {
  std::lock_guard lock(mu_);
  return plain_;
}

bool WalPrefillFs::spare_ready() const {
  std::lock_guard lock(mu_);
  return spare_ready_;
}

// Writes the spare from scratch: a spare left by an earlier process may be partly
// written or not yet durable. With O_DIRECT where the file system allows it, so that
// the zeros take no page cache and are written now, at the filler's I/O priority,
// rather than by the kernel's flusher (the WAL reads its pages ahead of the writer
// anyway). The length is rounded up to whole pages.
Status WalPrefillFs::fill_spare() {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
  int fd = ::open(spare_path_.c_str(), kFlags | O_DIRECT, 0644);
  if (fd < 0 && errno == EINVAL) fd = ::open(spare_path_.c_str(), kFlags, 0644);
  if (fd < 0) return errno_error(errno, "create " + spare_path_);
  std::unique_ptr<char, decltype(&std::free)> zeros(
      static_cast<char*>(std::aligned_alloc(kPageBytes, kChunkBytes)), &std::free);
  if (!zeros) {
    ::close(fd);
    return make_error(ErrorCode::kInternal, "out of memory for the WAL prefill buffer");
  }
  std::memset(zeros.get(), 0, kChunkBytes);
  uint64_t total = (prefill_bytes_ + kPageBytes - 1) / kPageBytes * kPageBytes;
  Status st = ok_status();
  for (uint64_t at = 0; st && at < total; at += kChunkBytes) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) st = make_error(ErrorCode::kUnavailable, "stopping");
    }
    size_t len = static_cast<size_t>(std::min<uint64_t>(kChunkBytes, total - at));
    if (st) st = pwrite_full(fd, std::string_view(zeros.get(), len), at);
  }
  if (st) st = fdatasync_fd(fd);  // the length and the allocation
  ::close(fd);
  return st;
}

void WalPrefillFs::fill_loop() {
  // Idle I/O class: the refill must not delay the commits it exists to speed up. Under
  // sustained load it may not finish before the next WAL, which is then a plain file.
  ignore_error(set_idle_io_priority(), "the refill then competes at normal priority");
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || (want_spare_ && !spare_ready_); });
    if (stopping_) return;
    want_spare_ = false;
    lock.unlock();
    Status filled = fill_spare();
    lock.lock();
    // On failure (no space, say) the next WAL is a plain file, which is only slower.
    if (filled) spare_ready_ = true;
  }
}

}  // namespace dfs::osd
