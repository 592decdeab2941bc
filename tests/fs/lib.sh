# Shared set-up of the file system tests: a dev cluster with the file system mounted,
# in a private directory, torn down on exit. Sourced by the *_test.sh scripts.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${DFS_BUILD_DIR:-$repo/build}"
export DFS_BUILD_DIR="$build"

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $(date +%T) $*"; }
# A command that stops the script under errexit says which: the script's own line
# (functions and subshells do not inherit the trap, their caller's line is named).
trap 'echo "FAIL: exit status $? at ${BASH_SOURCE[0]##*/}:$LINENO: $BASH_COMMAND" >&2' ERR

[ "$(id -u)" -eq 0 ] || skip "needs root (FUSE mount with allow_other, chown, mknod)"
[ -c /dev/fuse ] || skip "no /dev/fuse"

work="$(mktemp -d /tmp/dfs-fs-test.XXXXXX)"
chmod 0755 "$work"  # non-root test users must reach the mount inside it
cluster="$work/cluster"
mnt="$work/mnt"
# A port range per test run, so parallel tests do not collide: dfs-dev uses P.. (monitors),
# P+10.. (OSDs) and P+100.. (MDS replicas), so ranges are 200 apart. A range is skipped
# when its ports already answer on loopback (another test's daemons) or when its
# simulated-hosts bridge exists (another `--hosts` test, whose daemons are not on loopback;
# dfs-dev names the bridge after the port).
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
range_in_use() {
  local offset
  for offset in 0 1 2 10 11 12 100 101 102; do port_in_use $(($1 + offset)) && return 0; done
  [ -e "/sys/class/net/dfs$1-br" ]
}
# Ranges lie below the kernel's ephemeral port range: a port in it may be the local end
# of any outgoing connection at any moment (the daemons make many), and a daemon that
# wants to listen on it then fails to start ("Address already in use").
ephemeral_start="$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)"
ranges=$(((ephemeral_start - 20000 - 200) / 200))
[ "$ranges" -ge 1 ] || ranges=1
for _ in $(seq 1 50); do
  port=$((20000 + (RANDOM % ranges) * 200))
  range_in_use "$port" || break
done

dump_logs() {
  # First what ends sessions and rights, from every log (a failure's output may be cut
  # short, and the tails below may be all the same warning).
  local f
  for f in "$cluster"/log/*.log; do
    [ -f "$f" ] || continue
    # A log without such lines must not end the cleanup (pipefail, errexit).
    { grep -E "evict|fenced|lapse|not answered a renewal|deposed|lost (the )?lead" "$f" ||
      true; } 2>/dev/null | head -n 8 | sed "s|^|${f##*/}: |"
  done
  dump_blocked
  for f in "$cluster"/log/*.log; do
    [ -f "$f" ] || continue
    echo "---- last lines of $f"
    tail -n 30 "$f"
  done
}

# What is stuck, first (a failing test's output may be cut short): each FUSE connection's
# requests waiting for an answer, and the processes asleep uninterruptibly or naming this
# test's directory (daemons, clients, commands on the mounts), with the kernel stacks of
# their threads that wait in anything but an idle poll, futex or sleep.
dump_blocked() {
  local c pid t stacks
  mountpoint -q /sys/fs/fuse/connections ||
    mount -t fusectl fusectl /sys/fs/fuse/connections 2>/dev/null || true
  for c in /sys/fs/fuse/connections/*; do
    [ -e "$c/waiting" ] && echo "---- fuse connection ${c##*/}: $(cat "$c/waiting") request(s) waiting"
  done
  for pid in $( (ps -eo pid=,stat= | awk '$2 ~ /^D/ {print $1}'; pgrep -f "$work") | sort -un); do
    stacks=""
    for t in /proc/"$pid"/task/[0-9]*; do
      head -n 1 "$t/stack" 2>/dev/null | grep -Eq 'epoll_wait|futex|poll|nanosleep|pipe_read|wait4|^$' &&
        continue
      [ -e "$t/stack" ] || continue
      stacks+="  thread ${t##*/} ($(cat "$t/comm" 2>/dev/null)):"$'\n'
      stacks+="$(sed 's/^\[<0>\] /    /; s/+0x[0-9a-f/x]*//' "$t/stack" 2>/dev/null | head -n 10)"$'\n'
    done
    [ -n "$stacks" ] || continue
    echo "---- process $pid: $(ps -o stat=,args= -p "$pid" 2>/dev/null | cut -c1-150)"
    printf '%s' "$stacks"
  done
}

# unmount_client [MOUNTPOINT]: unmounts MOUNTPOINT ($mnt by default) if mounted, and
# waits for its client to exit (the client logs as it exits, after umount returns).
unmount_client() {
  local m="${1:-$mnt}"
  if mountpoint -q "$m"; then umount "$m"; fi
  for _ in $(seq 100); do
    pgrep -f "mount.dfs .* $m( |\$)" >/dev/null || break
    sleep 0.2
  done
}

# remount_client [MOUNT OPTIONS]: unmounts $mnt and mounts it again (with more mount.dfs
# -o options), so that the client starts cold and the old one has logged its figures.
remount_client() {
  unmount_client
  "$repo/tools/dfs-dev" mount --dir "$cluster" --mount "$mnt" ${1:+--options "$1"} \
    >/dev/null || fail "remount failed"
}

# client_pid MOUNTPOINT: the pid of the client serving MOUNTPOINT (empty if none).
client_pid() { pgrep -f "mount.dfs .* $1( |\$)" | head -1; }

