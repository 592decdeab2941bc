#!/usr/bin/env bash
# Write-behind of object data (client-fuse/libdfs/write_behind.cc), on a real mount: a
# file's page-cache writes are acknowledged before the OSDs have them, and what that must
# not change still holds:
#   - a read right after the close (caches dropped) sees the new bytes;
#   - an mtime set right after the close (rsync's utimensat) is the one the file keeps;
#   - fsync returns only once the data is on the OSDs: after fsync, SIGKILL of the client
#     loses nothing;
#   - with every OSD down, write and close still return, and fsync fails (EIO) within
#     op_timeout instead of claiming the data is safe; the file's next fsync after the
#     OSDs are back succeeds and the file reads back whole;
#   - a file written with holes (rsync -S: short runs the kernel writes back one by one,
#     joined into fewer writes across the holes) reads back whole;
#   - the unmount log counts the writes acknowledged early, and those that joined one.
source "$(dirname "$0")/lib.sh"
timeout_s=4

start_cluster --mds 1
mount_opts="name=admin,conf=$cluster/dfs.conf,log_file=$cluster/log/client.log,op_timeout=$timeout_s"
# remount [MORE OPTIONS]
remount() {
  unmount_client
  "$build/client-fuse/mount.dfs" "127.0.0.1:$port:/" "$mnt" -o "$mount_opts${1:+,$1}" ||
    fail "mount.dfs failed"
}
remount
head -c $((3 * 1024 * 1024 + 12345)) /dev/urandom >"$work/big"
want="$(sha256sum <"$work/big")"

step "a read right after the close (kernel caches dropped) sees the new bytes"
for i in 1 2 3 4 5; do
  cp "$work/big" "$mnt/read$i"
  echo 3 >/proc/sys/vm/drop_caches
  [ "$(sha256sum <"$mnt/read$i")" = "$want" ] || fail "read$i reads back different bytes"
done

step "an mtime set right after the close is the one the file keeps"
for i in 1 2 3 4 5; do
  cp "$work/big" "$mnt/timed$i"
  touch -m -d "2001-02-03 04:05:0$i" "$mnt/timed$i"
done

step "fsync'd data survives SIGKILL of the client"
cp "$work/big" "$mnt/synced"
python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$mnt/synced" ||
  fail "fsync failed"
pkill -KILL -f "mount.dfs .* $mnt( |\$)" || fail "no client to kill"
umount -l "$mnt" 2>/dev/null || true
# The killed mount held exclusive caching: the new one's session waits until the MDS has
# evicted it for not answering the recall (the session timeout, 30 s, the same as the
# default mount_timeout).
remount mount_timeout=90
[ "$(sha256sum <"$mnt/synced")" = "$want" ] || fail "the fsync'd file differs after the client was killed"
for i in 1 2 3 4 5; do
  got="$(stat -c %y "$mnt/timed$i")"
  [[ "$got" == "2001-02-03 04:05:0$i"* ]] || fail "timed$i has mtime $got after a remount"
  [ "$(sha256sum <"$mnt/timed$i")" = "$want" ] || fail "timed$i reads back different bytes"
done

step "with every OSD down, the write returns and fsync fails within op_timeout"
for n in osd.0 osd.1 osd.2; do "$repo/tools/dfs-dev" kill "$n" --dir "$cluster" >/dev/null; done
timeout 60 cp "$work/big" "$mnt/away" || fail "writing with the OSDs down did not return"
started=$(date +%s)
fsync_away() {
  timeout 60 python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$mnt/away"
}
err="$(fsync_away 2>&1)" && fail "fsync succeeded with every OSD down"
took=$(($(date +%s) - started))
echo "fsync failed after ${took}s: $(echo "$err" | tail -1)"
[[ "$err" == *"Input/output error"* ]] || fail "expected EIO from fsync, got: $err"
[ "$took" -le $((timeout_s * 4 + 10)) ] || fail "fsync took ${took}s, far past op_timeout ${timeout_s}s"

step "the OSDs back: the file is written again, fsync'd, and reads back whole"
for n in osd.0 osd.1 osd.2; do
  "$repo/tools/dfs-dev" start "$n" --dir "$cluster" >/dev/null || fail "restarting $n failed"
done
ok=""
for _ in $(seq 1 60); do
  if cp "$work/big" "$mnt/away" 2>/dev/null && fsync_away 2>/dev/null; then ok=1; break; fi
  sleep 1
done
[ -n "$ok" ] || fail "writing and fsync did not work within 60 s of the OSDs' restart"
echo 3 >/proc/sys/vm/drop_caches
[ "$(sha256sum <"$mnt/away")" = "$want" ] || fail "the rewritten file reads back different bytes"

step "a file written with holes (rsync -S) reads back whole"
python3 - "$work/holes" <<'PY'
import random, sys
r = random.Random(7)
with open(sys.argv[1], "wb") as f:
    for _ in range(300):
        f.write(r.randbytes(r.choice([100, 3000, 4096, 9000, 30000])))
        f.write(bytes(r.choice([0, 4096, 8192, 20000, 70000])))
PY
for i in 1 2 3; do
  rsync -S "$work/holes" "$mnt/holes$i" || fail "rsync -S failed"
done
echo 3 >/proc/sys/vm/drop_caches
for i in 1 2 3; do
  cmp "$work/holes" "$mnt/holes$i" || fail "holes$i, written with holes, reads back different bytes"
done

step "unmount: the client counts the writes it acknowledged early, and those that joined one"
remount
joined="$(grep -o 'writes that joined one across a hole: [0-9]*' "$cluster/log/client.log" |
  tail -1 | grep -o '[0-9]*$')"
echo "writes that joined one across a hole: ${joined:-none}"
[ "${joined:-0}" -gt 0 ] || fail "no write of the files written with holes joined another"
line="$(grep -o 'object writes acknowledged before the OSDs had them: [0-9]*, of them failed: [0-9]*' \
  "$cluster/log/client.log" | tail -1)"
echo "${line:-no line}"
early="$(echo "$line" | sed -n 's/.*had them: \([0-9]*\),.*/\1/p')"
failed="$(echo "$line" | grep -o '[0-9]*$')"
[ "${early:-0}" -gt 0 ] || fail "no write was acknowledged early"
[ "${failed:-0}" -gt 0 ] || fail "no early-acknowledged write counted as failed with the OSDs down"
grep -q "an acknowledged write .* failed" "$cluster/log/client.log" ||
  fail "the client did not log the early-acknowledged writes that failed with the OSDs down"
echo "PASS"
