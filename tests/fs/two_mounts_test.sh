#!/usr/bin/env bash
# Two mounts (A and B) of one file system stay coherent. The MDS grants exclusive caching
# to a mount only while it is the only one; once a second mount opens its session, it
# recalls it from the first (which pushes its deferred creates, renames and writes and
# invalidates its kernel's caches), and both run in shared, coherent mode:
#   1. a tree A made alone, quickly and without sync (200 small files, a subdirectory, a
#      rename and an unlink), is there on B as soon as B is mounted: same names, same
#      contents; and A sees at once B's rewrite, rename and unlink in that tree;
#   2. close-to-open: a file written and closed on one mount reads back whole (new size,
#      new bytes) when opened on the other right after the close, though that mount read
#      the file before; 21 rounds alternating writer A, B, A...;
#   3. a create, rename, chmod, unlink, mkdir and rmdir on A are seen at once by stat and
#      ls on B, which looked at the names just before each;
#   4. O_CREAT|O_EXCL from A and B at once on the same 1,000 names: each name is won
#      exactly once, every loser gets EEXIST, and A, remounted, reads each winner's bytes;
#   5. a file A holds open with 100,000 bytes written and neither fsync'd nor closed has
#      that size on B within 2 s;
#   6. O_APPEND records from A and B at once into one file: none lost, none torn or
#      overwritten, each mount's in the order it wrote them;
#   7. B lists a directory of 1,500 names over and over for 8 s while A creates, renames
#      and unlinks other names in it: every one of the 1,500 is in every listing, once,
#      and no name is listed twice;
#   8. directory rights: A and B each write a tree into a directory of their own at
#      once; `dfs client ls` shows each owning the directories it made; then each reads
#      the other's tree whole (never synced), which recalls every directory from its
#      owner (its log says so, and `dfs client ls` shows none owned);
#   9. directories that exist: A (remounted, owning nothing) and B each create files in
#      a directory of their own that neither owns, and each is given its directory
#      (`dfs client ls`); each reads the other's files whole (never synced), which
#      recalls them; a new file in a directory recalled a moment ago leaves it shared;
#  10. a recall of one directory takes back only what it let the kernel cache: B reads a
#      file in one of two directories A made (never synced); A's kernel drops the names
#      and inodes of the directories on B's path and of their files, and keeps the pages
#      of the other directory's files, which A still owns;
#  11. a mount with cache=shared (C, which never caches) beside A alone: its session open
#      recalls A's exclusive caching as a default mount's does, so C reads the tree A
#      made alone (never synced) whole and A sees C's rewrite at once; A is not granted
#      the right again while C is there, and is once C leaves (B is unmounted first).
# DFS_TWO_MOUNTS_CHECKS="2 4" runs only some checks (B is then mounted at once);
# DFS_TWO_MOUNTS_OPTIONS="cache=shared" adds mount.dfs -o options to both mounts.
source "$(dirname "$0")/lib.sh"

checks="${DFS_TWO_MOUNTS_CHECKS:-1 2 3 4 5 6 7 8 9 10 11}"
run_check() { [[ " ${checks//,/ } " == *" $1 "* ]]; }
ok() { echo "ok: $*"; }
races="$(dirname "$0")/mount_races.py"

extra_opts="${DFS_TWO_MOUNTS_OPTIONS:-}"
start_cluster ${extra_opts:+--options "$extra_opts"}
mnt2="$work/mnt2"
mkdir -p "$mnt2"
log_b="$cluster/log/client-b.log"
client_a="$(client_pid "$mnt")"
client_b=""
helpers=()

mount_b() {
  mount_another "$mnt2" "$log_b" "$extra_opts"
  client_b="$(client_pid "$mnt2")"
}
remount_a() {
  remount_client "$extra_opts"
  client_a="$(client_pid "$mnt")"
}
finish() {
  local rc=$?
  for p in "${helpers[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  stop_mount "$mnt2" "$client_b"
  [ -z "${mnt3:-}" ] || stop_mount "$mnt3" "${client_c:-}"
  stop_mount "$mnt" "$client_a"
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
    echo "cluster: $cluster; logs: $cluster/log/ (mount A: client.log, mount B: client-b.log);" \
      "DFS_KEEP_TEST_DIR=1 keeps them" >&2
  fi
  cleanup $rc
}
trap finish EXIT

