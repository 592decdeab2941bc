#!/usr/bin/env bash
# A mount cut off the network stops answering from its caches before the MDS can evict
# it, so that it never shows what another mount has changed since. On three hosts
# dfs1..dfs3 (network namespaces), session timeout 5 s:
#   - mount A, its client in the network of a host that runs neither the active MDS nor
#     the leading monitor, is alone and so caches exclusively: it writes a file, syncs,
#     reads it (its kernel keeps the pages and the attributes under the long timeouts)
#     and looks up a name that does not exist (a negative entry, kept as long);
#   - that host is cut off the network. Mount B, from this host, mounts: its session
#     open recalls A's right, which A cannot answer, so after the session timeout the
#     MDS evicts and fences A and B's mount completes. B rewrites the file and creates
#     the missing name;
#   - on A, still cut off, neither the old bytes, nor the old size, nor "no such file"
#     for the new name come back: A's lease (three quarters of the session timeout
#     from its last answered renewal) lapsed before the MDS could evict it, and A made
#     its kernel drop what it cached. A read there fails or waits instead;
#   - the host is healed: A learns it was evicted, goes on as a new session, and reads
#     B's bytes.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/netns_lib.sh"

timeout_ms=5000
start_three_hosts --session-timeout "$timeout_ms"
mnt_a="$work/mnt-a"
mnt_b="$work/mnt-b"
pid_a="" pid_b="" cut_host=""
finish() {
  local rc=$?
  [ -z "$cut_host" ] || dev heal "$cut_host" >/dev/null 2>&1 || true
  stop_mount "$mnt_b" "$pid_b"
  stop_mount "$mnt_a" "$pid_a"
  cleanup $rc
}
trap finish EXIT
wait_health OK 60 || fail "the cluster did not become healthy"
busy="$(dev host mds-leader) $(dev host mon-leader)"
for h in dfs1 dfs2 dfs3; do [[ " $busy " == *" $h "* ]] || cut_host_name="$h"; done
[ -n "${cut_host_name:-}" ] || fail "no host free of the active MDS and the leading monitor"

step "A, on host $cut_host_name, writes, reads and looks up alone"
mount_from_host "$mnt_a" "$cluster/log/client-a.log" "$cut_host_name"
pid_a="$(client_pid "$mnt_a")"
old="old bytes of f, written on A"
echo "$old" >"$mnt_a/f"
sync -f "$mnt_a/f"
[ "$(cat "$mnt_a/f")" = "$old" ] || fail "A does not read back what it wrote"
[ -e "$mnt_a/later" ] && fail "'later' exists before anyone made it"
grep -q "exclusive caching granted" "$cluster/log/client-a.log" ||
  fail "A, alone, was not granted exclusive caching"

step "$cut_host_name is cut off; B mounts (A is evicted) and changes the file"
cut_host="$cut_host_name"
dev cut "$cut_host" >/dev/null || fail "dfs-dev cut $cut_host failed"
cut_at=$(date +%s%N)
mount_from_host "$mnt_b" "$cluster/log/client-b.log"
pid_b="$(client_pid "$mnt_b")"
echo "B mounted $((($(date +%s%N) - cut_at) / 1000000)) ms after the cut"
new="new bytes of f, written on B after A was evicted, longer than the old"
echo "$new" >"$mnt_b/f"
echo made >"$mnt_b/later"
grep -h "evict" "$cluster"/log/mds.*.log | tail -2

step "A, still cut off, answers none of it from its caches"
grep -q "stops caching and deferring" "$cluster/log/client-a.log" ||
  fail "A's log does not say its lease lapsed"
probe bytes cat "$mnt_a/f"
probe size stat -c %s "$mnt_a/f"
probe later stat -c %n "$mnt_a/later"
sleep 8
bytes="$(probed bytes)" size="$(probed size)" later="$(probed later)"
echo "8 s later, A's read: '$bytes'; its size: $size; 'later': $later"
[ "$bytes" != "$old" ] || fail "A, cut off and evicted, still read the old bytes from its cache"
[ "$size" != "$((${#old} + 1))" ] || fail "A, cut off and evicted, still reports the old size $size"
[ "$later" != "<failed>" ] || fail "A, cut off, still says 'later' does not exist"

step "$cut_host is healed: A goes on as a new session and reads B's bytes"
dev heal "$cut_host" >/dev/null || fail "dfs-dev heal $cut_host failed"
cut_host=""
for _ in $(seq 60); do
  [ "$(timeout -s KILL 8 cat "$mnt_a/f" 2>/dev/null)" = "$new" ] && break
  sleep 1
done
[ "$(cat "$mnt_a/f")" = "$new" ] || fail "A does not read B's bytes after the heal"
for p in "${probes[@]}"; do wait "$p" || true; done
echo "the probes, once answered: '$(probed bytes)'; $(probed size); $(probed later)"
for p in bytes size; do
  [ "$(probed $p)" != "$(probed $p | grep -F -x -e "$old" -e "$((${#old} + 1))")" ] ||
    fail "A's $p probe ended with what A had cached: $(probed $p)"
done
[ "$(cat "$mnt_a/later")" = made ] || fail "A does not see B's new file after the heal"
grep -h "was evicted by the MDS" "$cluster/log/client-a.log" | tail -1
echo "PASS"
