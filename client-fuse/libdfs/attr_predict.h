// predict_setattr / predict_entry: what the MDS will make of a mutation, computed by
// running the MDS's own op (mds/ops) on a memory store that holds just the inodes and
// names the op reads.
// The client defers attribute changes (chmod, chown, utimes) on inodes it knows exactly
// and answers the kernel with this prediction; since the op is the same deterministic
// function and the request carries the time it used (as ctime), the MDS reaches the
// same attributes when the deferred request arrives (only the version differs).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/proto/mds.pb.h"
#include "common/status/status.h"

namespace dfs::client {

// A name the op will look up: `name` in directory `parent` refers to `ino`.
struct SeedName {
  uint64_t parent = 0;
  std::string name;
  uint64_t ino = 0;
  uint32_t mode = 0;  // the inode's type bits
};

// Applies `entry` (with its index, time and new inode number filled in as the MDS
// would) to a store holding only `inodes`, `names` and the inode counters, and returns
// the op's serialized reply. A name not seeded does not exist. The caller must seed
// everything the op reads that decides its outcome; what it cannot know (a full hash
// bucket of a directory) makes the MDS fail where the prediction succeeded, which the
// caller reports later. `inline_threshold`: the file system's (the session says), where
// the op's outcome depends on it; the MDS's default otherwise.
// Errors: the op's own, as the MDS would report them.
Result<std::string> predict_entry(const proto::MdsLogEntry& entry,
                                  const std::vector<proto::Inode>& inodes,
                                  const std::vector<SeedName>& names,
                                  std::optional<uint32_t> inline_threshold = std::nullopt);

// The MDS's rule for what a write by a caller other than root, or a chown, leaves of a
// mode: without setuid, and without setgid with group-execute (mds/ops/inode_rules.h).
uint32_t mode_without_setid(uint32_t mode);

// `req` changes the size only as grow_only (other truncation needs the MDS's object
// work); then `current` must carry an inline file's data (any bytes of its size) and
// `inline_threshold` be the file system's. Errors: the op's own (kNotPermitted, ...), as
// the MDS would report them.
Result<proto::Inode> predict_setattr(const proto::Inode& current, const proto::SetAttrRequest& req,
                                     const proto::Timespec& now,
                                     std::optional<uint32_t> inline_threshold = std::nullopt);

// Whether `request`, a setxattr by `creds`, would change nothing of `inode` at the MDS
// but its ctime: an access ACL that says no more than the mode does and leaves the mode
// as it is (tar --acls sets one on every file, right after its chmod), while no access
// ACL is stored (the MDS stores no such ACL: posix_acl_update_mode) and no flag can make
// it fail.
bool setxattr_only_touches_ctime(const proto::Inode& inode, const proto::SetXattrRequest& request,
                                 const proto::Creds& creds);

// One SetAttr that takes an inode to `predicted`, the outcome of several predicted
// changes of the fields in `valid` (SetAttrRequest.valid bits, no *_NOW, no size) made
// by root: the fields as absolute values, ctime included. Applied once it gives the same
// attributes as the changes one by one, because the op clears privileges on a chown
// before it sets the mode, and the mode it sets is the final one.
proto::SetAttrRequest merged_setattr(const proto::Inode& predicted, uint32_t valid);

}  // namespace dfs::client
