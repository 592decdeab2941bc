// FuseReply: the one way a FUSE request is answered. Move-only; answers exactly once.
// If it is destroyed without having answered (a bug: a code path forgot to reply),
// it answers EIO and logs the request's opcode, so the calling process never hangs.
// Constructing one takes a slot of the in-flight limit and answering frees it; the
// channel (channel.h) stops reading requests while every slot is taken, which passes
// back-pressure to the kernel. Replies may be sent from any thread. Each answer
// records the request's service time (op_stats.h).
#pragma once

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <sys/statvfs.h>

#include <chrono>
#include <string>

#include "client-fuse/vfs/vfs.h"
#include "common/status/status.h"

namespace dfs::fuse {

// Bounds the requests being worked on (default 1024). Call before the first request.
void set_inflight_limit(int limit);
// True while the requests being worked on reach that bound.
bool inflight_full();

class FuseReply {
 public:
  FuseReply(fuse_req_t req, const char* op);
  FuseReply(FuseReply&& other) noexcept;
  FuseReply& operator=(FuseReply&&) = delete;
  FuseReply(const FuseReply&) = delete;
  ~FuseReply();

  // The request, valid until the reply is sent (for fuse_add_direntry and friends).
  fuse_req_t req() const { return req_; }

  // Each returns true when libfuse accepted the reply (false: e.g. the request was
  // interrupted); callers undo side effects of a reply that did not arrive.
  bool ok();                      // success without data
  bool error(int errno_value);    // errno_value > 0
  bool fail(const Error& error);  // through the errno table; logged
  bool entry(const vfs::Entry& entry);
  bool create(const vfs::Entry& entry, const fuse_file_info* fi);
  bool attr(const vfs::Attr& attr);
  bool open(const fuse_file_info* fi);
  bool readlink(const std::string& target);
  bool write(size_t count);
  bool buf(const char* data, size_t size);
  bool statfs(const struct statvfs& st);
  bool xattr_size(size_t size);
  bool lock(const struct flock& lock);

 private:
  fuse_req_t take();
  bool done(int rc);

  fuse_req_t req_;
  const char* op_;
  std::chrono::steady_clock::time_point started_;  // for op_stats.h
};

fuse_entry_param to_entry_param(const vfs::Entry& entry);

}  // namespace dfs::fuse
