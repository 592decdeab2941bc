#!/usr/bin/env bash
# flock(2) and fcntl(2) locks hold across mounts: three mounts of one cluster (three MDS
# replicas), each lock going to the MDS.
#   - a counter file on the file system, incremented 1,000 times by a process on each
#     mount (each reading and rewriting it through its own mount, under an exclusive lock
#     of another file), ends at exactly 3,000, with flock and again with fcntl: the lock
#     keeps the increments apart, and close-to-open makes each one see the last;
#   - F_GETLK on one mount reports the write lock a process on another holds, and its pid;
#   - a signal ends a wait for a lock another mount holds (the wait is cancelled at
#     the MDS: the lock still goes to the next waiter, not to the interrupted one);
#   - a SIGKILLed holder's locks are freed: a waiter on another mount gets the lock;
#   - locks survive an MDS failover: the active replica is killed while a process on one
#     mount holds a lock; once another replica has taken over and the holder's mount has
#     re-asserted it, F_GETLK on another mount still reports it;
#   - an evicted mount's locks are freed: its client stopped (SIGSTOP), a waiter on
#     another mount gets the lock within the session timeout plus 5 s.
source "$(dirname "$0")/lib.sh"

timeout_ms=5000
start_cluster --session-timeout "$timeout_ms"
helper="$repo/tests/fs/locks_helper.py"
mnt2="$work/mnt2"
mnt3="$work/mnt3"
for m in "$mnt2" "$mnt3"; do
  mkdir -p "$m"
  "$repo/tools/dfs-dev" mount --dir "$cluster" --mount "$m" >/dev/null || fail "mounting $m failed"
done
holders=()
finish() {
  local rc=$?
  for p in "${holders[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  pkill -CONT -f "mount.dfs .* $mnt( |\$)" 2>/dev/null || true
  for m in "$mnt2" "$mnt3"; do umount -l "$m" 2>/dev/null || true; done
  cleanup $rc
}
trap finish EXIT

# start_holder KIND LOCKFILE: a process that takes an exclusive lock and keeps it; its
# pid in $holder once it holds the lock.
start_holder() {
  local ready="$work/ready.$RANDOM"
  python3 "$helper" hold "$1" "$2" "$ready" &
  holder=$!
  holders+=("$holder")
  for _ in $(seq 100); do [ -e "$ready" ] && return 0; sleep 0.1; done
  fail "the $1 holder on $2 never got its lock"
}

touch "$mnt/lock"
for m in "$mnt2" "$mnt3"; do
  for _ in $(seq 50); do [ -e "$m/lock" ] && break; sleep 0.1; done
done

for kind in flock fcntl; do
  step "three mounts increment a counter on the file system 1,000 times each under $kind"
  echo 0 >"$mnt/counter-$kind"
  started=$(date +%s.%N)
  pids=()
  for m in "$mnt" "$mnt2" "$mnt3"; do
    python3 "$helper" count "$kind" "$m/lock" "$m/counter-$kind" 1000 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || fail "a $kind counter process failed"; done
  echo "3,000 increments in $(echo "$(date +%s.%N) - $started" | bc) s"
  for m in "$mnt" "$mnt2" "$mnt3"; do
    [ "$(cat "$m/counter-$kind")" = 3000 ] ||
      fail "under $kind the counter read on $m ended at $(cat "$m/counter-$kind"), not 3000"
  done
done

step "F_GETLK on mount B reports the write lock a process on mount A holds"
start_holder fcntl "$mnt/lock"
fcntl_holder=$holder
answer="$(python3 "$helper" getlk "$mnt2/lock")"
echo "F_GETLK on B: $answer (holder pid $fcntl_holder)"
[ "$answer" = "write $fcntl_holder" ] ||
  fail "F_GETLK on B answered '$answer', not 'write $fcntl_holder'"

step "a signal ends a wait for a lock held on another mount"
start_holder flock "$mnt/lock"
for kind in fcntl flock; do
  answer="$(python3 "$helper" alarm "$kind" "$mnt2/lock")"
  echo "$kind on B: $answer"
  case "$answer" in interrupted*) ;; *) fail "the $kind wait on B was not interrupted: $answer" ;; esac
done
kill -9 "$holder"

step "a SIGKILLed holder's lock goes to a waiter on another mount"
python3 "$helper" wait fcntl "$mnt3/lock" >"$work/waited1" &
waiter=$!
sleep 1
kill -0 "$waiter" 2>/dev/null || fail "the waiter on C got the lock while A held it"
kill -9 "$fcntl_holder"
for _ in $(seq 100); do kill -0 "$waiter" 2>/dev/null || break; sleep 0.1; done
kill -0 "$waiter" 2>/dev/null && fail "the waiter on C did not get the lock within 10 s of the kill"
wait "$waiter" || fail "the waiter on C failed"
echo "C waited $(cat "$work/waited1") s"

step "a held lock survives an MDS failover"
start_holder fcntl "$mnt2/lock"
"$repo/tools/dfs-dev" kill mds-leader --dir "$cluster" || fail "killing the MDS leader failed"
# Any request makes the mounts follow the map to the new active replica; the holder's
# mount re-asserts its locks on the way. F_GETLK waits until the reconnect phase is
# over (every mount back, the holder's locks re-asserted), or the grace.
ls "$mnt2" "$mnt3" >/dev/null || fail "the mounts did not survive the failover"
getlk_start=$(date +%s%N)
answer="$(python3 "$helper" getlk "$mnt3/lock")"
getlk_ms=$((($(date +%s%N) - getlk_start) / 1000000))
echo "F_GETLK on C after the failover: $answer (holder pid $holder on B), answered in $getlk_ms ms"
[ "$answer" = "write $holder" ] || fail "after the failover F_GETLK on C answered '$answer'"
grep -h "re-asserted" "$cluster"/log/client*.log | tail -1
kill -9 "$holder"

step "an evicted mount's lock goes to a waiter on another mount"
start_holder flock "$mnt/lock"
python3 "$helper" wait flock "$mnt2/lock" >"$work/waited2" &
waiter=$!
sleep 1
kill -0 "$waiter" 2>/dev/null || fail "the waiter on B got the flock while A held it"
client_a="$(pgrep -f "mount.dfs .* $mnt( |\$)" | head -1)"
kill -STOP "$client_a"
for _ in $(seq $((timeout_ms / 100 + 50))); do kill -0 "$waiter" 2>/dev/null || break; sleep 0.1; done
kill -0 "$waiter" 2>/dev/null &&
  fail "the waiter on B did not get the flock within the session timeout plus 5 s"
wait "$waiter" || fail "the waiter on B failed"
echo "B waited $(cat "$work/waited2") s for the evicted holder's flock"
kill -CONT "$client_a"
echo "PASS"
