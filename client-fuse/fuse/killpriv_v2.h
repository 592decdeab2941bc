// FUSE_HANDLE_KILLPRIV_V2, which libfuse 3.14 cannot negotiate (it knows neither the
// flag nor its FUSE_CAP_), added to the kernel's INIT reply on the way out.
//
// Why: without it the kernel clears privileges itself. Before every buffered write it
// asks getxattr("security.capability") (file_remove_privs; FUSE turns SB_NOSEC off),
// and before every chown it fetches the attributes again (fuse_setattr with
// ATTR_KILL_SUID). Each is a FUSE round trip: `tar -x` of an lxc tree sent about four
// capability queries per file. With KILLPRIV_V2 the kernel sets SB_NOSEC, so a file
// found without privileges is not asked again until its attributes are refreshed
// (fuse_change_attributes clears S_NOSEC, since another mount may have set them).
//
// The contract it takes on, which the MDS keeps for every mount (kill_privileges,
// mds/ops/inode_rules.h): a write or truncate by a caller other than root clears
// setuid, and setgid with group-execute; every write and truncate clears
// security.capability; chown of a non-directory clears setuid, capabilities, and setgid
// with group-execute; open with O_TRUNC is a truncate. A write whose caller lacks
// CAP_FSETID to a setuid or setgid file comes past the page cache, and the client drops
// the bits before it (Vfs::drop_privileges, with the writer's credentials; the MDS's
// clear at commit knows only the opener's); so does chown(f, -1, -1), which the kernel
// sends as a change of ctime alone. The kernel still removes security.capability itself
// where it finds one.
//
// How: libfuse's custom I/O hooks (fuse_session_custom_io) read and write /dev/fuse for
// the session; the read hook notes the INIT request and whether the kernel offers the
// flag, the write hook sets it in that request's reply. Everything else passes through
// unchanged, splice included.
#pragma once

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include <atomic>
#include <cstdint>

namespace dfs::fuse {

// One per session, in its FuseContext (the hooks find it through the session's userdata).
class KillprivV2 {
 public:
  // Installs the hooks on a mounted session, before its first request is read. Returns
  // false when libfuse refuses them (the mount then goes on without the flag).
  bool install(fuse_session* session);
  // After INIT: whether the kernel was told that we kill privileges.
  bool negotiated() const { return negotiated_.load(std::memory_order_relaxed); }

  // For the hooks: a request read from /dev/fuse, and a reply about to be written.
  void saw_request(const void* buf, size_t len);
  void patch_reply(struct iovec* iov, int count);

 private:
  std::atomic<bool> init_seen_{false};     // later requests are not looked at
  std::atomic<uint64_t> init_unique_{0};  // the INIT request awaiting its reply; 0: none
  std::atomic<bool> negotiated_{false};
};

}  // namespace dfs::fuse
