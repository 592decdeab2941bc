#!/usr/bin/env bash
# Early replies of a replicated rank are never lost. With both followers of rank 0
# killed, the leader can log changes but not commit them: it answers the mount's batch
# of deferred changes (creates in a directory the mount made, so it answers them itself)
# early, while an fsync of the directory waits (it needs a majority). The leader is then
# killed and the followers started again, so the new leader has none of those changes
# (stopped followers would not do: the leader's appends wait in their sockets and reach
# them when they resume). The mount resends what was answered early to the new leader,
# ahead of anything else, and the files are there, with their bytes, for a second mount,
# and the fsync returns. Without the resend the second mount finds none of them.
# The leader answers early only within its Raft lease, 8 ticks from the last heartbeat
# round the followers answered: a tick of 200 ms here gives the changes at least 1.4 s
# after the kill.
source "$(dirname "$0")/lib.sh"

start_cluster --mds 3 --mds-conf 'raft_tick_ms = 200'
leader="$(active_mds)"
[ -n "$leader" ] || fail "no active MDS in the map"
followers=()
for m in mds.a mds.b mds.c; do [ "$m" = "$leader" ] || followers+=("$m"); done
metric() {  # metric NAME MDS: the MDS's counter NAME (0 when absent); its log names the URL
  local url
  url="$(grep -o 'metrics for Prometheus at http://[^ ]*' "$cluster/log/$2.log" | tail -1 |
    awk '{print $NF}')"
  { http_get "$url" 2>/dev/null || true; } |
    awk -v n="$1" 'index($0, n "{") == 1 || $1 == n { v = $2 } END { print v + 0 }'
}

step "a directory the mount knows, made durable"
mkdir "$mnt/before"
echo kept >"$mnt/before/f"
python3 -c 'import os, sys; os.fsync(os.open(sys.argv[1], os.O_RDONLY))' "$mnt/before" ||
  fail "fsync failed"

step "the followers ($(echo "${followers[@]}")) are killed; the leader $leader answers early"
early_before="$(metric dfs_mds_early_replies_total "$leader")"
# Both at once, and the changes right after: the leader answers early only within its
# lease (at least 1.4 s from here), and steps down once it has heard from no majority
# for an election timeout (at least 2 s).
kill -9 "$(cat "$cluster/run/${followers[0]}.pid")" "$(cat "$cluster/run/${followers[1]}.pid")"
mkdir "$mnt/before/new"
for i in $(seq 1 20); do echo "file $i" >"$mnt/before/new/f$i"; done
mv "$mnt/before/new/f20" "$mnt/before/new/renamed"
# A call the MDS must answer carries the deferred changes in front of it (in the
# background: answered late, it waits for the failover).
probe listing ls "$mnt/before"
probe fsync python3 -c 'import os, sys; os.fsync(os.open(sys.argv[1], os.O_RDONLY)); print("synced")' \
  "$mnt/before/new"
early=0
for _ in $(seq 50); do
  early="$(metric dfs_mds_early_replies_total "$leader")"
  [ "$early" -gt "$early_before" ] && break
  sleep 0.1
done
[ "$early" -gt "$early_before" ] ||
  fail "the leader answered nothing early within 5 s ($early_before, then $early)"
sleep 0.5
[ "$(probed fsync)" = "<waited>" ] ||
  fail "the fsync answered '$(probed fsync)' while no majority could have the changes"

step "the leader is killed; the followers start and elect a leader without those changes"
"$repo/tools/dfs-dev" kill "$leader" --dir "$cluster" >/dev/null || fail "killing $leader failed"
for m in "${followers[@]}"; do
  "$repo/tools/dfs-dev" start "$m" --dir "$cluster" >/dev/null || fail "$m did not start"
done
new_leader=""
for _ in $(seq 300); do
  new_leader="$(active_mds)"
  [ -n "$new_leader" ] && [ "$new_leader" != "$leader" ] && break
  sleep 0.1
done
[ -n "$new_leader" ] && [ "$new_leader" != "$leader" ] ||
  fail "no new leader 30 s after killing $leader (map: '$new_leader')"
for _ in $(seq 300); do
  [ "$(probed fsync)" != "<waited>" ] && break
  sleep 0.1
done
[ "$(probed fsync)" = synced ] || fail "the fsync answered '$(probed fsync)' after the failover"
[ "$(probed listing | tr '\n' ' ')" = "f new " ] ||
  fail "the listing answered '$(probed listing)'"

step "a second mount sees every change answered early, from $new_leader"
mount_another "$work/m2" "$work/m2.log"
for i in $(seq 1 19); do
  [ "$(cat "$work/m2/before/new/f$i" 2>&1)" = "file $i" ] ||
    fail "new/f$i reads '$(cat "$work/m2/before/new/f$i" 2>&1)' on the second mount"
done
[ "$(cat "$work/m2/before/new/renamed" 2>&1)" = "file 20" ] || fail "new/renamed is missing or wrong"
[ ! -e "$work/m2/before/new/f20" ] || fail "new/f20 is still there after its rename"
[ "$(cat "$work/m2/before/f")" = kept ] || fail "before/f changed"

step "the mount says it resent them; the killed replica rejoins and catches up"
unmount_client
grep -E "changes the MDS answered early: [1-9][0-9]*, resent to a new MDS leader: [1-9]" \
  "$cluster/log/client.log" || fail "the mount did not log the resend"
"$repo/tools/dfs-dev" start "$leader" --dir "$cluster" >/dev/null || fail "$leader did not start"
for _ in $(seq 300); do
  dfs_cli status 2>/dev/null | grep -q "^ *mds: *rank 0: active" && break
  sleep 0.1
done
unmount_client "$work/m2"
remount_client
[ "$(cat "$mnt/before/new/renamed")" = "file 20" ] || fail "new/renamed is wrong after a remount"
echo "PASS"
