#!/usr/bin/env bash
# The POSIX suite (tests/posix) on a real dfs mount.
source "$(dirname "$0")/lib.sh"
start_cluster --mds 1  # the single-replica MDS; the replicated rank has its own tests
step "running the POSIX suite on $mnt"
# DFS_POSIX_SKIP (comma-separated case names) is for local debugging; CI skips nothing.
DFS_POSIX_DIR="$mnt" "$build/tests/posix/posix_test" ${DFS_POSIX_ARGS:-}
