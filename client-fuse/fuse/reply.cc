#include "client-fuse/fuse/reply.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <memory>

#include "client-fuse/fuse/errno_map.h"
#include "client-fuse/fuse/op_stats.h"

namespace dfs::fuse {
namespace {

constexpr int kMaxInflight = 1 << 16;
int inflight_limit = 1024;
std::atomic<int> inflight{0};  // replies constructed and not yet sent

}  // namespace

void set_inflight_limit(int limit) { inflight_limit = std::clamp(limit, 1, kMaxInflight); }

bool inflight_full() { return inflight.load(std::memory_order_relaxed) >= inflight_limit; }

fuse_entry_param to_entry_param(const vfs::Entry& entry) {
  fuse_entry_param e{};
  e.ino = entry.ino;
  e.generation = 0;
  e.attr = entry.attr;
  e.attr_timeout = entry.attr_timeout;
  e.entry_timeout = entry.entry_timeout;
  return e;
}

FuseReply::FuseReply(fuse_req_t req, const char* op)
    : req_(req), op_(op), started_(std::chrono::steady_clock::now()) {
  inflight.fetch_add(1, std::memory_order_relaxed);
}

FuseReply::FuseReply(FuseReply&& other) noexcept
    : req_(std::exchange(other.req_, nullptr)), op_(other.op_), started_(other.started_) {}

FuseReply::~FuseReply() {
  if (!req_) return;
  spdlog::error("BUG: FUSE {} request dropped without a reply; answering EIO", op_);
  error(EIO);
}

fuse_req_t FuseReply::take() {
  fuse_req_t req = std::exchange(req_, nullptr);
  if (req) {
    inflight.fetch_sub(1, std::memory_order_relaxed);
    record_op(op_, std::chrono::steady_clock::now() - started_);
  }
  return req;
}

bool FuseReply::done(int rc) {
  if (rc != 0) spdlog::debug("FUSE {} reply not delivered: {}", op_, rc);
  return rc == 0;
}

bool FuseReply::ok() { return error(0); }

bool FuseReply::error(int errno_value) {
  fuse_req_t req = take();
  if (!req) return false;
  return done(fuse_reply_err(req, errno_value));
}

bool FuseReply::fail(const Error& err) {
  int e = to_errno(err.code());
  if (e == EIO) {
    spdlog::warn("{}: {}", op_, err.to_string());
  } else {
    spdlog::debug("{}: {}", op_, err.to_string());
  }
  return error(e == 0 ? EIO : e);
}

bool FuseReply::entry(const vfs::Entry& entry) {
  fuse_entry_param e = to_entry_param(entry);
  fuse_req_t req = take();
  return req && done(fuse_reply_entry(req, &e));
}

bool FuseReply::create(const vfs::Entry& entry, const fuse_file_info* fi) {
  fuse_entry_param e = to_entry_param(entry);
  fuse_req_t req = take();
  return req && done(fuse_reply_create(req, &e, fi));
}

bool FuseReply::attr(const vfs::Attr& attr) {
  fuse_req_t req = take();
  return req && done(fuse_reply_attr(req, &attr.attr, attr.timeout));
}

bool FuseReply::open(const fuse_file_info* fi) {
  fuse_req_t req = take();
  return req && done(fuse_reply_open(req, fi));
}

bool FuseReply::readlink(const std::string& target) {
  fuse_req_t req = take();
  return req && done(fuse_reply_readlink(req, target.c_str()));
}

bool FuseReply::write(size_t count) {
  fuse_req_t req = take();
  return req && done(fuse_reply_write(req, count));
}

bool FuseReply::buf(const char* data, size_t size) {
  fuse_req_t req = take();
  return req && done(fuse_reply_buf(req, data, size));
}

bool FuseReply::lock(const struct flock& lock) {
  fuse_req_t req = take();
  return req && done(fuse_reply_lock(req, &lock));
}

bool FuseReply::statfs(const struct statvfs& st) {
  fuse_req_t req = take();
  return req && done(fuse_reply_statfs(req, &st));
}

bool FuseReply::xattr_size(size_t size) {
  fuse_req_t req = take();
  return req && done(fuse_reply_xattr(req, size));
}

}  // namespace dfs::fuse