# tree_list DIR: every name under DIR with its type, then the sha256 of every file.
tree_list() {
  (
    cd "$1" || exit 1
    find . -printf '%y %p\n' | LC_ALL=C sort
    find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
  )
}
# make_tree DIR: DIR/d1 with 200 small files of known, different sizes and contents, a
# subdirectory, a rename within d1, a rename into the subdirectory and an unlink.
make_tree() {
  local d="$1/d1" i
  mkdir "$d" "$d/sub"
  for i in $(seq 0 199); do
    printf 'file %d of d1\n%*s\n' "$i" $((i * 7)) "" >"$d/f$i"
  done
  echo nested >"$d/sub/nested"
  mv "$d/f0" "$d/renamed0"
  mv "$d/f2" "$d/sub/moved2"
  rm "$d/f1"
}
# visible_on_b NAME: waits up to 10 s for A's NAME to appear on B (set-up of a check that
# is about something else than visibility: A syncs it first).
visible_on_b() {
  sync -f "$mnt/$1"
  for _ in $(seq 100); do [ -e "$mnt2/$1" ] && return 0; sleep 0.1; done
  fail "B does not see $1 10 s after A created it and synced"
}

# owned_counts: the number of directories each renewing session owns, as `dfs client ls`
# shows them, on one line.
owned_counts() {
  dfs_cli client ls --format json | python3 -c '
import json, sys
print(" ".join(str(s["owned_dirs"]) for s in json.load(sys.stdin)["sessions"] if s["renewing"]))'
}

# on_both FN A_ARG B_ARG: FN "$mnt" A_ARG and FN "$mnt2" B_ARG at once; waits for both
# (A's runs in the background).
on_both() {
  "$1" "$mnt" "$2" &
  local on_a=$!
  helpers+=("$on_a")
  "$1" "$mnt2" "$3"
  wait "$on_a" || fail "$1 on mount A failed"
}

# race KIND NAME COUNT: mount_races.py KIND from A and B at once, on $mnt/NAME and
# $mnt2/NAME; waits for both.
race() {
  local pids=() who root
  for who in A B; do
    if [ $who = A ]; then root="$mnt"; else root="$mnt2"; fi
    python3 "$races" "$1" "$who" "$root/$2" "$3" "$work" &
    pids+=($!)
    helpers+=($!)
  done
  release_racers "$1" 2
  for p in "${pids[@]}"; do wait "$p" || fail "a $1 racer on $2 failed"; done
}

if run_check 1; then
  step "1. mount A alone writes a tree without sync, then B is mounted and reads it"
  mkdir "$work/ref"
  make_tree "$work/ref"
  make_tree "$mnt"
  mount_b
  d="$(diff <(tree_list "$work/ref/d1") <(tree_list "$mnt2/d1") 2>&1)" || true
  [ -z "$d" ] || {
    echo "$d" | head -20
    fail "right after B's mount, B's d1 differs from what A made (diff ref B above, $(echo "$d" | grep -c '^[<>]') lines)"
  }
  ok "B, mounted after A made d1 alone, sees its $(find "$work/ref/d1" | wc -l) names and their contents at once"
  # A, which made d1 alone (exclusive caching), cached its names and attributes: B's
  # changes must be seen there at once too.
  printf 'rewritten by B\n' >"$mnt2/d1/f5"
  mv "$mnt2/d1/f6" "$mnt2/d1/f6b"
  rm "$mnt2/d1/f7"
  [ "$(cat "$mnt/d1/f5" 2>&1)" = "rewritten by B" ] || fail "A reads '$(head -c 40 "$mnt/d1/f5" 2>&1 | tr '\n' '|')' from d1/f5 that B rewrote"
  [ ! -e "$mnt/d1/f6" ] && [ -e "$mnt/d1/f6b" ] || fail "A does not see B's rename of d1/f6 to d1/f6b"
  [ ! -e "$mnt/d1/f7" ] || fail "A still sees d1/f7 that B unlinked"
  ok "A, which made d1 alone, sees B's rewrite, rename and unlink in it at once"
else
  mount_b
fi

