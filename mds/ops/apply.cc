// apply_entry: the deterministic state machine of a metadata rank. Dispatches a log
// entry to its op and records the entry's index; the caller commits the txn.
#include "common/proto/stable_bytes.h"
#include "mds/ops/inode_rules.h"

namespace dfs::mds {

bool entry_allocates_ino(const proto::MdsLogEntry& entry) {
  return entry.op_case() == proto::MdsLogEntry::kMknod ||
         entry.op_case() == proto::MdsLogEntry::kSymlink;
}

namespace {

Result<std::string> dispatch(OpContext& ctx, const proto::MdsLogEntry& e) {
  using E = proto::MdsLogEntry;
  switch (e.op_case()) {
    case E::kSetattr:
      return apply_setattr(ctx, e.setattr());
    case E::kMknod:
      return apply_mknod(ctx, e.mknod());
    case E::kSymlink:
      return apply_symlink(ctx, e.symlink());
    case E::kLink:
      return apply_link(ctx, e.link());
    case E::kUnlink:
      return apply_unlink(ctx, e.unlink());
    case E::kRename:
      return apply_rename(ctx, e.rename());
    case E::kSetxattr:
      return apply_setxattr(ctx, e.setxattr());
    case E::kRemovexattr:
      return apply_removexattr(ctx, e.removexattr());
    case E::kOpen:
      return apply_open(ctx, e.open());
    case E::kRelease:
      return apply_release(ctx, e.release());
    case E::kReleaseOrphans:
      return apply_release_orphans(ctx, e.release_orphans());
    case E::kWriteInline:
      return apply_write_inline(ctx, e.write_inline());
    case E::kUninline:
      return apply_uninline(ctx, e.uninline());
    case E::kCommitWrite:
      return apply_commit_write(ctx, e.commit_write());
    case E::kPurgeDone:
      return apply_purge_done(ctx, e.purge_done());
    case E::kPurgedFiles:
      return apply_purged_files(ctx, e.purged_files());
    case E::kForgetSession:
      return apply_forget_session(ctx, e.forget_session());
    case E::kRecordSession:
      return apply_record_session(ctx, e.record_session());
    case E::kFormat:
      return apply_format(ctx, e.format());
    case E::kAllocInos:
      return apply_alloc_inos(ctx, e.alloc_inos());
    case E::OP_NOT_SET:
      break;
  }
  return make_error(ErrorCode::kInvalidArgument, "log entry without an op");
}

}  // namespace

const proto::MdsRequestHeader* request_header(const proto::MdsLogEntry& e) {
  using E = proto::MdsLogEntry;
  switch (e.op_case()) {
    case E::kSetattr:
      return &e.setattr().header();
    case E::kMknod:
      return &e.mknod().header();
    case E::kSymlink:
      return &e.symlink().header();
    case E::kLink:
      return &e.link().header();
    case E::kUnlink:
      return &e.unlink().header();
    case E::kRename:
      return &e.rename().header();
    case E::kSetxattr:
      return &e.setxattr().header();
    case E::kRemovexattr:
      return &e.removexattr().header();
    case E::kOpen:
      return &e.open().header();
    case E::kRelease:
      return &e.release().header();
    case E::kWriteInline:
      return &e.write_inline().header();
    case E::kUninline:
      return &e.uninline().header();
    case E::kCommitWrite:
      return &e.commit_write().header();
    case E::kAllocInos:
      return &e.alloc_inos().header();
    default:
      return nullptr;
  }
}

namespace {

// Remembers the reply under the request id, so that a resend reaching a restarted
// MDS (or, later, a new leader) gets it instead of a second execution; the client's
// request kRememberedRequests before is forgotten.
void remember_reply(MetaWriter& w, const proto::MdsLogEntry& e, const std::string& reply) {
  const auto* h = request_header(e);
  if (!h || h->reqid().seq() == 0 || h->reqid().client().empty()) return;
  const auto& client = h->reqid().client();
  uint64_t seq = h->reqid().seq();
  w.txn().put(request_key(client, seq), reply);
  if (seq > kRememberedRequests) w.txn().del(request_key(client, seq - kRememberedRequests));
}

}  // namespace

Result<std::string> apply_forget_session(OpContext& ctx, const proto::ForgetSession& req) {
  auto prefix = request_prefix(req.client());
  auto keys = DFS_TRY(ctx.kv().scan(prefix, prefix_end(prefix), SIZE_MAX));
  for (auto& kv : keys) ctx.w.txn().del(std::move(kv.key));
  return proto::stable_bytes(proto::Empty());
}

Result<std::string> apply_record_session(OpContext& ctx, const proto::RecordSession& req) {
  // Sequence number 0 is never a request's (reads carry it and are not logged), and the
  // trimming of old replies never reaches it.
  ctx.w.txn().put(request_key(req.client(), kSessionRecordSeq), std::string());
  return proto::stable_bytes(proto::Empty());
}

Result<std::string> apply_entry(const proto::MdsLogEntry& entry, const FsSettings& fs,
                                GroupTxn& txn, ApplyEffects& effects) {
  MetaWriter w(txn);
  OpContext ctx{entry, fs, w, effects};
  auto reply = DFS_TRY(dispatch(ctx, entry));
  remember_reply(w, entry, reply);
  w.set_counter(kLogIndex, entry.index());
  return reply;
}

}  // namespace dfs::mds
