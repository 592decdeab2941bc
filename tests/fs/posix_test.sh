#!/usr/bin/env bash
# The POSIX suite (tests/posix) on a real dfs mount.
source "$(dirname "$0")/lib.sh"
# The default configuration (rank 0 on three MDS replicas), with orphans purged at once,
# as on a cluster past its first 30 s (reclaim_grace_ms): a file purged while still
# open showed only there.
start_cluster --mds 3 --mds-conf "reclaim_grace_ms = 0"
step "running the POSIX suite on $mnt"
# DFS_POSIX_SKIP (comma-separated case names) is for local debugging; CI skips nothing.
DFS_POSIX_DIR="$mnt" "$build/tests/posix/posix_test" ${DFS_POSIX_ARGS:-}