if run_check 2; then
  step "2. close-to-open: the writer alternates, the reader read the file before"
  # now_ms: milliseconds since the epoch.
  now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }
  for i in $(seq 0 20); do
    if [ $((i % 2)) -eq 0 ]; then w=A wm="$mnt" r=B rm_="$mnt2"; else w=B wm="$mnt2" r=A rm_="$mnt"; fi
    size=$(((i % 2) ? 50000 - i * 1000 : 1000 + i * 100))
    head -c "$size" < <(yes "round $i written by $w") >"$work/expect"
    cat "$work/expect" >"$wm/ping"  # open(O_TRUNC), write, close
    closed=$(now_ms)
    if ! cmp -s "$rm_/ping" "$work/expect"; then
      got="$(stat -c %s "$rm_/ping" 2>&1) bytes, starting '$(head -c 30 "$rm_/ping" 2>&1 | tr '\n' '|')'"
      later="still stale after 5 s"
      for t in $(seq 50); do
        sleep 0.1
        cmp -s "$rm_/ping" "$work/expect" && { later="right after $((t * 100)) ms"; break; }
      done
      fail "round $i: $r opened ping right after $w closed it ($size bytes, 'round $i written by $w')" \
        "and read $got ($later)"
    fi
    took=$(($(now_ms) - closed))
    [ "$took" -le 1000 ] || fail "round $i: $r's open and read after $w's close took $took ms"
    cmp -s "$wm/ping" "$work/expect" || fail "round $i: $w does not read back what it wrote"
  done
  ok "21 rounds of close-to-open, A and B writing in turn, read whole on the other at once"
fi

if run_check 3; then
  step "3. a change of metadata on A is seen at once on B"
  m="meta"
  b_ls() { ls -A "$mnt2/$m" 2>&1 | tr '\n' ' '; }
  stat "$mnt2/$m" >/dev/null 2>&1 || true
  mkdir "$mnt/$m"
  [ -d "$mnt2/$m" ] || fail "mkdir on A: B does not see the directory $m"
  [ -z "$(b_ls)" ] || fail "mkdir on A: B lists '$(b_ls)' in the new directory"
  stat "$mnt2/$m/new" >/dev/null 2>&1 && fail "B sees $m/new before A created it"

  echo hello >"$mnt/$m/new"
  [ "$(cat "$mnt2/$m/new" 2>&1)" = hello ] || fail "create on A: B reads '$(cat "$mnt2/$m/new" 2>&1)' from $m/new"
  [ "$(b_ls)" = "new " ] || fail "create on A: B lists '$(b_ls)', not 'new'"
  ok "create on A seen on B"

  stat "$mnt2/$m/renamed" >/dev/null 2>&1 || true
  mv "$mnt/$m/new" "$mnt/$m/renamed"
  [ ! -e "$mnt2/$m/new" ] || fail "rename on A: B still sees the old name $m/new"
  [ "$(cat "$mnt2/$m/renamed" 2>&1)" = hello ] ||
    fail "rename on A: B reads '$(cat "$mnt2/$m/renamed" 2>&1)' from the new name $m/renamed"
  [ "$(b_ls)" = "renamed " ] || fail "rename on A: B lists '$(b_ls)', not 'renamed'"
  ok "rename on A seen on B"

  [ "$(stat -c %a "$mnt2/$m/renamed")" = 644 ] || fail "B sees mode $(stat -c %a "$mnt2/$m/renamed") before the chmod"
  chmod 0600 "$mnt/$m/renamed"
  mode="$(stat -c %a "$mnt2/$m/renamed" 2>&1)"
  [ "$mode" = 600 ] || fail "chmod 0600 on A: B's stat says mode $mode"
  ok "chmod on A seen on B"

  rm "$mnt/$m/renamed"
  [ ! -e "$mnt2/$m/renamed" ] || fail "unlink on A: B still sees $m/renamed"
  [ -z "$(b_ls)" ] || fail "unlink on A: B lists '$(b_ls)', not nothing"
  ok "unlink on A seen on B"

  stat "$mnt2/$m/sub" >/dev/null 2>&1 && fail "B sees $m/sub before A made it"
  mkdir "$mnt/$m/sub"
  [ -d "$mnt2/$m/sub" ] || fail "mkdir on A: B does not see the directory $m/sub"
  [ "$(b_ls)" = "sub " ] || fail "mkdir on A: B lists '$(b_ls)', not 'sub'"
  ok "mkdir on A seen on B"

  rmdir "$mnt/$m/sub"
  [ ! -e "$mnt2/$m/sub" ] || fail "rmdir on A: B still sees $m/sub"
  [ -z "$(b_ls)" ] || fail "rmdir on A: B lists '$(b_ls)', not nothing"
  ok "rmdir on A seen on B"
fi

