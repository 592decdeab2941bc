// mknod (regular files, directories, fifos, sockets, devices) and symlink: a new inode
// owned by the caller, its group from the caller or a setgid parent, default ACLs and
// the parent's dfs.layout inherited, linked into the parent.
#include "common/proto/stable_bytes.h"
#include "mds/ops/acl.h"
#include "mds/ops/inode_rules.h"
#include "mds/ops/layout_xattr.h"

namespace dfs::mds {
namespace {

bool known_type(uint32_t type) {
  switch (type) {
    case S_IFREG:
    case S_IFDIR:
    case S_IFIFO:
    case S_IFSOCK:
    case S_IFCHR:
    case S_IFBLK:
      return true;
    default:
      return false;
  }
}

// The part every new inode shares: number, owner, times, one link.
proto::Inode new_inode(const OpContext& ctx, const proto::Inode& parent, const proto::Creds& creds,
                       uint32_t mode) {
  proto::Inode inode;
  inode.set_ino(ctx.entry.new_ino());
  inode.set_uid(creds.uid());
  bool setgid_parent = parent.mode() & S_ISGID;
  inode.set_gid(setgid_parent ? parent.gid() : creds.gid());
  if (setgid_parent && S_ISDIR(mode)) mode |= S_ISGID;
  // inode_init_owner: a non-member cannot create a setgid-executable file in it.
  if (!S_ISDIR(mode) && (mode & S_ISGID) && (mode & S_IXGRP) && !in_group(creds, inode.gid())) {
    mode &= ~uint32_t(S_ISGID);
  }
  inode.set_mode(mode);
  inode.set_nlink(1);
  *inode.mutable_atime() = ctx.now();
  *inode.mutable_mtime() = ctx.now();
  *inode.mutable_ctime() = ctx.now();
  *inode.mutable_btime() = ctx.now();
  inode.set_version(1);
  return inode;
}

// Either the permission bits minus the umask or, under a default ACL, the ACL's rules
// (posix_acl_create): the umask does not apply then.
Status inherit_acl(const proto::Inode& parent, const proto::Creds& creds, proto::Inode& inode) {
  uint32_t mode = inode.mode();
  auto it = parent.xattrs().find(kAclDefaultXattr);
  if (it == parent.xattrs().end() || S_ISLNK(mode)) {
    if (!S_ISLNK(mode)) inode.set_mode(mode & ~(creds.umask() & 0777));
    return ok_status();
  }
  auto acl = DFS_TRY(parse_acl(it->second));
  if (S_ISDIR(mode)) (*inode.mutable_xattrs())[kAclDefaultXattr] = it->second;
  if (acl_create_masq(acl, mode)) (*inode.mutable_xattrs())[kAclAccessXattr] = encode_acl(acl);
  inode.set_mode(mode);
  return ok_status();
}

// Links the new inode into `parent` and counts it.
Status link_new(OpContext& ctx, proto::Inode& parent, const proto::Inode& inode,
                std::string_view name) {
  DFS_TRY(ctx.w.add_dentry(parent.ino(), name, inode.ino(), file_type(inode.mode())));
  if (is_dir(inode)) parent.set_nlink(parent.nlink() + 1);
  entries_changed(parent, ctx.now());
  ctx.w.put_inode(parent);
  ctx.w.put_inode(inode);
  DFS_TRY_STATUS(ctx.w.add_to_counter(kInodeCount, 1));
  // A client's number from its delegated range lies below the counter: never lower it.
  uint64_t next = DFS_TRY(read_counter(ctx.kv(), kNextIno));
  if (inode.ino() + 1 > next) ctx.w.set_counter(kNextIno, inode.ino() + 1);
  return ok_status();
}

Status check_new_ino(const OpContext& ctx) {
  if (ctx.entry.new_ino() == 0) return make_error(ErrorCode::kInternal, "entry lacks new_ino");
  return ok_status();
}

}  // namespace

Result<std::string> apply_mknod(OpContext& ctx, const proto::MknodRequest& req) {
  DFS_TRY_STATUS(check_name(req.name()));
  uint32_t type = file_type(req.mode());
  if (!known_type(type)) {
    return make_error(ErrorCode::kInvalidArgument, "mknod of an unknown file type");
  }
  auto parent = DFS_TRY(load_dir(ctx, req.parent()));
  auto existing = DFS_TRY(find_dentry(ctx.kv(), parent.ino(), req.name()));
  if (existing) {
    bool exclusive = req.exclusive() || type != S_IFREG;
    if (!exclusive && existing->type == S_IFREG) {
      proto::MknodReply reply;
      *reply.mutable_inode() = DFS_TRY(load_inode(ctx.kv(), existing->ino));
      reply.set_created(false);
      return proto::stable_bytes(reply);
    }
    if (!exclusive && existing->type == S_IFDIR) {
      return make_error(ErrorCode::kIsDirectory, "'" + req.name() + "' is a directory");
    }
    return make_error(ErrorCode::kAlreadyExists, "'" + req.name() + "' exists");
  }
  DFS_TRY_STATUS(check_new_ino(ctx));
  const auto& creds = req.header().creds();
  auto inode = new_inode(ctx, parent, creds, type | (req.mode() & 07777));
  DFS_TRY_STATUS(inherit_acl(parent, creds, inode));
  if (type == S_IFDIR) {
    inode.set_nlink(2);
    inode.set_parent(parent.ino());
    if (auto it = parent.xattrs().find(kLayoutXattr); it != parent.xattrs().end()) {
      (*inode.mutable_xattrs())[kLayoutXattr] = it->second;
    }
  } else if (type == S_IFREG) {
    inode.set_inline_(true);
    const auto& fallback = ctx.entry.has_layout() ? ctx.entry.layout() : ctx.fs.default_layout;
    *inode.mutable_layout() = DFS_TRY(layout_for_new_file(parent, fallback));
  } else if (type == S_IFCHR || type == S_IFBLK) {
    inode.set_rdev(req.rdev());
  }
  DFS_TRY_STATUS(link_new(ctx, parent, inode, req.name()));
  proto::MknodReply reply;
  *reply.mutable_inode() = std::move(inode);
  reply.set_created(true);
  *reply.add_changed() = std::move(parent);
  return proto::stable_bytes(reply);
}

Result<std::string> apply_symlink(OpContext& ctx, const proto::SymlinkRequest& req) {
  DFS_TRY_STATUS(check_name(req.name()));
  if (req.target().empty()) return make_error(ErrorCode::kNotFound, "empty symlink target");
  if (req.target().size() >= kMaxSymlinkBytes) {
    return make_error(ErrorCode::kNameTooLong, "symlink targets are shorter than 4096 bytes");
  }
  auto parent = DFS_TRY(load_dir(ctx, req.parent()));
  if (DFS_TRY(find_dentry(ctx.kv(), parent.ino(), req.name()))) {
    return make_error(ErrorCode::kAlreadyExists, "'" + req.name() + "' exists");
  }
  DFS_TRY_STATUS(check_new_ino(ctx));
  auto inode = new_inode(ctx, parent, req.header().creds(), S_IFLNK | 0777);
  inode.set_symlink(req.target());
  inode.set_size(req.target().size());
  DFS_TRY_STATUS(link_new(ctx, parent, inode, req.name()));
  proto::MknodReply reply;  // wire-compatible with InodeReply (fields 1 and 15)
  *reply.mutable_inode() = std::move(inode);
  reply.set_created(true);
  *reply.add_changed() = std::move(parent);
  return proto::stable_bytes(reply);
}

}  // namespace dfs::mds
