#!/usr/bin/env python3
"""fuse_roundtrip: the cost of one FUSE request that the file system answers from
memory, end to end (caller -> kernel -> daemon -> kernel -> caller).

Times N getxattr() calls of an attribute the file does not have (the kernel cannot
cache the answer, and dfs answers it from its exact inode cache without the MDS) and
prints the mean per call. Run it on a dfs mount and on a local file for comparison,
or on mounts with different poll_us values to see what busy polling saves
(docs/architecture.md, "Busy polling /dev/fuse").

usage: tools/bench/fuse_roundtrip.py FILE [N]      (default N 20000)
"""
import os
import sys
import time


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) >= 2 else 2
    path = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    if not os.path.exists(path):
        print(f"fuse_roundtrip: {path} does not exist", file=sys.stderr)
        return 1
    start = time.perf_counter()
    for _ in range(count):
        try:
            os.getxattr(path, "user.fuse-roundtrip-probe")
        except OSError:
            pass
    elapsed = time.perf_counter() - start
    print(f"{path}: {elapsed / count * 1e6:.1f} us per getxattr ({count} calls)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
