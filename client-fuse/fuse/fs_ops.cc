// The file system as a whole: init (capability negotiation), destroy, statfs; and the
// complete ops table.
#include <spdlog/spdlog.h>

#include "client-fuse/fuse/op_stats.h"
#include "client-fuse/fuse/ops.h"

namespace dfs::fuse {
namespace {

using vfs::Vfs;

void on_init(void* userdata, fuse_conn_info* conn) {
  auto* ctx = static_cast<FuseContext*>(userdata);
  const FuseOptions& o = ctx->options;
  auto want = [conn](unsigned cap, bool on) {
    if (on && (conn->capable & cap)) {
      conn->want |= cap;
    } else {
      conn->want &= ~cap;
    }
  };
  // Kernel caches: safe because this client is the only one (see docs/architecture.md,
  // "Kernel caches"), and because every change passes through this kernel.
  want(FUSE_CAP_WRITEBACK_CACHE, o.writeback_cache);
  want(FUSE_CAP_READDIRPLUS, true);
  want(FUSE_CAP_READDIRPLUS_AUTO, true);
  want(FUSE_CAP_CACHE_SYMLINKS, true);  // a symlink's target never changes
  // The kernel checks access bits and ACLs (default_permissions); ACLs live in xattrs.
  want(FUSE_CAP_POSIX_ACL, o.posix_acl);
  // The MDS applies the umask (carried in the credentials), or instead a parent's
  // default ACL: the kernel must not apply it first.
  want(FUSE_CAP_DONT_MASK, true);
  // We (the MDS) clear setuid/setgid/capabilities on write, truncate and chown. libfuse
  // 3.14 passes neither this flag nor KILLPRIV_V2 on to the kernel; KillprivV2 adds the
  // latter to the reply (killpriv_v2.h). -o nokillpriv leaves both out.
  want(FUSE_CAP_HANDLE_KILLPRIV, o.handle_killpriv);
  // flock(2) and fcntl(2) locks go to the MDS (lock_ops.cc), so that they hold across
  // every mount, not only among this kernel's processes.
  want(FUSE_CAP_POSIX_LOCKS, true);
  want(FUSE_CAP_FLOCK_LOCKS, true);
  want(FUSE_CAP_ASYNC_READ, true);
  want(FUSE_CAP_PARALLEL_DIROPS, true);
  want(FUSE_CAP_SPLICE_WRITE, o.splice);
  want(FUSE_CAP_SPLICE_MOVE, o.splice);
  want(FUSE_CAP_SPLICE_READ, o.splice);
  // O_TRUNC must arrive as a setattr (which also removes the objects); no NFS export.
  want(FUSE_CAP_ATOMIC_O_TRUNC, false);
  want(FUSE_CAP_EXPORT_SUPPORT, false);
  // With the writeback cache the kernel's size and mtime are the truth; without it,
  // let the kernel drop pages whose file changed.
  want(FUSE_CAP_AUTO_INVAL_DATA, !o.writeback_cache);
  conn->max_write = o.max_write;
  conn->max_readahead = o.max_readahead;
  conn->max_background = o.max_background;
  conn->congestion_threshold = o.max_background * 3 / 4;
  conn->time_gran = 1;
  bool wb = conn->want & FUSE_CAP_WRITEBACK_CACHE;
  ctx->vfs->set_writeback_cache(wb);
  spdlog::info(
      "fuse init: proto {}.{}, writeback_cache {}, posix_acl {}, killpriv {}, "
      "readdirplus {}, splice {}, max_write {}, max_readahead {}",
      conn->proto_major, conn->proto_minor, wb, bool(conn->want & FUSE_CAP_POSIX_ACL),
      bool(conn->want & FUSE_CAP_HANDLE_KILLPRIV), bool(conn->want & FUSE_CAP_READDIRPLUS),
      bool(conn->want & FUSE_CAP_SPLICE_READ), conn->max_write, conn->max_readahead);
  if (ctx->on_init) ctx->on_init();
}

void on_destroy(void* userdata) {
  // The session is ending (unmounted): push whatever is still buffered. Blocking is
  // fine here, no request is waiting any more.
  auto* ctx = static_cast<FuseContext*>(userdata);
  spdlog::info("getxattr(security.capability) requests from the kernel: {}",
               ctx->capability_getxattrs.load());
  spdlog::info("files placed in the page cache at open: {} ({} bytes), refused by the kernel: {}",
               ctx->prefilled_files.load(), ctx->prefilled_bytes.load(),
               ctx->prefill_failures.load());
  std::string ops = op_stats_summary();
  if (!ops.empty()) spdlog::info("FUSE requests answered (service time in this client):\n{}", ops);
  auto& client = ctx->vfs->client();
  if (client.on_io_thread()) {
    // A FUSE_DESTROY request (fuseblk) on the channel's thread: it cannot wait for
    // itself; the shutdown after the channel ends pushes what is buffered.
    return;
  }
  auto synced = client.run(ctx->vfs->sync_all());
  if (!synced) spdlog::error("flush at unmount failed: {}", synced.error().to_string());
}

void on_statfs(fuse_req_t req, fuse_ino_t) {
  spawn(req, [](FuseReply reply, Vfs* v, client::Creds c) -> awaitable<void> {
    auto st = co_await v->statfs(std::move(c));
    if (!st) {
      reply.fail(st.error());
    } else {
      reply.statfs(*st);
    }
  }(FuseReply(req, "statfs"), &vfs_of(req), creds_of(req)));
}

}  // namespace

void add_fs_ops(fuse_lowlevel_ops& ops) {
  ops.init = on_init;
  ops.destroy = on_destroy;
  ops.statfs = on_statfs;
}

fuse_lowlevel_ops make_ops() {
  fuse_lowlevel_ops ops{};
  add_fs_ops(ops);
  add_entry_ops(ops);
  add_file_ops(ops);
  add_dir_ops(ops);
  add_xattr_ops(ops);
  add_lock_ops(ops);
  return ops;
}

}  // namespace dfs::fuse
