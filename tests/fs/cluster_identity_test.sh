#!/usr/bin/env bash
# Clusters cannot be mixed up. Every daemon and client names its cluster (the fsid in
# [global] of its dfs.conf) in each connection's handshake and in its boot, and a peer
# of another cluster is refused in words on both sides; tools/dfs-dev never starts a
# cluster on ports another holds, nor reports one whose daemon died as up.
#  1. an OSD and an MDS of another cluster whose config names this cluster's monitors:
#     the monitors refuse them and log it, each exits non-zero saying so (rather than
#     retrying forever), and neither appears in `dfs osd tree` / `dfs status`;
#  2. the same daemons pointed at this cluster's OSD and at its MDS: refused by those;
#  3. an OSD whose disk was made for another cluster does not start;
#  4. a client of another cluster: `dfs` and mount.dfs fail with a clear line, nothing
#     is mounted and no client process is left;
#  5. tools/dfs-dev up on ports this cluster holds starts nothing, exits non-zero and
#     names the ports and what holds them; it never prints this cluster's status;
#  6. tools/dfs-dev up exits non-zero, naming the daemon and the end of its log, when a
#     daemon it started exits during start-up (an OSD whose disk another cluster owns).
source "$(dirname "$0")/lib.sh"

start_cluster --mds 1
conf="$cluster/dfs.conf"
fsid="$(sed -n 's/^fsid = //p' "$conf")"
[ -n "$fsid" ] || fail "dfs-dev wrote no fsid into $conf"
other_fsid="$(cat /proc/sys/kernel/random/uuid)"
refusal="it belongs to cluster $other_fsid, this is cluster $fsid"
stranger="$work/stranger"  # the other cluster's disks and logs
mkdir -p "$stranger"
# P+50 and P+51: inside this test's range of 200 ports, unused by dfs-dev.
osd_port=$((port + 50))

# stranger_conf MON_ADDRS: the config of another cluster (its own fsid), with one OSD
# (osd.7) and one MDS (mds.z), that names MON_ADDRS as its monitors.
stranger_conf() {
  cat >"$stranger/dfs.conf" <<CONF
[global]
fsid = $other_fsid
mon_addrs = $1
metrics_addr = off

[osd.7]
addr = 127.0.0.1:$osd_port
host = stranger
data = $stranger/osd.7
log_file = $stranger/osd.7.log

[mds.z]
addr = 127.0.0.1:$((osd_port + 1))
rank = 0
data = $stranger/mds.z
log_file = $stranger/mds.z.log
CONF
}

# expect_refused WHAT CMD...: CMD must exit non-zero within 30 s (not be killed by the
# timeout: retrying forever is the bug) and say that it was refused, and why.
expect_refused() {
  local what="$1" rc=0
  shift
  timeout 30 "$@" >"$work/refused.out" 2>&1 || rc=$?
  sed 's/^/    /' "$work/refused.out"
  [ $rc -ne 0 ] || fail "$what exited 0"
  [ $rc -ne 124 ] || fail "$what still ran after 30 s"
  grep -q "$refusal" "$work/refused.out" || fail "$what did not say why it was refused"
}

# expect_logged NAME LOG...: one of the LOGs holds the refusing side's line about NAME
# (an extended regular expression), within 5 s. grep reads the files itself: `cat | grep
# -q` fails under pipefail when grep stops at a match while cat is still writing.
expect_logged() {
  local name="$1" i
  shift
  for i in $(seq 50); do
    grep -Eqh "refused $name at [0-9.]+:[0-9]+: $refusal" "$@" && return 0
    sleep 0.1
  done
  fail "no line refusing $name in $*"
}
mon_logs=("$cluster"/log/mon.*.log)
# An MDS reaches the monitors first through its data client, client.mds.NAME.<nonce>.
mds_z='(mds\.z|client\.mds\.z\.[0-9]+)'

step "1. an OSD and an MDS of another cluster, pointed at this cluster's monitors"
stranger_conf "$(sed -n 's/^mon_addrs = //p' "$conf")"
"$build/osd/dfs-osd" -c "$stranger/dfs.conf" -i 7 --mkfs >/dev/null ||
  fail "mkfs of the stranger's osd.7 failed"
"$build/mds/dfs-mds" -c "$stranger/dfs.conf" -i z --mkfs >/dev/null ||
  fail "mkfs of the stranger's mds.z failed"
[ "$(cat "$stranger/osd.7/fsid")" = "$other_fsid" ] || fail "mkfs recorded no fsid on osd.7's disk"
expect_refused "osd.7 of another cluster" "$build/osd/dfs-osd" -c "$stranger/dfs.conf" -i 7
expect_logged 'osd\.7' "${mon_logs[@]}"
expect_refused "mds.z of another cluster" "$build/mds/dfs-mds" -c "$stranger/dfs.conf" -i z
expect_logged "$mds_z" "${mon_logs[@]}"
dfs_cli osd tree >"$work/tree.out" || fail "dfs osd tree failed"
grep -q "osd\.7" "$work/tree.out" && { cat "$work/tree.out"; fail "osd.7 is in this cluster's map"; }
dfs_cli status >"$work/status.out" 2>&1 || true
grep -q "mds\.z" "$work/status.out" && { cat "$work/status.out"; fail "mds.z is in this cluster's map"; }
echo "refused by the monitors; neither is in the map"

