#!/usr/bin/env bash
# File rights (docs/capabilities.md, "File rights"): with two mounts A and B of one file
# system, in a directory both work in (so neither owns it), a mount that opens a file
# nobody else has open, or creates one, owns that file: its kernel keeps the file's
# pages and buffers writes, as on a mount alone. Another mount's open, stat or listing
# of the file recalls it first. Checked:
#   1. A maps an existing file shared and writable (what SQLite's WAL and journald do),
#      which a file opened for direct I/O refuses; `dfs client ls` shows A owning a file
#      while it is open; B then reads A's bytes, and the read recalled the file;
#   2. A holds a file open with 3 MiB written, neither synced nor closed; B's stat shows
#      the 3 MiB and B reads them whole (the stat recalled them from A); A writes one
#      more MiB and closes: B reads all 4;
#   3. a file B holds open is not given to A: A's write through its own open is read at
#      once by B through the descriptor B held since before it;
#   4. a file A creates in the shared directory is A's: mapped shared, written, and read
#      whole by B; an SQLite database in WAL mode made on A is read by B;
#   5. B's `ls -l` shows the size of a file A holds open with unsynced writes;
#   6. B reads a hole of a sparse file it holds open, A writes there, and B reads A's
#      bytes through the same descriptor (a hole is remembered only by a mount alone);
#   7. read shares: a file both mounts only read is shared by both,
#      its pages stay in each kernel across opens (fincore) and it maps shared
#      read-only on both; A's write recalls B's share and B's next open reads A's
#      bytes; A's truncate does the same; B writing through one descriptor reads its
#      own bytes through another it held open for reading since before;
#   8. after remounting both, every file has the bytes the checks wrote.
source "$(dirname "$0")/lib.sh"

start_cluster
mnt2="$work/mnt2"
log_b="$cluster/log/client-b.log"
client_b=""
helpers=()
trap 'rc=$?; touch "$work/stop"; for p in "${helpers[@]}"; do kill "$p" 2>/dev/null || true; done; stop_mount "$mnt2" "$client_b"; cleanup $rc' EXIT
ok() { echo "ok: $*"; }