if run_check 4; then
  n=1000
  step "4. A and B create the same $n names with O_EXCL at once"
  mkdir "$mnt/excl"
  visible_on_b excl
  race excl excl "$n"
  python3 "$races" check-excl "$work" "$n" A B || fail "the O_EXCL race went wrong (above)"
  ok "each of the $n names won exactly once, every loser got EEXIST"
  remount_a
  count="$(ls "$mnt/excl" | wc -l)"
  [ "$count" = "$n" ] || fail "A, remounted, lists $count names in excl, not $n"
  python3 "$races" check-winners "$work" "$mnt/excl" A B ||
    fail "A, remounted, reads other bytes than the winners' (above)"
  ok "A, remounted, reads each winner's bytes in all $n files"
fi

if run_check 5; then
  step "5. B sees the size of a file A has written and holds open, not fsync'd"
  : >"$mnt/attr"
  visible_on_b attr
  [ "$(stat -c %s "$mnt2/attr")" = 0 ] || fail "B sees attr with $(stat -c %s "$mnt2/attr") bytes before A wrote"
  python3 - "$mnt/attr" "$work" <<'PY' &
import os, sys, time
path, work = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_WRONLY)
os.write(fd, b"w" * 100000)
open(work + "/attr-written", "w").close()
deadline = time.time() + 30
while not os.path.exists(work + "/attr-go") and time.time() < deadline:
    time.sleep(0.05)
os.close(fd)
PY
  writer=$!
  helpers+=($writer)
  for _ in $(seq 100); do [ -e "$work/attr-written" ] && break; sleep 0.1; done
  [ -e "$work/attr-written" ] || fail "the writer on A never wrote"
  size=""
  for _ in $(seq 20); do
    size="$(stat -c %s "$mnt2/attr" 2>&1)"
    [ "$size" = 100000 ] && break
    sleep 0.1
  done
  touch "$work/attr-go"
  wait "$writer" || fail "the writer on A failed"
  [ "$size" = 100000 ] ||
    fail "B's stat says $size bytes 2 s after A wrote 100000 into the file it holds open" \
      "(after A's close: $(stat -c %s "$mnt2/attr" 2>&1))"
  ok "B sees the 100000 bytes A holds open, within 2 s"
fi
if run_check 6; then
  n=400
  step "6. A and B append $n records each to one file with O_APPEND, at once"
  : >"$mnt/log"
  visible_on_b log
  race append log "$n"
  for view in "$mnt" "$mnt2"; do
    python3 "$races" check-log "$view/log" "$n" A B ||
      fail "the appended records in $view/log are wrong (above)"
  done
  ok "$((2 * n)) records appended from both mounts, none lost or torn, each mount's in order"
fi
if run_check 7; then
  step "7. B lists a directory of 1,500 names while A creates, renames and unlinks in it"
  mkdir "$mnt/churn"
  fill_names "$mnt/churn" 1500
  visible_on_b churn/stable-name-long-enough-to-fill-pages-1499
  python3 "$races" churn A "$mnt/churn" 8 "$work" &
  churner=$!
  python3 "$races" list B "$mnt2/churn" 8 "$work" &
  lister=$!
  helpers+=("$churner" "$lister")
  release_racers churn 2
  wait "$churner" || fail "the churn on A failed"
  wait "$lister" || fail "B's listings missed or repeated names (above)"
  ok "every listing on B held the 1,500 names once while A changed the directory"
fi
if run_check 8; then
  step "8. A and B write trees into directories of their own at once, then read each other's"
  # own_tree ROOT WHO: WHO's tree under ROOT/own-WHO: 6 directories of 50 files each.
  own_tree() {
    local d i j
    mkdir "$1/own-$2"
    for i in $(seq 1 6); do
      d="$1/own-$2/d$i"
      mkdir "$d"
      for j in $(seq 1 50); do printf '%s %d %d\n%*s\n' "$2" "$i" "$j" $((j * 13)) "" >"$d/f$j"; done
      mv "$d/f1" "$d/first"
    done
  }
  mkdir "$work/own-ref"
  own_tree "$work/own-ref" A
  own_tree "$work/own-ref" B
  on_both own_tree A B
  owned="$(owned_counts)"
  for n in $owned; do
    [ "$n" -ge 7 ] || { dfs_cli client ls; fail "a mount owns $n directories, not the 7 it made (owned: $owned)"; }
  done
  [ "$(echo "$owned" | wc -w)" = 2 ] || fail "dfs client ls lists owned directories '$owned', not two mounts'"
  ok "each mount owns the 7 directories it made while the other worked elsewhere ($owned)"
  d="$(diff <(tree_list "$work/own-ref/own-A") <(tree_list "$mnt2/own-A") 2>&1)" || true
  [ -z "$d" ] || { echo "$d" | head -20; fail "B reads A's tree differently from what A wrote"; }
  d="$(diff <(tree_list "$work/own-ref/own-B") <(tree_list "$mnt/own-B") 2>&1)" || true
  [ -z "$d" ] || { echo "$d" | head -20; fail "A reads B's tree differently from what B wrote"; }
  ok "each mount reads the other's tree whole, written a moment before and never synced"
  for who in A B; do
    if [ $who = A ]; then wlog="$cluster/log/client.log"; else wlog="$log_b"; fi
    for _ in $(seq 50); do grep -q "owned directories or files given up" "$wlog" && break; sleep 0.1; done
    grep -q "owned directories or files given up" "$wlog" ||
      fail "mount $who's log does not say it gave its directories up"
  done
  after="$(owned_counts)"
  for n in $after; do
    [ "$n" -eq 0 ] || fail "a mount still owns $n directories after the other read them (owned: $after)"
  done
  ok "reading them recalled every directory from its owner (owned now: $after)"