step "2. the same daemons, pointed at this cluster's OSD and MDS"
stranger_conf "127.0.0.1:$((port + 10))"  # osd.0
expect_refused "osd.7 pointed at osd.0" "$build/osd/dfs-osd" -c "$stranger/dfs.conf" -i 7
expect_logged 'osd\.7' "$cluster/log/osd.0.log"
stranger_conf "127.0.0.1:$((port + 100))"  # mds.a
expect_refused "mds.z pointed at mds.a" "$build/mds/dfs-mds" -c "$stranger/dfs.conf" -i z
expect_logged "$mds_z" "$cluster/log/mds.a.log"

step "3. this cluster's config, another cluster's disk"
timeout 30 "$build/osd/dfs-osd" -c "$conf" -i 7 --data "$stranger/osd.7" \
  --addr "127.0.0.1:$osd_port" --log-file "$stranger/osd.7-here.log" >"$work/disk.out" 2>&1 &&
  fail "an OSD started on a disk of another cluster"
sed 's/^/    /' "$work/disk.out"
grep -q "was made for cluster $other_fsid, but dfs.conf names cluster $fsid" "$work/disk.out" ||
  fail "the OSD did not say whose disk it is"
dfs_cli osd tree >"$work/tree.out" || fail "dfs osd tree failed"
grep -q "osd\.7" "$work/tree.out" && fail "osd.7 is in this cluster's map"

step "4. a client of another cluster"
# Should a refused mount have come up after all, it goes with the test's cluster.
unmount_stranger_client() {
  if mountpoint -q "$work/mnt2" 2>/dev/null; then umount -l "$work/mnt2" || true; fi
  pkill -f "mount.dfs .* $work/mnt2( |\$)" 2>/dev/null || true
}
trap 'rc=$?; unmount_stranger_client; cleanup $rc' EXIT
stranger_conf "$(sed -n 's/^mon_addrs = //p' "$conf")"
expect_refused "dfs status with another cluster's config" \
  "$build/tools/dfs/dfs" -c "$stranger/dfs.conf" --timeout 10 status
[ "$(wc -l <"$work/refused.out")" -eq 1 ] || fail "dfs should say it in one line"
grep -q "^cluster " "$work/refused.out" && fail "dfs printed the other cluster's status"
mkdir -p "$work/mnt2"
for options in "conf=$stranger/dfs.conf" "fsid=$other_fsid"; do
  expect_refused "mount.dfs -o $options" "$build/client-fuse/mount.dfs" "127.0.0.1:$port:/" \
    "$work/mnt2" -o "name=admin,$options,log_file=$work/client2.log,mount_timeout=10"
  [ "$(wc -l <"$work/refused.out")" -eq 1 ] || fail "mount.dfs should say it in one line"
  grep -q "^mount.dfs: wrong cluster" "$work/refused.out" || fail "not a wrong-cluster error"
  mountpoint -q "$work/mnt2" && fail "something is mounted at $work/mnt2"
  sleep 0.5
  pgrep -f "mount.dfs .* $work/mnt2( |\$)" && fail "a client process is left after the refusal"
done
expect_logged 'client\.admin\.[0-9]+' "${mon_logs[@]}"

step "5. tools/dfs-dev up on the ports this cluster holds"
rc=0
"$repo/tools/dfs-dev" up --no-build --no-mount --dir "$work/second" --port "$port" --mds 1 \
  >"$work/second.out" 2>&1 || rc=$?
sed 's/^/    /' "$work/second.out"
[ $rc -ne 0 ] || fail "dfs-dev up succeeded on ports in use"
grep -q "127.0.0.1:$port (mon.a): held by dfs-mon (pid [0-9]*: .*$cluster/dfs.conf" \
  "$work/second.out" || fail "dfs-dev did not name mon.a's port and what holds it"
grep -q "127.0.0.1:$((port + 10)) (osd.0): held by dfs-osd" "$work/second.out" ||
  fail "dfs-dev did not name osd.0's port"
grep -q "127.0.0.1:$((port + 100)) (mds.a): held by dfs-mds" "$work/second.out" ||
  fail "dfs-dev did not name mds.a's port"
grep -qE "The cluster is up|^cluster " "$work/second.out" && fail "dfs-dev printed a cluster's status"
[ ! -e "$work/second/run" ] && [ ! -e "$work/second/dfs.conf" ] ||
  fail "dfs-dev started or wrote something for the refused cluster"

step "6. tools/dfs-dev up when a daemon exits during start-up"
"$repo/tools/dfs-dev" down --dir "$cluster" >/dev/null
echo "$other_fsid" >"$cluster/osd.2/fsid"  # as if its disk were another cluster's
rc=0
"$repo/tools/dfs-dev" up --no-build --no-mount --dir "$cluster" --port "$port" \
  >"$work/restart.out" 2>&1 || rc=$?
sed 's/^/    /' "$work/restart.out"
[ $rc -ne 0 ] || fail "dfs-dev up succeeded with osd.2 dead"
grep -q "osd.2 exited during start-up" "$work/restart.out" || fail "dfs-dev did not name osd.2"
grep -q "was made for cluster $other_fsid" "$work/restart.out" ||
  fail "dfs-dev did not show the end of osd.2's log"
grep -q "The cluster is up" "$work/restart.out" && fail "dfs-dev reported the cluster up"
for n in mon.a mon.b mon.c osd.0 osd.1 mds.a; do
  [ ! -e "$cluster/run/$n.pid" ] || fail "$n was left running after the failed start"
done
echo "PASS"
