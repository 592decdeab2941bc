#!/usr/bin/env bash
# Partition: cut dfs1's link (a partition, not a crash: its daemons keep
# running) while writers run on both sides of the cut:
#   - in the root namespace, on the majority side: files through the mount, each written
#     with fsync, and objects through `dfs obj put`;
#   - on dfs1 itself, the minority side: objects through `dfs obj put`.
# Every write that was acknowledged (fsync or put returned success), on either side,
# before, during or after the cut, must be there with its content once the link is
# back. No split brain: one monitor leader and one active MDS afterwards, and the
# minority side acknowledges nothing while it cannot reach a majority.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns_lib.sh"

start_three_hosts
mount_fstab_line "$(fstab_line)" || fail "mounting with the fstab line failed"
mkdir "$mnt/p"
ns1="$(sed -n 's/^net_prefix=//p' "$cluster/netns.conf")-dfs1"
acks="$work/acks"
mkdir -p "$acks" "$work/payload"
stop="$work/stop"

payload() {  # payload KIND N: the content of write N of writer KIND (a few KiB)
  local f="$work/payload/$1-$2"
  [ -f "$f" ] || { for _ in $(seq 1 $((($2 % 7) + 1))); do printf '%s %d %0500d\n' "$1" "$2" "$2"; done >"$f"; }
  echo "$f"
}
# writer KIND CMD...: writes 1, 2, ... until $stop exists; CMD gets N and the payload
# file; "N seconds" goes to acks/KIND for each write CMD acknowledged.
writer() {
  local kind="$1" n=0
  shift
  while [ ! -e "$stop" ]; do
    n=$((n + 1))
    if "$@" "$n" "$(payload "$kind" "$n")" >/dev/null 2>&1; then echo "$n $EPOCHSECONDS" >>"$acks/$kind"; fi
    sleep 0.05
  done
}
fs_write() { dd if="$2" of="$mnt/p/$1" conv=fsync status=none; }
obj_put_root() { timeout 20 "$build/tools/dfs/dfs" -c "$cluster/dfs.conf" --timeout 8 obj put data "root-$1" "$2"; }
obj_put_dfs1() {
  timeout 20 nsenter --net="/run/netns/$ns1" "$build/tools/dfs/dfs" -c "$cluster/dfs.conf" --timeout 8 \
    obj put data "dfs1-$1" "$2"
}

step "writers on both sides"
writer fs fs_write &
writer root obj_put_root &
writer dfs1 obj_put_dfs1 &
sleep 5
cut_at=$EPOCHSECONDS
dev cut dfs1
step "dfs1 cut off for 30 s, writers running"
sleep 30
heal_at=$EPOCHSECONDS
dev heal dfs1
sleep 10
touch "$stop"
wait
for k in fs root dfs1; do touch "$acks/$k"; done
during() { awk -v a="$cut_at" -v b="$heal_at" '$2 > a + 1 && $2 < b' "$acks/$1" | wc -l; }
echo "acknowledged: fs $(wc -l <"$acks/fs") ($(during fs) during the cut)," \
  "root objects $(wc -l <"$acks/root") ($(during root) during)," \
  "dfs1 objects $(wc -l <"$acks/dfs1") ($(during dfs1) during)"
[ "$(during fs)" -gt 0 ] || fail "the majority side acknowledged no file write during the cut"
[ "$(during root)" -gt 0 ] || fail "the majority side acknowledged no object write during the cut"
[ "$(during dfs1)" -eq 0 ] ||
  echo "note: dfs1 acknowledged $(during dfs1) writes while cut off (each must still be there)"

step "healing: waiting for the cluster to be healthy"
wait_health OK 180 || fail "not healthy 180 s after the link came back"

step "no split brain: one leader, every monitor agreeing"
json="$(dfs_cli status --format json)"
leaders="$(grep -o '"role": "leader"' <<<"$json" | wc -l)"
echo "$json" | sed -n '/"quorum"/,/^  },/p' | grep '"name"' | sed 's/, "last_index.*//'
[ "$leaders" -eq 2 ] || fail "expected one monitor leader and one MDS leader, saw $leaders leaders"
[ "$(grep -o '"active": true' <<<"$json" | wc -l)" -eq 1 ] || fail "not exactly one active MDS"

step "every acknowledged write is there"
umount "$mnt"
mount_fstab_line "$(fstab_line)" || fail "remount failed"
missing=0
while read -r n _; do
  cmp -s "$(payload fs "$n")" "$mnt/p/$n" || { echo "file p/$n lost or wrong"; missing=$((missing + 1)); }
done <"$acks/fs"
for k in root dfs1; do
  while read -r n _; do
    dfs_cli obj get data "$k-$n" "$work/got" >/dev/null 2>&1 && cmp -s "$(payload "$k" "$n")" "$work/got" ||
      { echo "object $k-$n lost or wrong"; missing=$((missing + 1)); }
  done <"$acks/$k"
done
[ "$missing" -eq 0 ] || fail "$missing acknowledged writes are missing or wrong"
echo "PASS: $(cat "$acks"/* | wc -l) acknowledged writes all present"
