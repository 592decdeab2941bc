#!/usr/bin/env bash
# Caching rights across an MDS failover, on two real mounts of one cluster (three MDS
# replicas, default session timeout):
#   - mount A writes files into a directory it created (it owns it: their bytes wait in
#     its kernel's and client's write-behind); then A's client is stopped (SIGSTOP) and the
#     active MDS is killed;
#   - mount B reads A's directory once a new MDS is active. The new MDS does not know
#     yet that A owns it (ownership lives in memory; A re-asserts it when it reconnects),
#     so it must not answer: B waits while A is stopped. After SIGCONT A reconnects, B's
#     read recalls the directory, and B reads every byte A wrote;
#   - again with A stopped for longer than the reconnect phase waits (the grace, 10 s,
#     or the longest lease the previous MDS may have granted, 22.5 s): the new MDS evicts
#     A for not reconnecting and only then answers B (within that wait plus 5 s); after
#     SIGCONT nothing A had buffered reaches the files B read, and A goes on as a new
#     session: the fsync of each file it lost reports EIO once, and the fsync of a new
#     file reports nothing.
source "$(dirname "$0")/lib.sh"

# The reconnect phase waits reconnect_grace_ms (10 s) or, if longer, the longest lease the
# previous MDS may have granted: 3/4 of the session timeout (30 s by default).
wait_s=23
files=12
start_cluster --mds 3
mnt2="$work/mnt2"
trap 'rc=$?; pkill -CONT -f "mount.dfs .* $mnt( |\$)" || true; umount -l "$mnt2" 2>/dev/null || true; cleanup $rc' EXIT
mount_another "$mnt2" "$work/client-b.log"
client_a="$(client_pid "$mnt")"
[ -n "$client_a" ] || fail "no client process for $mnt"

# write_dir DIR TAG: $files files of 256 KiB in DIR on mount A, no fsync; their bytes
# also go to $work/TAG.* for comparison.
write_dir() {
  mkdir "$mnt/$1"
  for i in $(seq $files); do
    head -c 262144 /dev/urandom >"$work/$2.$i"
    cp "$work/$2.$i" "$mnt/$1/f$i"
  done
}

# kill_leader: SIGKILLs the active MDS of rank 0, waits until another one is active and
# prints the killed one's name.
kill_leader() {
  local out victim leader=""
  out="$("$repo/tools/dfs-dev" kill mds-leader --dir "$cluster")" || fail "kill mds-leader: $out"
  victim="$(echo "$out" | sed -n 's/^dfs-dev: the active MDS of rank 0 is \(mds\.[a-z]*\)$/\1/p')"
  [ -n "$victim" ] || fail "could not tell which MDS was killed: $out"
  for _ in $(seq 300); do
    leader="$(dfs_cli status 2>/dev/null | sed -n 's/^ *mds: *rank 0: active \(mds\.[a-z]*\).*/\1/p')"
    [ -n "$leader" ] && [ "$leader" != "$victim" ] && break
    sleep 0.1
  done
  [ -n "$leader" ] && [ "$leader" != "$victim" ] || fail "no new active MDS after killing $victim"
  echo "$victim"
}

# same_bytes DIR TAG: whether DIR (on mount B) holds exactly the files write_dir wrote.
same_bytes() {
  local i
  [ "$(ls "$1" | wc -l)" = "$files" ] || return 1
  for i in $(seq $files); do cmp -s "$1/f$i" "$work/$2.$i" || return 1; done
}
# bytes_seen DIR TAG: "whole" or "differs", for a probe.
bytes_seen() { if same_bytes "$1" "$2"; then echo whole; else echo differs; fi; }

step "A writes into a directory of its own, its client is stopped, the active MDS is killed"
mkdir "$mnt2/b-own" && echo "B's" >"$mnt2/b-own/file"
write_dir a1 first
kill -STOP "$client_a"
first_victim="$(kill_leader)"
step "killed $first_victim; a new MDS is active"

