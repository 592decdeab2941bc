#!/usr/bin/env bash
# An rsync that corrupts what it copied, for bench_test.sh: put first on PATH as `rsync`.
# It runs the real rsync ($REAL_RSYNC); after a copy (`rsync -aHAX ... DEST`) into a
# directory under $CORRUPT_UNDER it flips the first byte of the first regular file of
# DEST and restores the file's times, so size and mtime still match the source and only
# a comparison of contents can notice. Each corruption is logged to $CORRUPT_LOG.
set -uo pipefail
[ "$(realpath "$REAL_RSYNC")" != "$(realpath "$0")" ] || { echo "REAL_RSYNC is this wrapper" >&2; exit 2; }
"$REAL_RSYNC" "$@" || exit
[ "$1" = -aHAX ] || exit 0
dest="${*: -1}"
case "$dest" in "$CORRUPT_UNDER"/*) ;; *) exit 0 ;; esac
victim="$(find "$dest" -type f -size +0 | sort | head -n 1)"
[ -n "$victim" ] || exit 0
stamp="$(mktemp)"
touch -r "$victim" "$stamp"
first="$(head -c 1 "$victim" | od -An -tu1 | tr -d ' ')"
printf "\\$(printf '%03o' $(((first + 1) % 256)))" | dd of="$victim" bs=1 count=1 conv=notrunc status=none
touch -r "$stamp" "$victim"
rm -f "$stamp"
echo "corrupted $victim" >>"$CORRUPT_LOG"