fi
if run_check 9; then
  step "9. A and B create files in existing directories nobody owns, then read each other's"
  mkdir -p "$mnt/claim/a" "$mnt/claim/b"
  remount_a  # its new session owns nothing; the directories exist
  [ -d "$mnt2/claim/b" ] || fail "B does not see the directories A made before its remount"
  # claim_files ROOT WHO: 40 files into ROOT/claim/WHO.
  claim_files() {
    local j
    for j in $(seq 1 40); do printf '%s %d\n%*s\n' "$2" "$j" $((j * 11)) "" >"$1/claim/$2/f$j"; done
  }
  given_up_count() { grep -c "owned directories or files given up" "$1" || true; }
  given_up_a="$(given_up_count "$cluster/log/client.log")"
  given_up_b="$(given_up_count "$log_b")"
  mkdir -p "$work/claim-ref/claim/a" "$work/claim-ref/claim/b"
  claim_files "$work/claim-ref" a
  claim_files "$work/claim-ref" b
  on_both claim_files a b
  owned="$(owned_counts)"
  [ "$(echo "$owned" | wc -w)" = 2 ] || fail "dfs client ls lists owned directories '$owned', not two mounts'"
  for n in $owned; do
    [ "$n" -eq 1 ] || { dfs_cli client ls; fail "a mount owns $n directories, not the one it writes in (owned: $owned)"; }
  done
  ok "each mount was given the existing directory it creates in ($owned)"
  d="$(diff <(tree_list "$work/claim-ref/claim/a") <(tree_list "$mnt2/claim/a") 2>&1)" || true
  [ -z "$d" ] || { echo "$d" | head -20; fail "B reads A's files in claim/a differently from what A wrote"; }
  d="$(diff <(tree_list "$work/claim-ref/claim/b") <(tree_list "$mnt/claim/b") 2>&1)" || true
  [ -z "$d" ] || { echo "$d" | head -20; fail "A reads B's files in claim/b differently from what B wrote"; }
  after="$(owned_counts)"
  for n in $after; do
    [ "$n" -eq 0 ] || fail "a mount still owns $n directories after the other read them (owned: $after)"
  done
  # Each client counted its directory as owned too: giving it up is logged.
  for _ in $(seq 50); do
    [ "$(given_up_count "$cluster/log/client.log")" -gt "$given_up_a" ] &&
      [ "$(given_up_count "$log_b")" -gt "$given_up_b" ] && break
    sleep 0.1
  done
  [ "$(given_up_count "$cluster/log/client.log")" -gt "$given_up_a" ] ||
    fail "mount A's log does not say it gave claim/a up"
  [ "$(given_up_count "$log_b")" -gt "$given_up_b" ] || fail "mount B's log does not say it gave claim/b up"
  ok "each mount reads the other's files whole, and reading recalled both directories"
  echo again >"$mnt/claim/a/again"
  echo again >"$mnt2/claim/b/again"
  after="$(owned_counts)"
  for n in $after; do
    [ "$n" -eq 0 ] || fail "a directory recalled a moment ago was given again (owned: $after)"
  done
  [ "$(cat "$mnt2/claim/a/again")" = again ] || fail "B does not read A's new file in the shared claim/a"
  ok "a directory recalled a moment ago stays shared when its former owner creates there again"
fi

