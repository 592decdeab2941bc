// Files: create, open, read, write_buf, flush, release, fsync, fallocate.
#include <spdlog/spdlog.h>

#include <cstring>
#include <optional>
#include <string_view>

#include "client-fuse/fuse/ops.h"

namespace dfs::fuse {
namespace {

using vfs::Vfs;

void on_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
               fuse_file_info* fi) {
  spawn(req,
        [](FuseReply reply, Vfs* v, client::Creds c, uint64_t p, std::string n, uint32_t m,
           fuse_file_info info) -> awaitable<void> {
          auto opened = co_await v->create(std::move(c), p, std::move(n), m, info.flags);
          if (!opened) {
            reply.fail(opened.error());
            co_return;
          }
          info.fh = opened->fh;
          info.keep_cache = opened->keep_cache;
          info.direct_io = opened->direct_io;
          if (reply.create(opened->entry, &info)) {
            v->entry_replied(opened->entry);
          } else {
            // The kernel never saw the file handle: close it again.
            ignore_error(co_await v->release(opened->fh), "undoing an undelivered create");
          }
        }(FuseReply(req, "create"), &vfs_of(req), creds_of(req, new_file_needs_groups(req, mode)),
                                parent, std::string(name), mode, *fi));
}

// A cold walk that reads every file (rsync, tar -c, cp -a) opens a file whose whole
// data the client already holds (inline data that came with the listing, or an object
// file's data fetched ahead), then reads it: a READ round trip or more per file, with
// the reader waiting on this thread. Storing that data in the kernel's page cache
// before the open is answered lets those reads be served by the kernel; keep_cache
// keeps the pages across the open. Measured in a cold rsync read-back at scale 0.25:
// READs 9,835 -> 432, the kernel's time in OPEN and READ 990 -> 650 ms, the read-back
// 3.97 -> 3.82 s (means of 8; docs/bench/history.md, "2026-12-02, early"). The client
// offers the data only when no other handle has the file open, so no dirty page can be
// overwritten (the kernel writes a file's dirty pages back before it releases its last
// handle). A store the kernel refuses only means the reads come here as usual.
void fill_page_cache(FuseContext& ctx, fuse_ino_t ino, std::string_view data) {
  fuse_bufvec buf = FUSE_BUFVEC_INIT(data.size());
  buf.buf[0].mem = const_cast<char*>(data.data());
  int rc = fuse_lowlevel_notify_store(ctx.session, ino, 0, &buf, fuse_buf_copy_flags{});
  if (rc != 0) {
    ctx.prefill_failures.fetch_add(1, std::memory_order_relaxed);
    spdlog::debug("page cache fill of inode {:#x} ({} bytes): {}", ino, data.size(),
                  std::strerror(-rc));
    return;
  }
  ctx.prefilled_files.fetch_add(1, std::memory_order_relaxed);
  ctx.prefilled_bytes.fetch_add(data.size(), std::memory_order_relaxed);
}

void on_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  spawn(req,
        [](FuseReply reply, FuseContext* ctx, client::Creds c, uint64_t i,
           fuse_file_info info) -> awaitable<void> {
          Vfs* v = ctx->vfs;
          auto opened = co_await v->open(std::move(c), i, info.flags);
          if (!opened) {
            reply.fail(opened.error());
            co_return;
          }
          info.fh = opened->fh;
          info.keep_cache = opened->keep_cache;
          info.direct_io = opened->direct_io;
          if (ctx->options.prefill_max_bytes > 0 && ctx->session && info.keep_cache) {
            // No suspension between taking the view and the store (see the client).
            auto data = v->client().data_for_page_cache(opened->fh);
            if (data && data->size() <= ctx->options.prefill_max_bytes) {
              fill_page_cache(*ctx, i, *data);
            }
          }
          if (!reply.open(&info)) {
            ignore_error(co_await v->release(opened->fh), "undoing an undelivered open");
          }
        }(FuseReply(req, "open"), &context(req), creds_of(req), ino, *fi));
}

void on_read(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  spawn(req,
        [](FuseReply reply, Vfs* v, uint64_t fh, uint64_t offset, uint64_t n) -> awaitable<void> {
          auto data = co_await v->read(fh, offset, n);
          if (!data) {
            reply.fail(data.error());
          } else {
            reply.buf(data->data(), data->size());
          }
        }(FuseReply(req, "read"), &vfs_of(req), fi->fh, static_cast<uint64_t>(off), size));
}

