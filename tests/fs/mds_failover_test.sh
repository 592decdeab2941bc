#!/usr/bin/env bash
# MDS failover on a kill: SIGKILL the active MDS of rank 0 in the middle of an
# `rsync -aHAX` of the generated tree onto dfs. The rank's other replicas elect a new
# leader, the client resends what was in flight to it, and rsync finishes without an
# error with a copy identical to the source. The killed replica then comes back as a
# follower and catches up; killing the second leader during a second rsync shows that.
source "$(dirname "$0")/lib.sh"
# Big enough that the copy is still running 1.5 s after it starts, on a fast
# client (at 0.05 a whole rsync took ~1 s).
scale="${DFS_TREE_SCALE:-0.1}"

start_cluster --mds 3
step "generating a tree (scale $scale)"
gen_tree "$work/src" "$scale"
total="$(find "$work/src" | wc -l)"

# rsync_with_leader_kill DEST: rsync SRC to DEST on dfs and SIGKILL the MDS leader 1.5 s
# after the copy's top directory appears. (It used to wait until a `find` of the copy
# counted a quarter of the tree, but a walk of the mount competes with the copy it
# watches: with write-behind, one walk outlasted the whole rsync.) Prints the killed
# daemon's name.
rsync_with_leader_kill() {
  local dest="$1" log="$work/rsync-$(basename "$1").log"
  rsync -aHAX --numeric-ids "$work/src/" "$dest/" >"$log" 2>&1 &
  local rsync_pid=$!
  for _ in $(seq 1 600); do
    [ -d "$dest" ] && break
    kill -0 "$rsync_pid" 2>/dev/null || break
    sleep 0.1
  done
  sleep 1.5
  kill -0 "$rsync_pid" 2>/dev/null || { cat "$log"; fail "rsync ended before the kill"; }
  local out
  out="$("$repo/tools/dfs-dev" kill mds-leader --dir "$cluster")" || fail "kill mds-leader: $out"
  victim="$(echo "$out" | sed -n 's/^dfs-dev: the active MDS of rank 0 is \(mds\.[a-z]*\)$/\1/p')"
  [ -n "$victim" ] || fail "could not tell which MDS was killed: $out"
  step "killed $victim with $(find "$dest" | wc -l) of $total entries copied"
  wait "$rsync_pid" || { cat "$log"; fail "rsync failed after the MDS leader was killed"; }
}

step "rsync onto dfs, killing the MDS leader on the way"
rsync_with_leader_kill "$mnt/t1"
first_victim="$victim"
new_leader="$(DFS_CONF="$cluster/dfs.conf" "$build/tools/dfs/dfs" status | sed -n 's/^ *mds: *rank 0: active \(mds\.[a-z]*\).*/\1/p')"
[ -n "$new_leader" ] && [ "$new_leader" != "$first_victim" ] ||
  fail "rank 0's active MDS is '$new_leader' after killing $first_victim"
d1="$(tree_diff "$work/src" "$mnt/t1")"
[ -z "$d1" ] || { echo "$d1" | head -40; fail "the dfs copy differs from the source"; }

step "restarting $first_victim; it rejoins as a follower"
"$repo/tools/dfs-dev" start "$first_victim" --dir "$cluster" >/dev/null
step "rsync again, killing the new leader ($new_leader) on the way"
rsync_with_leader_kill "$mnt/t2"
[ "$victim" = "$new_leader" ] || fail "killed $victim, expected the leader $new_leader"
d2="$(tree_diff "$work/src" "$mnt/t2")"
[ -z "$d2" ] || { echo "$d2" | head -40; fail "the second dfs copy differs from the source"; }

step "remount: the copies must come from the rank's replicated state"
remount_client  # waits for the old client to push everything and exit
for t in t1 t2; do
  d="$(tree_diff "$work/src" "$mnt/$t")"
  [ -z "$d" ] || { echo "$d" | head -40; fail "$t differs from the source after a remount"; }
done
echo "PASS"
