#include "client-fuse/fuse/killpriv_v2.h"

#include <fcntl.h>
#include <linux/fuse.h>
#include <spdlog/spdlog.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "client-fuse/fuse/ops.h"

namespace dfs::fuse {
namespace {

KillprivV2& of(void* userdata) { return static_cast<FuseContext*>(userdata)->killpriv_v2; }

ssize_t read_hook(int fd, void* buf, size_t len, void* userdata) {
  ssize_t got = ::read(fd, buf, len);
  if (got > 0) of(userdata).saw_request(buf, static_cast<size_t>(got));
  return got;
}

ssize_t writev_hook(int fd, struct iovec* iov, int count, void* userdata) {
  of(userdata).patch_reply(iov, count);
  return ::writev(fd, iov, count);
}

ssize_t splice_hook(int fd_in, off_t* off_in, int fd_out, off_t* off_out, size_t len,
                    unsigned int flags, void*) {
  return ::splice(fd_in, off_in, fd_out, off_out, len, flags);
}

}  // namespace

bool KillprivV2::install(fuse_session* session) {
  const fuse_custom_io io{writev_hook, read_hook, splice_hook, splice_hook};
  int rc = fuse_session_custom_io(session, &io, fuse_session_fd(session));
  if (rc != 0) {
    spdlog::warn("libfuse refused custom I/O ({}): the kernel keeps clearing privileges "
                 "itself, one getxattr(security.capability) per write",
                 std::strerror(-rc));
    return false;
  }
  return true;
}

void KillprivV2::saw_request(const void* buf, size_t len) {
  if (init_seen_.load(std::memory_order_relaxed)) return;
  if (len < sizeof(fuse_in_header) + offsetof(fuse_init_in, flags2)) return;
  fuse_in_header in;
  std::memcpy(&in, buf, sizeof in);
  if (in.opcode != FUSE_INIT) return;
  init_seen_.store(true);
  fuse_init_in init;
  std::memset(&init, 0, sizeof init);
  std::memcpy(&init, static_cast<const char*>(buf) + sizeof in,
              std::min(len - sizeof in, sizeof init));
  // Only a kernel that offers the flag may get it (7.33 and later).
  if (init.flags & FUSE_HANDLE_KILLPRIV_V2) {
    init_unique_.store(in.unique);
  } else {
    spdlog::info("fuse init: the kernel ({}.{}) does not offer HANDLE_KILLPRIV_V2: it clears "
                 "privileges itself, one getxattr(security.capability) per write",
                 init.major, init.minor);
  }
}

void KillprivV2::patch_reply(struct iovec* iov, int count) {
  uint64_t unique = init_unique_.load();
  if (unique == 0 || count < 2 || iov[0].iov_len < sizeof(fuse_out_header)) return;
  fuse_out_header out;
  std::memcpy(&out, iov[0].iov_base, sizeof out);
  if (out.unique != unique) return;
  init_unique_.store(0);
  if (out.error != 0 || iov[1].iov_len < offsetof(fuse_init_out, flags) + sizeof(uint32_t)) return;
  auto* flags = static_cast<char*>(iov[1].iov_base) + offsetof(fuse_init_out, flags);
  uint32_t value;
  std::memcpy(&value, flags, sizeof value);
  value |= FUSE_HANDLE_KILLPRIV_V2;
  std::memcpy(flags, &value, sizeof value);
  negotiated_.store(true);
  spdlog::info("fuse init: the kernel leaves clearing privileges to us (HANDLE_KILLPRIV_V2)");
}

}  // namespace dfs::fuse
