#!/usr/bin/env bash
# Three hosts dfs1..dfs3 (network namespaces), their config and keys
# made by `dfs bootstrap`, the file system mounted from the root namespace with the fstab
# line an operator writes. rsync the generated tree on, then kill dfs2 entirely (every
# process on it, SIGKILL): the mount keeps reading and writing, `dfs status` says in
# words that host dfs2 is down, and once dfs2 is back the cluster is healthy again with
# both trees intact.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns_lib.sh"
scale="${DFS_TREE_SCALE:-0.1}"

start_three_hosts
step "bootstrap's files: the keyring and the secret are 0600"
for f in dfs.keyring admin.secret; do
  [ "$(stat -c %a "$cluster/etc/$f")" = 600 ] || fail "$f is mode $(stat -c %a "$cluster/etc/$f")"
done
[ "$(stat -c %a "$cluster/etc/dfs.conf")" = 644 ] || fail "dfs.conf is not 0644"
grep -q '^\[mon.dfs2\]' "$cluster/etc/dfs.conf" || fail "no [mon.dfs2] in the bootstrap config"

line="$(fstab_line)"
step "mounting with: $line"
mount_fstab_line "$line" || fail "mount.dfs with the fstab line failed"
mountpoint -q "$mnt" || fail "nothing mounted at $mnt"

step "generating a tree (scale $scale) and copying it on"
gen_tree "$work/src" "$scale"
rsync -aHAX --numeric-ids "$work/src/" "$mnt/t1/" || fail "rsync onto dfs failed"
[ -z "$(tree_diff "$work/src" "$mnt/t1")" ] || fail "the copy differs from the source"

