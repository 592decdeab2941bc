// Extended attributes, including system.posix_acl_* (the kernel enforces ACLs itself
// with FUSE_CAP_POSIX_ACL and reads and writes them through these handlers).
#include <cstring>

#include "client-fuse/fuse/ops.h"

namespace dfs::fuse {
namespace {

using vfs::Vfs;

// getxattr and listxattr share the size protocol: size 0 asks for the length only.
void reply_sized(FuseReply& reply, const std::string& value, size_t size) {
  if (size == 0) {
    reply.xattr_size(value.size());
  } else if (value.size() > size) {
    reply.error(ERANGE);
  } else {
    reply.buf(value.data(), value.size());
  }
}

void on_setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
                 int flags) {
  // Supplementary groups (a /proc read, creds_of) matter only to an access ACL set by a
  // caller other than root: it keeps setgid only for a member of the file's group
  // (mds/ops/xattr.cc). `tar --acls` sets one on every file, as root.
  bool needs_groups =
      fuse_req_ctx(req)->uid != 0 && std::strcmp(name, "system.posix_acl_access") == 0;
  spawn(req,
        [](FuseReply reply, Vfs* v, client::Creds c, uint64_t i, std::string n, std::string val,
           int f) -> awaitable<void> {
          auto set = co_await v->setxattr(std::move(c), i, std::move(n), std::move(val), f);
          reply_status(reply, set);
        }(FuseReply(req, "setxattr"), &vfs_of(req), creds_of(req, needs_groups), ino,
                  std::string(name),
                  std::string(value, size), flags));
}

void on_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  if (std::strcmp(name, "security.capability") == 0) {
    context(req).capability_getxattrs.fetch_add(1, std::memory_order_relaxed);
  }
  spawn(req,
        [](FuseReply reply, Vfs* v, client::Creds c, uint64_t i, std::string n,
           size_t sz) -> awaitable<void> {
          auto value = co_await v->getxattr(std::move(c), i, std::move(n));
          if (!value) {
            reply.fail(value.error());
          } else {
            reply_sized(reply, *value, sz);
          }
        }(FuseReply(req, "getxattr"), &vfs_of(req), creds_of(req), ino, std::string(name), size));
}

void on_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  spawn(req,
        [](FuseReply reply, Vfs* v, client::Creds c, uint64_t i, size_t sz) -> awaitable<void> {
          auto names = co_await v->listxattr(std::move(c), i);
          if (!names) {
            reply.fail(names.error());
            co_return;
          }
          std::string packed;
          for (const auto& n : *names) {
            packed += n;
            packed.push_back('\0');
          }
          reply_sized(reply, packed, sz);
        }(FuseReply(req, "listxattr"), &vfs_of(req), creds_of(req), ino, size));
}

void on_removexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  spawn(req,
        [](FuseReply reply, Vfs* v, client::Creds c, uint64_t i, std::string n) -> awaitable<void> {
          auto removed = co_await v->removexattr(std::move(c), i, std::move(n));
          reply_status(reply, removed);
        }(FuseReply(req, "removexattr"), &vfs_of(req), creds_of(req), ino, std::string(name)));
}

}  // namespace

void add_xattr_ops(fuse_lowlevel_ops& ops) {
  ops.setxattr = on_setxattr;
  ops.getxattr = on_getxattr;
  ops.listxattr = on_listxattr;
  ops.removexattr = on_removexattr;
}

}  // namespace dfs::fuse
