#!/usr/bin/env bash
# File system acceptance: SIGKILL every daemon and restart them: every file fsynced
# before the kill is intact; nothing else is garbage. Each round fsyncs files (inline,
# medium, multi-object; two generations), then, while one writer writes without fsync
# (overwrites of fsynced files, new files, a file held open) and another writes with
# fsync, SIGKILLs the monitor, the OSDs, the MDS and the FUSE client together, restarts
# and remounts, and checks every round so far (rules: fsync_writer.py) and an fsynced
# tree. Then the cluster must take and keep new writes.
# DFS_CRASH_ROUNDS (default 3) rounds; DFS_CRASH_SEED picks when the kills land.
source "$(dirname "$0")/lib.sh"
fw="$(dirname "$0")/fsync_writer.py"
helper() { python3 "$fw" "$@"; }
rounds="${DFS_CRASH_ROUNDS:-3}"
seed="${DFS_CRASH_SEED:-$RANDOM}"
daemons="mon.a osd.0 osd.1 osd.2 mds.a"
writers=""
stop_writers() {  # then lib.sh's cleanup, with the exit status
  local rc=$? p
  for p in $writers; do kill -KILL "$p" 2>/dev/null || true; done
  cleanup "$rc"  # (not `(exit $rc); cleanup`: under set -e that exits the trap at once)
}
trap stop_writers EXIT

fuse_pid() {  # the forked mount.dfs serving $mnt
  local pids
  pids="$(pgrep -f "mount\.dfs [^ ]* $mnt -o" || true)"
  [ "$(echo "$pids" | wc -w)" -eq 1 ] || fail "want one FUSE daemon for $mnt, found '$pids'"
  echo "$pids"
}

verify_all() {  # verify_all LAST_ROUND
  local r
  for r in $(seq 1 "$1"); do
    helper verify "$mnt/r$r" "$work/state/r$r" || fail "round $r: files wrong (journals in $work/state/r$r)"
  done
  local d
  d="$(tree_diff "$work/src" "$mnt/tree")"
  [ -z "$d" ] || { echo "$d" | head -40; fail "the fsynced tree differs from its source"; }
}

start_cluster --mds 1  # the single-replica MDS; the replicated rank has its own tests
step "an fsynced directory tree"
gen_tree "$work/src" 0.01
rsync -aHAX --numeric-ids "$work/src/" "$mnt/tree/"
helper fsync-tree "$mnt/tree"
verify_all 0

for r in $(seq 1 "$rounds"); do
  top="$mnt/r$r"
  st="$work/state/r$r"
  step "round $r: fsynced files: small (inline), medium, large; two generations"
  helper synced "$top" "$st"

  delay="$(awk -v s="$seed" -v r="$r" 'BEGIN { srand(s * 100 + r); printf "%.2f", rand() * 2 }')"
  step "round $r: writes with and without fsync; SIGKILL of all after ${delay}s (seed $seed)"
  pids="$(for n in $daemons; do cat "$cluster/run/$n.pid"; done) $(fuse_pid)"
  python3 "$fw" churn "$top" "$st" &
  writers="$!"
  python3 "$fw" fsyncing "$top" "$st" &
  writers="$writers $!"
  for _ in $(seq 1 300); do
    [ -e "$st/churning" ] && [ -e "$st/fsyncing" ] && break
    sleep 0.1
  done
  if [ ! -e "$st/churning" ] || [ ! -e "$st/fsyncing" ]; then fail "the writers did not get going in 30 s"; fi
  sleep "$delay"
  for p in $writers; do kill -0 "$p" 2>/dev/null || fail "a writer stopped before the kill"; done
  # shellcheck disable=SC2086  # one kill(1): the signals go out microseconds apart
  kill -KILL $pids
  for _ in $(seq 1 100); do
    alive=""
    for p in $pids $writers; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
    [ -z "$alive" ] && break
    sleep 0.1
  done
  [ -z "$alive" ] || fail "still running 10 s after the kill (daemons or writers stuck):$alive"
  for p in $writers; do wait "$p" || fail "a writer failed other than by an I/O error"; done
  writers=""
  echo "$(cat "$st"/*.jsonl | grep -c '"id"') writes recorded, $(cat "$st"/*.jsonl | grep -c '"done"') fsynced"

  step "round $r: restarting every daemon, mounting again"
  umount -l "$mnt"
  for n in $daemons; do "$repo/tools/dfs-dev" start "$n" --dir "$cluster"; done
  "$repo/tools/dfs-dev" mount --dir "$cluster" --mount "$mnt" || fail "mounting after the restart failed"
  mountpoint -q "$mnt" || fail "nothing mounted at $mnt after the restart"
  step "round $r: verifying rounds 1 to $r and the tree"
  verify_all "$r"
done

step "the restarted cluster takes new writes; verify all after a remount"
helper usable "$mnt/r$rounds" "$work/state/r$rounds"
umount "$mnt"
"$repo/tools/dfs-dev" mount --dir "$cluster" --mount "$mnt" || fail "remount failed"
verify_all "$rounds"
rm -rf "${mnt:?}"/*
left="$(ls -A "$mnt")"
[ -z "$left" ] || fail "rm -rf left: $left"
echo "PASS"
