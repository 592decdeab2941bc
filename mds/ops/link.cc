// link: a new name for an existing non-directory inode (hard links, nlink + 1).
#include "common/proto/stable_bytes.h"
#include "mds/ops/inode_rules.h"

namespace dfs::mds {

Result<std::string> apply_link(OpContext& ctx, const proto::LinkRequest& req) {
  DFS_TRY_STATUS(check_name(req.new_name()));
  auto inode = DFS_TRY(load_inode(ctx.kv(), req.ino(), ErrorCode::kNotFound));
  if (is_dir(inode)) return make_error(ErrorCode::kNotPermitted, "hard links to directories");
  // An unlinked (open) file cannot get a name again (linkat of such an fd: ENOENT).
  if (inode.nlink() == 0) return make_error(ErrorCode::kNotFound, "the file was removed");
  if (inode.nlink() >= ctx.fs.max_links) {
    return make_error(ErrorCode::kTooManyLinks, "the file has the maximum number of links");
  }
  auto parent = DFS_TRY(load_dir(ctx, req.new_parent()));
  if (DFS_TRY(find_dentry(ctx.kv(), parent.ino(), req.new_name()))) {
    return make_error(ErrorCode::kAlreadyExists, "'" + req.new_name() + "' exists");
  }
  DFS_TRY(ctx.w.add_dentry(parent.ino(), req.new_name(), inode.ino(), file_type(inode.mode())));
  entries_changed(parent, ctx.now());
  ctx.w.put_inode(parent);
  inode.set_nlink(inode.nlink() + 1);
  changed(inode, ctx.now());
  ctx.w.put_inode(inode);
  proto::InodeReply reply;
  *reply.mutable_inode() = std::move(inode);
  *reply.add_changed() = std::move(parent);
  return proto::stable_bytes(reply);
}

}  // namespace dfs::mds
