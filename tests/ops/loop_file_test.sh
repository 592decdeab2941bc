#!/usr/bin/env bash
# `dfs-osd --mkfs --loop-file FILE --size N` (docs/operations.md, a host without a spare
# disk): the image is made, mounted on the OSD's data directory and holds a new store;
# a second run refuses to touch it, and bad sizes and a missing --mkfs are refused with
# one line each. Root and loop devices needed.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${DFS_BUILD_DIR:-$repo/build}"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (mount)"; exit 77; }
command -v mkfs.ext4 >/dev/null || fail "mkfs.ext4 missing (tools/install-deps.sh installs e2fsprogs)"
work="$(mktemp -d /tmp/dfs-loop-test.XXXXXX)"
cleanup() {
  mountpoint -q "$work/osd.0" && umount "$work/osd.0"
  rm -rf "$work"
}
trap cleanup EXIT
printf '[global]\nfsid = loop-file-test\nmon_addrs = 127.0.0.1:1\n[osd.0]\ndata = %s/osd.0\n' "$work" >"$work/dfs.conf"
osd() { "$build/osd/dfs-osd" -c "$work/dfs.conf" -i 0 "$@"; }

if ! out="$(osd --mkfs --loop-file "$work/osd0.img" --size 128M 2>&1)"; then
  if grep -q "mount.*failed" <<<"$out" && ! losetup -f >/dev/null 2>&1; then
    echo "SKIP: no loop devices here"; exit 77
  fi
  echo "$out"
  fail "dfs-osd --mkfs --loop-file failed"
fi
echo "$out"
mountpoint -q "$work/osd.0" || fail "the image is not mounted on the data directory"
[ "$(findmnt -n -o FSTYPE "$work/osd.0")" = ext4 ] || fail "not ext4"
[ -d "$work/osd.0/objects" ] || fail "no store in the image"
grep -q "^  $work/osd0.img  $work/osd.0  ext4  loop  0  2$" <<<"$out" || fail "no fstab line printed"

out="$(osd --mkfs --loop-file "$work/osd0.img" --size 128M 2>&1)" && fail "a second --loop-file run succeeded"
grep -q "not empty" <<<"$out" || fail "second run: $out"
out="$(osd --mkfs --loop-file "$work/other.img" --size 12Q 2>&1)" && fail "--size 12Q accepted"
grep -q "is not a size" <<<"$out" || fail "bad size: $out"
out="$(osd --mkfs --loop-file "$work/other.img" --size 1M 2>&1)" && fail "--size 1M accepted"
grep -q "at least 64M" <<<"$out" || fail "tiny size: $out"
[ ! -e "$work/other.img" ] || fail "a refused run left its image behind"
out="$(osd --loop-file "$work/other.img" --size 1G 2>&1)" && fail "--loop-file without --mkfs accepted"
echo "PASS"
