// setxattr and removexattr. Namespaces: user., trusted., security. (incl.
// security.capability), system.posix_acl_access/default, and the virtual dfs.layout.
// The kernel checks who may write which namespace before the request arrives; the MDS
// stores values opaquely except ACLs (the access ACL sets the mode bits) and layouts.
#include "common/proto/stable_bytes.h"
#include "mds/ops/acl.h"
#include "mds/ops/inode_rules.h"
#include "mds/ops/layout_xattr.h"
#include "mds/ops/xattr_names.h"

namespace dfs::mds {
namespace {

constexpr uint32_t kXattrCreate = 1;
constexpr uint32_t kXattrReplace = 2;

size_t xattr_bytes(const proto::Inode& inode) {
  size_t total = 0;
  for (const auto& [name, value] : inode.xattrs()) total += name.size() + value.size();
  return total;
}

// Setting the access ACL: the mode's permission bits follow it, and an ACL that says
// no more than the mode is not stored (posix_acl_update_mode).
Status set_access_acl(const proto::SetXattrRequest& req, proto::Inode& inode, bool& store) {
  auto acl = DFS_TRY(parse_acl(req.value()));
  const bool caller_in_group = in_group(req.header().creds(), inode.gid());
  inode.set_mode(mode_after_access_acl(acl, inode.mode(), caller_in_group, store));
  return ok_status();
}

Status set_layout(const proto::SetXattrRequest& req, const proto::Layout& fs_default,
                  proto::Inode& inode, std::string& value) {
  if (is_reg(inode)) {
    if (inode.size() > 0 || !inode.inline_()) {
      return make_error(ErrorCode::kBusy, "the layout of a file with data cannot change");
    }
    *inode.mutable_layout() = DFS_TRY(parse_layout(req.value(), inode.layout()));
    return ok_status();
  }
  if (!is_dir(inode))
    return make_error(ErrorCode::kInvalidArgument, "layouts are for files and dirs");
  proto::Layout base = fs_default;
  auto it = inode.xattrs().find(kLayoutXattr);
  if (it != inode.xattrs().end()) base = DFS_TRY(parse_layout(it->second, base));
  value = format_layout(DFS_TRY(parse_layout(req.value(), base)));
  return ok_status();
}

}  // namespace

Result<std::string> apply_setxattr(OpContext& ctx, const proto::SetXattrRequest& req) {
  DFS_TRY_STATUS(check_xattr_name(req.name()));
  if (!is_utf8(req.name())) {
    return make_error(ErrorCode::kInvalidArgument, "xattr names must be UTF-8 here");
  }
  if (req.value().size() > ctx.fs.max_xattr_value) {
    return make_error(ErrorCode::kRange, "xattr values are at most 64 KiB");
  }
  if (req.flags() & ~(kXattrCreate | kXattrReplace)) {
    return make_error(ErrorCode::kInvalidArgument, "unknown setxattr flags");
  }
  auto inode = DFS_TRY(load_inode(ctx.kv(), req.ino()));
  auto& xattrs = *inode.mutable_xattrs();
  bool exists = xattrs.count(req.name()) > 0;
  if ((req.flags() & kXattrCreate) && exists) {
    return make_error(ErrorCode::kAlreadyExists, "xattr " + req.name() + " exists");
  }
  if ((req.flags() & kXattrReplace) && !exists) {
    return make_error(ErrorCode::kNoAttribute, "no xattr " + req.name());
  }
  bool store = true;
  std::string value = req.value();
  if (req.name() == kAclAccessXattr) {
    DFS_TRY_STATUS(set_access_acl(req, inode, store));
  } else if (req.name() == kAclDefaultXattr) {
    if (!is_dir(inode))
      return make_error(ErrorCode::kPermissionDenied, "default ACLs are for dirs");
    DFS_TRY(parse_acl(req.value()));
  } else if (req.name() == kLayoutXattr) {
    DFS_TRY_STATUS(set_layout(req, ctx.fs.default_layout, inode, value));
    store = is_dir(inode);
  }
  if (store) {
    size_t after = xattr_bytes(inode) -
                   (exists ? req.name().size() + xattrs[req.name()].size() : 0) +
                   req.name().size() + value.size();
    if (after > ctx.fs.max_xattr_total) {
      return make_error(ErrorCode::kNoSpace, "the inode's xattrs would exceed their space");
    }
    xattrs[req.name()] = std::move(value);
  } else {
    xattrs.erase(req.name());
  }
  changed(inode, ctx.now());
  ctx.w.put_inode(inode);
  proto::InodeReply reply;
  *reply.mutable_inode() = std::move(inode);
  return proto::stable_bytes(reply);
}

Result<std::string> apply_removexattr(OpContext& ctx, const proto::RemoveXattrRequest& req) {
  DFS_TRY_STATUS(check_xattr_name(req.name()));
  if (!is_utf8(req.name())) return make_error(ErrorCode::kNoAttribute, "no such xattr");
  auto inode = DFS_TRY(load_inode(ctx.kv(), req.ino()));
  if (inode.mutable_xattrs()->erase(req.name()) == 0) {
    return make_error(ErrorCode::kNoAttribute, "no xattr " + req.name());
  }
  changed(inode, ctx.now());
  ctx.w.put_inode(inode);
  proto::InodeReply reply;
  *reply.mutable_inode() = std::move(inode);
  return proto::stable_bytes(reply);
}

}  // namespace dfs::mds
