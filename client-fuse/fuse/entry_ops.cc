// Names and attributes: lookup, forget, getattr, setattr, mknod, mkdir, unlink, rmdir,
// symlink, readlink, link, rename.
#include <spdlog/spdlog.h>

#include <cstdio>

#include "client-fuse/fuse/ops.h"

namespace dfs::fuse {
namespace {

using vfs::Vfs;

void on_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  spawn(req,
        [](FuseReply reply, Vfs* v, client::Creds c, uint64_t p, std::string n) -> awaitable<void> {
          auto result = co_await v->lookup(std::move(c), p, std::move(n));
          reply_entry(reply, v, result);
        }(FuseReply(req, "lookup"), &vfs_of(req), creds_of(req), parent, std::string(name)));
}

void on_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup) {
  Vfs* v = &vfs_of(req);
  asio::post(v->executor(), [v, ino, nlookup] { v->forget(ino, nlookup); });
  fuse_reply_none(req);
}

void on_forget_multi(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  Vfs* v = &vfs_of(req);
  std::vector<fuse_forget_data> copy(forgets, forgets + count);
  asio::post(v->executor(), [v, copy = std::move(copy)] {
    for (const auto& f : copy) v->forget(f.ino, f.nlookup);
  });
  fuse_reply_none(req);
}

void on_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  spawn(req, [](FuseReply reply, Vfs* v, client::Creds c, uint64_t i) -> awaitable<void> {
    auto result = co_await v->getattr(std::move(c), i);
    reply_attr(reply, result);
  }(FuseReply(req, "getattr"), &vfs_of(req), creds_of(req), ino));
}

proto::Timespec to_proto(const struct timespec& t) {
  proto::Timespec out;
  out.set_sec(t.tv_sec);
  out.set_nsec(static_cast<uint32_t>(t.tv_nsec));
  return out;
}

// FUSE's bits go to the MDS as they are: SetAttrRequest.valid is defined with their values.
static_assert(FUSE_SET_ATTR_MODE == client::kSetMode && FUSE_SET_ATTR_UID == client::kSetUid &&
              FUSE_SET_ATTR_GID == client::kSetGid && FUSE_SET_ATTR_SIZE == client::kSetSize &&
              FUSE_SET_ATTR_ATIME == client::kSetAtime &&
              FUSE_SET_ATTR_MTIME == client::kSetMtime &&
              FUSE_SET_ATTR_ATIME_NOW == client::kSetAtimeNow &&
              FUSE_SET_ATTR_MTIME_NOW == client::kSetMtimeNow &&
              FUSE_SET_ATTR_CTIME == client::kSetCtime);

void on_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info*) {
  constexpr uint32_t kKnown = FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID |
                              FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME |
                              FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW |
                              FUSE_SET_ATTR_CTIME;
  client::SetAttrArgs args;
  args.valid = static_cast<uint32_t>(to_set) & kKnown;
  args.mode = attr->st_mode;
  args.uid = attr->st_uid;
  args.gid = attr->st_gid;
  args.size = static_cast<uint64_t>(attr->st_size);
  args.atime = to_proto(attr->st_atim);
  args.mtime = to_proto(attr->st_mtim);
  args.ctime = to_proto(attr->st_ctim);
  // Supplementary groups cost libfuse two reads of /proc/PID/task/TID/status, and the
  // MDS looks at them (in_group, mds/ops/setattr.cc) only for a caller other than root
  // that sets a group other than its own, or a mode with setgid. rsync's two chmods a
  // file paid them on every file.
  const fuse_ctx* ctx = fuse_req_ctx(req);
  bool other_group = (args.valid & FUSE_SET_ATTR_GID) && attr->st_gid != ctx->gid;
  bool setgid_mode = (args.valid & FUSE_SET_ATTR_MODE) && (attr->st_mode & S_ISGID);
  bool needs_groups = ctx->uid != 0 && (other_group || setgid_mode);
  // chown(f, -1, -1) clears setuid and setgid like any chown; with KILLPRIV_V2 the kernel
  // sends it as a change of ctime alone and leaves that to us (fuse/killpriv_v2.h). Nothing
  // else sends ctime alone (utimensat and the writeback cache's times carry mtime).
  bool chown_unchanged =
      args.valid == FUSE_SET_ATTR_CTIME && context(req).killpriv_v2.negotiated();
  spawn(req,
        [](FuseReply reply, Vfs* v, client::Creds c, uint64_t i, client::SetAttrArgs a,
           bool drop_privileges) -> awaitable<void> {
          if (drop_privileges) {
            auto dropped = co_await v->drop_privileges(c, i);
            if (!dropped) {
              reply.fail(dropped.error());
              co_return;
            }
          }
          auto result = co_await v->setattr(std::move(c), i, std::move(a));
          reply_attr(reply, result);
        }(FuseReply(req, "setattr"), &vfs_of(req), creds_of(req, needs_groups), ino,
                                       std::move(args), chown_unchanged));
}