void on_write_buf(fuse_req_t req, fuse_ino_t ino, fuse_bufvec* in, off_t off,
                  fuse_file_info* fi) {
  FuseReply reply(req, "write");
  // A write the kernel sends past its cache, from a caller other than root (the MDS's
  // stand-in for CAP_FSETID), once the kernel leaves clearing privileges to us: the
  // file loses setuid/setgid before the data moves, with the writer's credentials (the
  // MDS's own clear at commit knows only the opener's).
  const bool drop_privileges =
      !fi->writepage && fuse_req_ctx(req)->uid != 0 && context(req).killpriv_v2.negotiated();
  // The data lives in libfuse's buffer (or a pipe) only until we return: copy it.
  size_t size = fuse_buf_size(in);
  std::string data(size, '\0');
  fuse_bufvec out = FUSE_BUFVEC_INIT(size);
  out.buf[0].mem = data.data();
  ssize_t copied = fuse_buf_copy(&out, in, static_cast<fuse_buf_copy_flags>(0));
  if (copied < 0) {
    reply.error(static_cast<int>(-copied));
    return;
  }
  data.resize(static_cast<size_t>(copied));
  std::optional<client::Creds> writer;
  if (drop_privileges) writer = creds_of(req);
  spawn(req,
        [](FuseReply r, Vfs* v, uint64_t i, std::optional<client::Creds> w, uint64_t fh,
           int flags, bool page_cache, uint64_t offset, std::string bytes) -> awaitable<void> {
          if (w) {
            auto dropped = co_await v->drop_privileges(std::move(*w), i);
            if (!dropped) {
              r.fail(dropped.error());
              co_return;
            }
          }
          auto written = co_await v->write(fh, flags, page_cache, offset, std::move(bytes));
          if (!written) {
            r.fail(written.error());
          } else {
            r.write(*written);
          }
        }(std::move(reply), &vfs_of(req), ino, std::move(writer), fi->fh, fi->flags,
                              fi->writepage != 0, static_cast<uint64_t>(off), std::move(data)));
}

// Every close(2) sends a FLUSH, and waits for it. In exclusive mode its work (queueing
// buffered bytes and sizes for the MDS) is done as well by the RELEASE that follows the
// last close, which close(2) does not wait for, and no other client needs to see the
// data at close. So the first successful FLUSH answers ENOSYS, which the kernel takes
// as success and as "send no more": a FUSE round trip saved per close (three per file
// in an rsync). The cost: close(2) no longer reports a failed earlier write; fsync does,
// as on a local file system.
// A flush is also a close by process `lock_owner`: its record locks on the file go (the
// kernel leaves that to file systems with their own locks). Once the kernel stops sending
// flushes, the locks taken through an open file go at its release instead.
void on_flush(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  spawn(req, [](FuseReply reply, Vfs* v, uint64_t fh, uint64_t lock_owner) -> awaitable<void> {
    co_await v->client().release_record_locks(fh, lock_owner);
    auto flushed = co_await v->flush(fh);
    if (flushed && v->client().options().exclusive) {
      reply.error(ENOSYS);
      co_return;
    }
    reply_status(reply, flushed);
  }(FuseReply(req, "flush"), &vfs_of(req), fi->fh, fi->lock_owner));
}

void on_fsync(fuse_req_t req, fuse_ino_t, int, fuse_file_info* fi) {
  spawn(req, [](FuseReply reply, Vfs* v, uint64_t fh) -> awaitable<void> {
    auto synced = co_await v->fsync(fh);
    reply_status(reply, synced);
  }(FuseReply(req, "fsync"), &vfs_of(req), fi->fh));
}

void on_release(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  spawn(req, [](FuseReply reply, Vfs* v, uint64_t fh, bool flock_release,
                uint64_t lock_owner) -> awaitable<void> {
    auto released = co_await v->release(fh, flock_release, lock_owner);
    if (!released) spdlog::warn("release: {}", released.error().to_string());
    reply.ok();  // close(2) has returned long ago; the error was reported by flush
  }(FuseReply(req, "release"), &vfs_of(req), fi->fh, fi->flock_release != 0, fi->lock_owner));
}

void on_fallocate(fuse_req_t req, fuse_ino_t, int, off_t, off_t, fuse_file_info*) {
  // Space is not reserved ahead in dfs; posix_fallocate() falls back to writing.
  FuseReply(req, "fallocate").error(EOPNOTSUPP);
}

}  // namespace

void add_file_ops(fuse_lowlevel_ops& ops) {
  ops.create = on_create;
  ops.open = on_open;
  ops.read = on_read;
  ops.write_buf = on_write_buf;
  ops.flush = on_flush;
  ops.fsync = on_fsync;
  ops.release = on_release;
  ops.fallocate = on_fallocate;
}

}  // namespace dfs::fuse