if run_check 10; then
  step "10. a recall of one directory drops only what it let A's kernel cache"
  wlog="$cluster/log/client.log"
  mkdir -p "$mnt/scope/near" "$mnt/scope/far"
  for i in 1 2 3; do echo "near $i" >"$mnt/scope/near/f$i"; done
  for i in $(seq 1 40); do echo "far $i" >"$mnt/scope/far/f$i"; done
  cat "$mnt"/scope/far/* >/dev/null  # A's kernel holds them all, pages included
  resident() { fincore --noheadings --output PAGES "$@" | awk '{s += $1} END {print s + 0}'; }
  far_pages="$(resident "$mnt"/scope/far/*)"
  lines_before="$(wc -l <"$wlog")"
  [ "$(cat "$mnt2/scope/near/f2")" = "near 2" ] || fail "B does not read A's scope/near/f2"
  for _ in $(seq 50); do
    tail -n +"$((lines_before + 1))" "$wlog" | grep -q "owned directories or files given up" && break
    sleep 0.1
  done
  dropped="$(tail -n +"$((lines_before + 1))" "$wlog" | grep "kernel caches invalidated" || true)"
  echo "$dropped"
  [ -n "$dropped" ] || fail "A's log does not say what its kernel dropped for B's read"
  grep -qv "for the inodes given up" <<<"$dropped" &&
    fail "B's read of one directory made A's kernel drop everything it cached"
  inodes="$(grep -o "given up: [0-9]* inode" <<<"$dropped" | awk '{s += $3} END {print s + 0}')"
  # scope, scope/near and near's three files, and the root if A owned it: B's lookups
  # showed those directories.
  [ "$inodes" -le 6 ] || fail "A's kernel dropped $inodes inodes for B's read of scope/near (at most 6)"
  # The name scope/far was only expired: A's kernel keeps what it cached below it.
  far_pages_after="$(resident "$mnt"/scope/far/*)"
  echo "pages of scope/far in A's page cache: $far_pages before B's read, $far_pages_after after"
  [ "$far_pages" -gt 0 ] || fail "A's page cache held nothing of scope/far after reading it"
  [ "$far_pages_after" -eq "$far_pages" ] ||
    fail "B's read of scope/near made A's kernel drop pages of scope/far"
  for i in $(seq 1 40); do
    [ "$(cat "$mnt2/scope/far/f$i")" = "far $i" ] || fail "B reads scope/far/f$i wrong"
  done
  ok "B's read of scope/near dropped $inodes inode(s) from A's kernel, which kept scope/far's pages; B reads scope/far whole"
fi

if run_check 11; then
  step "11. a mount with cache=shared beside A alone recalls A's exclusive caching too"
  granted_a() { grep -c "exclusive caching granted" "$cluster/log/client.log" || true; }
  granted_before="$(granted_a)"
  stop_mount "$mnt2" "$client_b"
  client_b=""
  for _ in $(seq 100); do [ "$(granted_a)" -gt "$granted_before" ] && break; sleep 0.1; done
  [ "$(granted_a)" -gt "$granted_before" ] || fail "A was not granted exclusive caching once alone"
  mkdir -p "$work/ref10" "$mnt/t10"
  make_tree "$work/ref10"
  make_tree "$mnt/t10"
  mnt3="$work/mnt3"
  mount_another "$mnt3" "$cluster/log/client-c.log" "cache=shared"
  client_c="$(client_pid "$mnt3")"
  helpers+=("$client_c")
  d="$(diff <(tree_list "$work/ref10/d1") <(tree_list "$mnt3/t10/d1") 2>&1)" || true
  [ -z "$d" ] || { echo "$d" | head -20; fail "C (cache=shared) does not read the tree A made alone"; }
  printf 'rewritten by C\n' >"$mnt3/t10/d1/f5"
  [ "$(cat "$mnt/t10/d1/f5" 2>&1)" = "rewritten by C" ] || fail "A does not see C's rewrite at once"
  granted_with_c="$(granted_a)"
  sleep 2
  [ "$(granted_a)" = "$granted_with_c" ] || fail "A was granted exclusive caching while C was mounted"
  ok "C, with cache=shared, reads A's unsynced tree whole, and A sees C's rewrite at once"
  stop_mount "$mnt3" "$client_c"
  for _ in $(seq 100); do [ "$(granted_a)" -gt "$granted_with_c" ] && break; sleep 0.1; done
  [ "$(granted_a)" -gt "$granted_with_c" ] || fail "A was not granted exclusive caching after C left"
  ok "A is granted exclusive caching again once C left"
fi
echo "PASS"