# mount_another MOUNTPOINT LOG [MOUNT OPTIONS]: one more mount of the test's cluster at
# MOUNTPOINT (a second client), logging to LOG.
mount_another() {
  mkdir -p "$1"
  "$repo/tools/dfs-dev" mount --dir "$cluster" --mount "$1" --options "log_file=$2${3:+,$3}" \
    >/dev/null || fail "mounting $1 failed"
  mountpoint -q "$1" || fail "nothing mounted at $1"
}

# wait_exit PID: waits up to 20 s for process PID to exit; fails if it still runs.
wait_exit() {
  for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.2; done
  return 1
}

# stop_mount MOUNTPOINT PID: unmounts MOUNTPOINT and waits up to 20 s for its client PID
# to exit (it flushes what it holds first), then kills it.
stop_mount() {
  if mountpoint -q "$1" 2>/dev/null; then umount "$1" 2>/dev/null || umount -l "$1" || true; fi
  [ -n "$2" ] || return 0
  wait_exit "$2" && return 0
  echo "note: the client of $1 (pid $2) still ran 20 s after its unmount: killed" >&2
  kill -9 "$2" 2>/dev/null || true
}

# release_racers WHAT N: waits (up to 10 s) until N racers of mount_races.py said
# $work/WHAT-ready.*, then lets them go at once.
release_racers() {
  for _ in $(seq 100); do
    [ "$(ls "$work/$1-ready."* 2>/dev/null | wc -l)" -ge "$2" ] && break
    sleep 0.1
  done
  touch "$work/$1-go"
}

# probe NAME CMD...: runs CMD in the background; its output, or "<failed>" when it
# fails, goes to $work/probe.NAME once it ends; its pid joins $probes. For looking at a
# mount whose client may not answer: a request the client has taken from the kernel is
# waited out even through SIGKILL, until the client answers or gives up.
probes=()
probe() {
  local name="$1"
  shift
  { "$@" 2>/dev/null || echo "<failed>"; } >"$work/probe.$name.tmp" &&
    mv "$work/probe.$name.tmp" "$work/probe.$name" &
  probes+=($!)
}
# probed NAME: what the probe answered, or "<waited>" while it waits.
probed() { if [ -e "$work/probe.$1" ]; then cat "$work/probe.$1"; else echo "<waited>"; fi; }

# fill_names DIR COUNT: COUNT empty files in DIR with names long enough that one listing
# takes the kernel many readdir calls.
fill_names() {
  (cd "$1" && seq -f "stable-name-long-enough-to-fill-pages-%04g" 0 $(($2 - 1)) | xargs touch)
}

# http_get URL: the page at URL on stdout (daemons' Prometheus metrics).
http_get() {
  python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$1"
}

# dfs_cli ARGS...: the dfs command line against the test's cluster.
dfs_cli() { "$build/tools/dfs/dfs" -c "$cluster/dfs.conf" --timeout 10 "$@"; }
# active_mds: the daemon the map shows active for rank 0 (mds.a, mds.b...), or nothing
# while the monitors cannot say.
active_mds() {
  { dfs_cli status --format json 2>/dev/null || true; } |
    sed -n 's/^ *{"name": "\(mds\.[a-z0-9]*\)".*"rank": 0,.*"active": true.*/\1/p' | sed -n 1p
}

cleanup() {  # cleanup [EXIT_STATUS]: as an EXIT trap, the script's own status
  local rc=${1:-$?}
  [ $rc -ne 0 ] && [ $rc -ne 77 ] && dump_logs
  "$repo/tools/dfs-dev" down --dir "$cluster" >/dev/null 2>&1 || true
  # Every dfs mount under the test's directory, from the mount table: `mountpoint`
  # asks the file system, and a client that answers with an error (its cluster just
  # stopped, its session evicted) made it say "not mounted", which left the mount for
  # rm to fail on.
  local m
  for m in $(awk -v w="$work/" '$3 == "fuse.dfs" && index($2, w) == 1 { print $2 }' /proc/self/mounts); do
    umount -l "$m" 2>/dev/null || true
  done
  # A client unmounted with its cluster gone retries for a few op_timeouts before it
  # exits; a test leaves nothing running behind it.
  pkill -f "mount.dfs .* $mnt( |\$)" 2>/dev/null || true
  if [ -z "${DFS_KEEP_TEST_DIR:-}" ]; then rm -rf "$work"; else echo "kept $work"; fi
  exit $rc
}
trap cleanup EXIT

start_cluster() {  # start_cluster [dfs-dev up options...]
  step "starting a dev cluster in $cluster (ports from $port), mount at $mnt"
  "$repo/tools/dfs-dev" up --no-build --dir "$cluster" --port "$port" --mount "$mnt" "$@" \
    >"$work/up.log" 2>&1 ||
    { cat "$work/up.log"; fail "dfs-dev up failed"; }
  mountpoint -q "$mnt" || fail "nothing mounted at $mnt"
}

gen_tree() {  # gen_tree DEST SCALE: the lxc-shaped tree of tools/bench/gen_tree, seed 7
  python3 "$repo/tools/bench/gen_tree" "$1" --scale "$2" --seed 7 --quiet
}

# Prints differences between two trees (contents, modes, owners, times, links, xattrs,
# devices); empty output means identical.
tree_diff() {
  rsync -aHAXn --numeric-ids --checksum --itemize-changes --delete "$1/" "$2/"
}