step "every daemon serves Prometheus metrics at its port + 1000"
scrape() {  # scrape SECTION: the daemon's /metrics page
  local addr host port
  addr="$(awk -v s="[$1]" '$0 == s { f = 1; next } /^\[/ { f = 0 } f && $1 == "addr" { print $3 }' \
    "$cluster/etc/dfs.conf")"
  host="${addr%:*}"
  port=$((${addr##*:} + 1000))
  http_get "http://$host:$port/metrics"
}
for daemon in mon.dfs1 osd.0 mds.dfs3; do
  page="$(scrape "$daemon")" || fail "no metrics from $daemon"
  grep -q '^dfs_rpc_requests_total{method="[a-z_]*",result="ok"} [1-9]' <<<"$page" ||
    fail "$daemon: no served requests in its metrics"
  grep -q '^dfs_process_resident_memory_bytes{entity="'"$daemon"'"} [1-9]' <<<"$page" ||
    fail "$daemon: no process metrics"
done
page="$(scrape mon.dfs2)"
grep -q '^dfs_raft_term{group="mon"} [1-9]' <<<"$page" || fail "mon.dfs2: no Raft term"
grep -q '^dfs_rocksdb_sst_bytes{db="mon"} [0-9]' <<<"$page" || fail "mon.dfs2: no RocksDB figures"
grep -q '^dfs_raft_commit_index{group="mds.rank0"} [1-9]' <<<"$(scrape mds.dfs1)" ||
  fail "mds.dfs1: no Raft commit index"
grep -q '^dfs_osd_pgs{state="primary"} [1-9]' <<<"$(scrape osd.1)" || fail "osd.1: no primary PGs"
# The rsync's changes went through the leader's commit groups, several to a group.
commits="$(for daemon in mds.dfs1 mds.dfs2 mds.dfs3; do scrape "$daemon"; done |
  awk '/^dfs_mds_commit_groups_total/ { g += $2 } /^dfs_mds_commit_entries_total/ { e += $2 }
       END { print g + 0, e + 0 }')"
read -r groups entries <<<"$commits"
(( groups > 0 && entries > groups )) || fail "no commit groups in the MDS metrics ($commits)"
echo "metrics: mon.dfs1, mon.dfs2, the three MDS, osd.0 and osd.1 scraped;" \
  "$entries log entries in $groups commit groups"

step "killing every process of host dfs2"
dev kill-host dfs2
ip netns pids "$(sed -n 's/^net_prefix=//p' "$cluster/netns.conf")-dfs2" | grep -q . &&
  fail "processes left on dfs2"

step "the mount keeps working: read the tree back and write a second copy"
started=$(date +%s)
[ -z "$(tree_diff "$work/src" "$mnt/t1")" ] || fail "reading the tree with dfs2 dead differs"
rsync -aHAX --numeric-ids "$work/src/" "$mnt/t2/" || fail "rsync with dfs2 dead failed"
echo "written with dfs2 dead" >"$mnt/while-dead" || fail "writing a file with dfs2 dead failed"
echo "read and wrote the tree again in $(($(date +%s) - started)) s with dfs2 dead"

step "dfs status says what happened"
status=""
for _ in $(seq 1 60); do
  status="$(dfs_cli status 2>&1 || true)"
  grep -q "host dfs2 .*is down or cut off" <<<"$status" && break
  sleep 1
done
echo "$status" | sed -n '1,12p'
grep -q "health:   WARN" <<<"$status" || fail "dfs status does not say WARN with dfs2 dead"
grep -q "host dfs2 (.*) is down or cut off.*osd.1.*mon.dfs2.*mds.dfs2 do not answer" <<<"$status" ||
  fail "dfs status does not say that host dfs2 is down, naming its daemons"
grep -q "placement groups (.*%) are degraded" <<<"$status" || fail "dfs status does not show degraded PGs"
grep -q "dfs2 0/1 up" <<<"$status" || fail "dfs status does not show dfs2's OSDs down"
rc=0
health="$(dfs_cli health)" || rc=$?
[ "$rc" -eq 1 ] && grep -q "^WARN: [0-9]* problems (dfs health detail)" <<<"$health" ||
  fail "dfs health said '$health' (exit $rc), expected WARN and exit 1"
detail="$(dfs_cli health detail || true)"  # exit status 1: WARN
grep -q "^  \[WARN\] host dfs2 .* is down or cut off" <<<"$detail" ||
  fail "dfs health detail does not name host dfs2: $detail"

step "dfs2 comes back"
dev start-host dfs2 >/dev/null
wait_health OK 180 || fail "the cluster is not healthy 180 s after dfs2 came back"
[ "$(dfs_cli health)" = OK ] || fail "dfs health does not say OK"
dfs_cli status | sed -n '1,4p'

step "a slow host: dfs3 throttled to 4 Mbit/s, the mount still writes"
dev throttle dfs3 4000
started=$EPOCHREALTIME
head -c 4M /dev/urandom >"$work/slow.bin"
cp "$work/slow.bin" "$mnt/slow.bin" && sync "$mnt/slow.bin" || fail "writing with dfs3 throttled failed"
printf 'wrote 4 MiB with fsync in %.1f s with dfs3 throttled\n' "$(echo "$EPOCHREALTIME - $started" | bc)"
dev throttle dfs3 0
cmp "$work/slow.bin" "$mnt/slow.bin" || fail "slow.bin differs"

step "both trees intact, through a fresh mount with nothing cached"
# dfs2's daemons started while the mount was there: entering their host must not have
# given them a copy of the mount table, which would keep the mount alive after the
# unmount here and its client running (tools/dfs-dev, in_netns).
client="$(client_pid "$mnt")"
umount "$mnt"
wait_exit "$client" || fail "the client did not exit within 20 s of its unmount"
mount_fstab_line "$line" || fail "remount failed"
[ -z "$(tree_diff "$work/src" "$mnt/t1")" ] || fail "t1 differs after dfs2 returned"
[ -z "$(tree_diff "$work/src" "$mnt/t2")" ] || fail "t2 (written with dfs2 dead) differs"
[ "$(cat "$mnt/while-dead")" = "written with dfs2 dead" ] || fail "while-dead lost"
step "every object on all three hosts again: deep scrub of the data pool"
dfs_cli pg deep-scrub data >"$work/scrub.out" 2>&1 || { cat "$work/scrub.out"; fail "deep scrub found damage"; }
tail -1 "$work/scrub.out"
echo "PASS"
