#!/usr/bin/env bash
# A growing truncate the mount answered itself (a deferred grow_only SetAttr) that the MDS
# refuses is not lost: the mount marks the growth dirty in the file's held state and the
# file's next push makes it. The refusal comes from the real path: the truncate's batch
# waits at a stopped MDS, which restarts with a smaller inline_threshold than the one the
# mount predicted with, so the resent growth would end otherwise on this MDS
# (kInvalidArgument). After an fsync the file has the truncate's size and bytes, read
# through the mount with its caches dropped and after a remount.
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
kill -STOP "$(mds_pid)"
timeout 10 truncate -s 20000 "$mnt/f" || fail "the truncate waited for the stopped MDS"
[ "$(stat -c %s "$mnt/f")" = 20000 ] || fail "size $(stat -c %s "$mnt/f") after the truncate"

step "the MDS restarts with inline_threshold 8192 and refuses the resent growth"
sed -i --follow-symlinks 's/^inline_threshold = 32768$/inline_threshold = 8192/' "$conf"
grep -q '^inline_threshold = 8192$' "$conf" || fail "the threshold was not changed in $conf"
kill -KILL "$(mds_pid)"
"$repo/tools/dfs-dev" start mds.a --dir "$cluster" >/dev/null || fail "the MDS did not start again"
for _ in $(seq 1 300); do
  grep -q "deferred growth of inode .* refused" "$cluster/log/client.log" && break
  sleep 0.1
done
grep -q "deferred growth of inode .* refused" "$cluster/log/client.log" ||
  fail "the mount did not report the refused growth within 30 s"

step "the file's next push makes the growth: size and bytes after an fsync and a remount"
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDWR); os.fsync(fd)' "$mnt/f" ||
  fail "fsync after the refusal failed"
echo 3 >/proc/sys/vm/drop_caches
cmp "$work/want" "$mnt/f" || fail "the file differs after the refusal (caches dropped)"
remount_client
[ "$(stat -c %s "$mnt/f")" = 20000 ] || fail "size $(stat -c %s "$mnt/f") after a remount"
cmp "$work/want" "$mnt/f" || fail "the file differs after a remount"
echo "PASS"
