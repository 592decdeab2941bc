#!/usr/bin/env bash
# A mount that stops renewing its session is evicted and fenced, on two real mounts of
# one cluster (three MDS replicas):
#   - mount A, alone and so holding exclusive caching, holds a file open for writing
#     with a write in the kernel's page cache, then its client process is stopped
#     (SIGSTOP), as a paused VM or a hung host is;
#   - mount B mounts meanwhile: its session open recalls A's right, which A cannot
#     answer; within the session timeout plus 5 s the MDS evicts A, the map fences its
#     session, `dfs status` and the MDS log say so, and B's mount goes on;
#   - while A is still stopped, B rewrites a file A looked at just before the stop and
#     creates a name A looked up in vain: A's kernel, which answers from its cache
#     without asking the stopped client, shows neither the old size nor "no such
#     file" (what it was told while caching alone expires within half the session
#     timeout, before the MDS can evict A);
#   - after SIGCONT, A's write fails (fsync reports EIO) and nothing it wrote reaches
#     the file: B, remounted cold, reads the old bytes from the OSDs;
#   - A goes on as a new session: a file it writes then reads whole on B.
# The session timeout is 5 s here (30 s by default) to keep the test short.
source "$(dirname "$0")/lib.sh"

timeout_ms=5000
start_cluster --session-timeout "$timeout_ms"
mnt2="$work/mnt2"
mkdir -p "$mnt2"
# The test's own status goes to cleanup: the commands before it would replace $?.
writer=""
trap 'rc=$?; [ -z "$writer" ] || kill "$writer" 2>/dev/null || true; umount -l "$mnt2" 2>/dev/null || true; pkill -CONT -f "mount.dfs .* $mnt( |\$)" || true; cleanup $rc' EXIT
# granted_count: how often mount A was granted exclusive caching so far.
granted_count() { grep -c "exclusive caching granted" "$cluster/log/client.log" 2>/dev/null || true; }

step "a file both mounts see"
head -c $((2 * 1024 * 1024)) /dev/urandom >"$work/base"
dd if="$work/base" of="$mnt/file" bs=1M status=none
granted_before=$(granted_count)
"$repo/tools/dfs-dev" mount --dir "$cluster" --mount "$mnt2" >/dev/null || fail "second mount failed"
cmp "$mnt2/file" "$work/base" || fail "mount B does not read what A wrote"
[ "$(dfs_cli client ls | grep -c 'mount')" -ge 2 ] || { dfs_cli client ls; fail "dfs client ls does not list both mounts"; }
unmount_client "$mnt2"
# Alone again, A is granted exclusive caching back.
for _ in $(seq 100); do [ "$(granted_count)" -gt "$granted_before" ] && break; sleep 0.1; done
[ "$(granted_count)" -gt "$granted_before" ] || fail "A was not granted exclusive caching again after B left"

step "mount A writes into the page cache, then its client is stopped"
python3 - "$mnt/file" "$work" <<'PY' &
import os, sys, time
path, work = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_WRONLY)
os.pwrite(fd, b"X" * 65536, 4096)
open(work + "/written", "w").close()
while not os.path.exists(work + "/go"):
    time.sleep(0.1)
result = []
try:
    os.fsync(fd)
    result.append("fsync ok")
except OSError as e:
    result.append("fsync " + e.strerror)
try:
    os.close(fd)
    result.append("close ok")
except OSError as e:
    result.append("close " + e.strerror)
open(work + "/result", "w").write(" ".join(result))
PY
writer=$!
for _ in $(seq 100); do [ -e "$work/written" ] && break; sleep 0.1; done
[ -e "$work/written" ] || fail "the writer never wrote"
client_a="$(pgrep -f "mount.dfs .* $mnt( |\$)" | head -1)"
[ -n "$client_a" ] || fail "no client process for $mnt"
echo "seen by A before the stop" >"$mnt/seen"
old_size=$(stat -c %s "$mnt/seen")
[ -e "$mnt/fresh" ] && fail "'fresh' exists before anyone made it"
kill -STOP "$client_a"
stopped_at=$(date +%s)

step "B mounts: A cannot give up its right; within the session timeout plus 5 s it is evicted"
"$repo/tools/dfs-dev" mount --dir "$cluster" --mount "$mnt2" >/dev/null || fail "mounting B while A was stopped failed"
mounted_at=$(date +%s)
echo "B's mount went on $((mounted_at - stopped_at)) s after A was stopped"
[ $((mounted_at - stopped_at)) -le $((timeout_ms / 1000 + 5)) ] ||
  fail "B's mount waited $((mounted_at - stopped_at)) s (session timeout $((timeout_ms / 1000)) s)"
ls "$mnt2" >/dev/null || fail "mount B failed while A was stopped"
grep -q "evicted client" "$cluster"/log/mds.*.log || fail "A was not evicted"
grep -h "evicted client" "$cluster"/log/mds.*.log | head -2
dfs_cli status | grep -i "evicted" || fail "dfs status does not show the eviction"

step "B changes what A's kernel saw; A's kernel shows none of the old"
echo "rewritten by B after A was evicted, longer" >"$mnt2/seen"
touch "$mnt2/fresh"
probe size stat -c %s "$mnt/seen"
probe fresh stat -c %n "$mnt/fresh"
sleep 2
size_seen="$(probed size)" fresh_seen="$(probed fresh)"
echo "A's kernel 2 s later: size of seen '$size_seen' (was $old_size), fresh '$fresh_seen'"
[ "$size_seen" != "$old_size" ] || fail "A's kernel still shows the size it cached before the stop"
[ "$fresh_seen" != "<failed>" ] || fail "A's kernel still says 'fresh' does not exist"

step "after SIGCONT, A's write fails and changes nothing"
kill -CONT "$client_a"
touch "$work/go"
wait "$writer" || true
for p in "${probes[@]}"; do wait "$p" || true; done
result="$(cat "$work/result" 2>/dev/null || echo none)"
echo "writer: $result"
case "$result" in
  "fsync Input/output error"*) ;;
  *) fail "the stopped client's write did not fail with EIO: $result" ;;
esac
unmount_client "$mnt2"
"$repo/tools/dfs-dev" mount --dir "$cluster" --mount "$mnt2" >/dev/null || fail "remounting B failed"
cmp "$mnt2/file" "$work/base" || fail "the evicted client's write reached the file"

step "A goes on as a new session"
head -c 100000 /dev/urandom >"$work/after"
dd if="$work/after" of="$mnt/after" bs=64k conv=fsync status=none || fail "A cannot write after its eviction"
cmp "$mnt2/after" "$work/after" || fail "B does not read what A wrote as a new session"
grep -h "was evicted by the MDS" "$cluster"/log/client*.log "$work"/*.log 2>/dev/null | head -2 || true
echo "PASS"
