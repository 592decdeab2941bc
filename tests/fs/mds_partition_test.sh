#!/usr/bin/env bash
# MDS failover on a partition: as mds_failover_test.sh, but the active MDS of rank 0 is not
# killed: its whole host is cut off the network (`tools/dfs-dev cut`: the host's link goes
# down) in the middle of an `rsync -aHAX` of the generated tree. Nobody gets a refused
# connection, only silence. The host also runs a monitor and an OSD: the other two
# monitors keep a quorum and the data pool (size 3, min_size 2) keeps writing degraded.
# rsync must finish without an error and the copy, read through a fresh mount while the
# host is still cut off, must be identical to the source. Once the host is back, the old
# leader must rejoin as a standby, and the namespace must still compare equal after a
# remount (contents wait for the object tier's recovery: see the end).
#
# The client follows the map through the first monitor of its list that answers, so
# with the default list (mon.a first) a cut of dfs1 also takes the client's map source,
# and a cut elsewhere does not; which host the leader is on is up to the election. The
# test therefore remounts with the leader's host's monitor first: the cut then takes the
# client's MDS and its map source together, the harder case, on every run.
# DFS_KEEP_MON_ORDER=1 keeps the mount as dfs-dev made it, to see the other case.
#
# It also prints how long rsync made no progress at the cut, from the syscall counters
# of the rsync processes in /proc (reading them does not touch the mount).
source "$(dirname "$0")/lib.sh"
# Big enough that the copy is still running 1.5 s after it starts, on a fast
# client (at 0.05 a whole rsync took ~1 s).
scale="${DFS_TREE_SCALE:-0.1}"
rsync_limit_s=300  # rsync running longer than this after the cut is a hang, not a stall

# Skips unless network namespaces work here (and defines the three-host helpers).
source "$(dirname "$0")/netns_lib.sh"

dfs_cli() { "$build/tools/dfs/dfs" -c "$cluster/dfs.conf" --timeout 5 "$@"; }
# NAME's entry in the mds list of `dfs status --format json` (one line), or nothing.
mds_entry() { dfs_cli status --format json 2>/dev/null | grep "{\"name\": \"$1\"" || true; }
# How often NAME has logged that it joined the map as a standby.
standby_boots() { grep -c "$1 booted into the map at epoch [0-9]* as standby" "$cluster/log/$1.log" || true; }

# sample_progress PID FILE: until process PID ends, appends "seconds syscalls" every 0.1 s
# to FILE, where syscalls counts the read- and write-class calls made so far by PID and
# its descendants (rsync's sender, receiver and generator). While rsync waits on dfs the
# count stands still: the receiver and generator block in the file system, and the
# sender soon after on the full pipe to them.
sample_progress() {
  local top="$1" out="$2"
  while kill -0 "$top" 2>/dev/null; do
    echo "$EPOCHREALTIME $(count_syscalls "$top")" >>"$out"
    sleep 0.1
  done
}
count_syscalls() {
  local pid="$1" total=0 key value kids=() kid
  while read -r key value; do
    case "$key" in syscr: | syscw:) total=$((total + value)) ;; esac
  done 2>/dev/null <"/proc/$pid/io" || true
  read -r -a kids 2>/dev/null <"/proc/$pid/task/$pid/children" || true
  for kid in "${kids[@]}"; do total=$((total + $(count_syscalls "$kid"))); done
  echo "$total"
}
# stall_report FILE CUT_TIME: the longest stretch without progress that ends after the
# cut, and for comparison the longest before it.
stall_report() {
  awk -v cut="$2" '
    NR == 1 || $2 != count {
      if (NR > 1) {
        gap = $1 - since
        if ($1 > cut && gap > after) { after = gap; after_from = since - cut }
        if ($1 <= cut && gap > before) before = gap
      }
      count = $2; since = $1
    }
    END {
      printf "rsync made no progress for %.1f s, from %.1f s after the cut", after, after_from
      printf " (longest pause before the cut: %.1f s)\n", before
    }' "$1"
}

start_cluster --hosts 3 --mds 3
step "daemons and their hosts:$(for n in $(grep -o '^\[[a-z]*\.[a-z0-9]*\]' "$cluster/dfs.conf" | tr -d '[]'); do
  echo -n " $n@$("$repo/tools/dfs-dev" host "$n" --dir "$cluster")"
done)"
step "generating a tree (scale $scale)"
gen_tree "$work/src" "$scale"
total="$(find "$work/src" | wc -l)"

victim="$(active_mds)"
[ -n "$victim" ] || fail "rank 0 has no active MDS in dfs status --format json"
victim_host="$("$repo/tools/dfs-dev" host "$victim" --dir "$cluster")"
[ -n "$victim_host" ] || fail "no host for $victim"
# The monitor list with the one on the leader's host first (its address ends in .N:port).
on_victim_host=".${victim_host#dfs}:"
mon_list="$(sed -n 's/^mon_addrs = //p' "$cluster/dfs.conf" | tr , '\n')"
mons_first="$({ grep -F "$on_victim_host" <<<"$mon_list"; grep -vF "$on_victim_host" <<<"$mon_list"; } |
  paste -sd,)"
