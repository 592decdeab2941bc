#!/usr/bin/env bash
# Boot order: a mount from /etc/fstab at boot may run before any monitor is up.
#  1. mount.dfs started while every daemon is down waits for the monitors and succeeds
#     once they come up, within its mount_timeout;
#  2. with no monitor ever up it fails after mount_timeout with one clear line, and
#     leaves nothing mounted and no process behind;
#  3. umount of a mount whose cluster has gone finishes (no `umount -l`), and the
#     client process exits soon after (a shutdown never waits on a dead cluster);
#  4. a stop signal to a client whose cluster has gone, with a change still deferred
#     (a create in a directory it was given), ends it within 5 s and unmounts.
source "$(dirname "$0")/lib.sh"

# alive PID: the process runs (an exited one may stay a zombie until it is reaped).
alive() {
  local state
  state="$(ps -o stat= -p "$1" 2>/dev/null)" && [ "${state:0:1}" != Z ]
}

start_cluster --mds 1
umount "$mnt"
"$repo/tools/dfs-dev" down --dir "$cluster" >/dev/null
fstab_options="_netdev,name=admin,conf=$cluster/dfs.conf,log_file=$cluster/log/client.log"
source_text="127.0.0.1:$port:/"

step "1. mount.dfs first, the cluster 8 s later"
started=$EPOCHREALTIME
"$build/client-fuse/mount.dfs" "$source_text" "$mnt" -o "$fstab_options,mount_timeout=60" \
  >"$work/mount1.out" 2>&1 &
mount_pid=$!
sleep 8
kill -0 "$mount_pid" 2>/dev/null || { cat "$work/mount1.out"; fail "mount.dfs gave up before the monitors came up"; }
"$repo/tools/dfs-dev" up --no-build --no-mount --dir "$cluster" --port "$port" --mds 1 \
  >"$work/up2.log" 2>&1 || { cat "$work/up2.log"; fail "restarting the cluster failed"; }
wait "$mount_pid" || { cat "$work/mount1.out"; fail "mount.dfs failed once the cluster was up"; }
took="$(echo "$EPOCHREALTIME - $started" | bc)"
mountpoint -q "$mnt" || fail "mount.dfs succeeded but nothing is mounted"
echo "booted" >"$mnt/boot-order" && [ "$(cat "$mnt/boot-order")" = booted ] ||
  fail "the late mount does not work"
printf 'mounted %.1f s after mount.dfs started\n' "$took"

step "3. umount with the whole cluster gone"
client_pid="$(pgrep -f "mount.dfs $source_text $mnt" | head -1 || true)"
for n in mds.a osd.0 osd.1 osd.2 mon.a mon.b mon.c; do
  "$repo/tools/dfs-dev" kill "$n" --dir "$cluster" >/dev/null || true
done
started=$EPOCHREALTIME
timeout 30 umount "$mnt" || fail "umount of a mount whose cluster is gone did not finish in 30 s"
printf 'umount took %.1f s\n' "$(echo "$EPOCHREALTIME - $started" | bc)"
mountpoint -q "$mnt" && fail "still mounted after umount"
if [ -n "$client_pid" ]; then
  for _ in $(seq 1 300); do alive "$client_pid" || break; sleep 0.1; done
  # What a shutdown does to what is left of a mount unit: SIGTERM.
  if alive "$client_pid"; then
    kill -TERM "$client_pid"
    for _ in $(seq 1 50); do alive "$client_pid" || break; sleep 0.1; done
    alive "$client_pid" && fail "the client (pid $client_pid) outlived umount and SIGTERM"
    echo "the client exited on SIGTERM after umount"
  else
    echo "the client exited by itself after umount"
  fi
fi

step "2. no monitor ever comes up: mount_timeout=5"
started=$(date +%s)
if "$build/client-fuse/mount.dfs" "$source_text" "$mnt" -o "$fstab_options,mount_timeout=5" \
  >"$work/mount2.out" 2>&1; then
  fail "mount.dfs succeeded with no cluster"
fi
took=$(($(date +%s) - started))
cat "$work/mount2.out"
[ "$took" -le 30 ] || fail "mount.dfs took ${took}s to give up with mount_timeout=5"
[ "$(wc -l <"$work/mount2.out")" -eq 1 ] || fail "expected one line from mount.dfs"
grep -q "^mount.dfs: .*127.0.0.1:$port" "$work/mount2.out" ||
  fail "the line does not name the monitors it tried"
mountpoint -q "$mnt" && fail "something is mounted after a failed mount"
sleep 1
pgrep -f "mount.dfs $source_text $mnt" && fail "a client process is left after a failed mount"

step "4. SIGTERM to a mounted client whose cluster has gone"
"$repo/tools/dfs-dev" up --no-build --no-mount --dir "$cluster" --port "$port" --mds 1 \
  >"$work/up4.log" 2>&1 || { cat "$work/up4.log"; fail "restarting the cluster failed"; }
"$build/client-fuse/mount.dfs" "$source_text" "$mnt" -o "$fstab_options" ||
  fail "mount.dfs failed with the cluster up"
client_pid="$(pgrep -f "mount.dfs $source_text $mnt" | head -1)"
mkdir "$mnt/stop" && echo "held" >"$mnt/stop/one" && echo "held" >"$mnt/stop/two" ||
  fail "writing before the stop failed"
for n in mds.a osd.0 osd.1 osd.2 mon.a mon.b mon.c; do
  "$repo/tools/dfs-dev" kill "$n" --dir "$cluster" >/dev/null || true
done
started=$EPOCHREALTIME
kill -TERM "$client_pid"
for _ in $(seq 1 50); do alive "$client_pid" || break; sleep 0.1; done
alive "$client_pid" && fail "the client (pid $client_pid) still runs 5 s after SIGTERM"
printf 'the client exited %.1f s after SIGTERM\n' "$(echo "$EPOCHREALTIME - $started" | bc)"
mountpoint -q "$mnt" && fail "still mounted after the client stopped"
echo "PASS"
