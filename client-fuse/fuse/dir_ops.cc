// Directories: opendir, readdir, readdirplus, releasedir, fsyncdir.
#include "client-fuse/fuse/ops.h"

namespace dfs::fuse {
namespace {

using vfs::Vfs;

// Rough sizes of one packed entry, to ask the Vfs for about a buffer's worth.
constexpr size_t kDirentBytes = 32;
constexpr size_t kDirentPlusBytes = 160;

void on_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  spawn(req,
        [](FuseReply reply, Vfs* v, client::Creds c, uint64_t i,
           fuse_file_info info) -> awaitable<void> {
          auto dh = co_await v->opendir(std::move(c), i);
          if (!dh) {
            reply.fail(dh.error());
            co_return;
          }
          info.fh = *dh;
          if (!reply.open(&info)) v->releasedir(*dh);
        }(FuseReply(req, "opendir"), &vfs_of(req), creds_of(req), ino, *fi));
}

awaitable<void> list_dir(FuseReply reply, Vfs* v, client::Creds c, uint64_t dh, size_t size,
                         uint64_t offset, bool plus) {
  size_t max_items = size / (plus ? kDirentPlusBytes : kDirentBytes) + 1;
  auto items = co_await v->readdir(std::move(c), dh, offset, max_items, plus);
  if (!items) {
    reply.fail(items.error());
    co_return;
  }
  std::string buf(size, '\0');
  size_t used = 0;
  std::vector<const vfs::Entry*> counted;
  for (const auto& item : *items) {
    size_t n;
    if (plus) {
      fuse_entry_param e = to_entry_param(item.entry);
      n = fuse_add_direntry_plus(reply.req(), buf.data() + used, size - used, item.name.c_str(), &e,
                                 static_cast<off_t>(item.next_offset));
    } else {
      n = fuse_add_direntry(reply.req(), buf.data() + used, size - used, item.name.c_str(),
                            &item.entry.attr, static_cast<off_t>(item.next_offset));
    }
    if (n > size - used) break;  // did not fit: the next call starts with it
    used += n;
    if (item.counts_lookup) counted.push_back(&item.entry);
  }
  // Only entries the kernel actually received hold a lookup reference.
  if (reply.buf(buf.data(), used)) {
    for (const auto* e : counted) v->entry_replied(*e);
  }
}

void on_readdir(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  spawn(req, list_dir(FuseReply(req, "readdir"), &vfs_of(req), creds_of(req), fi->fh, size,
                      static_cast<uint64_t>(off), false));
}

void on_readdirplus(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  spawn(req, list_dir(FuseReply(req, "readdirplus"), &vfs_of(req), creds_of(req), fi->fh, size,
                      static_cast<uint64_t>(off), true));
}

void on_releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  Vfs* v = &vfs_of(req);
  uint64_t dh = fi->fh;
  asio::post(v->executor(), [v, dh] { v->releasedir(dh); });
  FuseReply(req, "releasedir").ok();
}

void on_fsyncdir(fuse_req_t req, fuse_ino_t, int, fuse_file_info* fi) {
  // The MDS acknowledges directory operations before its log is durable: wait for
  // that (deferred ones ride ahead of the wait).
  spawn(req, [](FuseReply reply, Vfs* v, uint64_t dh) -> awaitable<void> {
    auto synced = co_await v->fsyncdir(dh);
    reply_status(reply, synced);
  }(FuseReply(req, "fsyncdir"), &vfs_of(req), fi->fh));
}

}  // namespace

void add_dir_ops(fuse_lowlevel_ops& ops) {
  ops.opendir = on_opendir;
  ops.readdir = on_readdir;
  ops.readdirplus = on_readdirplus;
  ops.releasedir = on_releasedir;
  ops.fsyncdir = on_fsyncdir;
}

}  // namespace dfs::fuse
