#!/usr/bin/env bash
# A random-operation stress from two mounts (A and B) of one file system into one shared
# directory: for DFS_STRESS_SECONDS (60 by default) a stress_ops.py worker on each mount
# creates, writes, appends to, truncates, renames (also over existing names), unlinks,
# chmods, stats and reads files, makes, lists, renames and removes directories, all on
# a small shared pool of names, so that the two collide all the time. Then:
#   1. neither worker met an EIO or any other errno that the races do not explain
#      (ENOENT, EEXIST, ENOTEMPTY, ENOTDIR, EISDIR; ESTALE from a rename, see
#      stress_ops.py), nor an error on an open descriptor,
#      nor an operation that hung; neither client died;
#   2. after both stopped and synced, A's and B's listings of the directory (names,
#      types, modes, sizes, sha256 of the files) agree within 5 s;
#   3. both unmounted, A mounted again lists exactly that agreed tree.
# A failure of 1 (other than a dead client or a hang) or of 2 does not stop the test: it
# goes on to the next checks and fails at the end, naming every failed check. The
# distinct warnings and errors of both clients' logs are printed at the end.
# DFS_STRESS_SEED=S replays a run (each worker's seed is derived from it, both printed;
# the sequence of operations depends on the seed alone, their interleaving does not).
source "$(dirname "$0")/lib.sh"

seconds="${DFS_STRESS_SECONDS:-60}"
base_seed="${DFS_STRESS_SEED:-$(((RANDOM << 15) | RANDOM))}"
seed_a=$((base_seed * 2))
seed_b=$((base_seed * 2 + 1))
echo "DFS_STRESS_SEED=$base_seed (worker A: --seed $seed_a, worker B: --seed $seed_b), $seconds s"
ops="$(dirname "$0")/stress_ops.py"

start_cluster
mnt2="$work/mnt2"
mkdir -p "$mnt2"
log_b="$cluster/log/client-b.log"
client_a="$(client_pid "$mnt")"
client_b=""
helpers=()

mount_b() {
  mount_another "$mnt2" "$log_b"
  client_b="$(client_pid "$mnt2")"
}
finish() {
  local rc=$?
  for p in "${helpers[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  stop_mount "$mnt2" "$client_b"
  stop_mount "$mnt" "$client_a"
  [ $rc -eq 77 ] || client_log_summary
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
    echo "seed: DFS_STRESS_SEED=$base_seed; cluster: $cluster; logs: $cluster/log/" \
      "(mount A: client.log, mount B: client-b.log); DFS_KEEP_TEST_DIR=1 keeps them" >&2
  fi
  cleanup $rc
}
trap finish EXIT

problems=()
# problem TEXT: records a failed check; the test goes on and fails at the end.
problem() { echo "PROBLEM: $*" >&2; problems+=("$*"); }
# client_log_summary: the distinct warnings and errors of both clients' logs, counted
# (timestamps, thread ids and inode numbers left out).
client_log_summary() {
  local f
  for f in "$cluster/log/client.log" "$log_b"; do
    [ -f "$f" ] || continue
    echo "warnings and errors in $f:"
    { grep -E '^[0-9-]+ [0-9:.]+ [^ ]+ (warning|error) ' "$f" || true; } |
      sed -E 's/^[0-9-]+ [0-9:.]+ [^ ]+ //; s/\[[0-9]+\] //; s/0x[0-9a-f]+/0x../g' |
      sort | uniq -c | sort -rn | head -15
  done
}

