// The libfuse3 low-level adapter: glue only. Each handler copies its arguments, spawns
// a coroutine on the client's I/O thread and returns; the coroutine does the work
// through the Vfs and answers with a FuseReply. Handlers are split by family:
// entry_ops.cc (names and attributes), file_ops.cc, dir_ops.cc, xattr_ops.cc and
// fs_ops.cc (init, destroy, statfs).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "client-fuse/fuse/killpriv_v2.h"
#include "client-fuse/fuse/reply.h"
#include "client-fuse/vfs/vfs.h"
#include "common/rpc/asio.h"

namespace dfs::fuse {

// Session-wide settings negotiated in init().
struct FuseOptions {
  bool writeback_cache = true;
  bool posix_acl = true;
  bool splice = true;
  bool handle_killpriv = true;
  uint32_t max_write = 1u << 20;
  uint32_t max_readahead = 8u << 20;
  uint32_t max_background = 64;
  // Files up to this size whose data the client holds at a read-only open go into the
  // page cache (file_ops.cc, fill_page_cache); 0: none.
  uint64_t prefill_max_bytes = 4u << 20;
};

// What every handler reaches through fuse_req_userdata().
struct FuseContext {
  vfs::Vfs* vfs = nullptr;
  fuse_session* session = nullptr;  // for notifications to the kernel
  FuseOptions options;
  // Called once from init(), when the kernel's INIT was answered: the mount is live.
  std::function<void()> on_init;
  // Adds FUSE_HANDLE_KILLPRIV_V2 to the INIT reply (killpriv_v2.h).
  KillprivV2 killpriv_v2;
  // getxattr("security.capability") requests from the kernel (its check before a write;
  // see killpriv_v2.h), logged at unmount for tools/bench/fsbench.
  std::atomic<uint64_t> capability_getxattrs{0};
  // Files placed in the page cache at open (file_ops.cc), and stores the kernel refused.
  std::atomic<uint64_t> prefilled_files{0};
  std::atomic<uint64_t> prefilled_bytes{0};
  std::atomic<uint64_t> prefill_failures{0};
  // Threads sending the kernel invalidations of a recall (kernel_cache.cc): the session
  // is destroyed only once none runs.
  std::atomic<int> notifiers{0};
};

// Lets the client invalidate the kernel's caches when exclusive caching is recalled
// (kernel_cache.cc). Call once ctx.session is set.
void install_kernel_invalidator(FuseContext& ctx);

inline FuseContext& context(fuse_req_t req) {
  return *static_cast<FuseContext*>(fuse_req_userdata(req));
}
inline vfs::Vfs& vfs_of(fuse_req_t req) { return *context(req).vfs; }

// The caller's credentials; supplementary groups only when asked (reading them costs
// a /proc lookup, and only setgid and group decisions need them).
client::Creds creds_of(fuse_req_t req, bool with_groups = false);
// Whether creating a file of `mode` needs them: a setgid-executable file made by a caller
// other than root keeps setgid only for a member of its group (mds/ops/mknod.cc).
bool new_file_needs_groups(fuse_req_t req, mode_t mode);

// Runs `task` on the client's I/O thread.
template <class Awaitable>
void spawn(fuse_req_t req, Awaitable task) {
  spawn_checked(vfs_of(req).executor(), std::move(task));
}

// Replies with an entry and counts the kernel's new reference only when it arrived.
inline void reply_entry(FuseReply& reply, vfs::Vfs* v, const Result<vfs::Entry>& entry) {
  if (!entry) {
    reply.fail(entry.error());
  } else if (reply.entry(*entry)) {
    v->entry_replied(*entry);
  }
}

inline void reply_attr(FuseReply& reply, const Result<vfs::Attr>& attr) {
  if (!attr) {
    reply.fail(attr.error());
  } else {
    reply.attr(*attr);
  }
}

inline void reply_status(FuseReply& reply, const Status& status) {
  if (!status) {
    reply.fail(status.error());
  } else {
    reply.ok();
  }
}

// Each family adds its handlers to the table.
void add_entry_ops(fuse_lowlevel_ops& ops);
void add_lock_ops(fuse_lowlevel_ops& ops);
void add_file_ops(fuse_lowlevel_ops& ops);
void add_dir_ops(fuse_lowlevel_ops& ops);
void add_xattr_ops(fuse_lowlevel_ops& ops);
void add_fs_ops(fuse_lowlevel_ops& ops);

// The complete table.
fuse_lowlevel_ops make_ops();

}  // namespace dfs::fuse
