#!/usr/bin/env bash
# Cold read-back A/B: prefetch_listings=0 against =4, alternating, on one dev cluster
# (one MDS), with the local read-back of the same tree in the same run.
# Usage: tools/bench/readback_ab.sh [ROUNDS] (as root; the tree in /var/tmp/pf-src, made
# with tools/bench/gen_tree --scale 0.25). Results: docs/benchmarks.md.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"; build="${DFS_BUILD_DIR:-$repo/build}"
rounds="${1:-3}"
dir=/tmp/rb; mnt=/tmp/rb-mnt; src=/var/tmp/pf-src
"$repo/tools/dfs-dev" down --dir "$dir" >/dev/null 2>&1 || true
rm -rf "$dir"
"$repo/tools/dfs-dev" up --no-build --dir "$dir" --mds 1 --port 25789 --no-mount >/dev/null
conf="$dir/etc/dfs.conf"; [ -f "$conf" ] || conf="$dir/dfs.conf"
mons="$(sed -n 's/^mon_addrs = //p' "$conf")"
mount_with() {
  mkdir -p "$mnt"
  "$build/client-fuse/mount.dfs" "$mons:/" "$mnt" -o "name=admin,conf=$conf,log_file=$dir/log/client.log,$1"
}
unmount() {
  local pids; pids="$(pgrep -f "mount.dfs .* $mnt( |\$)" || true)"
  umount "$mnt"
  for _ in $(seq 300); do [ -n "$pids" ] && kill -0 $pids 2>/dev/null || break; sleep 0.1; done
}
mount_with prefetch_listings=4
rsync -aHAX --numeric-ids "$src/" "$mnt/t/"
unmount
# A fresh ext4 on a loop file as the destination of every read-back (fsbench's method).
dst_img=/var/tmp/rb-dst.img
fresh_dst() {
  mountpoint -q /tmp/rb-dst && umount /tmp/rb-dst
  rm -f "$dst_img"; truncate -s 8G "$dst_img"; mkfs.ext4 -q -F "$dst_img"
  mkdir -p /tmp/rb-dst; mount -o loop "$dst_img" /tmp/rb-dst
}
timed() { local t0=$EPOCHREALTIME; "$@"; echo "$EPOCHREALTIME - $t0" | bc; }
for r in $(seq 1 "$rounds"); do
  for n in 0 4; do
    mount_with "prefetch_listings=$n"
    fresh_dst; sync; echo 3 >/proc/sys/vm/drop_caches
    t=$(timed rsync -aHAX --numeric-ids "$mnt/t/" /tmp/rb-dst/back/)
    unmount
    used="$(tail -n 5 "$dir/log/client.log" | grep -o "fetched ahead: [0-9]*, of them used: [0-9]*" | tail -1 || true)"
    fresh_dst; sync; echo 3 >/proc/sys/vm/drop_caches
    l=$(timed rsync -aHAX --numeric-ids "$src/" /tmp/rb-dst/back/)
    printf 'round %d prefetch_listings=%d: dfs %.2f s, local %.2f s, ratio %.2f (%s)\n' "$r" "$n" "$t" "$l" "$(echo "$t / $l" | bc -l)" "${used:-off}"
  done
done
umount /tmp/rb-dst; rm -f "$dst_img"
"$repo/tools/dfs-dev" down --dir "$dir" >/dev/null