# listing DIR OUT: stress_ops.py's listing of DIR into OUT (fails the test if it fails).
listing() {
  python3 "$ops" --list "$1" >"$2" 2>"$2.err" ||
    { cat "$2.err" >&2; fail "listing $1 failed"; }
}
# summary FILE...: the workers' counts, one line per operation, then the errnos.
summary() {
  python3 - "$@" <<'PY'
import json, sys
for path in sys.argv[1:]:
    s = json.load(open(path))
    print(f"worker {s['who']} (--seed {s['seed']}): {s['ops']} ops; errnos: "
          + (", ".join(f"{k} {v}" for k, v in s["errnos"].items()) or "none")
          + f"; unexpected: {len(s['unexpected'])}")
    for op, outcomes in sorted(s["per_op"].items()):
        print(f"  {op:12s} " + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
PY
}

mount_b
d="stress"
mkdir "$mnt/$d"
sync -f "$mnt/$d"
for _ in $(seq 100); do [ -d "$mnt2/$d" ] && break; sleep 0.1; done
[ -d "$mnt2/$d" ] || fail "B does not see the directory $d 10 s after A made it"

step "1. two workers, A in $mnt/$d and B in $mnt2/$d, for $seconds s"
declare -A worker_pid
for who in A B; do
  if [ $who = A ]; then root="$mnt/$d" seed=$seed_a; else root="$mnt2/$d" seed=$seed_b; fi
  python3 "$ops" --root "$root" --seed "$seed" --seconds "$seconds" --who $who \
    --out "$work/stress-$who.json" >"$work/stress-$who.out" 2>&1 &
  worker_pid[$who]=$!
  helpers+=($!)
done
deadline=$((SECONDS + ${seconds%.*} + 60))
died=""
while kill -0 "${worker_pid[A]}" 2>/dev/null || kill -0 "${worker_pid[B]}" 2>/dev/null; do
  [ -z "$died" ] && ! kill -0 "$client_a" 2>/dev/null && died="A" && echo "client A (pid $client_a) died"
  [ -z "$died" ] && ! kill -0 "$client_b" 2>/dev/null && died="B" && echo "client B (pid $client_b) died"
  if [ $SECONDS -gt $deadline ]; then
    for who in A B; do
      kill -0 "${worker_pid[$who]}" 2>/dev/null &&
        echo "worker $who still running; its operation in progress: $(cat "$work/stress-$who.json.cur" 2>/dev/null)"
    done
    fail "a worker hung (still running 60 s after its $seconds s)"
  fi
  sleep 0.5
done
bad=""
for who in A B; do
  wait "${worker_pid[$who]}" || bad="$bad $who"
  cat "$work/stress-$who.out"
done
for who in A B; do
  [ -f "$work/stress-$who.json" ] || fail "worker $who wrote no summary"
done
summary "$work/stress-A.json" "$work/stress-B.json"
died=""
kill -0 "$client_a" 2>/dev/null || died="$died A"
kill -0 "$client_b" 2>/dev/null || died="$died B"
[ -z "$died" ] || fail "client process of mount(s)$died died during the stress (or right after)"
mountpoint -q "$mnt" && mountpoint -q "$mnt2" || fail "a mount is gone after the stress"
if [ -n "$bad" ]; then
  for who in $bad; do
    python3 - "$work/stress-$who.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"worker {s['who']}: {len(s['unexpected'])} unexpected errors; the first ones:")
print("\n".join("  " + l for l in s["unexpected"][:10]))
PY
  done
  problem "1. worker(s)$bad met unexpected errors (EIO, EINVAL, ESTALE, ... or errors on open descriptors; see above)"
else
  echo "ok: no EIO nor unexpected errno on either mount, both clients alive"
fi

step "2. both synced, A's and B's listings of $d agree"
sync -f "$mnt/$d" || problem "2. sync (syncfs) on A failed"
sync -f "$mnt2/$d" || problem "2. sync (syncfs) on B failed"
agreed=""
for i in $(seq 25); do
  listing "$mnt/$d" "$work/list-A"
  listing "$mnt2/$d" "$work/list-B"
  if cmp -s "$work/list-A" "$work/list-B"; then agreed=1; break; fi
  sleep 0.2
done
if [ -z "$agreed" ]; then
  diff "$work/list-A" "$work/list-B" | head -30
  problem "2. A's and B's listings of $d still differ 5 s after the stress (diff A B above)"
else
  [ $i -eq 1 ] || echo "(they agreed after $i tries)"
  nfiles=$(grep -c '^f ' "$work/list-A" || true)
  ndirs=$(grep -c '^d ' "$work/list-A" || true)
  echo "ok: A and B agree on $nfiles files and $ndirs directories ($(awk '$1 == "f" { s += $4 } END { print s + 0 }' "$work/list-A") bytes)"
fi

step "3. both unmounted, A mounted again lists the agreed tree"
stop_mount "$mnt2" "$client_b"
client_b=""
stop_mount "$mnt" "$client_a"
remount_client
client_a="$(client_pid "$mnt")"
listing "$mnt/$d" "$work/list-remount"
if cmp -s "$work/list-A" "$work/list-remount"; then
  if [ -n "$agreed" ]; then echo "ok: A, remounted, lists the agreed tree"
  else echo "A, remounted, lists what A listed before (B's listing differed)"; fi
elif [ -z "$agreed" ] && cmp -s "$work/list-B" "$work/list-remount"; then
  echo "A, remounted, lists what B listed before (A's listing differed)"
else
  diff "$work/list-A" "$work/list-remount" | head -30
  problem "3. A, remounted, lists another tree than the one A${agreed:+ and B agreed on} listed before the unmount (diff before after above)"
fi
if [ ${#problems[@]} -gt 0 ]; then
  fail "$(printf '%s; ' "${problems[@]}")seed DFS_STRESS_SEED=$base_seed"
fi
echo "PASS"
