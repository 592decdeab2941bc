// Deferred data pushes: with creates, renames and attribute changes deferred, the one
// MDS round trip left per file written was its close: the flush pushes an inline
// file's buffered bytes (kMdsWriteInline), or records the new end of file and mtime of
// object writes (kMdsCommitWrite), and waited for the reply, a Raft commit on a
// replicated rank (~1.5 ms). close() promises no durability, so in exclusive mode the
// push is answered like the other deferred changes: the client computes the inode the
// MDS will hold with the MDS's own op (predict_entry), adopts it, and sends the request
// later, in order with the rest (ahead of the next MDS call or after a short delay).
// Object data itself is never deferred: a write is on the OSDs when it returns. fsync
// still pushes synchronously and waits for a durable reply, and sync_all and umount
// send everything deferred before they sync.
//
// The bytes stay in the file's state until the MDS has them: the state is not dropped
// while a push is in flight. An MDS that cannot be reached delays the push (the session
// keeps unsent deferred changes and sends them again, in order); one the MDS refuses
// marks the push dirty again, so the next flush sends it the synchronous way, and the
// next fsync or sync reports the failure, as the kernel reports a failed writeback.
// Queued inline bytes are bounded (kMaxDeferredPushBytes): past that a flush waits for
// the MDS, which is the back-pressure a slow or absent MDS needs.
#include <spdlog/spdlog.h>

#include "client-fuse/libdfs/attr_predict.h"
#include "client-fuse/libdfs/file_client.h"
#include "client-fuse/libdfs/file_state.h"
#include "common/rpc/methods.h"

namespace dfs::client {
namespace {

constexpr uint64_t kMaxDeferredPushBytes = 32u << 20;

void set_op(proto::MdsLogEntry& entry, const proto::WriteInlineRequest& req) {
  *entry.mutable_write_inline() = req;
}
void set_op(proto::MdsLogEntry& entry, const proto::CommitWriteRequest& req) {
  *entry.mutable_commit_write() = req;
}

// The inode `request` makes of `seed` at the MDS, stamped with the writer and `now`
// as the request will be; nullopt when the op refuses (the MDS gives its own error).
template <class Req>
std::optional<proto::Inode> predict_push(Req& request, const Creds& writer,
                                         const proto::Inode& seed) {
  proto::Timespec now = now_timespec();
  auto* header = request.mutable_header();
  writer.to_proto(header->mutable_creds());
  *header->mutable_client_time() = now;
  proto::MdsLogEntry entry;
  set_op(entry, request);
  *entry.mutable_now() = now;
  entry.set_index(1);
  auto body = predict_entry(entry, {seed}, {});
  proto::InodeReply predicted;
  if (!body || !predicted.ParseFromString(*body) || predicted.inode().ino() != seed.ino()) {
    return std::nullopt;
  }
  return std::move(*predicted.mutable_inode());
}

}  // namespace

const FileClient::Known* FileClient::push_deferrable(const FileState& st) const {
  if (!defers_in(st.ino)) return nullptr;
  const Known* k = known(st.ino);
  return k && k->exact ? k : nullptr;
}

bool FileClient::defer_inline_push(const std::shared_ptr<FileState>& st) {
  const Known* k = push_deferrable(*st);
  if (!k || !k->inode.inline_() || !st->is_inline || !st->inline_data.dirty() ||
      st->commit_dirty || deferred_push_bytes_ >= kMaxDeferredPushBytes) {
    return false;
  }
  uint64_t lo = st->inline_data.dirty_lo();
  uint64_t hi = st->inline_data.dirty_hi();
  proto::WriteInlineRequest request;
  request.set_ino(st->ino);
  request.set_offset(lo);
  request.set_data(st->inline_data.data().substr(lo, hi - lo));
  *request.mutable_mtime() = st->mtime;
  // The op keeps the bytes it holds and replaces the pushed range: only the size of
  // what it holds (the known size: every earlier push is ahead of this one) matters.
  proto::Inode seed = k->inode;
  seed.set_inline_data(std::string(seed.size(), '\0'));
  auto predicted = predict_push(request, st->writer, seed);
  if (!predicted) return false;

  uint64_t bytes = hi - lo;
  st->inline_data.take_dirty();
  st->mds_inline_bytes = std::max(st->mds_inline_bytes, hi);
  ++st->deferred_pushes;
  deferred_push_bytes_ += bytes;
  queue_deferred<proto::InodeReply>(
      rpc::kMdsWriteInline, std::move(request), st->writer, {}, {st->ino},
      [this, st, bytes](const proto::InodeReply& r) {
        push_settled(*st, bytes);
        learn(r.inode());
      },
      [this, st, bytes, lo, hi](const Error& error) {
        push_settled(*st, bytes);
        if (is_gone(error)) return;  // removed since: its bytes went with it
        deferred_op_failed(error, {}, {st->ino});
        if (held(st->ino) == st) st->inline_data.mark_dirty(lo, hi);
      });
  adopt_prediction(*predicted);
  return true;
}

bool FileClient::defer_commit(const std::shared_ptr<FileState>& st) {
  const Known* k = push_deferrable(*st);
  if (!k || st->is_inline || !st->commit_dirty) return false;
  proto::CommitWriteRequest request;
  request.set_ino(st->ino);
  request.set_end(st->commit_end);
  *request.mutable_mtime() = st->mtime;
  request.set_clear_privileges(st->clear_privileges);
  auto predicted = predict_push(request, st->writer, k->inode);
  if (!predicted) return false;

  FileState::CommitRecord record = st->take_commit();
  ++st->deferred_pushes;
  queue_deferred<proto::InodeReply>(
      rpc::kMdsCommitWrite, std::move(request), st->writer, {}, {st->ino},
      [this, st](const proto::InodeReply& r) {
        push_settled(*st, 0);
        learn(r.inode());
      },
      [this, st, record](const Error& error) {
        push_settled(*st, 0);
        if (is_gone(error)) return;
        deferred_op_failed(error, {}, {st->ino});
        if (held(st->ino) == st) st->recommit(record);
      });
  adopt_prediction(*predicted);
  return true;
}

void FileClient::push_settled(FileState& st, uint64_t bytes) {
  --st.deferred_pushes;
  deferred_push_bytes_ -= bytes;
}

}  // namespace dfs::client
