// rename: move a name within or across directories, replacing (file over file, empty
// directory over directory), RENAME_NOREPLACE and RENAME_EXCHANGE; a directory is never
// moved under itself. Parent link counts follow moved directories.
#include <map>

#include "common/proto/stable_bytes.h"
#include "mds/ops/inode_rules.h"

namespace dfs::mds {
namespace {

constexpr uint32_t kNoReplace = 1;
constexpr uint32_t kExchange = 2;
constexpr int kMaxDepth = 4096;

// Fails with kInvalidArgument when `dir` is `moved` or lies beneath it.
Status check_not_under(OpContext& ctx, uint64_t dir, uint64_t moved) {
  uint64_t cur = dir;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    if (cur == moved) {
      return make_error(ErrorCode::kInvalidArgument, "a directory cannot move under itself");
    }
    if (cur == kRootIno) return ok_status();
    auto inode = DFS_TRY(load_inode(ctx.kv(), cur, ErrorCode::kNotFound));
    if (inode.parent() == 0 || inode.parent() == cur) return ok_status();
    cur = inode.parent();
  }
  return make_error(ErrorCode::kCorruption, "directory parents form a cycle");
}

struct Plan {
  std::map<uint64_t, proto::Inode> dirs;  // the parents, by inode number
  Dentry src;
  std::optional<Dentry> dst;
  proto::Inode src_inode;
  std::optional<proto::Inode> dst_inode;
};

// A directory moving from parent `from` to parent `to` takes its ".." link along.
void move_dir(Plan& p, proto::Inode& dir, uint64_t from, uint64_t to) {
  if (!is_dir(dir) || from == to) return;
  p.dirs[from].set_nlink(p.dirs[from].nlink() - 1);
  p.dirs[to].set_nlink(p.dirs[to].nlink() + 1);
  dir.set_parent(to);
}

Status check_replace(OpContext& ctx, const proto::Inode& src, const proto::Inode& dst) {
  if (is_dir(src) && !is_dir(dst)) {
    return make_error(ErrorCode::kNotDirectory, "cannot replace a non-directory with a directory");
  }
  if (!is_dir(src) && is_dir(dst)) {
    return make_error(ErrorCode::kIsDirectory, "cannot replace a directory with a non-directory");
  }
  if (is_dir(dst) && !DFS_TRY(dir_is_empty(ctx.kv(), dst.ino()))) {
    return make_error(ErrorCode::kNotEmpty, "the replaced directory is not empty");
  }
  return ok_status();
}

std::string no_change_reply() { return proto::stable_bytes(proto::RenameReply()); }

}  // namespace

Result<std::string> apply_rename(OpContext& ctx, const proto::RenameRequest& req) {
  uint32_t flags = req.flags();
  if ((flags & ~(kNoReplace | kExchange)) || flags == (kNoReplace | kExchange)) {
    return make_error(ErrorCode::kInvalidArgument, "unknown or conflicting rename flags");
  }
  DFS_TRY_STATUS(check_name(req.name()));
  DFS_TRY_STATUS(check_name(req.new_name()));
  Plan p;
  p.dirs[req.parent()] = DFS_TRY(load_dir(ctx, req.parent()));
  if (!p.dirs.count(req.new_parent()))
    p.dirs[req.new_parent()] = DFS_TRY(load_dir(ctx, req.new_parent()));
  auto src = DFS_TRY(find_dentry(ctx.kv(), req.parent(), req.name()));
  if (!src) return make_error(ErrorCode::kNotFound, "no entry '" + req.name() + "'");
  p.src = std::move(*src);
  if (req.parent() == req.new_parent() && req.name() == req.new_name()) return no_change_reply();
  p.dst = DFS_TRY(find_dentry(ctx.kv(), req.new_parent(), req.new_name()));
  if ((flags & kExchange) && !p.dst) {
    return make_error(ErrorCode::kNotFound, "no entry '" + req.new_name() + "' to exchange with");
  }
  if ((flags & kNoReplace) && p.dst) {
    return make_error(ErrorCode::kAlreadyExists, "'" + req.new_name() + "' exists");
  }
  // Two names of one inode: POSIX says rename does nothing.
  if (p.dst && p.dst->ino == p.src.ino) return no_change_reply();
  p.src_inode = DFS_TRY(load_inode(ctx.kv(), p.src.ino));
  if (p.dst) p.dst_inode = DFS_TRY(load_inode(ctx.kv(), p.dst->ino));
  if (p.dst && !(flags & kExchange)) DFS_TRY_STATUS(check_replace(ctx, p.src_inode, *p.dst_inode));
  if (is_dir(p.src_inode) && req.parent() != req.new_parent()) {
    DFS_TRY_STATUS(check_not_under(ctx, req.new_parent(), p.src_inode.ino()));
  }
  if ((flags & kExchange) && is_dir(*p.dst_inode) && req.parent() != req.new_parent()) {
    DFS_TRY_STATUS(check_not_under(ctx, req.parent(), p.dst_inode->ino()));
  }

  // Decided: rewrite the entries.
  proto::RenameReply reply;
  if (flags & kExchange) {
    ctx.w.repoint_dentry(p.src, p.dst_inode->ino(), file_type(p.dst_inode->mode()));
    ctx.w.repoint_dentry(*p.dst, p.src_inode.ino(), file_type(p.src_inode.mode()));
    move_dir(p, p.src_inode, req.parent(), req.new_parent());
    move_dir(p, *p.dst_inode, req.new_parent(), req.parent());
    changed(*p.dst_inode, ctx.now());
    ctx.w.put_inode(*p.dst_inode);
  } else {
    ctx.w.remove_dentry(p.src);
    if (p.dst) {
      ctx.w.repoint_dentry(*p.dst, p.src_inode.ino(), file_type(p.src_inode.mode()));
      // The replaced directory's ".." link leaves the new parent.
      if (is_dir(*p.dst_inode)) {
        auto& np = p.dirs[req.new_parent()];
        np.set_nlink(np.nlink() - 1);
      }
    } else {
      DFS_TRY(ctx.w.add_dentry(req.new_parent(), req.new_name(), p.src_inode.ino(),
                               file_type(p.src_inode.mode())));
    }
    move_dir(p, p.src_inode, req.parent(), req.new_parent());
  }
  changed(p.src_inode, ctx.now());
  ctx.w.put_inode(p.src_inode);
  *reply.add_changed() = p.src_inode;
  if (flags & kExchange) *reply.add_changed() = *p.dst_inode;
  for (auto& [ino, dir] : p.dirs) {
    entries_changed(dir, ctx.now());
    ctx.w.put_inode(dir);
    *reply.add_changed() = dir;
  }
  if (p.dst && !(flags & kExchange)) {
    DFS_TRY_STATUS(drop_link(ctx, *p.dst_inode));
    *reply.mutable_replaced() = *p.dst_inode;
    reply.set_did_replace(true);
  }
  return proto::stable_bytes(reply);
}

}  // namespace dfs::mds
