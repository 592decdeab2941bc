#!/usr/bin/env bash
# A recall in the middle of a write-heavy walk, on two real mounts of one cluster:
#   - mount A, alone and so holding exclusive caching, rsyncs an lxc-shaped tree into
#     the file system (its creates and attribute changes deferred, its data written
#     behind);
#   - while it runs, mount B mounts: its session open recalls A's right, and B's mount
#     goes on once A pushed what it deferred and buffered;
#   - B then stats the directory A is rsyncing into 20 times, each answered in well
#     under 100 ms (the median is checked);
#   - the rsync finishes without an error, and the tree is identical to the source as
#     seen from A, from B and from a fresh mount.
source "$(dirname "$0")/lib.sh"
scale="${DFS_TREE_SCALE:-0.1}"

start_cluster
step "generating a tree (scale $scale)"
gen_tree "$work/src" "$scale"
mnt2="$work/mnt2"
client_b=""
trap 'rc=$?; stop_mount "$mnt2" "$client_b"; cleanup $rc' EXIT

step "A rsyncs; B mounts in the middle and stats the target directory"
rsync -aHAX --numeric-ids "$work/src/" "$mnt/t/" >"$work/rsync.log" 2>&1 &
rsync_pid=$!
# Until A has made a good part of the tree (and deferred much of it).
for _ in $(seq 200); do
  [ "$(find "$mnt/t" 2>/dev/null | head -300 | wc -l)" -ge 300 ] && break
  sleep 0.05
done
kill -0 "$rsync_pid" 2>/dev/null || echo "note: the rsync ended before B mounted (a small tree)"
started=$(date +%s%N)
mount_another "$mnt2" "$cluster/log/client-b.log"
client_b="$(client_pid "$mnt2")"
echo "B's mount took $((($(date +%s%N) - started) / 1000000)) ms (A's recall included)"
times=()
for _ in $(seq 20); do
  t0=$(date +%s%N)
  stat "$mnt2/t" >/dev/null || fail "stat of the target directory on B failed"
  times+=($((($(date +%s%N) - t0) / 1000)))
done
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 10p)
echo "B's stats of the directory A is rsyncing into: ${times[*]} us (median $median us)"
[ "$median" -lt 100000 ] || fail "the median stat on B took $median us (want < 100 ms)"
wait "$rsync_pid" || { cat "$work/rsync.log"; fail "the rsync on A failed"; }
grep -h "exclusive caching" "$cluster/log/client.log" | tail -3

step "the tree is identical from A, from B and from a fresh mount"
d="$(tree_diff "$work/src" "$mnt/t")"
[ -z "$d" ] || { echo "$d" | head -40; fail "A's copy differs from the source"; }
d="$(tree_diff "$work/src" "$mnt2/t")"
[ -z "$d" ] || { echo "$d" | head -40; fail "B sees a tree that differs from the source"; }
stop_mount "$mnt2" "$client_b"
client_b=""
remount_client
d="$(tree_diff "$work/src" "$mnt/t")"
[ -z "$d" ] || { echo "$d" | head -40; fail "a fresh mount sees a tree that differs from the source"; }
echo "PASS"
