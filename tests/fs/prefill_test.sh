#!/usr/bin/env bash
# Files placed in the kernel's page cache at open (client-fuse/fuse/file_ops.cc,
# fill_page_cache), on a real mount. After a remount a listing brings the data of inline
# files and fetches that of object files ahead; reading those files then returns exactly
# their bytes (sizes around page, inline and fetch-ahead limits, an empty file) without
# a READ reaching the client, while with -o prefill_kb=0 every one of them costs one. Files
# changed through the mount after their data was listed or fetched read their new bytes.
source "$(dirname "$0")/lib.sh"

start_cluster --mds 1
sizes="0 1 100 4095 4096 4097 8191 65535 65537 300000 1048576 4194304 5000000"
# Filled: every non-empty file up to DataAhead::kMaxFileBytes (4 MiB); 5000000 is read.
expect_filled=11

step "files of $(echo $sizes | wc -w) sizes, inline and in objects"
mkdir -p "$work/src"
for s in $sizes; do head -c "$s" /dev/urandom >"$work/src/f$s"; done
cp -a "$work/src" "$mnt/p"

# A listing (which brings inline data and starts the fetches ahead), then every file read
# and compared.
list_and_read_all() {
  ls -l "$mnt/p" >/dev/null
  sleep 1
  for s in $sizes; do cmp "$mnt/p/f$s" "$work/src/f$s" || fail "f$s reads wrong ($1)"; done
}
# What the client logged at its last unmount: READ requests answered, files filled.
reads_answered() {
  tr -d , <"$cluster/log/client.log" |
    awk '/FUSE requests answered/ { n = 0 } $1 == "read" && $3 == "x" { n = $2 } END { print n + 0 }'
}
files_filled() {
  grep -o 'page cache at open: [0-9]*' "$cluster/log/client.log" | tail -1 | grep -o '[0-9]*$'
}

step "remount; list, read every file: filled at open, no READ for them"
remount_client
list_and_read_all "filled at open"
remount_client
filled="$(files_filled)"
with_fill="$(reads_answered)"
echo "files filled: ${filled:-none}, READ requests: $with_fill"
[ "${filled:-0}" -eq "$expect_filled" ] || fail "$expect_filled files should have been filled"

step "the same with -o prefill_kb=0: each file's data is read through the client"
remount_client prefill_kb=0
list_and_read_all "prefill_kb=0"
remount_client
without_fill="$(reads_answered)"
echo "READ requests with prefill_kb=0: $without_fill"
[ "$(files_filled)" -eq 0 ] || fail "files were filled with prefill_kb=0"
[ "$without_fill" -ge $((with_fill + expect_filled)) ] ||
  fail "prefill_kb=0 read $without_fill times, the fill $with_fill: the fill saved no READ per file"

step "files changed after their data was listed or fetched ahead read their new bytes"
ls -l "$mnt/p" >/dev/null
sleep 1
echo "new small" >"$mnt/p/f100"
printf 'patched' | dd of="$mnt/p/f300000" bs=1 seek=1000 conv=notrunc status=none
printf 'patched' | dd of="$work/src/f300000" bs=1 seek=1000 conv=notrunc status=none
[ "$(cat "$mnt/p/f100")" = "new small" ] || fail "f100 reads its old bytes after a rewrite"
cmp "$mnt/p/f300000" "$work/src/f300000" || fail "f300000 reads wrong after a patch"
# A reader opening a file that is open for writing, with written bytes still in the
# kernel's page cache, must see them.
exec 3<>"$mnt/p/f4096"
printf 'DIRTY' >&3
[ "$(head -c 5 "$mnt/p/f4096")" = DIRTY ] || fail "a reader does not see bytes written by an open writer"
exec 3>&-
remount_client
[ "$(cat "$mnt/p/f100")" = "new small" ] || fail "f100 lost its new bytes over a remount"
cmp "$mnt/p/f300000" "$work/src/f300000" || fail "f300000 differs after a remount"
[ "$(head -c 5 "$mnt/p/f4096")" = DIRTY ] || fail "f4096 lost its written bytes over a remount"
echo "PASS"
