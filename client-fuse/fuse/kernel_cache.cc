// What the kernel caches, given up when the MDS recalls exclusive caching or owned
// directories (docs/capabilities.md, "The kernel's caches"). With FUSE's writeback cache
// the kernel trusts its own size of a cached file over the client's, so invalidating
// attributes is not enough: every name it was given under the long timeouts is
// invalidated too, after which it drops the inodes nobody uses (FUSE evicts an unused
// inode at once) and the next lookup brings the MDS's attributes. Inodes are
// invalidated first, which writes their dirty pages back through this client. The names
// of directories are only expired (the next walk through one asks the client again):
// dropping one would drop every name and page cached below it, and a directory's inode
// holds no size the kernel trusts. A recall of directories drops only what they let
// the kernel cache: their names, their inodes and those of the files created in them.
//
// The notifications are written from a thread of their own: each waits for the kernel,
// which may wait for a write-back that this client's I/O thread serves.
#include <spdlog/spdlog.h>

#include <cerrno>
#include <thread>

#include "client-fuse/fuse/ops.h"
#include "common/rpc/completion.h"

namespace dfs::fuse {

void install_kernel_invalidator(FuseContext& ctx) {
  // A write of this mount's to a file whose pages its readers may hold from a read
  // share: only that range, of the file's kernel inodes.
  ctx.vfs->client().set_page_dropper(
      [&ctx](uint64_t ino, uint64_t offset, uint64_t length) -> awaitable<void> {
        fuse_session* se = ctx.session;
        if (!se) co_return;
        auto inodes = ctx.vfs->kernel_inodes_of(ino);
        if (inodes.empty()) co_return;
        auto done = std::make_shared<Completion<bool>>(ctx.vfs->executor());
        ++ctx.notifiers;
        std::thread([&ctx, se, inodes = std::move(inodes), offset, length, done,
                     ex = ctx.vfs->executor()] {
          for (uint64_t fuse_ino : inodes) {
            fuse_lowlevel_notify_inval_inode(se, fuse_ino, static_cast<off_t>(offset),
                                             static_cast<off_t>(length));
          }
          asio::post(ex, [done] { done->set(true); });
          --ctx.notifiers;
        }).detach();
        co_await done->wait();
      });
  ctx.vfs->client().set_on_exclusive([&ctx] { ctx.vfs->renew_shared_incarnations(); });
  ctx.vfs->client().set_kernel_invalidator(
      [&ctx](client::CacheRights::KernelScope scope) -> awaitable<void> {
        fuse_session* se = ctx.session;
        if (!se) co_return;
        auto known = ctx.vfs->take_kernel_knowledge(scope);
        struct Counts {
          size_t inodes = 0;
          size_t names = 0;
          size_t expired = 0;
        };
        auto done = std::make_shared<Completion<Counts>>(ctx.vfs->executor());
        auto started = Clock::now();
        ++ctx.notifiers;
        std::thread([&ctx, se, known = std::move(known), done, ex = ctx.vfs->executor()]() mutable {
          Counts counts;
          // ENOENT: the kernel no longer has it, which is as good.
          for (uint64_t ino : known.inodes) {
            if (fuse_lowlevel_notify_inval_inode(se, ino, 0, 0) == 0) ++counts.inodes;
          }
          for (const auto& [parent, name] : known.names) {
            if (fuse_lowlevel_notify_inval_entry(se, parent, name.data(), name.size()) == 0) {
              ++counts.names;
            }
          }
          // A kernel without FUSE_EXPIRE_ONLY (before 6.2) answers ENOSYS: drop the name.
          bool expire_only = true;
          for (const auto& [parent, name] : known.directory_names) {
            if (expire_only) {
              int rc = fuse_lowlevel_notify_expire_entry(se, parent, name.data(), name.size(),
                                                         FUSE_LL_EXPIRE_ONLY);
              if (rc == 0) ++counts.expired;
              if (rc != -ENOSYS) continue;
              expire_only = false;
            }
            if (fuse_lowlevel_notify_inval_entry(se, parent, name.data(), name.size()) == 0) {
              ++counts.names;
            }
          }
          asio::post(ex, [done, counts] { done->set(counts); });
          --ctx.notifiers;
        }).detach();
        Counts counts = co_await done->wait();
        spdlog::info(
            "kernel caches invalidated{}: {} inode(s), {} name(s), {} directory name(s) "
            "expired, in {} ms",
            scope.everything ? "" : " for the inodes given up", counts.inodes, counts.names,
            counts.expired, std::chrono::duration_cast<Duration>(Clock::now() - started).count());
      });
}

}  // namespace dfs::fuse
