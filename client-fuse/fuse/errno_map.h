// ErrorCode -> errno: the one place where dfs errors become what a system call returns.
// FUSE-free so that it is unit-tested on its own.
#pragma once

#include "common/status/status.h"

namespace dfs::fuse {

// A positive errno for `code`; kOk gives 0. Codes without a POSIX meaning (network,
// protocol, cluster state, timeouts) are EIO: the cluster could not do it.
int to_errno(ErrorCode code);

}  // namespace dfs::fuse