step "B reads A's directory: it waits while A is stopped"
probe first bytes_seen "$mnt2/a1" first
sleep 3
seen="$(probed first)"
[ "$seen" = "<waited>" ] || fail "B's read of A's directory was answered while A was stopped: $seen"
kill -CONT "$client_a"
continued_at=$(date +%s%N)
for _ in $(seq 300); do [ -e "$work/probe.first" ] && break; sleep 0.1; done
seen="$(probed first)"
echo "B's read, answered $((($(date +%s%N) - continued_at) / 1000000)) ms after A went on: $seen"
[ "$seen" = "whole" ] || fail "B did not read A's bytes whole after the failover: $seen"
grep -h "reconnect phase over" "$cluster"/log/mds.*.log | tail -1
cmp -s "$mnt2/b-own/file" <(echo "B's") || fail "B's own file changed"

step "restarting $first_victim; it rejoins as a follower"
"$repo/tools/dfs-dev" start "$first_victim" --dir "$cluster" >/dev/null
sleep 3

step "again, with A stopped past the reconnect phase: it is evicted before B is answered"
write_dir a2 second
kill -STOP "$client_a"
kill_leader >/dev/null
taken_over_at=$(date +%s)
ls "$mnt2/a2" >/dev/null || fail "B cannot list A's directory once A was evicted"
answered_at=$(date +%s)
echo "B answered $((answered_at - taken_over_at)) s after the takeover"
[ $((answered_at - taken_over_at)) -le $((wait_s + 5)) ] ||
  fail "B waited $((answered_at - taken_over_at)) s (the reconnect phase waits $wait_s s)"
grep -q "did not reconnect within" "$cluster"/log/mds.*.log || fail "A was not evicted for not reconnecting"
grep -h "did not reconnect within" "$cluster"/log/mds.*.log | head -1
before="$(cat "$mnt2"/a2/* 2>/dev/null | md5sum)"
kill -CONT "$client_a"
sleep 3
after="$(cat "$mnt2"/a2/* 2>/dev/null | md5sum)"
[ "$before" = "$after" ] || fail "what the evicted A had buffered reached the files after its eviction"

step "A goes on as a new session; what it lost is reported by the fsync of those files only"
# A file made after the eviction has nothing to report: the losses are the files'.
dd if=/dev/null of="$mnt/first-fsync" conv=fsync status=none ||
  fail "A's fsync of a file made after its eviction failed (another file's loss reported?)"
# None of A's files in a2 is lost silently: each is gone (its create never reached the
# MDS), or holds exactly what A wrote, or reports the loss (EIO) to its next fsync, once.
outcomes="$(python3 - "$mnt/a2" "$work/second" "$files" <<'PY'
import errno, os, sys
d, expected, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(1, n + 1):
    try:
        fd = os.open(os.path.join(d, "f%d" % i), os.O_RDONLY)
    except OSError as e:
        print("f%d:%s" % (i, "gone" if e.errno == errno.ENOENT else errno.errorcode[e.errno])); continue
    results = []
    for _ in range(2):
        try:
            os.fsync(fd); results.append("ok")
        except OSError as e:
            results.append(errno.errorcode[e.errno])
    if results == ["ok", "ok"]:
        with open("%s.%d" % (expected, i), "rb") as f:
            want = f.read()
        got = b""
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk: break
            got += chunk
        results = ["whole" if got == want else "differs"]
    os.close(fd)
    print("f%d:%s" % (i, ",".join(results)))
PY
)"
echo "A's files in a2 after its eviction:" $outcomes
lost_files="$(grep -ho "[0-9]* file(s) with unwritten data" "$cluster"/log/client*.log 2>/dev/null | tail -1 | cut -d' ' -f1)"
echo "A's eviction log: ${lost_files:-?} file(s) with unwritten data lost"
for o in $outcomes; do
  case "$o" in
    *:gone | *:whole | *:EIO,ok) ;;
    *) fail "A's file ${o%%:*} after its eviction: ${o#*:} (want gone, whole, or EIO reported once)" ;;
  esac
done
head -c 100000 /dev/urandom >"$work/after"
dd if="$work/after" of="$mnt/after" bs=64k conv=fsync status=none || fail "A cannot write after its eviction"
cmp "$mnt2/after" "$work/after" || fail "B does not read what A wrote as a new session"
echo "PASS"