if [ -z "${DFS_KEEP_MON_ORDER:-}" ]; then
  step "the active MDS is $victim on $victim_host: remounting with monitors $mons_first"
  umount "$mnt"
  "$build/client-fuse/mount.dfs" "$mons_first:/" "$mnt" \
    -o "name=admin,conf=$cluster/dfs.conf,log_file=$cluster/log/client.log" ||
    fail "mount.dfs with $mons_first failed"
fi

step "rsync onto dfs, cutting off $victim_host on the way"
log="$work/rsync.log"
started=$EPOCHREALTIME
rsync -aHAX --numeric-ids "$work/src/" "$mnt/t1/" >"$log" 2>&1 &
rsync_pid=$!
sample_progress "$rsync_pid" "$work/progress" &
for _ in $(seq 1 600); do
  # The top directory, then 1.5 s: a `find` of the copy competes with the copy it
  # watches, and with write-behind one walk outlasted the whole rsync.
  [ -d "$mnt/t1" ] && break
  kill -0 "$rsync_pid" 2>/dev/null || break
  sleep 0.1
done
sleep 1.5
kill -0 "$rsync_pid" 2>/dev/null || { cat "$log"; fail "rsync ended before the cut"; }
now_active="$(active_mds)"
if [ "$now_active" != "$victim" ]; then
  # Not expected without a failure, but the point is to cut the leader's host.
  echo "note: the active MDS moved from $victim to '$now_active' during the copy; cutting its host"
  victim="$now_active"
  [ -n "$victim" ] || fail "rank 0 has no active MDS in dfs status --format json"
  victim_host="$("$repo/tools/dfs-dev" host "$victim" --dir "$cluster")"
fi
copied="$(find "$mnt/t1" | wc -l)"
cut_at=$EPOCHREALTIME
"$repo/tools/dfs-dev" cut "$victim_host" --dir "$cluster" >/dev/null || fail "dfs-dev cut failed"
step "cut off $victim_host (the host of $victim) with $copied of $total entries copied"

# rsync goes on after a failed file and fails at the end, each further error costing the
# client's op_timeout: stop at its first error instead.
while kill -0 "$rsync_pid" 2>/dev/null; do
  after_cut="$(echo "$EPOCHREALTIME - $cut_at" | bc | xargs printf '%.1f')"
  if grep -q '^rsync' "$log" || [ "${after_cut%.*}" -ge "$rsync_limit_s" ]; then
    kill "$rsync_pid"
    stall_report "$work/progress" "$cut_at"
    dfs_cli status | sed 's/^/    /' || true
    head -n 20 "$log"
    fail "rsync failed or hung ${after_cut} s after $victim_host was cut off"
  fi
  sleep 0.5
done
rsync_rc=0
wait "$rsync_pid" || rsync_rc=$?
finished=$EPOCHREALTIME
wait  # the sampler ends with rsync
step "rsync ended (exit $rsync_rc) $(echo "$finished - $cut_at" | bc | xargs printf '%.1f') s after" \
  "the cut, $(echo "$finished - $started" | bc | xargs printf '%.1f') s in all"
stall_report "$work/progress" "$cut_at"
dfs_cli status | sed 's/^/    /' || true
[ "$rsync_rc" -eq 0 ] || { tail -n 20 "$log"; fail "rsync failed after $victim_host was cut off"; }
new_leader="$(active_mds)"
[ -n "$new_leader" ] && [ "$new_leader" != "$victim" ] ||
  fail "rank 0's active MDS is '$new_leader' with $victim cut off"
step "remount with $victim_host still cut off: the copy must come from the cluster, not the client"
remount_client  # waits for the old client to push everything and exit
d1="$(tree_diff "$work/src" "$mnt/t1")"
[ -z "$d1" ] || { echo "$d1" | head -40; fail "the dfs copy differs from the source"; }

step "healing $victim_host; $victim must rejoin as a standby of $new_leader"
boots_before="$(standby_boots "$victim")"
"$repo/tools/dfs-dev" heal "$victim_host" --dir "$cluster" >/dev/null || fail "dfs-dev heal failed"
healed_at=$EPOCHREALTIME
rejoined=""
for _ in $(seq 1 60); do
  entry="$(mds_entry "$victim")"
  if [ "$(standby_boots "$victim")" -gt "$boots_before" ] &&
    [[ "$entry" == *'"up": true'* && "$entry" == *'"active": false'* ]]; then
    rejoined=1
    break
  fi
  sleep 1
done
[ -n "$rejoined" ] || fail "$victim did not rejoin as a standby within 60 s: ${entry:-not in the map}"
[ "$(active_mds)" = "$new_leader" ] || fail "the active MDS moved from $new_leader to $(active_mds)"
step "$victim rejoined as a standby $(echo "$EPOCHREALTIME - $healed_at" | bc |
  xargs printf '%.1f') s after the heal"
dfs_cli status | sed 's/^/    /' || true

step "remount after the heal: the namespace must be the rank's replicated state"
remount_client  # waits for the old client to push everything and exit
# Contents too: the healed host's OSD, primary again for some placement groups, missed
# the writes made while it was cut off; its PGs peer before they serve again
# (osd/pg/peering.cc), so it serves them.
d="$(tree_diff "$work/src" "$mnt/t1")"
[ -z "$d" ] || { echo "$d" | head -40; fail "the copy differs from the source after the heal"; }
echo "PASS"
