#include "common/raft/file_storage.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "common/raft/log_bytes.h"
#include "common/util/crc32c.h"

namespace dfs::raft {
namespace {

// A batch's header: magic, body length, body CRC32C, CRC32C of those three.
constexpr size_t kBatchHeaderBytes = 16;
constexpr uint32_t kBatchMagic = 0x4c534644;  // "DFSL"
constexpr size_t kRecordHeaderBytes = 4;      // the record's length (kind and payload)
// What one batch holds at most: its length is a u32, and ISA-L's CRC takes an int.
constexpr size_t kMaxBatchBytes = INT32_MAX;

void put_u32_le(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t get_u32_le(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

Unexpected corrupt(const std::string& path, const std::string& what) {
  return make_error(ErrorCode::kCorruption, "raft log " + path + ": " + what);
}

std::string errno_text() { return std::strerror(errno); }

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Makes a rename or a new file in `path`'s directory durable.
bool sync_parent(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

std::string batch_header(std::string_view body) {
  std::string header;
  put_u32_le(header, kBatchMagic);
  put_u32_le(header, static_cast<uint32_t>(body.size()));
  put_u32_le(header, crc32c(body));
  put_u32_le(header, crc32c(header));
  return header;
}

// What the batch header at `at` says, if it is one: its body's length and CRC32C.
struct BatchHeader {
  uint32_t length = 0;
  uint32_t body_crc = 0;
};
std::optional<BatchHeader> read_batch_header(std::string_view bytes, size_t at) {
  if (bytes.size() - at < kBatchHeaderBytes) return std::nullopt;
  const char* p = bytes.data() + at;
  if (get_u32_le(p) != kBatchMagic || crc32c(0, p, 12) != get_u32_le(p + 12)) {
    return std::nullopt;
  }
  return BatchHeader{get_u32_le(p + 4), get_u32_le(p + 8)};
}

// Whether a whole batch, header and body checked, starts anywhere after `from`.
bool whole_batch_after(std::string_view bytes, size_t from) {
  for (size_t at = from + 1; at + kBatchHeaderBytes <= bytes.size(); ++at) {
    auto header = read_batch_header(bytes, at);
    if (!header || bytes.size() - at - kBatchHeaderBytes < header->length) continue;
    if (crc32c(bytes.substr(at + kBatchHeaderBytes, header->length)) == header->body_crc) {
      return true;
    }
  }
  return false;
}

// Writes `bytes` as one batch to a new file beside `path` and syncs it. Returns the
// open file or -1 with errno set (the new file removed).
int write_new_file(const std::string& fresh, std::string_view bytes) {
  // O_EXCL: another process's file of the same name is never written over.
  int fd = ::open(fresh.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  if (!write_all(fd, batch_header(bytes)) || !write_all(fd, bytes) || ::fdatasync(fd) != 0) {
    int saved = errno;
    ::close(fd);
    ::unlink(fresh.c_str());
    errno = saved;
    return -1;
  }
  return fd;
}

}  // namespace

FileStorage::FileStorage(std::string path, uint64_t rewrite_floor)
    : path_(std::move(path)), rewrite_floor_(rewrite_floor) {}

FileStorage::~FileStorage() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<FileStorage>> FileStorage::open(std::string path, ConfState initial,
                                                       bool create, uint64_t rewrite_floor) {
  std::unique_ptr<FileStorage> s(new FileStorage(std::move(path), rewrite_floor));
  struct stat st {};
  const bool exists = ::stat(s->path_.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) {
    return make_error(ErrorCode::kIoError, "looking for the raft log " + s->path_ + ": " +
                                               errno_text());
  }
  const std::string fresh = s->path_ + ".new";
  // A rewrite or create that a crash interrupted.
  if (::unlink(fresh.c_str()) != 0 && errno != ENOENT) {
    return make_error(ErrorCode::kIoError, "removing " + fresh + ": " + errno_text());
  }
  if (create) {
    if (exists) return make_error(ErrorCode::kAlreadyExists, "a raft log exists at " + s->path_);
    s->mem_ = MemStorage(std::move(initial));
    const std::string records = s->live_records();
    s->fd_ = write_new_file(fresh, records);
    // link() rather than rename(): it never replaces a log made meanwhile.
    if (s->fd_ < 0 || ::link(fresh.c_str(), s->path_.c_str()) != 0) {
      const bool raced = errno == EEXIST;
      std::string why = errno_text();
      ::unlink(fresh.c_str());
      if (raced) return make_error(ErrorCode::kAlreadyExists, "a raft log exists at " + s->path_);
      return make_error(ErrorCode::kIoError, "creating the raft log " + s->path_ + ": " + why);
    }
    if (::unlink(fresh.c_str()) != 0 || !sync_parent(s->path_)) {
      return make_error(ErrorCode::kIoError, "creating the raft log " + s->path_ + " (made, " +
                                                 "its directory not synced): " + errno_text());
    }
    s->file_bytes_ = kBatchHeaderBytes + records.size();
    return s;
  }
  if (!exists) return make_error(ErrorCode::kNotFound, "no raft log at " + s->path_);
  s->fd_ = ::open(s->path_.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (s->fd_ < 0) {
    return make_error(ErrorCode::kIoError, "opening the raft log " + s->path_ + ": " +
                                               errno_text());
  }
  DFS_TRY_STATUS(s->load(s->fd_));
  return s;
}

Status FileStorage::load(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return make_error(ErrorCode::kIoError, path_ + ": " + errno_text());
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = ::pread(fd, bytes.data() + got, bytes.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(ErrorCode::kIoError, "reading " + path_ + ": " + errno_text());
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  bytes.resize(got);
  const std::string_view all(bytes);
  size_t pos = 0;
  size_t batches = 0;
  while (pos < all.size()) {
    auto header = read_batch_header(all, pos);
    const bool fits = header && all.size() - pos - kBatchHeaderBytes >= header->length;
    const bool whole =
        fits && crc32c(all.substr(pos + kBatchHeaderBytes, header->length)) == header->body_crc;
    if (!whole) {
      // The last sync's write, torn by a crash before it was synced, is at the end with
      // nothing whole after it. Anything else is damage to synced records: stop rather
      // than cut acknowledged entries and votes off the log. A valid header was reached
      // from the batch before, so it is the last write's own when its body reaches the
      // end of the file (whatever that body holds, client bytes included); without one,
      // only a whole batch further on shows the damage is not the tail.
      const bool ends_the_file = fits && pos + kBatchHeaderBytes + header->length == all.size();
      const bool damaged_synced =
          header ? fits && !ends_the_file : whole_batch_after(all, pos);
      if (damaged_synced) {
        return corrupt(path_, "a damaged batch at byte " + std::to_string(pos) + " of " +
                                  std::to_string(all.size()) + ", with synced batches after it");
      }
      break;
    }
    DFS_TRY_STATUS(replay_batch(all.substr(pos + kBatchHeaderBytes, header->length)));
    pos += kBatchHeaderBytes + header->length;
    ++batches;
  }
  if (batches == 0) return corrupt(path_, "no configuration record");
  if (mem_.hard_state().commit > mem_.last_index()) {
    return corrupt(path_, "commit index beyond the last entry");
  }
  if (pos < all.size()) {
    torn_bytes_ = all.size() - pos;
    spdlog::warn("raft log {}: the last {} bytes are a write a crash tore before it was "
                 "synced; cut off, the log ends at entry {}",
                 path_, torn_bytes_, mem_.last_index());
    if (::ftruncate(fd, static_cast<off_t>(pos)) != 0 || ::fdatasync(fd) != 0) {
      return make_error(ErrorCode::kIoError, "cutting the torn tail of " + path_ + ": " +
                                                 errno_text());
    }
  }
  file_bytes_ = pos;
  return ok_status();
}

Status FileStorage::replay_batch(std::string_view body) {
  while (!body.empty()) {
    if (body.size() < kRecordHeaderBytes) return corrupt(path_, "a record cut short in a batch");
    const uint32_t length = get_u32_le(body.data());
    body.remove_prefix(kRecordHeaderBytes);
    if (length == 0 || length > body.size()) {
      return corrupt(path_, "a record longer than its batch");
    }
    DFS_TRY_STATUS(replay(body.front(), body.substr(1, length - 1)));
    body.remove_prefix(length);
  }
  return ok_status();
}

Status FileStorage::replay(char kind, std::string_view payload) {
  size_t pos = 0;
  if (kind == 'h') {
    HardState hs;
    if (!get_u64(payload, &pos, &hs.term) || !get_u64(payload, &pos, &hs.vote) ||
        !get_u64(payload, &pos, &hs.commit)) {
      return corrupt(path_, "short hard state");
    }
    mem_.set_hard_state(hs);
    return ok_status();
  }
  if (kind == 's') {
    Snapshot snap;
    uint64_t voters = 0;
    if (!get_u64(payload, &pos, &snap.meta.index) || !get_u64(payload, &pos, &snap.meta.term) ||
        !get_u64(payload, &pos, &voters) || voters > (payload.size() - pos) / 8) {
      return corrupt(path_, "short snapshot record");
    }
    for (uint64_t i = 0, id = 0; i < voters && get_u64(payload, &pos, &id); ++i) {
      snap.meta.conf.voters.push_back(id);
    }
    snap.data.assign(payload.substr(pos));
    if (snap.meta.index < mem_.snapshot().meta.index) {
      return corrupt(path_, "a snapshot record at index " + std::to_string(snap.meta.index) +
                                " after one at " + std::to_string(mem_.snapshot().meta.index));
    }
    mem_.apply_snapshot(snap);  // as the live log did (the first: the configuration)
    return ok_status();
  }
  if (kind == 'e') {
    Entry e;
    if (!get_u64(payload, &pos, &e.index) || !get_u64(payload, &pos, &e.term) ||
        pos >= payload.size() ||
        static_cast<uint8_t>(payload[pos]) > static_cast<uint8_t>(EntryType::kConfChange)) {
      return corrupt(path_, "undecodable entry");
    }
    e.type = static_cast<EntryType>(payload[pos]);
    e.data.assign(payload.substr(pos + 1));
    if (e.index < mem_.first_index() || e.index > mem_.last_index() + 1) {
      return corrupt(path_, "entry " + std::to_string(e.index) + " does not follow the log (" +
                                std::to_string(mem_.first_index()) + ".." +
                                std::to_string(mem_.last_index()) + ")");
    }
    mem_.append({std::move(e)});
    return ok_status();
  }
  return corrupt(path_, std::string("unknown record kind '") + kind + "'");
}

void FileStorage::begin_record(std::string& out, char kind) {
  out.append(kRecordHeaderBytes, '\0');  // the length, filled in by end_record
  out.push_back(kind);
}

void FileStorage::end_record(std::string& out, size_t start) {
  std::string length;
  put_u32_le(length, static_cast<uint32_t>(out.size() - start - kRecordHeaderBytes));
  out.replace(start, kRecordHeaderBytes, length);
}

void FileStorage::add_snapshot(std::string& out, const Snapshot& snap) {
  const size_t start = out.size();
  begin_record(out, 's');
  put_u64(out, snap.meta.index);
  put_u64(out, snap.meta.term);
  put_u64(out, snap.meta.conf.voters.size());
  for (NodeId id : snap.meta.conf.voters) put_u64(out, id);
  out += snap.data;
  end_record(out, start);
}

void FileStorage::add_hard_state(std::string& out, const HardState& hs) {
  const size_t start = out.size();
  begin_record(out, 'h');
  put_u64(out, hs.term);
  put_u64(out, hs.vote);
  put_u64(out, hs.commit);
  end_record(out, start);
}

void FileStorage::add_entry(std::string& out, const Entry& e) {
  const size_t start = out.size();
  begin_record(out, 'e');
  put_u64(out, e.index);
  put_u64(out, e.term);
  out.push_back(static_cast<char>(e.type));
  out += e.data;  // the one copy of the entry's bytes
  end_record(out, start);
}

std::string FileStorage::live_records() const {
  std::string out;
  add_snapshot(out, mem_.snapshot());
  add_hard_state(out, mem_.hard_state());
  if (mem_.last_index() >= mem_.first_index()) {
    for (const Entry& e : mem_.entries(mem_.first_index(), mem_.last_index() + 1, UINT64_MAX)) {
      add_entry(out, e);
    }
  }
  return out;
}

void FileStorage::set_hard_state(const HardState& hs) {
  mem_.set_hard_state(hs);
  add_hard_state(pending_, hs);
}

void FileStorage::append(const std::vector<Entry>& entries) {
  if (entries.empty()) return;
  mem_.append(entries);  // checks the preconditions
  // Replayed one by one, the first record drops any conflicting suffix.
  for (const Entry& e : entries) add_entry(pending_, e);
}

void FileStorage::apply_snapshot(const Snapshot& snap) {
  mem_.apply_snapshot(snap);
  add_snapshot(pending_, snap);
}

bool FileStorage::wants_rewrite() {
  const uint64_t after = file_bytes_ + pending_.size();
  if (after < std::max(rewrite_floor_, next_rewrite_check_)) return false;
  // Records of the snapshot, the hard state and each entry, as live_records() makes them.
  const uint64_t entries = mem_.last_index() + 1 - mem_.first_index();
  const uint64_t live = kBatchHeaderBytes + 1024 + mem_.snapshot().data.size() +
                        entries * (kRecordHeaderBytes + 18) + mem_.data_bytes();
  if (after > 2 * live) return true;
  // Mostly live: weigh it again once as much more has been written.
  next_rewrite_check_ = after + std::max(live, rewrite_floor_);
  return false;
}

Status FileStorage::rewrite() {
  const std::string records = live_records();
  if (records.size() > kMaxBatchBytes) {
    return make_error(ErrorCode::kIoError, "the live records exceed one batch");
  }
  const std::string fresh = path_ + ".new";
  int fd = write_new_file(fresh, records);
  if (fd < 0) {  // the old file stands
    return make_error(ErrorCode::kIoError, "writing " + fresh + ": " + errno_text());
  }
  if (::rename(fresh.c_str(), path_.c_str()) != 0) {
    std::string why = errno_text();
    ::close(fd);
    ::unlink(fresh.c_str());
    return make_error(ErrorCode::kIoError, why);
  }
  ::close(fd_);
  fd_ = fd;
  file_bytes_ = kBatchHeaderBytes + records.size();
  next_rewrite_check_ = 0;
  ++rewrites_;
  // Renamed: the old file is gone however the directory's sync ends.
  if (!sync_parent(path_)) return fail("syncing the directory of " + path_ + ": " + errno_text());
  return ok_status();
}

Status FileStorage::fail(std::string what) {
  failed_ = Error(ErrorCode::kIoError, "raft log sync failed: " + std::move(what));
  spdlog::error("{}", failed_->to_string());
  return *failed_;
}

Status FileStorage::sync() {
  if (failed_) return *failed_;
  if (pending_.empty()) return ok_status();
  if (pending_.size() > kMaxBatchBytes) {
    return fail("a batch of " + std::to_string(pending_.size()) + " bytes, above 2 GiB");
  }
  if (wants_rewrite()) {
    Status rewritten = rewrite();  // the live state holds every pending write
    if (!rewritten && failed_) return *failed_;
    if (rewritten) {
      pending_.clear();
      ++syncs_;
      return ok_status();
    }
    // The old file stands: append to it, and weigh a rewrite again later.
    spdlog::warn("raft log {}: rewriting it to its live records failed ({}); appending",
                 path_, rewritten.error().to_string());
    next_rewrite_check_ = file_bytes_ + pending_.size() + rewrite_floor_;
  }
  if (!write_all(fd_, batch_header(pending_)) || !write_all(fd_, pending_)) {
    return fail("appending to " + path_ + ": " + errno_text());
  }
  if (::fdatasync(fd_) != 0) return fail("syncing " + path_ + ": " + errno_text());
  file_bytes_ += kBatchHeaderBytes + pending_.size();
  pending_.clear();
  ++syncs_;
  return ok_status();
}

}  // namespace dfs::raft
