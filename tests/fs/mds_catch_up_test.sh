#!/usr/bin/env bash
# A replicated rank compacts its Raft log with the store as the image, keeping a few
# groups behind for followers that lag: a follower that was down longer than that is
# sent a whole image of the store, made on demand, and its state must be the leader's.
#   - rank 0's log is compacted every 40 groups, keeping 20 (the default is 1,000 and
#     1,000: small here so that a short copy leaves a stopped follower far behind);
#   - one follower is stopped, a tree is copied (the leader's store syncs for each
#     compaction in the background), the follower starts again: the leader makes a whole
#     image for it and it restores it;
#   - the other follower stops and more is copied: the restored replica is part of every
#     majority now;
#   - the leader is killed and the other follower starts again: only the restored
#     replica has every group, so it leads; a fresh mount reads both copies whole from it.
source "$(dirname "$0")/lib.sh"

start_cluster --mds 3 --mds-conf "raft_compact_every = 40" --mds-conf "raft_compact_keep = 20"
# wait_for_log FILE PATTERN WHAT: up to 60 s for PATTERN to appear in FILE.
wait_for_log() {
  for _ in $(seq 1 600); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "$3 (no \"$2\" in $1 after 60 s)"
}

leader="$(active_mds)"
[ -n "$leader" ] || fail "no active MDS for rank 0"
mapfile -t followers < <(printf '%s\n' mds.a mds.b mds.c | grep -vx "$leader")
behind="${followers[0]}"
other="${followers[1]}"

step "generating a tree (scale 0.05)"
gen_tree "$work/src" 0.05

step "stopping $behind (a follower); copying the tree through $leader"
"$repo/tools/dfs-dev" kill "$behind" --dir "$cluster" >/dev/null
rsync -aHAX --numeric-ids "$work/src/" "$mnt/t1/" || fail "rsync t1 failed"
sync -f "$mnt/t1"
if grep -q "raft group [0-9]*: compaction:" "$cluster/log/$leader.log"; then
  grep "raft group [0-9]*: compaction:" "$cluster/log/$leader.log" | sed -n 1,3p
  fail "a compaction failed"
fi
# Each compaction's store sync ran beside the replica's work, not on its I/O thread.
synced="synced its store for a compaction of the log at raft index [0-9]* in [0-9]* ms, in the"
grep -q "$synced background" "$cluster/log/$leader.log" ||
  fail "$leader logged no store sync for a compaction"

step "starting $behind again: it needs groups compacted away"
"$repo/tools/dfs-dev" start "$behind" --dir "$cluster" >/dev/null
wait_for_log "$cluster/log/$leader.log" "a follower needs compacted entries: made an image" \
  "$leader made no whole image for $behind"
wait_for_log "$cluster/log/$behind.log" "metadata replica restored a snapshot at raft index" \
  "$behind restored no image"
grep -h "made an image\|restored a snapshot" "$cluster/log/$leader.log" "$cluster/log/$behind.log"

step "stopping $other; copying again: every majority now includes $behind"
"$repo/tools/dfs-dev" kill "$other" --dir "$cluster" >/dev/null
rsync -aHAX --numeric-ids "$work/src/" "$mnt/t2/" || fail "rsync t2 failed"
sync -f "$mnt/t2"

step "killing $leader and starting $other: only $behind has every group"
[ "$(active_mds)" = "$leader" ] || fail "rank 0's active MDS is '$(active_mds)', not $leader"
unmount_client
"$repo/tools/dfs-dev" kill "$leader" --dir "$cluster" >/dev/null
"$repo/tools/dfs-dev" start "$other" --dir "$cluster" >/dev/null
for _ in $(seq 1 300); do
  now="$(active_mds)"
  [ -n "$now" ] && [ "$now" != "$leader" ] && break
  sleep 0.1
done
[ "$now" = "$behind" ] || fail "rank 0's active MDS is '$now', expected $behind"

step "a fresh mount reads both copies from $behind"
"$repo/tools/dfs-dev" mount --dir "$cluster" --mount "$mnt" >/dev/null || fail "mount failed"
for t in t1 t2; do
  d="$(tree_diff "$work/src" "$mnt/$t")"
  [ -z "$d" ] || { echo "$d" | sed -n 1,40p; fail "$t differs from the source on $behind"; }
done
echo "PASS: mds_catch_up ($behind caught up from a whole image and leads with every group)"
