#!/usr/bin/env bash
# A growing truncate the mount answered itself (a deferred grow_only SetAttr) that the MDS
# refuses is not lost: the mount marks the growth dirty in the file's held state and the
# file's next push makes it. The refusal comes from the real path: the truncate's batch
# waits at a stopped MDS, which restarts with a smaller inline_threshold than the one the
# mount predicted with; under that threshold the growth would move the file's inline
# bytes to objects, which a grow_only change may not do (kInvalidArgument). After an
# fsync the file has the truncate's size and bytes, read through the mount with its
# caches dropped and after a remount.
source "$(dirname "$0")/lib.sh"

start_cluster --mds 1 --inline-threshold 32768
conf="$cluster/dfs.conf"
mds_pid() { cat "$cluster/run/mds.a.pid"; }

step "an inline file of 100 bytes, recorded by the MDS"
head -c 100 /dev/urandom >"$work/head"
cp "$work/head" "$mnt/f"
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$mnt/f" ||
  fail "fsync failed"
{ cat "$work/head"; head -c $((20000 - 100)) /dev/zero; } >"$work/want"

step "the MDS stops; a truncate to 20000 bytes is answered by the mount (threshold 32768)"
# While it is stopped, a failure resumes it first: a stopped MDS holds up the cleanup.
stopped_fail() {
  kill -CONT "$(mds_pid)" 2>/dev/null || true
  fail "$@"
}
kill -STOP "$(mds_pid)"
probe truncate bash -c 'truncate -s 20000 "$1" && stat -c %s "$1"' _ "$mnt/f"
for _ in $(seq 100); do
  [ "$(probed truncate)" != "<waited>" ] && break
  sleep 0.1
done
[ "$(probed truncate)" = 20000 ] ||
  stopped_fail "the truncate answered '$(probed truncate)' within 10 s (the MDS is stopped)"

step "the MDS restarts with inline_threshold 8192 and refuses the resent growth"
sed -i --follow-symlinks 's/^inline_threshold = 32768$/inline_threshold = 8192/' "$conf"
grep -q '^inline_threshold = 8192$' "$conf" ||
  stopped_fail "the threshold was not changed in $conf"
"$repo/tools/dfs-dev" kill mds.a --dir "$cluster" >/dev/null || fail "killing the MDS failed"
"$repo/tools/dfs-dev" start mds.a --dir "$cluster" >/dev/null || fail "the MDS did not start again"
for _ in $(seq 150); do
  port_in_use $((port + 100)) && break
  sleep 0.1
done
port_in_use $((port + 100)) ||
  { cat "$cluster/log/mds.a.out" 2>/dev/null; fail "the MDS does not listen 15 s after its start"; }
refused="deferred growth of inode .* refused (.*would move inline data to objects"
for _ in $(seq 300); do
  grep -q "$refused" "$cluster/log/client.log" && break
  sleep 0.1
done
grep -q "$refused" "$cluster/log/client.log" ||
  fail "the mount did not report the MDS's refusal of the growth within 30 s"

step "the file's next push makes the growth: size and bytes after an fsync and a remount"
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDWR); os.fsync(fd)' "$mnt/f" ||
  fail "fsync after the refusal failed"
echo 3 >/proc/sys/vm/drop_caches
cmp "$work/want" "$mnt/f" || fail "the file differs after the refusal (caches dropped)"
remount_client
[ "$(stat -c %s "$mnt/f")" = 20000 ] || fail "size $(stat -c %s "$mnt/f") after a remount"
cmp "$work/want" "$mnt/f" || fail "the file differs after a remount"
echo "PASS"
