// FileClient's data paths: reads, writes (inline buffering, moving a file to objects),
// flush and truncate; the objects' side (striping, readahead, write-behind bookkeeping)
// is ObjectIo. Open files' lifecycle is in file_open.cc.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cstring>

#include "client-fuse/libdfs/file_client.h"
#include "client-fuse/libdfs/file_state.h"
#include "common/rpc/methods.h"

namespace dfs::client {
namespace {

// What is known of `ino`, to be updated by a write (null: nothing known).
proto::Inode* known_inode(KnownInodes& known, uint64_t ino) {
  KnownInodes::Known* k = known.find_mutable(ino);
  return k ? &k->inode : nullptr;
}

void note_write(FileState& st, const Handle& h, proto::Inode* known) {
  st.mtime = now_timespec();
  st.writer = h.creds;
  // A write clears security.capability, and setuid/setgid unless the writer is root
  // (CAP_FSETID): the MDS does it by the writer's credentials when the write is pushed;
  // the cached capability goes now, as it would locally.
  st.clear_privileges = true;
  if (known) known->mutable_xattrs()->erase("security.capability");
}

}  // namespace

awaitable<Result<std::string>> FileClient::read(Fh fh, uint64_t offset, uint64_t length) {
  auto h = DFS_CO_TRY(handle(fh));
  auto st = h->state;
  if (!st) co_return make_error(ErrorCode::kIsDirectory, "not a regular file");
  co_await st->io.lock_shared();
  ReadGuard guard(st->io);
  if (st->is_inline) co_return st->inline_data.read(offset, length);
  // The kernel may have dropped the pages of an acknowledged write still on its way.
  if (st->object_writes_running > 0) co_await io_.drain(st);
  if (offset >= st->size || length == 0) co_return std::string();
  length = std::min(length, st->size - offset);
  if (offset == 0 && st->readahead.empty() && walk_.data_enabled()) take_data_ahead(*st);
  const bool sequential = h->reads.sequential_after(offset, length);
  co_return co_await io_.read_through(st, offset, length, sequential, alone(st->ino));
}

// --- writes ---

awaitable<Result<uint64_t>> FileClient::write(Fh fh, uint64_t offset, std::string data,
                                              bool append, bool from_page_cache) {
  auto h = DFS_CO_TRY(handle(fh));
  if (!h->state) co_return make_error(ErrorCode::kIsDirectory, "not a regular file");
  const uint64_t ino = h->ino;
  const bool drop_pages = !from_page_cache && h->state->kernel_pages;
  auto written = co_await write_data(std::move(h), offset, std::move(data), append,
                                     from_page_cache);
  // Readers of this mount may hold the file's pages from its read share: they read
  // this write once it is answered (kernels from 6.6 drop the range themselves). An
  // append's offset is where it landed: the whole end of the file goes.
  if (written && drop_pages && page_dropper_ && !stopping_) {
    co_await page_dropper_(ino, append ? 0 : offset, append ? 0 : *written);
  }
  co_return written;
}

awaitable<Result<uint64_t>> FileClient::write_data(std::shared_ptr<Handle> h, uint64_t offset,
                                                   std::string data, bool append,
                                                   bool from_page_cache) {
  auto st = h->state;
  uint64_t length = data.size();
  if (length == 0) co_return uint64_t{0};
  walk_.drop_data(st->ino);
  if (append && !alone(st->ino)) {
    DFS_CO_AWAIT_TRY(offset, reserve_append(st, h->creds, length));
    append = false;
  }
  for (int attempt = 0; attempt < 3; ++attempt) {
    {
      co_await st->io.lock_shared();
      ReadGuard guard(st->io);
      if (append) offset = st->size;
      if (st->is_inline && offset + length <= inline_threshold()) {
        st->inline_data.write(offset, data);
        st->wrote(offset + length);
        st->size = st->inline_data.size();
        note_write(*st, *h, known_inode(known_, st->ino));
        co_return length;
      }
      if (!st->is_inline) {
        // An earlier acknowledged write to these bytes lands first.
        if (io_.overlaps_behind(*st, offset, length)) co_await io_.drain(st);
        st->readahead.clear();
        const bool behind = from_page_cache && may_write_behind(*st, length);
        // Joining asks the high water from before this write.
        const bool joined = behind && io_.join_behind(*st, offset, data);
        st->wrote(offset + length);
        if (joined) {
          st->size = std::max(st->size, offset + length);
          note_write(*st, *h, known_inode(known_, st->ino));
          co_return length;
        }
        io_.write_started(*st);
        if (behind) {
          st->size = std::max(st->size, offset + length);
          note_write(*st, *h, known_inode(known_, st->ino));
          io_.behind_started(*st, offset, length);
          spawn_checked(executor(), write_behind(st, std::move(guard), offset, std::move(data)));
          co_return length;
        }
        Status written = co_await io_.write(st, offset, std::move(data));
        io_.write_ended(*st, offset + length, written.has_value());
        if (!written) co_return unexpected(std::move(written).error());
        st->readahead.clear();
        st->size = std::max(st->size, offset + length);
        note_write(*st, *h, known_inode(known_, st->ino));
        co_return length;
      }
    }
    // The write takes the file past the inline threshold: move it to objects first.
    co_await st->flush_mu.lock();
    MutexGuard flush_guard(st->flush_mu);
    st->writer = h->creds;
    DFS_CO_AWAIT_CHECK(uninline_locked(st));
  }
  co_return make_error(ErrorCode::kInternal, "file kept moving between inline and objects");
}

awaitable<Result<uint64_t>> FileClient::reserve_append(std::shared_ptr<FileState> st,
                                                       const Creds& creds, uint64_t length) {
  co_await st->flush_mu.lock();
  MutexGuard flush_guard(st->flush_mu);
  st->writer = creds;
  if (st->is_inline) DFS_CO_AWAIT_CHECK(uninline_locked(st));
  DFS_CO_AWAIT_CHECK(commit_size_locked(st));  // this mount's earlier writes first
  proto::CommitWriteRequest request;
  request.set_ino(st->ino);
  request.set_append_bytes(length);
  request.set_written_bytes(length);
  DFS_CO_AWAIT_TRY(auto reply, mds_.call<proto::InodeReply>(rpc::kMdsCommitWrite,
                                                             std::move(request), creds, true));
  learn(reply.inode());
  st->size = std::max(st->size, reply.inode().size());
  co_return reply.inode().size() - length;
}

awaitable<Status> FileClient::uninline_locked(std::shared_ptr<FileState> st) {
  co_await io_.lock_exclusive(st);
  WriteGuard guard(st->io);
  if (!st->is_inline) co_return ok_status();
  // The MDS moves what it has into object 0; bytes it has not seen yet go straight to
  // the objects afterwards (one MDS round trip fewer than sending them inline first).
  auto dirty = st->inline_data.take_dirty();
  uint64_t dirty_end = dirty.offset + dirty.bytes.size();
  // An MDS holding no inline bytes has nothing to move: the first CommitWrite turns
  // the empty inline file into an object file (a round trip saved per new file). Not
  // when shared: another mount may have written inline bytes meanwhile, and the MDS
  // refuses to commit object writes over them.
  if (st->mds_inline_bytes > 0 || !alone(st->ino)) {
    proto::UninlineRequest request;
    request.set_ino(st->ino);
    auto moved = co_await mds_.call<proto::InodeReply>(rpc::kMdsUninline, std::move(request),
                                                       st->writer, true);
    if (!moved) {
      st->inline_data.mark_dirty(dirty.offset, dirty_end);
      co_return unexpected(std::move(moved).error().with_context("moving a file to objects"));
    }
    learn(moved->inode());
  } else {
    st->commit_dirty = true;  // the CommitWrite is what moves it
  }
  st->mds_inline_bytes = 0;
  uint64_t local_size = st->inline_data.size();
  st->is_inline = false;
  st->inline_data.clear();
  if (!dirty.bytes.empty()) {
    auto written = co_await io_.write(st, dirty.offset, std::move(dirty.bytes));
    if (!written) {
      st->write_error = written.error();
      co_return unexpected(std::move(written).error());
    }
    st->recommit({local_size});
  }
  co_return ok_status();
}

// --- flush ---

awaitable<Status> FileClient::flush_locked(std::shared_ptr<FileState> st, bool* made_durable) {
  Status result;
  if (made_durable) *made_durable = false;
  if (st->fenced) {  // what it held was lost with the evicted session: never pushed
    co_return make_error(ErrorCode::kFenced,
                         "the file had unwritten data when this mount's session was evicted");
  }
  if (st->is_inline && st->inline_data.dirty() && (made_durable || !defer_inline_push(st))) {
    auto dirty = st->inline_data.take_dirty();
    uint64_t lo = dirty.offset;
    uint64_t hi = lo + dirty.bytes.size();
    proto::WriteInlineRequest request;
    request.set_ino(st->ino);
    request.set_offset(lo);
    request.set_data(std::move(dirty.bytes));
    *request.mutable_mtime() = st->mtime;
    bool durable = made_durable && !st->commit_dirty;  // the last push of this flush
    request.mutable_header()->set_durable(durable);
    std::optional<FileState::PushRunning> running;
    running.emplace(*st);
    auto sent = co_await mds_.call<proto::InodeReply>(rpc::kMdsWriteInline, std::move(request),
                                                      st->writer, true);
    running.reset();
    if (sent) {
      st->mds_inline_bytes = std::max(st->mds_inline_bytes, hi);
      learn(sent->inode());
      if (durable) *made_durable = true;
    } else {
      st->inline_data.mark_dirty(lo, hi);
      if (sent.error().code() == ErrorCode::kFileTooBig) {
        // The MDS's threshold is lower than ours thought: the data goes to objects.
        auto moved = co_await uninline_locked(st);
        if (!moved) result = std::move(moved).error();
      } else if (is_gone(sent.error())) {
        st->inline_data.take_dirty();  // the file is gone, and its buffered bytes with it
      } else {
        result = std::move(sent).error().with_context("pushing buffered writes");
      }
    }
  }
  if (Status committed = co_await commit_size_locked(st, made_durable); !committed && result) {
    result = std::move(committed).error();
  }
  if (result && st->write_error) {
    result = std::move(*st->write_error);
    st->write_error.reset();
  }
  co_return result;
}

awaitable<Status> FileClient::commit_size_locked(std::shared_ptr<FileState> st,
                                                 bool* made_durable) {
  if (st->commit_dirty && (made_durable || !defer_commit(st))) {
    FileState::CommitRecord record = st->take_commit();
    proto::CommitWriteRequest request;
    request.set_ino(st->ino);
    request.set_end(record.end);
    *request.mutable_mtime() = st->mtime;
    request.set_clear_privileges(record.clear_privileges);
    request.mutable_header()->set_durable(made_durable != nullptr);
    std::optional<FileState::PushRunning> running;
    running.emplace(*st);
    auto sent = co_await mds_.call<proto::InodeReply>(rpc::kMdsCommitWrite, std::move(request),
                                                      st->writer, true);
    running.reset();
    if (sent) {
      learn(sent->inode());
      if (made_durable) *made_durable = true;
    } else if (!is_gone(sent.error())) {
      st->recommit(record);
      co_return unexpected(std::move(sent).error().with_context("recording the file size"));
    }
  }
  co_return ok_status();
}

awaitable<Status> FileClient::flush_state(std::shared_ptr<FileState> st) {
  co_await st->flush_mu.lock();
  MutexGuard guard(st->flush_mu);
  co_return co_await flush_locked(st);
}

awaitable<Status> FileClient::flush(Fh fh) {
  auto h = DFS_CO_TRY(handle(fh));
  if (!h->state) co_return ok_status();
  co_return co_await flush_state(h->state);
}

awaitable<Status> FileClient::fsync(Fh fh) {
  auto h = DFS_CO_TRY(handle(fh));
  const Ino ino = h->ino;
  bool durable = false;
  if (auto st = h->state) {
    co_await st->flush_mu.lock();
    MutexGuard guard(st->flush_mu);
    co_await io_.drain(st);  // write-behind: fsync is where it must have landed
    DFS_CO_AWAIT_CHECK(flush_locked(st, &durable));
  }
  // The last push came back durable (and with it everything applied before): done.
  // Otherwise nothing was pushed, and earlier changes may still be only applied.
  if (!durable) DFS_CO_AWAIT_CHECK(sync_metadata());
  co_return deferred_errors_.take_for(ino);
}

awaitable<Status> FileClient::sync_metadata() {
  // Deferred changes ride ahead of this call: once it is answered, each of them has been
  // answered too, and a failure noted (DeferredErrors).
  auto synced =
      co_await mds_.call<proto::Empty>(rpc::kMdsSync, proto::SyncRequest{}, Creds{}, false);
  if (!synced) co_return unexpected(std::move(synced).error());
  co_return ok_status();
}

awaitable<Status> FileClient::fsync_dir(Ino dir) {
  DFS_CO_AWAIT_CHECK(sync_metadata());
  co_return deferred_errors_.take_for(dir);
}

// --- truncate ---

awaitable<Result<proto::Inode>> FileClient::truncate(Creds creds, Ino ino, SetAttrArgs args) {
  // The MDS cuts the objects past the new end (before it records the size) and moves
  // an inline file that grows past the threshold to objects; it must know every byte
  // we wrote first, so buffered state goes out before, under the file's locks.
  std::shared_ptr<FileState> st = held(ino);
  walk_.drop_data(ino);
  std::optional<MutexGuard> flush_guard;
  std::optional<WriteGuard> io_guard;
  if (st) {
    co_await st->flush_mu.lock();
    flush_guard.emplace(st->flush_mu);
    DFS_CO_AWAIT_CHECK(flush_locked(st));
    co_await io_.lock_exclusive(st);
    io_guard.emplace(st->io);
    // Writes acknowledged before the truncate (write-behind) may have finished only while
    // the io lock was awaited, after the flush above. The MDS cuts objects by the size it
    // records, so their size must reach it first, or their bytes past the new end stay in
    // the objects and read back when the file grows again.
    DFS_CO_AWAIT_CHECK(commit_size_locked(st));
    DFS_CO_AWAIT_CHECK(unpin_data(st, creds));
    st->forget_cached_data();
  }
  if (auto grown = defer_growth(creds, ino, args, st)) {
    if (st) resized(*st, args.size, *grown);
    grown->clear_inline_data();
    overlay(*grown);
    co_return std::move(*grown);
  }
  DFS_CO_AWAIT_TRY(auto reply, mds_.call<proto::InodeReply>(
                                   rpc::kMdsSetAttr, setattr_request(ino, args), creds, true));
  proto::Inode inode = std::move(*reply.mutable_inode());
  learn(inode);
  if (st) resized(*st, args.size, inode);
  overlay(inode);
  co_return inode;
}

void FileClient::resized(FileState& st, uint64_t size, const proto::Inode& inode) {
  st.size = size;
  st.high_water = std::min(st.high_water, size);  // the MDS cut what lay past it
  if (inode.inline_()) st.mds_inline_bytes = inode.inline_data().size();
  st.commit_end = std::min(st.commit_end, size);
  st.finished_end = std::min(st.finished_end, size);
  if (inode.ino() == st.ino) st.is_inline = inode.inline_();
  if (st.is_inline) {
    std::string data = inode.inline_data();
    data.resize(size, '\0');
    st.inline_data = InlineBuffer(std::move(data));
  } else {
    st.inline_data.clear();
  }
}

}  // namespace dfs::client
