#!/usr/bin/env bash
# Configures (once) and builds dfs into $DFS_BUILD_DIR (default: <repo>/build).
# Usage: tools/build.sh [extra cmake -D options...]; DFS_SANITIZE=asan|tsan for
# sanitizer builds (use a separate DFS_BUILD_DIR for those).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${DFS_BUILD_DIR:-$repo/build}"
jobs="${DFS_JOBS:-$(nproc)}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${DFS_BUILD_TYPE:-RelWithDebInfo}" \
    -DDFS_SANITIZE="${DFS_SANITIZE:-}" "$@"
fi
cmake --build "$build" -j "$jobs"
