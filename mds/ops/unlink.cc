// unlink and rmdir: remove a name; the inode loses a link (a directory all of them)
// and, at zero, becomes an orphan until no session holds it open.
#include "common/proto/stable_bytes.h"
#include "mds/ops/inode_rules.h"

namespace dfs::mds {

Result<std::string> apply_unlink(OpContext& ctx, const proto::UnlinkRequest& req) {
  DFS_TRY_STATUS(check_name(req.name()));
  auto parent = DFS_TRY(load_dir(ctx, req.parent()));
  auto dentry = DFS_TRY(find_dentry(ctx.kv(), parent.ino(), req.name()));
  if (!dentry) return make_error(ErrorCode::kNotFound, "no entry '" + req.name() + "'");
  auto inode = DFS_TRY(load_inode(ctx.kv(), dentry->ino));
  if (req.directory()) {
    if (!is_dir(inode))
      return make_error(ErrorCode::kNotDirectory, "'" + req.name() + "' is no directory");
    if (!DFS_TRY(dir_is_empty(ctx.kv(), inode.ino()))) {
      return make_error(ErrorCode::kNotEmpty, "directory '" + req.name() + "' is not empty");
    }
    parent.set_nlink(parent.nlink() - 1);
  } else if (is_dir(inode)) {
    return make_error(ErrorCode::kIsDirectory, "'" + req.name() + "' is a directory");
  }
  ctx.w.remove_dentry(*dentry);
  entries_changed(parent, ctx.now());
  ctx.w.put_inode(parent);
  DFS_TRY_STATUS(drop_link(ctx, inode));
  proto::UnlinkReply reply;
  *reply.mutable_inode() = std::move(inode);
  *reply.add_changed() = std::move(parent);
  return proto::stable_bytes(reply);
}

}  // namespace dfs::mds
