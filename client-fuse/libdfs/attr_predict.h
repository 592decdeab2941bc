// predict_setattr: what the MDS will make of a SetAttr on an inode, computed by running
// the MDS's own op (mds/ops/setattr.cc) on a memory store that holds just that inode.
// The client defers attribute changes (chmod, chown, utimes) on inodes it knows exactly
// and answers the kernel with this prediction; since the op is the same deterministic
// function and the request carries the time it used (as ctime), the MDS reaches the
// same attributes when the deferred request arrives (only the version differs).
#pragma once

#include "common/proto/mds.pb.h"
#include "common/status/status.h"

namespace dfs::client {

// `req` must not change the size (truncation needs the MDS's object work).
// Errors: the op's own (kNotPermitted, ...), as the MDS would report them.
Result<proto::Inode> predict_setattr(const proto::Inode& current, const proto::SetAttrRequest& req,
                                     const proto::Timespec& now);

// One SetAttr that takes an inode to `predicted`, the outcome of several predicted
// changes of the fields in `valid` (SetAttrRequest.valid bits, no *_NOW, no size) made
// by root: the fields as absolute values, ctime included. Applied once it gives the same
// attributes as the changes one by one, because the op clears privileges on a chown
// before it sets the mode, and the mode it sets is the final one.
proto::SetAttrRequest merged_setattr(const proto::Inode& predicted, uint32_t valid);

}  // namespace dfs::client
