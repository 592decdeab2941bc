#!/usr/bin/env bash
# The daemons' malloc (common/daemon/allocator_tuning.h), on real processes: the monitor,
# the OSD and the client run with the glibc tunables, under their own names (the re-exec
# must not rename them "exe"), and say so in their logs; the MDS runs on jemalloc; an
# operator's own GLIBC_TUNABLES entries are kept; DFS_ALLOCATOR_TUNING=0 turns the
# tuning off.
source "$(dirname "$0")/lib.sh"

start_cluster --mds 1

# check_tuned NAME PATTERN: the process whose command line matches PATTERN is called
# NAME and has the malloc tunables in its environment.
check_tuned() {
  local pid
  pid="$(pgrep -f -- "$2" | head -1)"
  [ -n "$pid" ] || fail "no $1 process running"
  [ "$(cat "/proc/$pid/comm")" = "$1" ] || fail "$1 (pid $pid) runs as '$(cat "/proc/$pid/comm")'"
  tr '\0' '\n' <"/proc/$pid/environ" | grep -q '^GLIBC_TUNABLES=.*glibc\.malloc\.' ||
    fail "$1 (pid $pid) runs without the malloc tunables"
  echo "$1 (pid $pid): tuned"
}
step "the monitor, the OSD and the client run tuned, under their own names"
check_tuned dfs-mon "dfs-mon .*$cluster"
check_tuned dfs-osd "dfs-osd .*$cluster"
check_tuned mount.dfs "mount.dfs .* $mnt( |\$)"
for log in mon.a osd.0 client; do
  grep -q "malloc tunables: .*glibc.malloc.hugetlb=1" "$cluster/log/$log.log" ||
    fail "$log.log does not record the malloc tunables"
done

step "the MDS runs on jemalloc, without glibc's tunables"
pid="$(pgrep -f -- "dfs-mds .*$cluster" | head -1)"
[ -n "$pid" ] || fail "no dfs-mds process running"
grep -q "libjemalloc" "/proc/$pid/maps" || fail "dfs-mds (pid $pid) has no jemalloc mapped"
! tr '\0' '\n' <"/proc/$pid/environ" | grep -q '^GLIBC_TUNABLES=' ||
  fail "dfs-mds (pid $pid) was given glibc's tunables"
grep -q "malloc: jemalloc [0-9]" "$cluster/log/mds.a.log" ||
  { grep malloc "$cluster/log/mds.a.log"; fail "mds.a.log does not name jemalloc"; }

conf="$cluster/etc/dfs.conf"; [ -f "$conf" ] || conf="$cluster/dfs.conf"
mons="$(sed -n 's/^mon_addrs = //p' "$conf")"
second="$work/mnt2"
mkdir -p "$second"
trap 'rc=$?; if mountpoint -q "$second"; then umount -l "$second" || true; fi
      pkill -f "mount.dfs .* $second( |\$)" || true; cleanup $rc' EXIT
mount_second() {  # mount_second LOG_FILE: the file system once more at $second
  "$build/client-fuse/mount.dfs" "$mons:/" "$second" -o "name=admin,conf=$conf,log_file=$1"
}

step "an operator's own GLIBC_TUNABLES entry is kept, ours added after it"
GLIBC_TUNABLES=glibc.rtld.nns=4 mount_second "$work/kept.log"
echo kept >"$second/kept" && [ "$(cat "$second/kept")" = kept ] || fail "the second mount does not work"
grep -q "malloc tunables: glibc.rtld.nns=4:glibc.malloc.arena_max=1" "$work/kept.log" ||
  { grep malloc "$work/kept.log"; fail "the operator's tunable was not kept first"; }
unmount_client "$second"

step "DFS_ALLOCATOR_TUNING=0: glibc's defaults"
DFS_ALLOCATOR_TUNING=0 mount_second "$work/off.log"
pid="$(pgrep -f "mount.dfs .* $second( |\$)" | head -1)"
! tr '\0' '\n' <"/proc/$pid/environ" | grep -q '^GLIBC_TUNABLES=' ||
  fail "DFS_ALLOCATOR_TUNING=0 still set GLIBC_TUNABLES"
grep -q "malloc: glibc defaults (DFS_ALLOCATOR_TUNING=0)" "$work/off.log" ||
  fail "the untuned client does not say so in its log"
unmount_client "$second"
echo "PASS"
