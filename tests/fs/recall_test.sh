#!/usr/bin/env bash
# Recalls in the middle of a write-heavy walk, on real mounts of one cluster:
#   - mount A rsyncs an lxc-shaped tree into the file system, round after round (t/1,
#     t/2, ...); alone, it holds exclusive caching (creates and attribute changes
#     deferred, data written behind);
#   - 20 times while it runs, a second mount B is made, stats t (the directory A is
#     rsyncing into) once and is unmounted again. Each mount's session open recalls A's
#     right (A pushes what it deferred and buffered); B's first stat of t answers in
#     under 100 ms, median over the 20 tries (the mount's own time, recall included, is
#     printed beside it); A is granted the right again once B is gone;
#   - every rsync round finishes without an error, and each copy is identical to the
#     source as seen from A and from a fresh mount.
source "$(dirname "$0")/lib.sh"
scale="${DFS_TREE_SCALE:-0.1}"
tries=20

start_cluster
step "generating a tree (scale $scale)"
gen_tree "$work/src" "$scale"
mnt2="$work/mnt2"
client_b=""
rsyncs=""
trap 'rc=$?; touch "$work/stop"; [ -z "$rsyncs" ] || wait "$rsyncs" || true; stop_mount "$mnt2" "$client_b"; cleanup $rc' EXIT
grants() { grep -c "exclusive caching granted" "$cluster/log/client.log" || true; }

step "A rsyncs round after round; B mounts $tries times in the middle and stats t once"
mkdir "$mnt/t"
(
  round=0
  until [ -e "$work/stop" ]; do
    round=$((round + 1))
    echo "$round" >"$work/rounds"
    rsync -aHAX --numeric-ids "$work/src/" "$mnt/t/$round/" >>"$work/rsync.log" 2>&1 ||
      { echo "round $round failed" >>"$work/rsync.log"; exit 1; }
  done
) &
rsyncs=$!
stat_us=() mount_ms=()
for try in $(seq "$tries"); do
  # A holds the right again (granted when B's session ended) and has deferred some more.
  for _ in $(seq 100); do [ "$(grants)" -ge "$try" ] && break; sleep 0.05; done
  [ "$(grants)" -ge "$try" ] || fail "A was not granted exclusive caching again before try $try"
  sleep 0.3
  kill -0 "$rsyncs" 2>/dev/null || { cat "$work/rsync.log"; fail "A's rsyncs stopped"; }
  t0=$(date +%s%N)
  mount_another "$mnt2" "$cluster/log/client-b.log"
  t1=$(date +%s%N)
  stat "$mnt2/t" >/dev/null || fail "B's stat of the target directory failed"
  t2=$(date +%s%N)
  stat_us+=($(((t2 - t1) / 1000)))
  mount_ms+=($(((t1 - t0) / 1000000)))
  stop_mount "$mnt2" "$(client_pid "$mnt2")"
  t3=$(date +%s%N)
  echo "try $try: B mounted in $(((t1 - t0) / 1000000)) ms, stat in $(((t2 - t1) / 1000)) us," \
    "unmounted in $(((t3 - t2) / 1000000)) ms"
done
touch "$work/stop"
wait "$rsyncs" || { cat "$work/rsync.log"; fail "an rsync round on A failed"; }
rsyncs=""
rounds="$(cat "$work/rounds")"
median() { printf '%s\n' "$@" | sort -n | sed -n "$(($# / 2))p"; }
echo "B's first stats of t: ${stat_us[*]} us (median $(median "${stat_us[@]}") us)"
echo "B's mounts, A's recall included: ${mount_ms[*]} ms (median $(median "${mount_ms[@]}") ms)"
echo "A: $rounds rsync rounds, $(grants) grants of exclusive caching," \
  "$(grep -c "exclusive caching recalled" "$cluster/log/client.log") recalls"
[ "$(median "${stat_us[@]}")" -lt 100000 ] ||
  fail "the median first stat on B took $(median "${stat_us[@]}") us (want < 100 ms)"

step "every round's copy is identical to the source, from A and from a fresh mount"
check_copies() {
  local r d
  for r in $(seq "$rounds"); do
    d="$(tree_diff "$work/src" "$mnt/t/$r")"
    [ -z "$d" ] || { echo "$d" | head -40; fail "round $r's copy differs from the source ($1)"; }
  done
}
check_copies "on A"
remount_client
check_copies "on a fresh mount"
echo "PASS"