void on_mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  spawn(req,
        [](FuseReply reply, Vfs* v, client::Creds c, uint64_t p, std::string n, uint32_t m,
           uint64_t r) -> awaitable<void> {
          auto result = co_await v->mknod(std::move(c), p, std::move(n), m, r);
          reply_entry(reply, v, result);
        }(FuseReply(req, "mknod"), &vfs_of(req), creds_of(req, new_file_needs_groups(req, mode)),
                       parent, std::string(name), mode, rdev));
}

void on_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  spawn(req,
        [](FuseReply reply, Vfs* v, client::Creds c, uint64_t p, std::string n,
           uint32_t m) -> awaitable<void> {
          auto result = co_await v->mknod(std::move(c), p, std::move(n), m, 0);
          reply_entry(reply, v, result);
        }(FuseReply(req, "mkdir"), &vfs_of(req), creds_of(req), parent, std::string(name),
                       S_IFDIR | (mode & 07777)));
}

void remove_entry(fuse_req_t req, fuse_ino_t parent, const char* name, bool directory) {
  spawn(req,
        [](FuseReply reply, Vfs* v, client::Creds c, uint64_t p, std::string n,
           bool dir) -> awaitable<void> {
          auto result = co_await v->unlink(std::move(c), p, std::move(n), dir);
          reply_status(reply, result);
        }(FuseReply(req, directory ? "rmdir" : "unlink"), &vfs_of(req), creds_of(req), parent,
                     std::string(name), directory));
}

void on_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  remove_entry(req, parent, name, false);
}

void on_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  remove_entry(req, parent, name, true);
}

void on_symlink(fuse_req_t req, const char* link, fuse_ino_t parent, const char* name) {
  spawn(req,
        [](FuseReply reply, Vfs* v, client::Creds c, std::string target, uint64_t p,
           std::string n) -> awaitable<void> {
          auto result = co_await v->symlink(std::move(c), std::move(target), p, std::move(n));
          reply_entry(reply, v, result);
        }(FuseReply(req, "symlink"), &vfs_of(req), creds_of(req), std::string(link), parent,
                          std::string(name)));
}

void on_readlink(fuse_req_t req, fuse_ino_t ino) {
  spawn(req, [](FuseReply reply, Vfs* v, client::Creds c, uint64_t i) -> awaitable<void> {
    auto target = co_await v->readlink(std::move(c), i);
    if (!target) {
      reply.fail(target.error());
    } else {
      reply.readlink(*target);
    }
  }(FuseReply(req, "readlink"), &vfs_of(req), creds_of(req), ino));
}

void on_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t new_parent, const char* new_name) {
  spawn(req,
        [](FuseReply reply, Vfs* v, client::Creds c, uint64_t i, uint64_t p,
           std::string n) -> awaitable<void> {
          auto result = co_await v->link(std::move(c), i, p, std::move(n));
          reply_entry(reply, v, result);
        }(FuseReply(req, "link"), &vfs_of(req), creds_of(req), ino, new_parent,
                          std::string(new_name)));
}

void on_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t new_parent,
               const char* new_name, unsigned int flags) {
  if (flags & ~static_cast<unsigned>(RENAME_NOREPLACE | RENAME_EXCHANGE)) {
    FuseReply(req, "rename").error(EINVAL);  // RENAME_WHITEOUT: overlayfs only
    return;
  }
  spawn(req,
        [](FuseReply reply, Vfs* v, client::Creds c, uint64_t p, std::string n, uint64_t np,
           std::string nn, uint32_t f) -> awaitable<void> {
          auto result = co_await v->rename(std::move(c), p, std::move(n), np, std::move(nn), f);
          reply_status(reply, result);
        }(FuseReply(req, "rename"), &vfs_of(req), creds_of(req), parent, std::string(name),
                                       new_parent, std::string(new_name), flags));
}

}  // namespace

client::Creds creds_of(fuse_req_t req, bool with_groups) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  client::Creds c;
  c.uid = ctx->uid;
  c.gid = ctx->gid;
  c.umask = ctx->umask;
  if (with_groups) {
    std::vector<gid_t> groups(32);
    int n = fuse_req_getgroups(req, static_cast<int>(groups.size()), groups.data());
    if (n > static_cast<int>(groups.size())) {
      groups.resize(n);
      n = fuse_req_getgroups(req, n, groups.data());
    }
    for (int i = 0; i < n && i < static_cast<int>(groups.size()); ++i)
      c.groups.push_back(groups[i]);
  }
  return c;
}

bool new_file_needs_groups(fuse_req_t req, mode_t mode) {
  return fuse_req_ctx(req)->uid != 0 && !S_ISDIR(mode) && (mode & S_ISGID) && (mode & S_IXGRP);
}

void add_entry_ops(fuse_lowlevel_ops& ops) {
  ops.lookup = on_lookup;
  ops.forget = on_forget;
  ops.forget_multi = on_forget_multi;
  ops.getattr = on_getattr;
  ops.setattr = on_setattr;
  ops.mknod = on_mknod;
  ops.mkdir = on_mkdir;
  ops.unlink = on_unlink;
  ops.rmdir = on_rmdir;
  ops.symlink = on_symlink;
  ops.readlink = on_readlink;
  ops.link = on_link;
  ops.rename = on_rename;
}

}  // namespace dfs::fuse
