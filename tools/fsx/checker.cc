#include "checker.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace dfs::fsx {
namespace {

// An I/O buffer aligned for O_DIRECT.
struct AlignedBuffer {
  AlignedBuffer(uint64_t length, uint64_t alignment) {
    uint64_t rounded = (length + alignment - 1) / alignment * alignment;
    if (posix_memalign(&data, alignment, rounded ? rounded : alignment) != 0) data = nullptr;
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  char* bytes() { return static_cast<char*>(data); }
  void* data = nullptr;
};

uint64_t page_size() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }

}  // namespace

FileChecker::FileChecker(std::string path, Mode mode, uint64_t alignment)
    : path_(std::move(path)), mode_(mode), alignment_(alignment) {
  open_file(/*truncate=*/true);
}

FileChecker::~FileChecker() {
  if (fd_ >= 0) ::close(fd_);
}

bool FileChecker::open_file(bool truncate) {
  int flags = O_RDWR | O_CREAT | (truncate ? O_TRUNC : 0);
  if (mode_ == Mode::kDirect) flags |= O_DIRECT;
  fd_ = ::open(path_.c_str(), flags, 0644);
  if (fd_ < 0) return fail_errno("open " + path_);
  return true;
}

bool FileChecker::fail(const std::string& what) {
  error_ = what;
  return false;
}

bool FileChecker::fail_errno(const std::string& call) {
  return fail(call + " failed: " + std::strerror(errno));
}

bool FileChecker::apply(uint64_t op_number, const Operation& op) {
  bool ok = true;
  switch (op.kind) {
    case OpKind::kRead: ok = read(op_number, op.offset, op.length); break;
    case OpKind::kWrite: ok = write(op_number, op.offset, op.length); break;
    case OpKind::kMapRead: ok = map_read(op_number, op.offset, op.length); break;
    case OpKind::kMapWrite: ok = map_write(op_number, op.offset, op.length); break;
    case OpKind::kTruncate: ok = truncate(op.offset); break;
    case OpKind::kFsync:
      if (::fsync(fd_) != 0) return fail_errno("fsync");
      break;
    case OpKind::kReopen:
      if (::close(fd_) != 0) return fail_errno("close");
      fd_ = -1;
      if (!open_file(/*truncate=*/false)) return false;
      break;
  }
  return ok && check_size(op);
}

bool FileChecker::check_size(const Operation& op) {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return fail_errno("fstat");
  if (static_cast<uint64_t>(st.st_size) == model_.size()) return true;
  return fail("after " + describe(op) + " the file is " + hex(st.st_size) + " bytes long, " +
              "expected " + hex(model_.size()));
}

bool FileChecker::check_bytes(uint64_t op_number, uint64_t offset, const std::string& got,
                              size_t expected) {
  if (got.size() != expected) {
    return fail("read at " + hex(offset) + " returned " + hex(got.size()) + " bytes, expected " +
                hex(expected));
  }
  auto wrong = model_.first_mismatch(offset, got);
  if (!wrong) return true;
  uint8_t seen = static_cast<uint8_t>(got[*wrong - offset]);
  uint8_t want = static_cast<uint8_t>(model_.bytes()[*wrong]);
  std::string what = "op " + std::to_string(op_number) + ": wrong byte at " + hex(*wrong) +
                     ": got " + hex(seen) + ", expected " + hex(want);
  if (want == 0) what += " (a hole or truncated range must read as zeros)";
  if (auto writer = writer_of(seen, *wrong)) {
    what += "; the byte read was written by an operation numbered " + std::to_string(*writer) +
            " modulo 251";
  }
  uint64_t end = offset + got.size();
  uint64_t bad_until = *wrong;
  while (bad_until < end && got[bad_until - offset] != model_.bytes()[bad_until]) ++bad_until;
  what += "; the first wrong run is " + hex(*wrong) + ".." + hex(bad_until);
  return fail(what);
}

bool FileChecker::read(uint64_t op_number, uint64_t offset, uint64_t length) {
  // A direct read may run past the end of the file: it returns what is there.
  uint64_t expected = offset >= model_.size() ? 0 : std::min(length, model_.size() - offset);
  AlignedBuffer buffer(length, alignment_);
  if (!buffer.data) return fail("out of memory");
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd_, buffer.bytes() + done, length - done, offset + done);
    if (n < 0) return fail_errno("pread at " + hex(offset + done));
    if (n == 0) break;
    done += n;
    if (mode_ == Mode::kDirect && done % alignment_ != 0) break;  // the end of the file
  }
  return check_bytes(op_number, offset, std::string(buffer.bytes(), done), expected);
}

bool FileChecker::write(uint64_t op_number, uint64_t offset, uint64_t length) {
  AlignedBuffer buffer(length, alignment_);
  if (!buffer.data) return fail("out of memory");
  for (uint64_t i = 0; i < length; ++i)
    buffer.bytes()[i] = static_cast<char>(pattern_byte(op_number, offset + i));
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = ::pwrite(fd_, buffer.bytes() + done, length - done, offset + done);
    if (n <= 0) return fail_errno("pwrite at " + hex(offset + done));
    done += n;
  }
  model_.write(op_number, offset, length);
  return true;
}

bool FileChecker::map_read(uint64_t op_number, uint64_t offset, uint64_t length) {
  uint64_t start = offset / page_size() * page_size();
  uint64_t span = offset + length - start;
  void* map = ::mmap(nullptr, span, PROT_READ, MAP_SHARED, fd_, static_cast<off_t>(start));
  if (map == MAP_FAILED) return fail_errno("mmap for read at " + hex(offset));
  std::string got(static_cast<const char*>(map) + (offset - start), length);
  if (::munmap(map, span) != 0) return fail_errno("munmap");
  return check_bytes(op_number, offset, got, length);
}

bool FileChecker::map_write(uint64_t op_number, uint64_t offset, uint64_t length) {
  // A mapping cannot extend a file: grow it first, as fsx does.
  if (offset + length > model_.size()) {
    if (::ftruncate(fd_, static_cast<off_t>(offset + length)) != 0)
      return fail_errno("ftruncate before a mapped write");
    model_.truncate(offset + length);
  }
  uint64_t start = offset / page_size() * page_size();
  uint64_t span = offset + length - start;
  void* map = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                     static_cast<off_t>(start));
  if (map == MAP_FAILED) return fail_errno("mmap for write at " + hex(offset));
  char* bytes = static_cast<char*>(map) + (offset - start);
  for (uint64_t i = 0; i < length; ++i)
    bytes[i] = static_cast<char>(pattern_byte(op_number, offset + i));
  if (::msync(map, span, MS_SYNC) != 0) return fail_errno("msync");
  if (::munmap(map, span) != 0) return fail_errno("munmap");
  model_.write(op_number, offset, length);
  return true;
}

bool FileChecker::truncate(uint64_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return fail_errno("ftruncate");
  model_.truncate(size);
  return true;
}

bool FileChecker::verify_all(uint64_t op_number) {
  uint64_t length = (model_.size() + alignment_ - 1) / alignment_ * alignment_;
  if (length == 0) return true;
  return read(op_number, 0, length);
}

}  // namespace dfs::fsx
