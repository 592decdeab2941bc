// setattr: mode, owner, size and times, with the POSIX/Linux ownership rules (only the
// owner or root chmods; a non-root owner may only change the group to one of its own;
// chown clears setuid/setgid and capabilities; truncation kills privileges like a
// write). Object truncation happened before the entry was logged (the service does it),
// except for a grow_only change, which the op refuses where it would need any.
#include "common/proto/stable_bytes.h"
#include "mds/ops/acl.h"
#include "mds/ops/inode_rules.h"

namespace dfs::mds {
namespace {

constexpr uint32_t kSetMode = proto::SET_ATTR_MODE, kSetUid = proto::SET_ATTR_UID,
                   kSetGid = proto::SET_ATTR_GID, kSetSize = proto::SET_ATTR_SIZE,
                   kSetAtime = proto::SET_ATTR_ATIME, kSetMtime = proto::SET_ATTR_MTIME,
                   kSetAtimeNow = proto::SET_ATTR_ATIME_NOW,
                   kSetMtimeNow = proto::SET_ATTR_MTIME_NOW, kSetCtime = proto::SET_ATTR_CTIME;

bool is_owner_or_root(const proto::Creds& c, const proto::Inode& inode) {
  return c.uid() == 0 || c.uid() == inode.uid();
}

Status apply_owner(const proto::SetAttrRequest& req, proto::Inode& inode) {
  const auto& c = req.header().creds();
  bool set_uid = req.valid() & kSetUid;
  bool set_gid = req.valid() & kSetGid;
  if (c.uid() != 0) {
    // chown_ok / chgrp_ok: the owner may "change" the uid to itself and the group to
    // its current one or one it belongs to.
    bool owner = c.uid() == inode.uid();
    bool uid_ok = !set_uid || (owner && req.uid() == inode.uid());
    bool gid_ok = !set_gid || (owner && (req.gid() == inode.gid() || in_group(c, req.gid())));
    if (!uid_ok || !gid_ok) {
      return make_error(ErrorCode::kNotPermitted,
                        "only root changes owners; owners change the group to one of their own");
    }
  }
  if (set_uid) inode.set_uid(req.uid());
  if (set_gid) inode.set_gid(req.gid());
  if (!is_dir(inode)) {
    // Linux clears these on every chown of a non-directory, root's too.
    inode.set_mode(without_setid(inode.mode()));
    inode.mutable_xattrs()->erase(kCapabilityXattr);
  }
  return ok_status();
}

// A mode change that only drops setuid/setgid: what the kernel sends on behalf of any
// writer when it kills privileges itself (notify_change with ATTR_FORCE).
bool only_drops_privileges(uint32_t old_mode, uint32_t new_mode) {
  uint32_t privs = S_ISUID | S_ISGID;
  return ((old_mode ^ new_mode) & ~privs) == 0 && (new_mode & ~old_mode & privs) == 0;
}

Status apply_mode(const proto::SetAttrRequest& req, proto::Inode& inode) {
  const auto& c = req.header().creds();
  uint32_t mode = req.mode() & 07777;
  if (!is_owner_or_root(c, inode) && !only_drops_privileges(inode.mode() & 07777, mode)) {
    return make_error(ErrorCode::kNotPermitted, "only the owner or root changes the mode");
  }
  if (!in_group(c, inode.gid())) mode &= ~uint32_t(S_ISGID);
  inode.set_mode((inode.mode() & S_IFMT) | mode);
  // The access ACL's owner/mask/other entries follow the mode (posix_acl_chmod).
  auto it = inode.mutable_xattrs()->find(kAclAccessXattr);
  if (it != inode.mutable_xattrs()->end()) {
    auto acl = DFS_TRY(parse_acl(it->second));
    acl_chmod(acl, mode);
    it->second = encode_acl(acl);
  }
  return ok_status();
}

// `inline_data` receives an inline file's data after the change (the reply's copy).
Status apply_size(OpContext& ctx, const proto::SetAttrRequest& req, proto::Inode& inode,
                  std::string& inline_data) {
  if (is_dir(inode)) return make_error(ErrorCode::kIsDirectory, "truncate of a directory");
  if (!is_reg(inode)) return make_error(ErrorCode::kInvalidArgument, "truncate of a special file");
  uint64_t size = req.size();
  if (req.grow_only() && size < inode.size()) {
    return make_error(ErrorCode::kInvalidArgument, "a grow-only size change would shrink the file");
  }
  if (inode.inline_()) {
    inline_data = DFS_TRY(take_inline_data(ctx.kv(), inode));
    if (req.grow_only() && size > ctx.fs.inline_threshold && !inline_data.empty()) {
      return make_error(ErrorCode::kInvalidArgument,
                        "a grow-only size change would move inline data to objects");
    }
    if (req.grow_only() &&
        (size <= ctx.fs.inline_threshold) != (size <= req.inline_threshold())) {
      return make_error(ErrorCode::kInvalidArgument,
                        "a grow-only size change predicted with another inline threshold");
    }
    if (size <= ctx.fs.inline_threshold) {
      inline_data.resize(size, '\0');
    } else {
      // Grows past the threshold: the service wrote the inline bytes to object 0.
      inode.set_inline_(false);
      inline_data.clear();
    }
    ctx.w.put_inline_data(inode.ino(), inline_data);
  }
  set_size(inode, size);
  *inode.mutable_mtime() = ctx.now();
  kill_privileges(inode, req.header().creds());
  return ok_status();
}

Status apply_times(OpContext& ctx, const proto::SetAttrRequest& req, proto::Inode& inode) {
  uint32_t v = req.valid();
  bool explicit_time =
      ((v & kSetAtime) && !(v & kSetAtimeNow)) || ((v & kSetMtime) && !(v & kSetMtimeNow));
  if (explicit_time && !is_owner_or_root(req.header().creds(), inode)) {
    return make_error(ErrorCode::kNotPermitted, "only the owner or root sets explicit times");
  }
  if (v & kSetAtimeNow) {
    *inode.mutable_atime() = ctx.now();
  } else if (v & kSetAtime) {
    *inode.mutable_atime() = req.atime();
  }
  if (v & kSetMtimeNow) {
    *inode.mutable_mtime() = ctx.now();
  } else if (v & kSetMtime) {
    *inode.mutable_mtime() = req.mtime();
  }
  return ok_status();
}

}  // namespace

Result<std::string> apply_setattr(OpContext& ctx, const proto::SetAttrRequest& req) {
  auto inode = DFS_TRY(load_inode(ctx.kv(), req.ino()));
  if (ctx.entry.expect_version() && inode.version() != ctx.entry.expect_version()) {
    return make_error(ErrorCode::kBusy, "inode changed during the truncate");
  }
  uint32_t v = req.valid();
  std::string inline_data;
  if (v & (kSetUid | kSetGid)) DFS_TRY_STATUS(apply_owner(req, inode));
  if (v & kSetSize) DFS_TRY_STATUS(apply_size(ctx, req, inode, inline_data));
  if (v & kSetMode) DFS_TRY_STATUS(apply_mode(req, inode));
  if (v & (kSetAtime | kSetMtime | kSetAtimeNow | kSetMtimeNow)) {
    DFS_TRY_STATUS(apply_times(ctx, req, inode));
  }
  changed(inode, ctx.now());
  if (v & kSetCtime) *inode.mutable_ctime() = req.ctime();
  ctx.w.put_inode(inode);
  proto::InodeReply reply;
  *reply.mutable_inode() = std::move(inode);
  // A truncate's reply carries the data, which the client's buffer restarts from.
  if (!inline_data.empty()) *reply.mutable_inode()->mutable_inline_data() = std::move(inline_data);
  return proto::stable_bytes(reply);
}

}  // namespace dfs::mds
