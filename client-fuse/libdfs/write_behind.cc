// FileClient: write-behind of object data (exclusive mode). With the kernel's writeback
// cache every close(2) waits for the file's dirty pages to be written, and a write
// that waited for all OSD replicas made each closed file cost a replicated write's
// latency (rsync: ~17 ms a file at the primary under load, most of the copy's time).
// A page-cache write is therefore acknowledged once it is on its way, and the places
// that promise something about the data wait for it instead:
//   - fsync drains the file's writes before it records the size durably;
//   - a read of the file drains them (the kernel may have dropped the acknowledged
//     pages), and a write that overlaps one waits for it, so writes land in order;
//   - the size the MDS records never covers a write still running (object_write_ended),
//     so a crash leaves a shorter file, never zeros inside it;
//   - truncate and the move out of inline take the file's io lock exclusively, which
//     every running write holds shared;
//   - unmount (sync_all) drains every file; a state is not dropped while writes run.
// A write that fails after its acknowledgement is reported by the file's next flush or
// fsync, as a local file system reports a failed writeback. Bounded by
// write_behind_bytes in flight; past that a write waits for its OSDs as before.
// The cost is the window `sync` cannot close (libfuse 3.14 gets no FUSE_SYNCFS): see
// docs/architecture.md, "Write-behind of object data".
#include <spdlog/spdlog.h>

#include "client-fuse/libdfs/file_client.h"
#include "client-fuse/libdfs/file_state.h"

namespace dfs::client {

void FileClient::object_write_started(FileState& st) {
  if (st.object_writes_running++ == 0) st.writes_drained = std::make_shared<AsyncEvent>();
}

void FileClient::object_write_ended(FileState& st, uint64_t end, bool written) {
  if (written) {
    st.finished_end = std::max(st.finished_end, end);
    st.finished_any = true;
  }
  if (--st.object_writes_running > 0) return;
  if (st.finished_any) {
    st.commit_dirty = true;
    st.commit_end = std::max(st.commit_end, st.finished_end);
    st.finished_any = false;
  }
  st.writes_drained->set();
}

awaitable<void> FileClient::drain_object_writes(std::shared_ptr<FileState> st) {
  while (st->object_writes_running > 0) {
    auto drained = st->writes_drained;
    co_await drained->wait();
  }
}

awaitable<void> FileClient::drain_all_object_writes() {
  std::vector<std::shared_ptr<FileState>> busy;
  for (auto& [ino, st] : states_) {
    if (st->object_writes_running > 0) busy.push_back(st);
  }
  for (auto& st : busy) co_await drain_object_writes(st);
}

bool FileClient::may_write_behind(const FileState& st, uint64_t length) const {
  return alone(st.ino) && !stopping_ && behind_bytes_ + length <= options_.write_behind_bytes;
}

bool FileClient::overlaps_behind(const FileState& st, uint64_t offset, uint64_t length) const {
  for (const auto& [from, to] : st.behind) {
    if (from < offset + length && offset < to) return true;
  }
  return false;
}

awaitable<void> FileClient::write_behind(std::shared_ptr<FileState> st, ReadGuard guard,
                                         uint64_t offset, std::string data) {
  uint64_t length = data.size();
  Status written = co_await write_objects(st, offset, std::move(data));
  behind_bytes_ -= length;
  for (auto [it, end] = st->behind.equal_range(offset); it != end; ++it) {
    if (it->second == offset + length) {
      st->behind.erase(it);
      break;
    }
  }
  if (!written) {
    ++behind_failures_;
    spdlog::warn("an acknowledged write of {} bytes at {} to inode {:#x} failed: {}; the "
                 "file's next flush or fsync reports it",
                 length, offset, st->ino, written.error().to_string());
    if (!st->write_error) st->write_error = written.error();
  }
  object_write_ended(*st, offset + length, written.has_value());
  { auto released = std::move(guard); }  // the io lock goes before the settle's flush
  if (st->object_writes_running == 0 && st->handles == 0) co_await settle_closed(st);
}

awaitable<void> FileClient::settle_closed(std::shared_ptr<FileState> st) {
  Status flushed = co_await flush_state(st);
  if (!flushed) {
    spdlog::warn("recording the size of closed inode {:#x}: {}", st->ino, flushed.error().to_string());
  }
  const Known* k = known(st->ino);
  bool unlinked = k && k->inode.nlink() == 0;
  if (stopping_ || unlinked || Clock::now() >= st->linger_until) co_await drop_state(st);
}

}  // namespace dfs::client
