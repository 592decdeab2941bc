// FileClient: write-behind of object data (exclusive mode). With the kernel's writeback
// cache every close(2) waits for the file's dirty pages to be written, and a write
// that waited for all OSD replicas made each closed file cost a replicated write's
// latency (rsync: ~17 ms a file at the primary under load, most of the copy's time).
// A page-cache write is therefore acknowledged once it is on its way, and the places
// that promise something about the data wait for it instead:
//   - fsync drains the file's writes before it records the size durably;
//   - a read of the file drains them (the kernel may have dropped the acknowledged
//     pages), and a write that overlaps one waits for it, so writes land in order;
//   - the size the MDS records never covers a write still running (ObjectIo::write_ended),
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

awaitable<void> FileClient::drain_all_object_writes() {
  auto busy =
      files_.states_where([](const FileState& st) { return st.object_writes_running > 0; });
  for (auto& st : busy) co_await io_.drain(st);
}

bool FileClient::may_write_behind(const FileState& st, uint64_t length) const {
  return alone(st.ino) && !stopping_ && io_.behind_fits(length);
}

awaitable<void> FileClient::write_behind(std::shared_ptr<FileState> st, ReadGuard guard,
                                         uint64_t offset, std::string data) {
  co_await io_.write_behind(st, offset, std::move(data));
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
