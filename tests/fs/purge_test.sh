#!/usr/bin/env bash
# A removed file's objects leave the OSDs, on a real mount, now that the release of a
# closed file rides with the client's deferred batch (FileClient::send_release) instead
# of a call of its own: a release that never reached the MDS would keep the objects of
# every file removed after its last close (the MDS purges an orphan at its last
# release). Checked by counting the objects the OSDs hold:
#   - a file written, closed and removed: its objects go;
#   - a file removed while open: its objects stay, it still reads its bytes, and they go
#     once it is closed;
#   - a file rewritten over and over, then removed (many opens and releases queued).
# The objects are counted with `dfs df`. An MDS purges nothing in the reclaim grace after
# its start (30 s; clients may re-open their files), so the test waits it out first.
source "$(dirname "$0")/lib.sh"

start_cluster --mds 1
size=$((9 * 1024 * 1024))  # three objects (4 MiB each), three copies of each
head -c "$size" /dev/urandom >"$work/data"

objects_on_osds() { dfs_cli df | awk '$1 ~ /^osd[.]/ { n += $6 } END { print n + 0 }'; }
# wait_objects OP N WHAT: waits up to 30 s until the object count is OP (-eq, -gt) N.
wait_objects() {
  for _ in $(seq 150); do
    [ "$(objects_on_osds)" "$1" "$2" ] && return 0
    sleep 0.2
  done
  fail "$3: $(objects_on_osds) objects on the OSDs, expected $1 $2"
}

step "waiting for the MDS's reclaim grace to end"
for _ in $(seq 300); do
  grep -q "reclaim grace over" "$cluster"/log/mds.*.log && break
  sleep 0.2
done
grep -q "reclaim grace over" "$cluster"/log/mds.*.log || fail "the MDS never ended its reclaim grace"
baseline="$(objects_on_osds)"
step "baseline: $baseline objects"

step "written, closed, removed: its objects go"
cp "$work/data" "$mnt/closed"
sync
wait_objects -gt "$baseline" "the written file's objects never appeared"
rm "$mnt/closed"
wait_objects -eq "$baseline" "the removed file's objects stayed"

step "removed while open: the objects stay until the close"
cp "$work/data" "$mnt/held"
wait_objects -gt "$baseline" "the held file's objects never appeared"
exec 5<"$mnt/held"
rm "$mnt/held"
sleep 2
[ "$(objects_on_osds)" -gt "$baseline" ] || fail "the objects of a file open elsewhere were purged"
cmp - "$work/data" <&5 || fail "the removed, still open file reads wrong"
exec 5<&-
wait_objects -eq "$baseline" "the objects of a removed file stayed after its last close"

step "rewritten twenty times, then removed"
for i in $(seq 20); do cp "$work/data" "$mnt/again"; done
cmp "$mnt/again" "$work/data" || fail "the rewritten file reads wrong"
rm "$mnt/again"
wait_objects -eq "$baseline" "the rewritten file's objects stayed"

step "after a remount nothing is left behind"
remount_client
[ "$(objects_on_osds)" -eq "$baseline" ] || fail "$(objects_on_osds) objects after the remount"
echo "PASS"
