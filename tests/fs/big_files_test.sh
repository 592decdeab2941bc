#!/usr/bin/env bash
# Big files: a 10 GiB sparse file with data beyond 4 GiB, and a 2 GiB dense file,
# written and read back with checksums.
source "$(dirname "$0")/lib.sh"
start_cluster --mds 1  # the single-replica MDS; the replicated rank has its own tests

step "sparse 10 GiB file with data at 1 MiB, 4 GiB + 3 B, 6 GiB and at the end"
head -c $((8 << 20)) /dev/urandom >"$work/chunk"
f="$mnt/sparse"
for off in $((1 << 20)) $(((4 << 30) + 3)) $((6 << 30)) $(((10 << 30) - (8 << 20))); do
  dd if="$work/chunk" of="$f" bs=1M oflag=seek_bytes seek="$off" conv=notrunc status=none
done
[ "$(stat -c %s "$f")" -eq $((10 << 30)) ] || fail "sparse file size $(stat -c %s "$f")"
sync "$f"
want="$(sha256sum <"$work/chunk" | cut -d' ' -f1)"
for off in $((1 << 20)) $(((4 << 30) + 3)) $((6 << 30)) $(((10 << 30) - (8 << 20))); do
  got="$(dd if="$f" bs=1M iflag=skip_bytes,count_bytes skip="$off" count=$((8 << 20)) status=none | sha256sum | cut -d' ' -f1)"
  [ "$got" = "$want" ] || fail "data at offset $off differs"
done
zeros="$(dd if="$f" bs=1M iflag=skip_bytes,count_bytes skip=$((2 << 30)) count=$((16 << 20)) status=none | tr -d '\0' | wc -c)"
[ "$zeros" -eq 0 ] || fail "a hole did not read as zeros"

step "dense 2 GiB file"
head -c $((2 << 30)) /dev/urandom | tee "$mnt/dense" | sha256sum | cut -d' ' -f1 >"$work/dense.sum"
sync "$mnt/dense"
got="$(sha256sum <"$mnt/dense" | cut -d' ' -f1)"
[ "$got" = "$(cat "$work/dense.sum")" ] || fail "dense file differs"
rm -f "$mnt/sparse" "$mnt/dense"
echo "PASS"
