// Runs a dfs mount: connects to the cluster, resolves the subdirectory, mounts with
// libfuse and serves until unmounted. Unless in the foreground it first forks: the
// parent waits until the child reports the mount live (exit 0) or reports why it
// failed (one line on stderr, exit 1), so mount(8) and systemd see the real outcome.
#pragma once

#include "client-fuse/mount/options.h"

namespace dfs::mount {

// `program` prefixes error lines ("mount.dfs", "dfs-fuse"). Returns the exit status.
int run_mount(const MountOptions& options, const char* program);

}  // namespace dfs::mount
