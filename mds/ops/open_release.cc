// The logged parts of open and release: an open with O_TRUNC truncates to 0 (its
// objects were removed by the service first); ReleaseOrphans, logged once orphans have
// no opener left (or are unreclaimed after a restart), deletes the inodes and queues
// their objects; the purger's PurgedFiles drops the queue entries of the files it purged.
#include <fcntl.h>

#include "common/proto/stable_bytes.h"
#include "mds/ops/inode_rules.h"

namespace dfs::mds {

Result<std::string> apply_open(OpContext& ctx, const proto::OpenRequest& req) {
  auto inode = DFS_TRY(load_inode(ctx.kv(), req.ino()));
  if (ctx.entry.expect_version() && inode.version() != ctx.entry.expect_version()) {
    return make_error(ErrorCode::kBusy, "inode changed during the truncate");
  }
  if ((req.flags() & O_TRUNC) && is_reg(inode)) {
    if (inode.inline_()) {
      (void)DFS_TRY(take_inline_data(ctx.kv(), inode));
      ctx.w.put_inline_data(inode.ino(), "");
    }
    set_size(inode, 0);
    *inode.mutable_mtime() = ctx.now();
    kill_privileges(inode, req.header().creds());
    changed(inode, ctx.now());
    ctx.w.put_inode(inode);
  }
  proto::InodeReply reply;
  *reply.mutable_inode() = std::move(inode);
  return proto::stable_bytes(reply);
}

Result<std::string> apply_release(OpContext& ctx, const proto::ReleaseRequest& req) {
  DFS_TRY_STATUS(purge_orphan(ctx, req.ino()));
  return proto::stable_bytes(proto::Empty());
}

Result<std::string> apply_release_orphans(OpContext& ctx, const proto::ReleaseOrphans& req) {
  for (uint64_t ino : req.inos()) DFS_TRY_STATUS(purge_orphan(ctx, ino));
  return proto::stable_bytes(proto::Empty());
}

namespace {

// Drops the file's purge record, if it is still queued.
Status drop_purge_record(OpContext& ctx, uint64_t ino) {
  auto raw = DFS_TRY(ctx.kv().get(purge_key(ino)));
  if (!raw) return ok_status();
  proto::PurgeRecord record;
  if (!record.ParseFromString(*raw)) {
    return make_error(ErrorCode::kCorruption, "undecodable purge record " + std::to_string(ino));
  }
  ctx.w.txn().del(purge_key(ino));
  DFS_TRY_STATUS(ctx.w.add_to_counter(kPurgeCount, -1));
  return ctx.w.add_to_counter(kPurgeBytes, -static_cast<int64_t>(record.size()));
}

}  // namespace

Result<std::string> apply_purge_done(OpContext& ctx, const proto::PurgeDone& req) {
  DFS_TRY_STATUS(drop_purge_record(ctx, req.ino()));
  return proto::stable_bytes(proto::Empty());
}

Result<std::string> apply_purged_files(OpContext& ctx, const proto::PurgedFiles& req) {
  for (uint64_t ino : req.inos()) DFS_TRY_STATUS(drop_purge_record(ctx, ino));
  return proto::stable_bytes(proto::Empty());
}

}  // namespace dfs::mds
