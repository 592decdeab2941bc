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
#      mount's in its order.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns_lib.sh"

start_three_hosts
line="$(fstab_line)"
read -r source _ _ options _ <<<"$line"
options="${options//log_file=$cluster\/log\/client.log/log_file=LOG}"
net_prefix="$(sed -n 's/^net_prefix=//p' "$cluster/netns.conf")"
declare -A where=([A]="$mnt" [B]="$work/mnt-b" [C]="$work/mnt-c")
declare -A pid=()
# mount_as WHO [NETNS]: mounts WHO's directory with the fstab line's source and options,
# its client in network namespace NETNS if given (only the network: the mount itself is
# in this host's mount table, as mount(8) on that host would make it).
mount_as() {
  local dir="${where[$1]}" enter=()
  [ -n "${2:-}" ] && enter=(nsenter "--net=/run/netns/$2")
  mkdir -p "$dir"
  "${enter[@]}" "$build/client-fuse/mount.dfs" "$source" "$dir" \
    -o "${options//LOG/$cluster/log/client-$1.log}" || fail "mounting $1 at $dir failed"
  mountpoint -q "$dir" || fail "nothing mounted at $dir"
  pid[$1]="$(client_pid "$dir")"
  if [ -n "${2:-}" ]; then
    [ "$(ip netns identify "${pid[$1]}")" = "$2" ] || fail "$1's client does not run in $2's network"
  fi
}
finish() {
  local rc=$?
  for who in C B A; do stop_mount "${where[$who]}" "${pid[$who]:-}"; done
  cleanup $rc
}
trap finish EXIT
# release_all WHAT: lets the helpers that said $work/WHAT-ready.* go at once.
release_all() {
  for _ in $(seq 100); do
    [ "$(ls "$work/$1-ready."* 2>/dev/null | wc -l)" -eq 3 ] && break
    sleep 0.1
  done
  touch "$work/$1-go"
}

step "1. A alone makes a tree; B (from host dfs2's network) and C mount and read it"
mount_as A
mkdir -p "$work/ref"
for i in $(seq 100); do echo "file $i of the tree made alone" >"$work/ref/f$i"; done
cp -r "$work/ref" "$mnt/tree"
mount_as B "$net_prefix-dfs2"
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
for who in A B C; do
  python3 - "$who" "${where[$who]}/excl" "$n" "$work" <<'PY' &
import os, sys, time
who, d, n, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
for _ in range(100):
    if os.path.isdir(d):
        break
    time.sleep(0.1)
open(f"{work}/excl-ready.{who}", "w").close()
while not os.path.exists(f"{work}/excl-go"):
    time.sleep(0.001)
out = []
for i in range(n):
    try:
        fd = os.open(os.path.join(d, f"f{i}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        out.append(f"lost f{i}")
        continue
    except OSError as e:
        out.append(f"error f{i} {e.strerror}")
        continue
    os.write(fd, f"{who} f{i}\n".encode())
    os.close(fd)
    out.append(f"won f{i}")
open(f"{work}/excl-result.{who}", "w").write("\n".join(out) + "\n")
PY
done
release_all excl
wait || true
python3 - "$work" "$n" <<'PY' || fail "the O_EXCL race went wrong (above)"
import sys
work, n = sys.argv[1], int(sys.argv[2])
won, problems = {}, []
for who in "ABC":
    for line in open(f"{work}/excl-result.{who}").read().split("\n"):
        if not line:
            continue
        what, name = line.split()[:2]
        if what == "error":
            problems.append(f"{who}: {line}")
        elif what == "won":
            won.setdefault(name, []).append(who)
names = {f"f{i}" for i in range(n)}
twice = [k for k, v in won.items() if len(v) > 1]
missing = names - set(won)
if twice or missing:
    problems.append(f"{len(twice)} names won more than once, {len(missing)} by nobody")
for p in problems[:10]:
    print(p)
counts = {w: sum(1 for v in won.values() if v[0] == w) for w in "ABC"}
print("won:", counts)
sys.exit(1 if problems else 0)
PY
echo "ok: each of the $n names won exactly once, every loser got EEXIST"

step "4. the three append 300 records each to one file with O_APPEND, at once"
per=300
: >"$mnt/log"
for who in A B C; do
  python3 - "$who" "${where[$who]}/log" "$per" "$work" <<'PY' &
import os, sys, time
who, path, n, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
for _ in range(100):
    if os.path.exists(path):
        break
    time.sleep(0.1)
fd = os.open(path, os.O_WRONLY | os.O_APPEND)
open(f"{work}/append-ready.{who}", "w").close()
while not os.path.exists(f"{work}/append-go"):
    time.sleep(0.001)
for i in range(n):
    os.write(fd, (f"{who} {i:06d} ".ljust(63, who.lower()) + "\n").encode())
os.close(fd)
PY
done
release_all append
wait || true
check_log() {  # check_log PATH: the records are all there, whole, each mount's in order
  python3 - "$1" "$per" <<'PY'
import re, sys
data, n = open(sys.argv[1], "rb").read(), int(sys.argv[2])
problems, seen = [], {w: [] for w in "ABC"}
if len(data) != 3 * n * 64:
    problems.append(f"{len(data)} bytes, not {3 * n * 64}")
for k in range(len(data) // 64):
    rec = data[k * 64:(k + 1) * 64].decode(errors="replace")
    m = re.fullmatch(r"([ABC]) (\d{6}) ([abc]*)\n", rec)
    if not m or set(m.group(3)) - {m.group(1).lower()}:
        problems.append(f"record {k} is torn: {rec!r}")
        continue
    seen[m.group(1)].append(int(m.group(2)))
for who, nums in seen.items():
    if nums != list(range(n)):
        problems.append(f"{who}: {len(nums)} records, in order: {nums == sorted(nums)}")
for p in problems[:10]:
    print(p)
sys.exit(1 if problems else 0)
PY
}
for who in A B C; do check_log "${where[$who]}/log" || fail "the records read on $who are wrong (above)"; done
echo "ok: $((3 * per)) records from the three mounts, none lost or torn, each mount's in order"

step "a fresh mount reads every O_EXCL winner's bytes and the records"
for who in C B A; do stop_mount "${where[$who]}" "${pid[$who]}"; pid[$who]=""; done
mount_as A
bad=0
for who in A B C; do
  for name in $(grep '^won ' "$work/excl-result.$who" | cut -d' ' -f2); do
    [ "$(cat "$mnt/excl/$name")" = "$who $name" ] || bad=$((bad + 1))
  done
done
[ $bad -eq 0 ] || fail "$bad files read other bytes than their winner's"
check_log "$mnt/log" || fail "the records read on a fresh mount are wrong (above)"
echo "PASS"
