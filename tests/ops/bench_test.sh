#!/usr/bin/env bash
# dfs bench end to end on local directories (the fs tests run it against dfs; here the
# point is the runner): the db and tree suites on a writable target finish with complete
# tables, a CSV and exit status 0; a copy corrupted silently (one byte; size and mtime
# kept) fails the tree suite with no time reported; on a read-only target every figure
# fails with its reason, the report says INCOMPLETE and the exit status is 1.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${DFS_BUILD_DIR:-$repo/build}"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (a read-only bind mount)"; exit 77; }
gen="$repo/tools/bench/gen_tree"
[ -f "$gen" ] || fail "no tree generator at $gen"
work="$(mktemp -d /tmp/dfs-bench-test.XXXXXX)"
cleanup() {
  mountpoint -q "$work/ro" && umount "$work/ro"
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/target" "$work/ro" "$work/base"
bench() {
  "$build/tools/dfs/dfs" bench --quick --suite db --suite tree --tree-scale 0.01 \
    --tree-generator "$gen" --baseline "$work/base" "$@"
}

bench --target "$work/target" --out "$work/good" >"$work/good.out" 2>"$work/good.err" ||
  { cat "$work/good.err"; fail "dfs bench on a writable directory failed"; }
grep -q "^| rsync -aHAX write | $work/target | [0-9.]* s | [0-9.]* s | [0-9.]* |$" "$work/good/report.md" ||
  { cat "$work/good/report.md"; fail "no rsync figure in the report"; }
grep -q "^| commits/s | $work/target | " "$work/good/report.md" || fail "no db figure"
grep -q INCOMPLETE "$work/good/report.md" && fail "a complete run says INCOMPLETE"
[ "$(grep -c "^tree,rsync -aHAX write,s," "$work/good/results.csv")" -eq 2 ] ||
  fail "the CSV lacks the target's or the baseline's rsync run"
grep -q "done" "$work/good.err" || fail "no progress shown"

# A copy corrupted behind the suite's back (tests/ops/corrupting_rsync.sh first on PATH
# as `rsync`: one byte of the target's copy flipped, size and times kept; the baseline's
# copy stays intact) fails the run, and no time is reported for it.
mkdir -p "$work/bin"
ln -s "$repo/tests/ops/corrupting_rsync.sh" "$work/bin/rsync"
real_rsync="$(command -v rsync)"
rc=0
PATH="$work/bin:$PATH" REAL_RSYNC="$real_rsync" CORRUPT_UNDER="$work/target" \
  CORRUPT_LOG="$work/corrupted" bench --target "$work/target" --out "$work/corrupt" \
  >"$work/corrupt.out" 2>"$work/corrupt.err" || rc=$?
[ -s "$work/corrupted" ] || { cat "$work/corrupt.err"; fail "the corrupting rsync did not run"; }
[ "$rc" -eq 1 ] || { cat "$work/corrupt/report.md"; fail "dfs bench on a corrupted copy exited $rc, not 1"; }
grep -q "^\*\*INCOMPLETE" "$work/corrupt/report.md" || fail "a corrupted copy's report does not say INCOMPLETE"
grep -q "| rsync -aHAX write | $work/target | failed: the copy differs from the source" \
  "$work/corrupt/report.md" || { cat "$work/corrupt/report.md"; fail "the corruption is not reported"; }
# CSV columns: suite,figure,unit,target,baseline,round,value,error
grep -q "^tree,rsync -aHAX write,s,$work/target,0,[0-9]*,[0-9]" "$work/corrupt/results.csv" &&
  fail "the CSV holds a time for a corrupted copy"
grep -q "^tree,rsync -aHAX write,s,baseline $work/base,1,[0-9]*,[0-9]" "$work/corrupt/results.csv" ||
  { cat "$work/corrupt/results.csv"; fail "the intact baseline copy has no time"; }

mount --bind "$work/target" "$work/ro"
mount -o remount,bind,ro "$work/ro"
rc=0
bench --target "$work/ro" --out "$work/bad" >"$work/bad.out" 2>"$work/bad.err" || rc=$?
[ "$rc" -eq 1 ] || fail "dfs bench on a read-only target exited $rc, not 1"
grep -q "^\*\*INCOMPLETE" "$work/bad/report.md" || fail "the report of a failed run does not say INCOMPLETE"
grep -q "| commits/s | $work/ro | failed: .*Read-only file system" "$work/bad/report.md" ||
  { cat "$work/bad/report.md"; fail "the db failure does not give its reason"; }
grep -q "| rsync -aHAX write | $work/ro | failed: " "$work/bad/report.md" || fail "the tree failure is not shown"
grep -q "INCOMPLETE" "$work/bad.err" || fail "stderr does not say INCOMPLETE"
echo "PASS"