# owned_files: the files the mounts' sessions own, all together, as `dfs client ls`
# shows them (each check knows which mount may own one).
owned_files() {
  dfs_cli client ls --format json | python3 -c '
import json, sys
print(sum(s["owned_files"] for s in json.load(sys.stdin)["sessions"] if s["renewing"]))'
}
# read_files: the files the mounts' sessions share for reading, all together.
read_files() {
  dfs_cli client ls --format json | python3 -c '
import json, sys
print(sum(s["read_files"] for s in json.load(sys.stdin)["sessions"] if s["renewing"]))'
}
# resident FILE: the bytes of FILE in the kernel's page cache (fincore opens it too).
resident() { fincore --bytes --noheadings --output RES "$1"; }
# wait_for COND_DESCRIPTION CMD...: polls CMD (up to 5 s) until it succeeds.
wait_for() {
  local what="$1"
  shift
  for _ in $(seq 50); do "$@" && return 0; sleep 0.1; done
  fail "$what"
}
# hold FILE MODE NAME [BYTES]: a python helper holding FILE open (mode r, r+ or w) in
# the background; with BYTES, it writes that many bytes of pattern NAME first. It
# touches $work/NAME.ready once done and waits for $work/NAME.go: then it writes one
# more MiB (BYTES given) or reads the first 16 bytes into $work/NAME.read, and closes.
# With HOLD_READ_AT=OFFSET, a reader reads its 16 bytes there, once before it is ready
# too (into $work/NAME.first).
hold() {
  HOLD_READ_AT="${HOLD_READ_AT:-}" python3 - "$@" "$work" <<'EOF' &
import os, sys, time
path, mode, name = sys.argv[1:4]
nbytes = int(sys.argv[4]) if len(sys.argv) > 5 else 0
work = sys.argv[-1]
read_at = os.environ["HOLD_READ_AT"]
f = open(path, mode + "b", buffering=0)
if read_at:
    open(f"{work}/{name}.first", "wb").write(os.pread(f.fileno(), 16, int(read_at)))
def pattern(n, off):
    block = (name.encode() * 4096)[:4096]
    return bytes(block[(off + i) % 4096] for i in range(n)) if n < 4096 else \
        (block * ((n + off % 4096) // 4096 + 2))[off % 4096: off % 4096 + n]
if nbytes:
    f.write(pattern(nbytes, 0))
open(f"{work}/{name}.ready", "w").close()
while not os.path.exists(f"{work}/{name}.go"):
    time.sleep(0.02)
if nbytes:
    f.write(pattern(1 << 20, nbytes))
else:
    open(f"{work}/{name}.read", "wb").write(os.pread(f.fileno(), 16, int(read_at or 0)))
f.close()
open(f"{work}/{name}.done", "w").close()
EOF
  helpers+=($!)
}
# expect_pattern FILE NAME BYTES: FILE holds BYTES bytes of hold's pattern NAME.
expect_pattern() {
  python3 - "$@" <<'EOF' || fail "$1 does not hold $3 bytes of pattern $2"
import sys
path, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(path, "rb").read()
block = (name.encode() * 4096)[:4096]
want = (block * (n // 4096 + 1))[:n]
if data != want:
    first = next((i for i in range(min(len(data), n)) if data[i] != want[i]), min(len(data), n))
    sys.exit(f"{path}: {len(data)} bytes, first difference at {first}")
EOF
}
# map_write FILE TEXT: maps FILE shared and writable, writes TEXT at offset 0 through
# the mapping, syncs it and closes.
map_write() {
  python3 - "$1" "$2" <<'EOF'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
m[:len(sys.argv[2])] = sys.argv[2].encode()
m.flush()
m.close()
os.close(fd)
EOF
}

step "A, alone, writes d/f1..f5; B mounts and lists d, which recalls d from A"
mkdir "$mnt/d"
# f3 is larger than the MDS keeps inline: a descriptor held open on an inline file
# reads the copy its open brought (close-to-open); one on objects reads the OSDs.
for i in 1 2 4 5; do head -c 8192 /dev/urandom >"$mnt/d/f$i"; done
head -c 262144 /dev/urandom >"$mnt/d/f3"
cp "$mnt/d/f1" "$work/f1.orig"
mount_another "$mnt2" "$log_b"
client_b="$(client_pid "$mnt2")"
ls -l "$mnt2/d" >/dev/null
no_files_owned() { [ "$(owned_files)" = 0 ]; }
no_files_owned || fail "a mount owns files before any open (dfs client ls: $(owned_files))"

step "1. A maps d/f1 shared and writes through the mapping; B reads it"
map_write "$mnt/d/f1" "MMAPPED" || fail "A could not map d/f1 shared and writable"
# Once more, held open, to look at the session's rights meanwhile (its close waits for
# f1.go2).
(python3 - "$mnt/d/f1" "$work" <<'EOF'
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
m[7:14] = b"+MAPPED"
open(sys.argv[2] + "/f1.mapped", "w").close()
while not os.path.exists(sys.argv[2] + "/f1.go2"):
    time.sleep(0.02)
m.flush()
m.close()
os.close(fd)
EOF
) &
helpers+=($!)
wait_for "A's second mapping of d/f1 did not start" test -e "$work/f1.mapped"
recalls_a() { grep -c "owned directories or files recalled by the MDS" "$cluster/log/client.log" || true; }
recalls_before="$(recalls_a)"
[ "$(owned_files)" -ge 1 ] || fail "A holds d/f1 open alone but owns no file (dfs client ls)"
ok "A owns d/f1 while it has it mapped ($(owned_files) file(s))"
touch "$work/f1.go2"
wait "${helpers[-1]}" || fail "A's mapping of d/f1 failed"
head -c 14 "$mnt2/d/f1" | grep -qx "MMAPPED+MAPPED" ||
  fail "B reads '$(head -c 14 "$mnt2/d/f1")' at the start of d/f1, not A's mapped writes"
cmp -s <(tail -c +15 "$mnt2/d/f1") <(tail -c +15 "$work/f1.orig") ||
  fail "B's d/f1 differs from A's beyond the mapped bytes"
wait_for "A still owns d/f1 after B read it" no_files_owned
[ "$(recalls_a)" -gt "$recalls_before" ] || fail "A's log does not say the file was recalled"
ok "B reads A's mapped bytes; B's read recalled the file from A"

step "2. A holds d/f2 open with 3 MiB written; B stats and reads it"
hold "$mnt/d/f2" w two $((3 << 20))
wait_for "A's writer of d/f2 did not start" test -e "$work/two.ready"
size="$(stat -c %s "$mnt2/d/f2")"
[ "$size" = $((3 << 20)) ] || fail "B's stat of d/f2 shows $size bytes, not A's unsynced 3 MiB"
expect_pattern "$mnt2/d/f2" two $((3 << 20))
touch "$work/two.go"
wait_for "A's writer of d/f2 did not finish" test -e "$work/two.done"
expect_pattern "$mnt2/d/f2" two $((4 << 20))
ok "B saw A's unsynced 3 MiB at its stat and read them; then all 4 MiB after A's close"

step "3. B holds d/f3 open; A writes it; B reads A's bytes through its old descriptor"
hold "$mnt2/d/f3" r three
wait_for "B's reader of d/f3 did not start" test -e "$work/three.ready"
python3 - "$mnt/d/f3" "$work" <<'EOF' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
os.pwrite(fd, b"WRITTEN-BY-A-NOW", 0)
open(sys.argv[2] + "/three.written", "w").close()
while not os.path.exists(sys.argv[2] + "/stop"):
    time.sleep(0.05)
os.close(fd)
EOF
helpers+=($!)
wait_for "A's write of d/f3 did not happen" test -e "$work/three.written"
[ "$(owned_files)" = 0 ] || fail "A owns a file B holds open ($(owned_files))"
touch "$work/three.go"
wait_for "B's reader of d/f3 did not finish" test -e "$work/three.done"
[ "$(cat "$work/three.read")" = "WRITTEN-BY-A-NOW" ] ||
  fail "B read '$(cat "$work/three.read")' through its descriptor, not A's write"
ok "a file B holds open stays shared: B reads A's write at once"

step "4. A creates d/new and an SQLite database in WAL mode in d; B reads both"
head -c 65536 /dev/urandom >"$mnt/d/new"
map_write "$mnt/d/new" "NEWFILE-MAPPED" || fail "A could not map its new file d/new shared"
python3 - "$mnt/d/db.sqlite" <<'EOF' || fail "SQLite in WAL mode failed on A"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("pragma journal_mode=wal").fetchone()[0] == "wal"
db.execute("create table t (n integer, s text)")
with db:
    for i in range(500):
        db.execute("insert into t values (?, ?)", (i, "row %d" % i))
db.close()
EOF
head -c 14 "$mnt2/d/new" | grep -qx "NEWFILE-MAPPED" || fail "B does not read A's mapped bytes of d/new"
cmp -s <(tail -c +15 "$mnt2/d/new") <(tail -c +15 "$mnt/d/new") || fail "B's d/new differs from A's"
rows="$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*), sum(n) from t").fetchone())' "$mnt2/d/db.sqlite")" ||
  fail "B could not read A's SQLite database"
[ "$rows" = "(500, 124750)" ] || fail "B reads $rows from A's database, not (500, 124750)"
ok "A's new file and its WAL database read whole on B ($rows)"

step "5. A holds d/f4 open with 100,000 bytes written; B's ls -l shows them"
hold "$mnt/d/f4" w four 100000
wait_for "A's writer of d/f4 did not start" test -e "$work/four.ready"
listed="$(ls -l "$mnt2/d" | awk '$NF == "f4" { print $5 }')"
[ "$listed" = 100000 ] || fail "B's ls -l shows d/f4 with '$listed' bytes, not 100000"
touch "$work/four.go"
wait_for "A's writer of d/f4 did not finish" test -e "$work/four.done"
ok "B's listing shows what A wrote to a file it owns"

step "6. B holds sparse d/holes open and reads a hole; A writes there; B reads A's bytes"
truncate -s $((12 << 20)) "$mnt/d/holes"
HOLD_READ_AT=$((8 << 20)) hold "$mnt2/d/holes" r holes
wait_for "B's reader of d/holes did not start" test -e "$work/holes.ready"
cmp -s "$work/holes.first" <(head -c 16 /dev/zero) ||
  fail "a hole of d/holes did not read as zeros on B"
python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
os.pwrite(fd, b"HOLE-FILLED-BY-A", 8 << 20)
os.close(fd)' "$mnt/d/holes" || fail "A could not write into d/holes"
touch "$work/holes.go"
wait_for "B's reader of d/holes did not finish" test -e "$work/holes.done"
[ "$(cat "$work/holes.read")" = "HOLE-FILLED-BY-A" ] ||
  fail "B read '$(tr -d '\000' <"$work/holes.read")' where A filled a hole B had read, not A's bytes"
ok "a hole B read stays unknown to B once A may write: B reads A's bytes there"

step "7. read shares: A and B read d/shared and keep its pages; writes recall them"
head -c $((1 << 20)) /dev/urandom >"$work/shared.v1"
# The sessions share what they looked up too (their counts move with other inodes): the
# share of d/shared shows as its pages kept across opens (fincore opens it again).
[ "$(read_files)" -gt 0 ] || fail "no session shares anything (dfs client ls)"
cp "$work/shared.v1" "$mnt/d/shared"
# Each reads it until both share it: a close's release reaches the MDS after close()
# returns, and a file another mount still has open for writing is not shared.
both_share() {
  cmp -s "$work/shared.v1" "$mnt2/d/shared" || fail "B does not read A's d/shared"
  cmp -s "$work/shared.v1" "$mnt/d/shared" || fail "A does not read its own d/shared back"
  [ "$(resident "$mnt2/d/shared")" = $((1 << 20)) ] &&
    [ "$(resident "$mnt/d/shared")" = $((1 << 20)) ]
}
wait_for "A and B read d/shared, and do not both keep its pages (share it)" both_share
[ "$(resident "$mnt2/d/shared")" = $((1 << 20)) ] ||
  fail "B's kernel kept $(resident "$mnt2/d/shared") bytes of d/shared across opens, not 1 MiB"
[ "$(resident "$mnt/d/shared")" = $((1 << 20)) ] ||
  fail "A's kernel kept $(resident "$mnt/d/shared") bytes of d/shared across opens, not 1 MiB"
map_read() {
  python3 - "$1" <<'EOF'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ)
sys.stdout.buffer.write(m[:16])
m.close()
os.close(fd)
EOF
}
mapped="$(map_read "$mnt2/d/shared" | od -An -tx1)" || fail "B could not map d/shared shared"
[ "$mapped" = "$(head -c 16 "$work/shared.v1" | od -An -tx1)" ] ||
  fail "B's shared read-only mapping of d/shared shows other bytes than A wrote"
ok "both mounts share d/shared for reading: pages kept across opens, mapped shared on B"
head -c $((1 << 20)) /dev/urandom >"$work/shared.v2"
dd if="$work/shared.v2" of="$mnt/d/shared" bs=64k conv=notrunc status=none ||
  fail "A could not write d/shared"
# A's writing open recalled B's share before it was served: B's next open reads A's
# bytes, and B shares the file again once A closed it.
b_shares_v2() {
  cmp -s "$work/shared.v2" "$mnt2/d/shared" || fail "B's next open of d/shared misses A's write"
  [ "$(resident "$mnt2/d/shared")" = $((1 << 20)) ]
}
wait_for "B reads d/shared after A's write, and does not share it" b_shares_v2
# A setattr of the size without an open (truncate(1) would open the file for writing).
python3 -c 'import os, sys; os.truncate(sys.argv[1], 4096)' "$mnt/d/shared" ||
  fail "A could not truncate d/shared"
[ "$(stat -c %s "$mnt2/d/shared")" = 4096 ] ||
  fail "B sees d/shared at $(stat -c %s "$mnt2/d/shared") bytes after A's truncate, not 4096"
cmp -s <(head -c 4096 "$work/shared.v2") "$mnt2/d/shared" ||
  fail "B reads other bytes than A's truncate left in d/shared"
ok "A's write and truncate recall B's share: B's next open reads what A left"
python3 - "$mnt2/d/shared" <<'EOF' ||
import os, sys
reader = os.open(sys.argv[1], os.O_RDONLY)  # shared: through the page cache
os.pread(reader, 16, 0)
writer = os.open(sys.argv[1], os.O_WRONLY)
os.pread(reader, 16, 0)  # cached again after the writer's open
os.pwrite(writer, b"WRITTEN-BY-B-NOW", 0)
after = os.pread(reader, 16, 0)
os.close(writer)
os.close(reader)
assert after == b"WRITTEN-BY-B-NOW", f"read {after!r} after writing"
EOF
  fail "B's own write through one descriptor is not read through another"
ok "B reads its own write through a descriptor it held open since before the write"

step "8. both remounted: every file holds what the checks wrote"
touch "$work/stop"
for p in "${helpers[@]}"; do wait "$p" 2>/dev/null || true; done
helpers=()
stop_mount "$mnt2" "$client_b"
client_b=""
remount_client
head -c 14 "$mnt/d/f1" | grep -qx "MMAPPED+MAPPED" || fail "d/f1 lost the mapped writes"
expect_pattern "$mnt/d/f2" two $((4 << 20))
[ "$(head -c 16 "$mnt/d/f3")" = "WRITTEN-BY-A-NOW" ] || fail "d/f3 lost A's write"
expect_pattern "$mnt/d/f4" four $((100000 + (1 << 20)))
head -c 14 "$mnt/d/new" | grep -qx "NEWFILE-MAPPED" || fail "d/new lost the mapped write"
[ "$(tail -c +$(((8 << 20) + 1)) "$mnt/d/holes" | head -c 16)" = "HOLE-FILLED-BY-A" ] ||
  fail "d/holes lost A's write"
cmp -s <(printf WRITTEN-BY-B-NOW; head -c 4096 "$work/shared.v2" | tail -c +17) "$mnt/d/shared" ||
  fail "d/shared lost B's write"
echo "PASS"
