#!/usr/bin/env bash
# An unreachable cluster gives EIO after the mount's op_timeout instead of hanging, and
# the same mount works again once the cluster is back (no remount). A small file written
# while the cluster is away, in a directory this mount created (its create, write and
# close are answered by the client and sent later), is not lost: fsync fails while the
# MDS is away, and once it is back the file is on the cluster (checked after a remount).
source "$(dirname "$0")/lib.sh"
timeout_s=4

start_cluster --mds 1  # the single-replica MDS; the replicated rank has its own tests
step "remounting with op_timeout=$timeout_s"
umount "$mnt"
"$build/client-fuse/mount.dfs" "127.0.0.1:$port:/" "$mnt" \
  -o "name=admin,conf=$cluster/dfs.conf,log_file=$cluster/log/client.log,op_timeout=$timeout_s" ||
  fail "mount.dfs with op_timeout failed"
echo "kept" >"$mnt/before"
mkdir "$mnt/made"
echo "warm" >"$mnt/made/warm"
sync

step "stopping every daemon (SIGKILL)"
for n in mds.a osd.0 osd.1 osd.2 mon.a; do "$repo/tools/dfs-dev" kill "$n" --dir "$cluster" >/dev/null; done

step "a small file written in a directory this mount created does not need the cluster"
echo "written while away" >"$mnt/made/away" || fail "writing a new small file failed"
step "fsync cannot reach the MDS: it fails rather than claim the file is safe"
fsync_file() {
  timeout 60 python3 -c 'import os, sys; os.fsync(os.open(sys.argv[1], os.O_RDONLY))' "$1"
}
fsync_file "$mnt/made/away" && fail "fsync succeeded with the cluster down"

step "an operation that needs the cluster fails with EIO within op_timeout"
started=$(date +%s)
# A name the client has never seen: the lookup has to ask the MDS.
err="$(timeout 60 stat "$mnt/never-seen" 2>&1 >/dev/null || true)"
took=$(($(date +%s) - started))
echo "stat took ${took}s: $err"
[ "$took" -lt 60 ] || fail "stat hung for 60 s (op_timeout is ${timeout_s}s)"
[ "$took" -le $((timeout_s * 3 + 5)) ] || fail "stat took ${took}s, far past op_timeout ${timeout_s}s"
case "$err" in
  *"Input/output error"*) ;;
  *) fail "expected EIO from stat, got: $err" ;;
esac

step "restarting the daemons: the same mount recovers"
for n in mon.a osd.0 osd.1 osd.2 mds.a; do
  "$repo/tools/dfs-dev" start "$n" --dir "$cluster" >/dev/null || fail "restarting $n failed"
done
recovered=""
for _ in $(seq 1 60); do
  if [ "$(cat "$mnt/before" 2>/dev/null)" = "kept" ] && echo "after" >"$mnt/after" 2>/dev/null; then
    recovered=1
    break
  fi
  sleep 1
done
[ -n "$recovered" ] || fail "the mount did not recover within 60 s of the restart"
[ "$(cat "$mnt/after")" = "after" ] || fail "a write after recovery did not read back"
ls "$mnt" >/dev/null || fail "readdir after recovery failed"

step "the file written while the cluster was away reached it"
fsync_file "$mnt/made/away" || fail "fsync after recovery failed"
umount "$mnt" || fail "umount failed"
"$build/client-fuse/mount.dfs" "127.0.0.1:$port:/" "$mnt" \
  -o "name=admin,conf=$cluster/dfs.conf,log_file=$cluster/log/client2.log" ||
  fail "the remount failed"
[ "$(cat "$mnt/made/away" 2>&1)" = "written while away" ] ||
  fail "the file written while the cluster was away: $(cat "$mnt/made/away" 2>&1)"
[ "$(cat "$mnt/made/warm")" = "warm" ] || fail "made/warm lost"
echo "PASS"
