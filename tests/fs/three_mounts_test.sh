#!/usr/bin/env bash
# Three mounts of one file system, as the reference deployment has them: a cluster on
# hosts dfs1..dfs3 (network namespaces) made by `dfs bootstrap`, mounted with its fstab
# line from this host (A and C) and from inside host dfs2's network (B, whose every
# request crosses the hosts' bridge). The first mount holds exclusive caching until the
# second arrives; then all three run shared:
#   1. a tree A made alone, without sync, reads whole on B and C once they are mounted;
#   2. close-to-open around the three: a file written and closed on one reads back whole
#      on the next right after the close (A -> B -> C -> A ..., 12 rounds);
#   3. O_CREAT|O_EXCL from the three at once on the same 1,000 names: each won exactly
#      once, every loser gets EEXIST, a fresh mount reads each winner's bytes;
#   4. O_APPEND records from the three at once into one file: none lost, none torn, each
#      mount's in its order;
#   5. B lists a directory of 1,500 names over and over while A and C create, rename and
#      unlink other names in it: every one of the 1,500 in every listing, once, and no
#      name listed twice.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns_lib.sh"
races="$(dirname "$0")/mount_races.py"

start_three_hosts
declare -A where=([A]="$mnt" [B]="$work/mnt-b" [C]="$work/mnt-c")
declare -A pid=()
# mount_as WHO [HOST]: mounts WHO's directory with the fstab line, its client in HOST's
# network if given.
mount_as() {
  mount_from_host "${where[$1]}" "$cluster/log/client-$1.log" "${2:-}"
  pid[$1]="$(client_pid "${where[$1]}")"
}
finish() {
  local rc=$?
  for who in C B A; do stop_mount "${where[$who]}" "${pid[$who]:-}"; done
  cleanup $rc
}
trap finish EXIT
step "1. A alone makes a tree; B (from host dfs2's network) and C mount and read it"
mount_as A
mkdir -p "$work/ref"
for i in $(seq 100); do echo "file $i of the tree made alone" >"$work/ref/f$i"; done
cp -r "$work/ref" "$mnt/tree"
mount_as B dfs2
mount_as C
for who in B C; do
  diff -r "$work/ref" "${where[$who]}/tree" >/dev/null || fail "$who does not read A's tree whole"
done
grep -q "exclusive caching recalled" "$cluster/log/client-A.log" ||
  fail "A's log does not say its exclusive caching was recalled"
echo "ok: B and C read the 100 files A made alone"

step "2. close-to-open around the three mounts"
order=(A B C)
for i in $(seq 0 11); do
  w=${order[$((i % 3))]}
  r=${order[$(((i + 1) % 3))]}
  head -c $((1000 + i * 3777)) < <(yes "round $i by $w") >"$work/expect"
  cat "$work/expect" >"${where[$w]}/ping"
  cmp -s "${where[$r]}/ping" "$work/expect" ||
    fail "round $i: $r read $(stat -c %s "${where[$r]}/ping") bytes right after $w closed ping ($(stat -c %s "$work/expect") written)"
done
echo "ok: 12 rounds, each read whole on the next mount right after the close"

step "3. the three create the same 1,000 names with O_EXCL at once"
n=1000
mkdir "$mnt/excl"
sync -f "$mnt/excl"
for who in A B C; do python3 "$races" excl "$who" "${where[$who]}/excl" "$n" "$work" & done
release_racers excl 3
wait || true
python3 "$races" check-excl "$work" "$n" A B C || fail "the O_EXCL race went wrong (above)"
echo "ok: each of the $n names won exactly once, every loser got EEXIST"

step "4. the three append 300 records each to one file with O_APPEND, at once"
per=300
: >"$mnt/log"
sync -f "$mnt/log"
for who in A B C; do python3 "$races" append "$who" "${where[$who]}/log" "$per" "$work" & done
release_racers append 3
wait || true
for who in A B C; do
  python3 "$races" check-log "${where[$who]}/log" "$per" A B C ||
    fail "the records read on $who are wrong (above)"
done
echo "ok: $((3 * per)) records from the three mounts, none lost or torn, each mount's in order"

step "5. B lists a directory of 1,500 names while A and C create, rename and unlink in it"
mkdir "$mnt/churn"
fill_names "$mnt/churn" 1500
sync -f "$mnt/churn"
racers=()
for who in A C; do
  python3 "$races" churn "$who" "${where[$who]}/churn" 6 "$work" &
  racers+=($!)
done
python3 "$races" list B "${where[B]}/churn" 6 "$work" &
lister=$!
release_racers churn 3
for p in "${racers[@]}"; do wait "$p" || fail "a churn on A or C failed"; done
wait "$lister" || fail "B's listings missed or repeated names (above)"
echo "ok: every listing on B held the 1,500 names once while A and C changed the directory"

step "a fresh mount reads every O_EXCL winner's bytes and the records"
for who in C B A; do stop_mount "${where[$who]}" "${pid[$who]}"; pid[$who]=""; done
mount_as A
python3 "$races" check-winners "$work" "$mnt/excl" A B C ||
  fail "a fresh mount reads other bytes than the winners' (above)"
python3 "$races" check-log "$mnt/log" "$per" A B C || fail "the records read on a fresh mount are wrong (above)"
echo "PASS"
