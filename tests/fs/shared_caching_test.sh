#!/usr/bin/env bash
# Names and attributes cached by several mounts at once (docs/capabilities.md, "Read
# shares"): a mount's lookup or stat asks to share the inode, and while it does its
# kernel keeps the inode's attributes, and a directory's names and missing names, with
# the long timeouts; any change of the inode by another mount recalls the share first.
# With three mounts A, B and C of one file system:
#   1. coherence_check.py: at each step every mount looks at everything in one directory,
#      then one of them changes something there; the moment the change returns, the
#      other two show exactly what it shows (names, types, modes, sizes, link counts,
#      bytes, the mtime a utime set). DFS_COHERENCE_SEED=S replays a run;
#   2. the mounts' sessions hold read shares of what they looked at (`dfs client ls`);
#   3. a fourth mount D, beside the three, stats one file and one missing name 200 times
#      each: its kernel answers all but a few itself (D's own count of MDS lookups and
#      getattrs, logged at its unmount, stays under 20); A's chmod of the file is then
#      seen by D's next stat.
source "$(dirname "$0")/lib.sh"
check="$(dirname "$0")/coherence_check.py"
seed="${DFS_COHERENCE_SEED:-$(((RANDOM << 15) | RANDOM))}"
steps="${DFS_COHERENCE_STEPS:-250}"

start_cluster
declare -A where=([B]="$work/mnt-b" [C]="$work/mnt-c" [D]="$work/mnt-d")
declare -A pid=()
finish() {
  local rc=$?
  for who in D C B; do stop_mount "${where[$who]}" "${pid[$who]:-}"; done
  cleanup $rc
}
trap finish EXIT
mount_as() {
  mount_another "${where[$1]}" "$cluster/log/client-$1.log"
  pid[$1]="$(client_pid "${where[$1]}")"
}

step "1. three mounts look at one directory and change it in turn (seed $seed)"
mkdir "$mnt/c"
mount_as B
mount_as C
python3 "$check" --seed "$seed" --steps "$steps" "$mnt/c" "${where[B]}/c" "${where[C]}/c" ||
  fail "the mounts disagreed (replay: DFS_COHERENCE_SEED=$seed)"

step "2. the sessions share what they looked at"
shares="$(dfs_cli client ls --format json | python3 -c '
import json, sys
print(" ".join(str(s["read_files"]) for s in json.load(sys.stdin)["sessions"] if s["renewing"]))')"
echo "read shares per session: $shares"
for n in $shares; do [ "$n" -gt 0 ] || fail "a session shares nothing: $shares"; done
[ "$(wc -w <<<"$shares")" -eq 3 ] || fail "expected three sessions, got: $shares"

step "3. a fourth mount's kernel answers repeated stats itself"
echo "data" >"$mnt/c/seen"
mount_as D
# D's first stat recalls the file from A, which owns what it creates in a directory
# mounts share; an inode just recalled or changed is not shared for 2 s
# (DirRights::kShareHoldOff).
stat "${where[D]}/c/seen" >/dev/null
sleep 4
for _ in $(seq 200); do
  stat -c %a "${where[D]}/c/seen" >/dev/null
  stat "${where[D]}/c/missing" >/dev/null 2>&1 && fail "c/missing exists"
done
chmod 0600 "$mnt/c/seen"
[ "$(stat -c %a "${where[D]}/c/seen")" = 600 ] || fail "D did not see A's chmod"
stop_mount "${where[D]}" "${pid[D]}"
calls="$(grep -a "MDS calls" "$cluster/log/client-D.log" | tail -1)"
[ -n "$calls" ] || fail "D logged no MDS calls at its unmount"
echo "D's ${calls#*] }"
# Items "METHOD: COUNT x MEAN us"; 301 is kMdsLookup, 302 kMdsGetAttr (common/rpc/methods.h).
asked="$(sed 's/.*latency): //' <<<"$calls" | tr ',' '\n' |
  awk -F'[: x]+' '{ sub(/^ +/, ""); if ($1 == 301 || $1 == 302) n += $2 } END { print n + 0 }')"
echo "D asked the MDS $asked times for 400 stats"
[ "$asked" -lt 20 ] || fail "D's kernel did not keep what D shares: $asked lookups and getattrs"

echo "PASS"
