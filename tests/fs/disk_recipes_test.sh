#!/usr/bin/env bash
# The disk recipes of docs/operations.md, step by step as written
# there, on three hosts made by `dfs bootstrap` with two OSDs each, the file system in use:
#   replace a failed disk: osd.2 (dfs2) dies with its disk wiped; `dfs osd out 2`, wait
#   for recovery, `dfs osd purge 2`, a fresh store under the same id, start: it joins
#   and the cluster is healthy;
#   add a disk: a new [osd.6] section on dfs3, `dfs-osd --mkfs -i 6`, start: it joins,
#   takes a share of the objects, and the cluster is healthy.
# The tree written at the start reads back intact at the end.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns_lib.sh"
scale="${DFS_TREE_SCALE:-0.05}"

start_three_hosts --osds 6
mount_fstab_line "$(fstab_line)" || fail "mounting with the fstab line failed"
gen_tree "$work/src" "$scale"
rsync -aHAX --numeric-ids "$work/src/" "$mnt/t/" || fail "rsync onto dfs failed"

# status_json FIELD: a number from `dfs status --format json` ("degraded", "active", ...).
pg_field() { dfs_cli status --format json | sed -n "s/.*\"pgs\": {.*\"$1\": \\([0-9]*\\).*/\\1/p"; }
pending() { dfs_cli status --format json | sed -n 's/.*"pending_objects": \([0-9]*\).*/\1/p'; }
# wait_recovered SECONDS: no PG degraded or inactive and nothing left to copy.
wait_recovered() {
  local i
  for ((i = 0; i < $1; i++)); do
    [ "$(pg_field degraded)" = 0 ] && [ "$(pg_field active)" = "$(pg_field total)" ] &&
      [ "$(pending)" = 0 ] && return 0
    sleep 1
  done
  dfs_cli status || true
  return 1
}
# nsenter --net, not `ip netns exec`: see in_netns in tools/dfs-dev.
on_host() { nsenter --net="/run/netns/$(sed -n 's/^net_prefix=//p' "$cluster/netns.conf")-$1" "${@:2}"; }

step "replace a failed disk: osd.2 on dfs2 dies and its disk is gone"
dev kill osd.2 >/dev/null
rm -rf "$cluster/osd.2"
# The monitors notice a dead OSD after osd_heartbeat_grace (20 s); the operator who
# knows it is dead says so at once.
dfs_cli osd down 2 || fail "dfs osd down 2 failed"
dfs_cli osd out 2 || fail "dfs osd out 2 failed"
wait_recovered 300 || fail "recovery after osd.2 went out did not finish"
echo "recovered onto the other OSDs: $(pg_field total) PGs active, none degraded"
dfs_cli osd purge 2 || fail "dfs osd purge 2 failed"
dfs_cli osd tree | grep -q "osd.2 " && fail "osd.2 is still in the tree after purge"
on_host dfs2 "$build/osd/dfs-osd" -c "$cluster/dfs.conf" -i 2 --mkfs >/dev/null ||
  fail "dfs-osd --mkfs -i 2 on the new disk failed"
dev start osd.2 >/dev/null
wait_up() {  # wait_up ID: until the map has osd.ID up (health is OK before it boots)
  for _ in $(seq 1 60); do dfs_cli osd tree | grep -q " osd.$1 .* up " && return 0; sleep 1; done
  dfs_cli osd tree
  return 1
}
wait_up 2 || fail "the new osd.2 did not come up"
wait_health OK 300 || fail "not healthy after the replacement osd.2 joined"
echo "osd.2 replaced: $(dfs_cli df | awk '$1 == "osd.2" { print $6 }') objects on it"

step "add a disk: osd.6 on dfs3"
dfs3_ip="$(sed -n 's/^addr = \(.*\):[0-9]*$/\1/p' "$cluster/etc/dfs.conf" | grep '\.3$' | head -1)"
last_port="$(sed -n "s/^addr = $dfs3_ip:\\([0-9]*\\)$/\\1/p" "$cluster/etc/dfs.conf" | sort -n | tail -1)"
cat >>"$cluster/etc/dfs.conf" <<CONF

[osd.6]
addr = $dfs3_ip:$((last_port + 1))
data = $cluster/osd.6
log_file = $cluster/log/osd.6.log
host = dfs3
weight = 1.0
CONF
on_host dfs3 "$build/osd/dfs-osd" -c "$cluster/dfs.conf" -i 6 --mkfs >/dev/null ||
  fail "dfs-osd --mkfs -i 6 failed"
dev start osd.6 >/dev/null
wait_up 6 || fail "osd.6 did not come up"
wait_health OK 300 || fail "not healthy after osd.6 joined"
objects="$(dfs_cli df | awk '$1 == "osd.6" { print $6 }')"
[ "${objects:-0}" -gt 0 ] || { dfs_cli df; fail "osd.6 holds no objects after joining"; }
echo "osd.6 joined and holds $objects objects"
dfs_cli df

step "the tree is intact, through a fresh mount"
umount "$mnt"
mount_fstab_line "$(fstab_line)" || fail "remount failed"
[ -z "$(tree_diff "$work/src" "$mnt/t")" ] || fail "the tree differs after the disk recipes"
dfs_cli pg deep-scrub data >"$work/scrub.out" 2>&1 || { cat "$work/scrub.out"; fail "deep scrub found damage"; }
tail -1 "$work/scrub.out"
echo "PASS"
